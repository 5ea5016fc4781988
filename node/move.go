package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// The operation modes nodetool netstats shows, beside NORMAL and DRAINED.
const (
	modeJoining        = "JOINING"
	modeLeaving        = "LEAVING"
	modeDecommissioned = "DECOMMISSIONED"
)

// alive reports whether node e is up: this node is.
func (n *Node) alive(e ring.Endpoint) bool { return e == n.endpoint() || n.peerAlive(e) }

// movedRanges calls fn with each range of ring m's tokens and its
// future's together, the replicas it has now and those it will have:
// within one such range neither ring changes hands.
func movedRanges(m *ring.Metadata, s ring.Strategy, fn func(r partitioner.Range, now, future []ring.Endpoint) error) error {
	f := m.Future()
	if f == nil || len(m.SortedTokens()) == 0 || len(f.SortedTokens()) == 0 {
		return nil
	}
	toks := slices.Concat(m.SortedTokens(), f.SortedTokens())
	slices.SortFunc(toks, partitioner.Compare)
	toks = slices.CompactFunc(toks, func(a, b partitioner.Token) bool { return partitioner.Compare(a, b) == 0 })
	for i, t := range toks {
		r := partitioner.Range{Start: toks[(i+len(toks)-1)%len(toks)], End: t}
		if err := fn(r, s.Replicas(m, t), s.Replicas(f, t)); err != nil {
			return err
		}
	}
	return nil
}

// gainPlan is, for each source, the key spans of keyspace ks that node
// target streams as ring m moves to its future: the ranges it will
// replicate and does not now. gone names a node whose data is lost (one
// being removed or replaced: it neither counts as holding a range nor
// sends one), "" for none. With none, each range comes from the replica
// that gives it up, which holds every write it had and must be up, as
// Cassandra moves ranges consistently; a range no replica gives up (fewer
// nodes than the replication factor), or one whose giver is gone, comes
// from any live replica, one of target's data centre first.
func (n *Node) gainPlan(m *ring.Metadata, ks *schema.Keyspace, target, gone ring.Endpoint) (map[ring.Endpoint][]storage.KeySpan, error) {
	s, err := n.ringStrategy(ks)
	if s == nil || err != nil {
		return nil, err
	}
	dc := m.Future().Location(target).DataCenter
	plan := map[ring.Endpoint][]storage.KeySpan{}
	err = movedRanges(m, s, func(r partitioner.Range, now, future []ring.Endpoint) error {
		holders := slices.DeleteFunc(slices.Clone(now), func(e ring.Endpoint) bool { return e == gone })
		if !slices.Contains(future, target) || slices.Contains(holders, target) {
			return nil
		}
		src := ring.Endpoint("")
		for _, e := range holders {
			if gone == "" && !slices.Contains(future, e) {
				if !n.alive(e) {
					return fmt.Errorf("%w (/%s)", errSourceDown, e)
				}
				src = e
				break
			}
		}
		if src == "" {
			slices.SortStableFunc(holders, func(a, b ring.Endpoint) int {
				return boolOrder(m.Location(a).DataCenter != dc, m.Location(b).DataCenter != dc)
			})
			for _, e := range holders {
				if e != target && n.alive(e) {
					src = e
					break
				}
			}
		}
		switch {
		case src == "" && len(holders) > 0:
			return fmt.Errorf("%w %s in keyspace %s", errNoSource, r, ks.Name)
		case src == "":
			return nil // no node holds the range's data
		}
		plan[src] = n.appendRangeSpans(plan[src], r)
		return nil
	})
	return plan, err
}

// errTargetDown is a node that gains ranges while it is down: nothing
// can stream to it.
var errTargetDown = errors.New("a node that gains ranges is down")

// handOver streams, as operation, to every node that gains ranges as ring
// m moves to its future the data of those ranges (see gainPlan), every
// node at once, and returns once each has it all; done, when not nil,
// hears of each node as it has all of its share.
func (n *Node) handOver(ctx context.Context, operation string, m *ring.Metadata, gone ring.Endpoint, done func(ring.Endpoint)) error {
	var keyspaces []*schema.Keyspace
	for _, ks := range n.Schema().Keyspaces() {
		if !schema.IsSystemKeyspace(ks.Name) {
			keyspaces = append(keyspaces, ks)
		}
	}
	targets := handOverTargets(m, gone)
	var wg sync.WaitGroup
	errs := make([]error, len(targets))
	for i, target := range targets {
		wg.Go(func() {
			for _, ks := range keyspaces {
				plan, err := n.gainPlan(m, ks, target, gone)
				if err == nil && len(plan) > 0 && !n.alive(target) {
					err = fmt.Errorf("%w (/%s)", errTargetDown, target)
				}
				if err == nil {
					err = n.fetchPlan(ctx, operation, ks, target, plan)
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
			if done != nil {
				done(target)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// handOverTargets are the nodes a hand-over by ring m may stream to: those
// of its future but gone.
func handOverTargets(m *ring.Metadata, gone ring.Endpoint) []ring.Endpoint {
	if m.Future() == nil {
		return nil
	}
	var out []ring.Endpoint
	for _, e := range m.Future().Endpoints() {
		if e != gone {
			out = append(out, e)
		}
	}
	return out
}
