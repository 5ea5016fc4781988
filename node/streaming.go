package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/repair"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/streaming"
)

// startStreaming serves the streaming verbs on the node's messaging.
func (n *Node) startStreaming() error {
	svc, err := streaming.New(streaming.Options{Network: nodeNetwork{n}, Tables: n.engine, Partitioner: n.engine.Partitioner(),
		Throughput: n.streamThroughput.Load(), EntireSSTableThroughput: n.entireSSTableStreamThroughput.Load()})
	if err != nil {
		return err
	}
	for verb, h := range svc.Handlers() {
		n.messaging.Handle(verb, h)
	}
	n.streaming = svc
	n.metrics.watchStreaming(svc)
	n.repair = &repair.Service{Tables: n.engine, Network: nodeNetwork{n}, Partitioner: n.engine.Partitioner(),
		Spans:  func(r partitioner.Range) []storage.KeySpan { return n.appendRangeSpans(nil, r) },
		Record: n.acceptRepairRecord, Uncommitted: n.coord.UncommittedPaxos}
	for verb, h := range n.repair.Handlers() {
		n.messaging.Handle(verb, h)
	}
	return nil
}

// tokenSpan is the engine keys of the tokens in r, which must not wrap
// (partitioner.Range.Unwrap's pieces): engine keys begin with their
// token's bytes, all of one length, so the token bounds of r are its key
// bounds.
func tokenSpan(r partitioner.Range, p partitioner.Partitioner) storage.KeySpan {
	var s storage.KeySpan
	from, to := r.Bounds(p)
	if from != nil {
		s.From = from.AppendBytes(nil)
	}
	if to != nil {
		s.To = to.AppendBytes(nil)
	}
	return s
}

// mergeSpans sorts spans and joins those that touch.
func mergeSpans(spans []storage.KeySpan) []storage.KeySpan {
	slices.SortFunc(spans, func(a, b storage.KeySpan) int {
		switch {
		case a.From == nil && b.From == nil:
			return 0
		case a.From == nil:
			return -1
		case b.From == nil:
			return 1
		}
		return bytes.Compare(a.From, b.From)
	})
	var out []storage.KeySpan
	for _, s := range spans {
		if k := len(out) - 1; k >= 0 && out[k].To != nil && s.From != nil && bytes.Equal(out[k].To, s.From) {
			out[k].To = s.To
			continue
		}
		out = append(out, s)
	}
	return out
}

// RebuildRequest is what nodetool rebuild asks for.
type RebuildRequest struct {
	// SourceDC streams only from nodes of this data centre; empty: any.
	SourceDC string
	// Keyspace rebuilds one keyspace; empty: every keyspace the node
	// replicates.
	Keyspace string
}

// errNoSource is a range no live node can send: every other replica is
// down or outside the source data centre.
var errNoSource = errors.New("unable to find sufficient sources for streaming range")

// Rebuild streams to this node the data of every range it replicates,
// each from one live replica (of SourceDC when given), as nodetool rebuild
// does: for a node that joined without its data, or a new data centre.
func (n *Node) Rebuild(ctx context.Context, opts RebuildRequest) error {
	if n.streaming == nil {
		return errors.New("rebuild: this node runs alone (no seeds): there is no node to stream from")
	}
	if dcs := n.dataCenters(); opts.SourceDC != "" && !slices.Contains(dcs, opts.SourceDC) {
		return fmt.Errorf("Provided datacenter '%s' is not a valid datacenter, available datacenters are: [%s]", opts.SourceDC, strings.Join(dcs, ", "))
	}
	sch := n.Schema()
	var keyspaces []*schema.Keyspace
	if opts.Keyspace != "" {
		ks := sch.Keyspace(opts.Keyspace)
		if ks == nil {
			return fmt.Errorf("Unknown keyspace %s", opts.Keyspace)
		}
		keyspaces = append(keyspaces, ks)
	} else {
		for _, ks := range sch.Keyspaces() {
			if !schema.IsSystemKeyspace(ks.Name) {
				keyspaces = append(keyspaces, ks)
			}
		}
	}
	for _, ks := range keyspaces {
		plan, err := n.rebuildPlan(ks, opts.SourceDC)
		if err != nil {
			return err
		}
		if err := n.fetchPlan(ctx, "Rebuild", ks, n.endpoint(), plan); err != nil {
			return err
		}
	}
	return nil
}

// fetchPlan streams to node target (this one, or another asked to pull)
// keyspace ks's tables' spans from each source of plan, every source at
// once, as Cassandra streams: each is bounded by its own stream
// throughput.
func (n *Node) fetchPlan(ctx context.Context, operation string, ks *schema.Keyspace, target ring.Endpoint, plan map[ring.Endpoint][]storage.KeySpan) error {
	var tables []*schema.Table
	for _, t := range ks.Tables {
		tables = append(tables, t)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(plan))
	for i, src := range slices.Sorted(mapKeysOf(plan)) {
		spans := mergeSpans(plan[src])
		var ts []streaming.TableSpans
		for _, t := range tables {
			ts = append(ts, streaming.TableSpans{Table: t.ID, Spans: spans})
		}
		wg.Go(func() {
			start := time.Now()
			res, err := n.streamTo(ctx, target, operation, src, ts)
			if err != nil {
				errs[i] = fmt.Errorf("%s of %s from %s to %s: %w", strings.ToLower(operation), ks.Name, src, target, err)
				return
			}
			n.cfg.Logger.Info().Str("keyspace", ks.Name).Str("source", string(src)).Str("target", string(target)).Int("sections", res.Sections).Int("whole", res.Whole).
				Int64("bytes", res.Bytes).Dur("took", time.Since(start)).Msg("node: " + strings.ToLower(operation) + " streamed a keyspace's ranges")
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// streamTo streams tables from src to target as operation: a fetch of
// this node's, or a pull asked of another.
func (n *Node) streamTo(ctx context.Context, target ring.Endpoint, operation string, src ring.Endpoint, tables []streaming.TableSpans) (streaming.Result, error) {
	if target == n.endpoint() {
		return n.streaming.Fetch(ctx, operation, string(src), tables)
	}
	return n.streaming.Pull(ctx, string(target), operation, string(src), tables)
}

func mapKeysOf[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// rebuildPlan is, for each source node, the key spans this node streams
// from it of keyspace ks: for each range the node replicates, the first
// other live replica (of sourceDC when given).
func (n *Node) rebuildPlan(ks *schema.Keyspace, sourceDC string) (map[ring.Endpoint][]storage.KeySpan, error) {
	s, err := n.ringStrategy(ks)
	if s == nil || err != nil {
		return nil, err
	}
	m := n.ring.Load()
	self := n.endpoint()
	plan := map[ring.Endpoint][]storage.KeySpan{}
	err = replicatedRanges(m, s, self, func(r partitioner.Range, replicas []ring.Endpoint) error {
		src := ring.Endpoint("")
		for _, e := range replicas {
			if e != self && n.peerAlive(e) && (sourceDC == "" || m.Location(e).DataCenter == sourceDC) {
				src = e
				break
			}
		}
		if src == "" {
			return fmt.Errorf("%w %s in keyspace %s", errNoSource, r, ks.Name)
		}
		plan[src] = n.appendRangeSpans(plan[src], r)
		return nil
	})
	return plan, err
}

// ringStrategy is how the ring places keyspace ks; nil for a keyspace
// every node keeps whole (LocalStrategy), which no range of the ring
// holds.
func (n *Node) ringStrategy(ks *schema.Keyspace) (ring.Strategy, error) {
	s, err := n.strategy(ks)
	if _, local := s.(ring.LocalStrategy); local || err != nil {
		return nil, err
	}
	return s, nil
}

// appendRangeSpans appends the engine key spans of range r (two for the
// range that wraps).
func (n *Node) appendRangeSpans(spans []storage.KeySpan, r partitioner.Range) []storage.KeySpan {
	part := n.engine.Partitioner()
	for _, piece := range r.Unwrap(part) {
		spans = append(spans, tokenSpan(piece, part))
	}
	return spans
}

// replicatedRanges calls fn with each range of m that self replicates
// under s, and the range's replicas.
func replicatedRanges(m *ring.Metadata, s ring.Strategy, self ring.Endpoint, fn func(partitioner.Range, []ring.Endpoint) error) error {
	for i := range m.SortedTokens() {
		r := m.RangeOf(i)
		replicas := s.Replicas(m, r.End)
		if !slices.Contains(replicas, self) {
			continue
		}
		if err := fn(r, replicas); err != nil {
			return err
		}
	}
	return nil
}
