package simulation

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/ring"
)

// startWhole starts the node as package node does, on the node's disk and
// over the simulated network: its first start joins the cluster through
// the first node (bootstrapping when the cluster has data), a restart
// takes up its log. It returns once node.Open has.
func (n *Node) startWhole() error {
	inbox := newGossipTransport(n)
	n.mu.Lock()
	n.inbox, n.up, n.conns, n.released = inbox, true, map[*frameConn]bool{}, make(chan struct{})
	n.starts++
	replace, fs := n.replace, n.fs
	n.mu.Unlock()
	nop := zerolog.Nop()
	cfg := node.Config{ClusterName: "simulation", ListenAddress: string(n.Name), RPCAddress: string(n.Name),
		DataCenter: n.Location.DataCenter, Rack: n.Location.Rack, Seeds: []string{string(n.c.nodes[0].Name)},
		GossipPort: gossipPort, StoragePort: storagePort, NumTokens: n.c.cfg.NumTokens, DataDir: "node",
		MetadataSnapshotEntries: n.c.cfg.SnapshotEntries, Logger: &nop, FS: fs,
		Transport: messagingTransport{n.c}, GossipTransport: inbox, ReplaceAddressFirstBoot: replace,
		FileCacheSize: 4 << 20, MemtableHeapSpace: 64 << 20}
	if n.c.cfg.Handoff.Disabled {
		cfg.HintedHandoffEnabled = new(false)
	}
	cfg.Authenticator, cfg.Authorizer, cfg.SuperuserSetupDelay = n.c.cfg.Authenticator, n.c.cfg.Authorizer, new(node.Duration(0))
	if t := n.c.cfg.StreamThroughput; t > 0 {
		cfg.StreamThroughputOutbound, cfg.EntireSSTableStreamThroughputOutbound = new(node.Rate(t)), new(node.Rate(t))
	}
	whole, err := node.Open(cfg)
	if err != nil {
		// Open has stopped what it started.
		n.halt()
		n.mu.Lock()
		close(n.released)
		n.mu.Unlock()
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.up {
		// It crashed (a request of the verb it was to crash on) while
		// starting: the crash's release could not stop it.
		go func() { n.finishRelease(whole.Close()) }()
		return fmt.Errorf("%s crashed while it started", n.Name)
	}
	n.whole = whole
	return nil
}

// releaseWhole stops a halted whole node. Off the network already, it
// cannot leave the cluster gracefully: its peers find it dead by
// probing, as after a crash. Unlike a crash it flushes its memtables (a
// crash's commit log replay is the storage engine's and the other mode's
// to test).
func (n *Node) releaseWhole() error {
	n.mu.Lock()
	whole := n.whole
	n.whole = nil
	n.mu.Unlock()
	if whole == nil {
		return nil // still in node.Open, whose end releases it
	}
	return n.finishRelease(whole.Close())
}

// finishRelease records how stopping the node's last start went.
func (n *Node) finishRelease(err error) error {
	n.mu.Lock()
	n.releaseErr = err
	released := n.released
	n.mu.Unlock()
	close(released)
	return err
}

// crashesOn reports whether the frame arriving at the whole node n is a
// request of the verb n is to crash on, and if so crashes it: the frame
// is lost with it.
func (n *Node) crashesOn(f messaging.Frame) bool {
	if !n.c.cfg.Whole || f.Kind != messaging.KindRequest {
		return false
	}
	n.mu.Lock()
	crash := n.up && n.crashOn == f.Verb
	if crash {
		n.crashOn = 0
		if n.crashGroup != nil {
			crash = n.crashGroup.CompareAndSwap(false, true)
			n.crashGroup = nil
		}
	}
	n.mu.Unlock()
	if crash && n.halt() {
		go n.release()
	}
	return crash
}

// CrashOneOf makes the first of the named whole nodes that a request of
// verb reaches crash (the one a joining node streams from first, say); the
// others go on.
func (c *Cluster) CrashOneOf(verb messaging.Verb, names ...ring.Endpoint) {
	once := new(atomic.Bool)
	for _, name := range names {
		n := c.byName[name]
		n.mu.Lock()
		n.crashOn, n.crashGroup = verb, once
		n.mu.Unlock()
	}
}

// ReplaceWith makes the node's next start that of a new node in its
// place: an empty disk, and replace_address_first_boot naming its own
// address (a dead node replaced by one at the same address).
func (n *Node) ReplaceWith() error {
	if n.Up() {
		return errors.New("a node replaced must be down")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fs = newDisk(n)
	n.replace = string(n.Name)
	return nil
}

// Whole is the node as package node runs it, nil unless it is up and the
// cluster runs whole nodes.
func (n *Node) Whole() *node.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.whole
}
