package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// leftExpiry is how long a LEFT status says to remember the node that
// left (Cassandra's three days), against its coming back by gossip.
const leftExpiry = 72 * time.Hour

// announceLeft is how long a node that left the ring keeps gossiping that
// before it stops.
const announceLeft = 2 * time.Second

// hintsHandOffWait bounds how long a departing node waits for its hints
// to reach the live nodes they are for.
const hintsHandOffWait = time.Minute

// Decommission streams every range this node replicates to the nodes that
// take it over, then takes the node out of the ring, as nodetool
// decommission does: the node is recorded leaving in the metadata log
// (writes of its ranges go to the nodes taking them as well), each such
// node pulls the ranges it takes from this one, the hints this node holds
// go to their nodes, and the node is recorded left; it then stops serving
// clients and leaves gossip. Without force it refuses to leave a keyspace
// with fewer nodes than its replication factor. If the streams fail it
// stays in the ring, as it was.
func (n *Node) Decommission(ctx context.Context, force bool) error {
	if n.meta == nil || n.streaming == nil {
		return errors.New("no other normal nodes in the ring; decommission would be pointless")
	}
	if mode := n.operationMode(); mode != "NORMAL" {
		return fmt.Errorf("Node in %s state; wait for status to become normal or restart", mode)
	}
	id := raftID(n.hostID)
	nodes := n.meta.Status().State.Nodes
	rec, ok := nodes[id]
	if !ok || rec.State != metadata.Normal {
		return errors.New("local node is not a member of the token ring yet")
	}
	others := 0
	for other, r := range nodes {
		if other != id && r.State == metadata.Normal {
			others++
		}
	}
	if others == 0 {
		return errors.New("no other normal nodes in the ring; decommission would be pointless")
	}
	if !force {
		if err := n.replicationKept(); err != nil {
			return err
		}
	}
	if !n.moving.CompareAndSwap(false, true) {
		return errors.New("This node is already processing a decommission or a removal")
	}
	defer n.moving.Store(false)
	if err := n.proposeSelf(rec.Tokens, metadata.Leaving); err != nil {
		return err
	}
	n.mode.Store(modeLeaving)
	n.setStatus(gossip.StatusLeaving + "," + n.firstToken())
	n.cfg.Logger.Info().Msg("node: decommissioning: streaming this node's ranges to the nodes that take them")
	start := time.Now()
	err := n.awaitRing(ctx, n.ring.Load())
	if err == nil {
		err = n.handOver(ctx, "Unbootstrap", n.ring.Load(), "", nil)
	}
	if err == nil {
		n.handOffHints(ctx)
		err = n.proposeSelf(rec.Tokens, metadata.Left)
	}
	if err != nil && ctx.Err() != nil {
		// The node is stopping: its restart puts it back in the ring.
		return fmt.Errorf("decommission cut short: %w", err)
	}
	if err != nil {
		n.cfg.Logger.Error().Err(err).Msg("node: decommission failed; the node stays in the ring")
		n.mode.Store("")
		if rerr := n.proposeSelf(rec.Tokens, metadata.Normal); rerr != nil {
			return errors.Join(fmt.Errorf("Stream failed: %w", err), fmt.Errorf("going back to normal: %w", rerr))
		}
		n.setStatus(n.normalStatus())
		return fmt.Errorf("Stream failed: %w", err)
	}
	n.cfg.Logger.Info().Dur("took", time.Since(start)).Msg("node: decommissioned: left the ring")
	n.mode.Store(modeDecommissioned)
	n.setStatus(fmt.Sprintf("%s,%s,%d", gossip.StatusLeft, n.firstToken(), time.Now().Add(leftExpiry).UnixMilli()))
	// The others learn of the departure from the log; gossip's LEFT is
	// for the drivers' view of the peers, and has this long to spread.
	select {
	case <-time.After(announceLeft):
	case <-ctx.Done():
	}
	if err := errors.Join(n.stopNative(), n.leaveCluster(), n.stopMetadata()); err != nil {
		n.cfg.Logger.Warn().Err(err).Msg("node: stopping the transports after the decommission")
	}
	return nil
}

// replicationKept refuses a departure that would leave a keyspace with no
// more nodes (of a data centre, for NetworkTopologyStrategy) than its
// replication factor, as Cassandra's decommission refuses it.
func (n *Node) replicationKept() error {
	m := n.ring.Load()
	for _, ks := range n.Schema().Keyspaces() {
		s, err := n.ringStrategy(ks)
		if s == nil || err != nil || schema.IsSystemKeyspace(ks.Name) {
			continue
		}
		rf, nodes := s.ReplicationFactor(), len(m.Endpoints())
		if nts, ok := s.(ring.NetworkTopologyStrategy); ok {
			rf, nodes = nts.DataCenterFactor(n.cfg.DataCenter), 0
			for _, e := range m.Endpoints() {
				if m.Location(e).DataCenter == n.cfg.DataCenter {
					nodes++
				}
			}
		}
		if nodes <= rf {
			return fmt.Errorf("Not enough live nodes to maintain replication factor in keyspace %s (RF = %d, N = %d). Perform a forceful decommission to ignore.", ks.Name, rf, nodes)
		}
	}
	return nil
}

// handOffHints delivers the hints this departing node holds to the live
// nodes they are for, waiting up to hintsHandOffWait; those for nodes
// that are down are dropped (repair brings their writes), and said so.
func (n *Node) handOffHints(ctx context.Context) {
	if n.hints == nil {
		return
	}
	deadline := time.Now().Add(hintsHandOffWait)
	for {
		n.coord.DeliverHints()
		var live, down int
		for _, p := range n.hints.Pending() {
			if n.alive(ring.Endpoint(p.Host)) {
				live++
			} else {
				down++
			}
		}
		if live == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			if live+down > 0 {
				n.cfg.Logger.Warn().Int("nodes", live+down).Msg("node: leaving with hints not delivered; repair the nodes they were for")
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setStatus gossips this node's STATUS (and STATUS_WITH_PORT) at once.
func (n *Node) setStatus(status string) {
	if n.gossip != nil {
		n.gossip.SetNow(gossip.Status, status)
		n.gossip.SetNow(gossip.StatusWithPort, status)
	}
}

// firstToken is this node's lowest token, which its STATUS names.
func (n *Node) firstToken() string {
	if toks := n.ring.Load().TokensOf(n.endpoint()); len(toks) > 0 {
		return toks[0].String()
	}
	return ""
}

// removal is a removenode this node runs: the node removed, by its first
// token, and the nodes that have not yet taken their share of its ranges.
type removal struct {
	token   string
	mu      sync.Mutex
	waiting []ring.Endpoint
}

// confirmed records that node e has its share.
func (r *removal) confirmed(e ring.Endpoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = slices.DeleteFunc(r.waiting, func(w ring.Endpoint) bool { return w == e })
}

// RemoveNode takes a dead node out of the ring, as nodetool removenode
// does: it is recorded leaving in the metadata log, each node that gains
// its ranges pulls them from a live replica of theirs, and it is recorded
// left (the metadata group, then, drops it). A removal that fails puts the
// node back as it was; one cut short by the crash of the node running it
// goes on when removenode is run again for the same host id.
func (n *Node) RemoveNode(ctx context.Context, hostID string) error {
	if n.meta == nil || n.streaming == nil {
		return errors.New("Host ID not found.")
	}
	id, err := cqltype.UUIDType.FromString(hostID)
	if err != nil {
		return fmt.Errorf("Invalid host id %q: %w", hostID, err)
	}
	var rec metadata.NodeRecord
	found := false
	for _, r := range n.meta.Status().State.Nodes {
		if string(r.HostID[:]) == string(id) && r.State != metadata.Left {
			rec, found = r, true
		}
	}
	switch {
	case !found:
		return errors.New("Host ID not found.")
	case rec.ID == raftID(n.hostID):
		return errors.New("Cannot remove self")
	case n.peerAlive(ring.Endpoint(rec.Endpoint)):
		return fmt.Errorf("Node /%s is alive and owns this ID. Use decommission command to remove it from the ring", rec.Endpoint)
	case rec.State == metadata.Joining:
		return fmt.Errorf("Node /%s is joining the ring; it cannot be removed until it is normal", rec.Endpoint)
	}
	if !n.moving.CompareAndSwap(false, true) {
		return errors.New("This node is already processing a removal. Wait for it to complete, or use 'removenode force' if this has failed.")
	}
	defer n.moving.Store(false)
	if rec.State == metadata.Normal {
		if err := n.proposeRecord(rec, metadata.Leaving); err != nil {
			return err
		}
	}
	n.cfg.Logger.Info().Str("node", rec.Endpoint).Msg("node: removing a dead node: its ranges stream to the nodes that take them")
	m := n.ring.Load()
	gone := ring.Endpoint(rec.Endpoint)
	rm := &removal{token: lowestToken(n.engine.Partitioner(), rec.Tokens), waiting: handOverTargets(m, gone)}
	n.removal.Store(rm)
	defer n.removal.Store(nil)
	err = n.awaitRing(ctx, m)
	if err == nil {
		err = n.handOver(ctx, "Removenode", m, gone, rm.confirmed)
	}
	if err == nil {
		if now := n.meta.Status().State.Nodes[rec.ID]; now.State != metadata.Leaving {
			err = fmt.Errorf("the node is %s again: it came back while it was being removed", now.State)
		} else {
			err = n.proposeRecord(rec, metadata.Left)
		}
	}
	if err != nil && ctx.Err() != nil {
		// The node running it is stopping: removenode run again goes on.
		return fmt.Errorf("removenode of %s cut short: %w", rec.Endpoint, err)
	}
	if err != nil {
		if rerr := n.proposeRecord(rec, metadata.Normal); rerr != nil {
			err = errors.Join(err, fmt.Errorf("putting the node back: %w", rerr))
		}
		return fmt.Errorf("removenode of %s failed: %w", rec.Endpoint, err)
	}
	n.cfg.Logger.Info().Str("node", rec.Endpoint).Msg("node: removed a dead node from the ring")
	return nil
}

// RemovalStatus is nodetool removenode status's line.
func (n *Node) RemovalStatus() string {
	r := n.removal.Load()
	if r == nil {
		return "RemovalStatus: No removals in process."
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	waiting := make([]string, len(r.waiting))
	for i, e := range r.waiting {
		waiting[i] = "/" + string(e)
	}
	return fmt.Sprintf("RemovalStatus: Removing token (%s). Waiting for replication confirmation from [%s].", r.token, strings.Join(waiting, ","))
}

// ForceRemoval records left, without streaming, every dead node a
// removal left leaving (one whose removenode failed or was cut short), as
// nodetool removenode force does: their ranges keep the replicas they
// have, one fewer, until a repair.
func (n *Node) ForceRemoval() error {
	if n.meta == nil {
		return errors.New("No tokens to force removal on, call 'removenode' first")
	}
	forced := 0
	for _, id := range slices.Sorted(mapKeysOf(n.meta.Status().State.Nodes)) {
		r := n.meta.Status().State.Nodes[id]
		if r.State != metadata.Leaving || id == raftID(n.hostID) || n.peerAlive(ring.Endpoint(r.Endpoint)) {
			continue
		}
		if err := n.proposeRecord(r, metadata.Left); err != nil {
			return err
		}
		n.cfg.Logger.Warn().Str("node", r.Endpoint).Msg("node: removal forced: the node left the ring without its ranges streamed")
		forced++
	}
	if forced == 0 {
		return errors.New("No tokens to force removal on, call 'removenode' first")
	}
	return nil
}

// lowestToken is the lowest of tokens as part orders them: the one a
// node's STATUS names.
func lowestToken(part partitioner.Partitioner, tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	return slices.MinFunc(tokens, func(a, b string) int {
		ta, _ := part.ParseToken(a)
		tb, _ := part.ParseToken(b)
		return partitioner.Compare(ta, tb)
	})
}
