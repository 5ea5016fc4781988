package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// rangeMovementWait bounds how long a node waits for another node's join
// or departure to end before its own join starts.
const rangeMovementWait = 10 * time.Minute

// ringDelay is how long a bootstrap waits for a node it must stream from
// to be seen up (Cassandra's ring delay).
const ringDelay = 30 * time.Second

// errSourceDown is a range whose giving replica is down: moving it from
// another would miss the writes only that replica took.
var errSourceDown = errors.New("A node required to move the data consistently is down")

// isSeed reports whether this node is one of its own seeds.
func (n *Node) isSeed() bool {
	for _, seed := range n.cfg.Seeds {
		host, _, err := net.SplitHostPort(seed)
		if err != nil {
			host = seed
		}
		if host == n.cfg.ListenAddress {
			return true
		}
	}
	return false
}

// bootstraps reports whether this node, new to the metadata log (whose
// nodes are those given), streams the data of its ranges before it takes
// them, as Cassandra's auto_bootstrap does: not a seed, nor the first
// node of a ring.
func (n *Node) bootstraps(nodes map[uint64]metadata.NodeRecord, self uint64) bool {
	if !*n.cfg.AutoBootstrap || n.isSeed() {
		return false
	}
	for id, r := range nodes {
		if id != self && r.State == metadata.Normal {
			return true
		}
	}
	return false
}

// untilStopped is a context that ends when the node stops or cancel is
// called.
func (n *Node) untilStopped() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-n.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// peerAlive reports whether gossip sees node e up.
func (n *Node) peerAlive(e ring.Endpoint) bool {
	g := n.gossip
	return g != nil && g.Alive(string(e))
}

// replaced is the record of the dead node replace_address_first_boot
// names, which this new node is to replace: normal, and down.
func (n *Node) replaced(nodes map[uint64]metadata.NodeRecord) (metadata.NodeRecord, error) {
	addr := n.cfg.ReplaceAddressFirstBoot
	for _, r := range nodes {
		if r.Endpoint != addr || r.State == metadata.Left {
			continue
		}
		switch {
		case r.State != metadata.Normal:
			return r, fmt.Errorf("node: cannot replace_address /%s: the node is %s, not normal", addr, r.State)
		case addr != n.cfg.ListenAddress && n.peerAlive(ring.Endpoint(addr)):
			return r, fmt.Errorf("node: cannot replace a live node /%s", addr)
		}
		return r, nil
	}
	return metadata.NodeRecord{}, fmt.Errorf("node: cannot replace_address /%s because it doesn't exist in the cluster metadata", addr)
}

// awaitRing waits until every live node of ring m (and of its future)
// has applied what this node has of the metadata log: from then on they
// route by m. It then waits out the write timeout, as Cassandra sleeps
// before its streams: a write routed by the ring before may still be on
// its way to a replica, and must land before that replica's data is
// streamed (or have timed out, unacknowledged by it).
func (n *Node) awaitRing(ctx context.Context, m *ring.Metadata) error {
	if err := n.awaitApplied(ctx, m); err != nil {
		return err
	}
	select {
	case <-time.After(time.Duration(n.cfg.WriteRequestTimeout)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n *Node) awaitApplied(ctx context.Context, m *ring.Metadata) error {
	var peers []string
	all := m.Endpoints()
	if m.Future() != nil {
		all = slices.Concat(all, m.Future().Endpoints())
	}
	for _, e := range all {
		if e != n.endpoint() && n.peerAlive(e) && !slices.Contains(peers, string(e)) {
			peers = append(peers, string(e))
		}
	}
	wait, cancel := context.WithTimeout(ctx, metadataJoinWait)
	defer cancel()
	return n.meta.AwaitApplied(wait, n.meta.Applied(), peers)
}

// bootstrap streams to this joining node the data of every range it is
// being given, once every live node routes its writes here too, and then
// records it normal: from then on it serves them.
func (n *Node) bootstrap(tokens []string) error {
	ctx, cancel := n.untilStopped()
	defer cancel()
	// Each live node must route by the ring in which this node is joining
	// before the streams begin: a write it routed by the ring before would
	// reach neither the streams nor this node.
	m := n.ring.Load()
	if m.Future() == nil {
		return errors.New("bootstrap: the ring has no node joining")
	}
	if err := n.awaitRing(ctx, m); err != nil {
		return fmt.Errorf("bootstrap: waiting for the live nodes to learn of the join: %w", err)
	}
	n.mode.Store(modeJoining)
	defer n.mode.Store("")
	// A replacement streams every range of the node it replaces from the
	// other replicas: that node's data is gone.
	gone := ring.Endpoint("")
	if id := n.replacing.Load(); id != 0 {
		gone = ring.Endpoint(n.meta.Status().State.Nodes[id].Endpoint)
		n.cfg.Logger.Info().Str("replacing", string(gone)).Msg("node: replacing a dead node: streaming its ranges from the other replicas")
	}
	start := time.Now()
	for _, ks := range n.Schema().Keyspaces() {
		if schema.IsSystemKeyspace(ks.Name) {
			continue
		}
		// A node that just joined gossip may not have heard yet that the
		// others are up: a giving node down waits out the ring delay.
		plan, err := n.gainPlan(m, ks, n.endpoint(), gone)
		for deadline := time.Now().Add(ringDelay); errors.Is(err, errSourceDown) && time.Now().Before(deadline); {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return ctx.Err()
			}
			plan, err = n.gainPlan(m, ks, n.endpoint(), gone)
		}
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		if err := n.fetchPlan(ctx, "Bootstrap", ks, n.endpoint(), plan); err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
	}
	n.cfg.Logger.Info().Dur("took", time.Since(start)).Msg("node: bootstrap streamed every range; joining the ring")
	if err := n.proposeSelf(tokens, metadata.Normal); err != nil {
		return err
	}
	n.replacing.Store(0)
	return nil
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Sees reports whether the node's failure detector has the node at
// endpoint up (itself included), for a harness that waits for membership
// to settle.
func (n *Node) Sees(endpoint string) bool {
	return endpoint == n.cfg.ListenAddress || n.peerAlive(ring.Endpoint(endpoint))
}
