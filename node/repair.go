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

// RepairRequest is what nodetool repair asks for.
type RepairRequest struct {
	// Keyspace is the keyspace repaired; empty: every keyspace the ring
	// holds.
	Keyspace string
	// Tables limits it to these tables of Keyspace; empty: all.
	Tables []string
	// PrimaryRange repairs only the ranges this node is the first
	// replica of (-pr): run on every node, each range is repaired once.
	PrimaryRange bool
	// Start and End, when given, repair the one range (Start, End]
	// (-st, -et) instead of the node's ranges.
	Start, End string
	// DataCenters limits the replicas compared to these (-dc); empty: all.
	DataCenters []string
}

// RepairSummary is what a repair did.
type RepairSummary struct {
	Keyspaces []string `json:"keyspaces"`
	// Ranges and Leaves count what was compared (per table); Mismatched
	// the leaves whose replicas disagreed.
	Ranges     int   `json:"ranges"`
	Leaves     int   `json:"leaves"`
	Mismatched int   `json:"mismatched"`
	Streams    int   `json:"streams"`
	Bytes      int64 `json:"bytes"`
	Millis     int64 `json:"millis"`
	// Recorded counts the ranges (per table) recorded repaired: those
	// every replica of took part in.
	Recorded int `json:"recorded"`
	// PaxosFinished counts the partitions whose unfinished Paxos
	// proposals the repair finished before comparing the data.
	PaxosFinished int `json:"paxos_finished"`
}

// treeOf is replica e's tree of table t's range r.
func (n *Node) treeOf(ctx context.Context, e ring.Endpoint, t *schema.Table, r partitioner.Range) ([][]byte, error) {
	if e == n.endpoint() {
		return n.repair.Tree(t.ID, r, repair.Depth)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return n.repair.TreeOf(ctx, string(e), t.ID, r, repair.Depth)
}

// Repair compares, table by table and range by range, what the replicas
// of each range this node replicates hold, as nodetool repair does: each
// replica hashes the range's pieces (package repair), and for each piece
// where two replicas differ each pulls it from the other (streaming both
// ways), so that every replica ends with every write any of them had,
// reconciled as any write is. Every replica compared must be up. First,
// as Cassandra 4.1's Paxos repair, the Paxos proposals any replica holds
// accepted and not committed in the range are finished (repairPaxos), so
// that what lightweight transactions decided is in the data compared.
func (n *Node) Repair(ctx context.Context, req RepairRequest) (RepairSummary, error) {
	start := time.Now()
	var sum RepairSummary
	if n.streaming == nil {
		return sum, errors.New("repair: this node runs alone (no seeds): it has no replica to compare with")
	}
	sch := n.Schema()
	var keyspaces []*schema.Keyspace
	if req.Keyspace != "" {
		ks := sch.Keyspace(req.Keyspace)
		if ks == nil {
			return sum, fmt.Errorf("Keyspace [%s] does not exist.", req.Keyspace)
		}
		keyspaces = append(keyspaces, ks)
	} else {
		for _, ks := range sch.Keyspaces() {
			if !schema.IsSystemKeyspace(ks.Name) {
				keyspaces = append(keyspaces, ks)
			}
		}
	}
	m := n.ring.Load()
	for _, ks := range keyspaces {
		s, err := n.ringStrategy(ks)
		if err != nil {
			return sum, err
		}
		if s == nil {
			continue // every node holds it whole: nothing to compare
		}
		tables, err := repairTables(ks, req.Tables)
		if err != nil {
			return sum, err
		}
		ranges, err := n.repairRanges(m, s, req)
		if err != nil {
			return sum, err
		}
		sum.Keyspaces = append(sum.Keyspaces, ks.Name)
		for _, t := range tables {
			if err := n.repairTable(ctx, m, t, ranges, &sum); err != nil {
				return sum, fmt.Errorf("Repair job failed on %s.%s: %w", ks.Name, t.Name, err)
			}
		}
	}
	sum.Millis = time.Since(start).Milliseconds()
	n.cfg.Logger.Info().Strs("keyspaces", sum.Keyspaces).Int("ranges", sum.Ranges).Int("mismatched", sum.Mismatched).Int64("bytes", sum.Bytes).
		Int64("millis", sum.Millis).Msg("node: repair done")
	return sum, nil
}

// repairTables are keyspace ks's tables named (all when none is), by name.
func repairTables(ks *schema.Keyspace, names []string) ([]*schema.Table, error) {
	if len(names) == 0 {
		names = slices.Sorted(mapKeysOf(ks.Tables))
	}
	var out []*schema.Table
	for _, name := range names {
		t := ks.Tables[name]
		if t == nil {
			return nil, fmt.Errorf("Unknown keyspace/cf pair (%s.%s)", ks.Name, name)
		}
		out = append(out, t)
	}
	return out, nil
}

// repairRange is a range and the replicas compared for it; whole when
// they are all its replicas (no -dc left any out), so that a repair of it
// is recorded in the repair history.
type repairRange struct {
	r        partitioner.Range
	replicas []ring.Endpoint
	whole    bool
}

// repairRanges are the ranges a repair compares, each with its replicas
// (of the data centres asked for), which must all be up.
func (n *Node) repairRanges(m *ring.Metadata, s ring.Strategy, req RepairRequest) ([]repairRange, error) {
	self := n.endpoint()
	var out []repairRange
	add := func(r partitioner.Range, replicas []ring.Endpoint) error {
		var keep []ring.Endpoint
		for _, e := range replicas {
			if len(req.DataCenters) == 0 || slices.Contains(req.DataCenters, m.Location(e).DataCenter) {
				if !n.alive(e) {
					return fmt.Errorf("Endpoint not alive: /%s", e)
				}
				keep = append(keep, e)
			}
		}
		if len(keep) > 1 {
			out = append(out, repairRange{r: r, replicas: keep, whole: len(keep) == len(replicas)})
		}
		return nil
	}
	if req.Start != "" || req.End != "" {
		part := n.engine.Partitioner()
		st, err := part.ParseToken(req.Start)
		if err != nil {
			return nil, fmt.Errorf("-st: %w", err)
		}
		et, err := part.ParseToken(req.End)
		if err != nil {
			return nil, fmt.Errorf("-et: %w", err)
		}
		// Each piece of (st, et] within one of the ring's ranges has that
		// range's replicas.
		r := partitioner.Range{Start: st, End: et}
		for i := range m.SortedTokens() {
			owned := m.RangeOf(i)
			for _, piece := range intersect(part, r, owned) {
				replicas := s.Replicas(m, owned.End)
				if !slices.Contains(replicas, self) {
					return nil, fmt.Errorf("Requested range %s intersects a range this node does not replicate (%s)", r, owned)
				}
				if err := add(piece, replicas); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	for i := range m.SortedTokens() {
		r := m.RangeOf(i)
		replicas := s.Replicas(m, r.End)
		if !slices.Contains(replicas, self) || req.PrimaryRange && !isPrimary(replicas, self) {
			continue
		}
		if err := add(r, replicas); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// isPrimary reports whether self is the first of a range's replicas, as
// Cassandra's primary ranges are: each range has one primary replica,
// whatever the strategy (the token's owner may hold no replica of it
// under NetworkTopologyStrategy).
func isPrimary(replicas []ring.Endpoint, self ring.Endpoint) bool {
	return len(replicas) > 0 && replicas[0] == self
}

// intersect is the part of range a inside range b, in pieces that do not
// wrap.
func intersect(p partitioner.Partitioner, a, b partitioner.Range) []partitioner.Range {
	var out []partitioner.Range
	for _, x := range a.Unwrap(p) {
		for _, y := range b.Unwrap(p) {
			lo, hi := x.Start, x.End
			if partitioner.Compare(y.Start, lo) > 0 {
				lo = y.Start
			}
			if partitioner.Compare(y.End, hi) < 0 {
				hi = y.End
			}
			if partitioner.Compare(lo, hi) < 0 {
				out = append(out, partitioner.Range{Start: lo, End: hi})
			}
		}
	}
	return out
}

// repairTable compares table t over ranges (of ring m) and streams what
// differs; once every stream is done, each replica of a range all of
// whose replicas took part records it repaired as of when the comparison
// began.
func (n *Node) repairTable(ctx context.Context, m *ring.Metadata, t *schema.Table, ranges []repairRange, sum *RepairSummary) error {
	began := time.Now().Unix()
	if err := n.repairPaxos(ctx, t, ranges, sum); err != nil {
		return err
	}
	part := n.engine.Partitioner()
	type pair struct{ to, from ring.Endpoint }
	pulls := map[pair][]storage.KeySpan{}
	for _, rr := range ranges {
		trees := make([][][]byte, len(rr.replicas))
		errs := make([]error, len(rr.replicas))
		var wg sync.WaitGroup
		for i, e := range rr.replicas {
			wg.Go(func() { trees[i], errs[i] = n.treeOf(ctx, e, t, rr.r) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		leaves := repair.Leaves(part, rr.r, repair.Depth)
		for i := range trees {
			if len(trees[i]) != len(leaves) {
				return fmt.Errorf("/%s answered %d leaves for %s, not %d", rr.replicas[i], len(trees[i]), rr.r, len(leaves))
			}
		}
		sum.Ranges++
		for j, leaf := range leaves {
			sum.Leaves++
			differs := false
			for a := range rr.replicas {
				for b := range rr.replicas {
					if a != b && !bytes.Equal(trees[a][j], trees[b][j]) {
						differs = true
						k := pair{rr.replicas[a], rr.replicas[b]}
						pulls[k] = n.appendRangeSpans(pulls[k], leaf)
					}
				}
			}
			if differs {
				sum.Mismatched++
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for k, spans := range pulls {
		ts := []streaming.TableSpans{{Table: t.ID, Spans: mergeSpans(spans)}}
		wg.Go(func() {
			res, err := n.streamTo(ctx, k.to, "Repair", k.from, ts)
			mu.Lock()
			defer mu.Unlock()
			sum.Streams++
			sum.Bytes += res.Bytes
			if err != nil {
				errs = append(errs, fmt.Errorf("streaming to /%s from /%s: %w", k.to, k.from, err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	n.recordRepaired(ctx, m, t, ranges, began, sum)
	return nil
}

// paxosRepairTries is how often Paxos repair tries to finish a partition
// whose rounds lose to others' (each try takes up to cas_contention_timeout).
const paxosRepairTries = 3

// repairPaxos finishes, for table t, the Paxos proposals any replica of
// ranges holds accepted and not committed: it gathers their partitions
// from every replica (REPAIR_PAXOS) and runs a prepare on each
// (coordinator.FinishPaxos), which completes the proposal and commits it
// to a quorum.
func (n *Node) repairPaxos(ctx context.Context, t *schema.Table, ranges []repairRange, sum *RepairSummary) error {
	keys := map[string]bool{}
	for _, rr := range ranges {
		for _, e := range rr.replicas {
			var found [][]byte
			var err error
			if e == n.endpoint() {
				found, err = n.coord.UncommittedPaxos(t.ID, rr.r)
			} else {
				qctx, cancel := context.WithTimeout(ctx, time.Minute)
				found, err = n.repair.UncommittedOf(qctx, string(e), t.ID, rr.r)
				cancel()
			}
			if err != nil {
				return fmt.Errorf("Paxos repair: %w", err)
			}
			for _, k := range found {
				keys[string(k)] = true
			}
		}
	}
	for _, k := range slices.Sorted(mapKeysOf(keys)) {
		var err error
		for range paxosRepairTries {
			if err = n.coord.FinishPaxos(t, []byte(k)); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("Paxos repair of partition %x: %w", k, err)
		}
		sum.PaxosFinished++
	}
	return nil
}

// recordRepaired tells each replica of the whole ranges among ranges that
// a repair begun at began made them agree, unless the ring moved since m
// (or m itself was moving: a joining node streams from one replica, which
// may have lacked a tombstone another purges once the range counts as
// repaired). A replica that cannot take the record is reported and only
// purges less; sum.Recorded counts the ranges every replica took.
func (n *Node) recordRepaired(ctx context.Context, m *ring.Metadata, t *schema.Table, ranges []repairRange, began int64, sum *RepairSummary) {
	if now := n.ring.Load(); m.Future() != nil || now.Epoch() != m.Epoch() {
		n.cfg.Logger.Warn().Str("table", t.String()).Msg("node: the ring moved during the repair: its ranges are not recorded repaired")
		return
	}
	byReplica := map[ring.Endpoint][]partitioner.Range{}
	for _, rr := range ranges {
		if rr.whole {
			for _, e := range rr.replicas {
				byReplica[e] = append(byReplica[e], rr.r)
			}
		}
	}
	type outcome struct {
		e   ring.Endpoint
		err error
	}
	outcomes := make(chan outcome, len(byReplica))
	for e, rs := range byReplica {
		go func() {
			if e == n.endpoint() {
				outcomes <- outcome{e, n.recordRepair(t.ID, rs, began)}
				return
			}
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			outcomes <- outcome{e, n.repair.RecordAt(ctx, string(e), t.ID, rs, began)}
		}()
	}
	failed := map[ring.Endpoint]bool{}
	for range byReplica {
		if o := <-outcomes; o.err != nil {
			failed[o.e] = true
			n.cfg.Logger.Warn().Err(o.err).Str("table", t.String()).Str("replica", string(o.e)).Msg("node: a replica did not record the repair")
		}
	}
	for _, rr := range ranges {
		if rr.whole && !slices.ContainsFunc(rr.replicas, func(e ring.Endpoint) bool { return failed[e] }) {
			sum.Recorded++
		}
	}
}

// repairLines are nodetool repair's report of a summary.
func repairLines(sum RepairSummary) []string {
	line := fmt.Sprintf("Repair of [%s]: %d ranges compared in %d pieces, %d of them differing between replicas; %d streams, %d bytes; %d ranges recorded repaired",
		strings.Join(sum.Keyspaces, ", "), sum.Ranges, sum.Leaves, sum.Mismatched, sum.Streams, sum.Bytes, sum.Recorded)
	if sum.PaxosFinished > 0 {
		line += fmt.Sprintf("; %d partitions' unfinished Paxos proposals finished first", sum.PaxosFinished)
	}
	return []string{
		line,
		"Repair completed successfully",
		fmt.Sprintf("Repair command finished in %.3f seconds", float64(sum.Millis)/1000),
	}
}
