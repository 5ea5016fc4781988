package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
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
	var peers []string
	for _, e := range slices.Concat(m.Endpoints(), m.Future().Endpoints()) {
		if e != n.endpoint() && n.peerAlive(e) && !slices.Contains(peers, string(e)) {
			peers = append(peers, string(e))
		}
	}
	wait, cancelWait := context.WithTimeout(ctx, metadataJoinWait)
	err := n.meta.AwaitApplied(wait, n.meta.Applied(), peers)
	cancelWait()
	if err != nil {
		return fmt.Errorf("bootstrap: waiting for the live nodes to learn of the join: %w", err)
	}
	start := time.Now()
	for _, ks := range n.Schema().Keyspaces() {
		if schema.IsSystemKeyspace(ks.Name) {
			continue
		}
		// A node that just joined gossip may not have heard yet that the
		// others are up: a giving node down waits out the ring delay.
		plan, err := n.bootstrapPlan(m, ks)
		for deadline := time.Now().Add(ringDelay); errors.Is(err, errSourceDown) && time.Now().Before(deadline); {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return ctx.Err()
			}
			plan, err = n.bootstrapPlan(m, ks)
		}
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		if err := n.fetchPlan(ctx, "Bootstrap", ks, plan); err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
	}
	n.cfg.Logger.Info().Dur("took", time.Since(start)).Msg("node: bootstrap streamed every range; joining the ring")
	return n.proposeSelf(tokens, metadata.Normal)
}

// bootstrapPlan is, for each source, the key spans this joining node
// streams of keyspace ks by ring m, which has a future: each range it replicates in the future ring
// comes from the replica that gives it up (it holds every write the range
// had), which must be up, as Cassandra moves ranges consistently; a range
// that gains a replica without any giving it up (fewer nodes than the
// replication factor) comes from any live replica, one of this data
// centre first.
func (n *Node) bootstrapPlan(m *ring.Metadata, ks *schema.Keyspace) (map[ring.Endpoint][]storage.KeySpan, error) {
	s, err := n.ringStrategy(ks)
	if s == nil || err != nil {
		return nil, err
	}
	plan := map[ring.Endpoint][]storage.KeySpan{}
	err = replicatedRanges(m.Future(), s, n.endpoint(), func(r partitioner.Range, replicas []ring.Endpoint) error {
		old := s.Replicas(m, r.End)
		src := ring.Endpoint("")
		for _, e := range old {
			if !slices.Contains(replicas, e) {
				if !n.peerAlive(e) {
					return fmt.Errorf("%w (/%s)", errSourceDown, e)
				}
				src = e
				break
			}
		}
		if src == "" {
			slices.SortStableFunc(old, func(a, b ring.Endpoint) int {
				return boolOrder(m.Location(a).DataCenter != n.cfg.DataCenter, m.Location(b).DataCenter != n.cfg.DataCenter)
			})
			for _, e := range old {
				if n.peerAlive(e) {
					src = e
					break
				}
			}
		}
		switch {
		case src == "" && len(old) > 0:
			return fmt.Errorf("%w %s in keyspace %s", errNoSource, r, ks.Name)
		case src == "":
			return nil // no node holds the range's data
		}
		plan[src] = n.appendRangeSpans(plan[src], r)
		return nil
	})
	return plan, err
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
