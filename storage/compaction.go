package storage

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/memtable"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/sstable"
)

// pickSizeTiered chooses SSTables to compact by the size-tiered rule:
// sort by size; an SSTable joins a bucket when its size is within
// [avg*bucketLow, avg*bucketHigh] of the bucket's average, or when both are
// below minSize; the bucket with at least minThreshold members and the
// smallest average size (the cheapest, "hottest" work) is compacted, at most
// maxThreshold of it. sizes are indexed like the SSTables; it returns indexes.
func pickSizeTiered(sizes []int64, o CompactionOptions) []int {
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sizes[idx[a]] < sizes[idx[b]] })
	type bucket struct {
		members []int
		total   int64
	}
	var buckets []*bucket
	for _, i := range idx {
		size := sizes[i]
		placed := false
		for _, b := range buckets {
			avg := float64(b.total) / float64(len(b.members))
			if (float64(size) >= avg*o.BucketLow && float64(size) <= avg*o.BucketHigh) ||
				(size < o.MinSSTableSize && avg < float64(o.MinSSTableSize)) {
				b.members = append(b.members, i)
				b.total += size
				placed = true
				break
			}
		}
		if !placed {
			buckets = append(buckets, &bucket{members: []int{i}, total: size})
		}
	}
	var best *bucket
	for _, b := range buckets {
		if len(b.members) < o.MinThreshold {
			continue
		}
		if best == nil || b.total/int64(len(b.members)) < best.total/int64(len(best.members)) {
			best = b
		}
	}
	if best == nil {
		return nil
	}
	if len(best.members) > o.MaxThreshold {
		return best.members[:o.MaxThreshold]
	}
	return best.members
}

// summaries describes the table's SSTables to its strategy.
// REQUIRES: t.mu held.
func (t *Table) summaries() []sstableSummary {
	out := make([]sstableSummary, len(t.mu.sstables))
	for i, s := range t.mu.sstables {
		m := s.meta()
		out[i] = sstableSummary{size: m.DataSize, level: s.level, first: s.first, last: s.last, maxTimestamp: m.MaxTimestamp}
	}
	return out
}

// compactOnce runs the compaction the table's strategy wants, if any.
func (t *Table) compactOnce() (bool, error) {
	t.compactMu.Lock()
	defer t.compactMu.Unlock()
	t.mu.Lock()
	plan := pickCompaction(t.summaries(), &t.opts.Compaction, &t.levelCursors)
	var inputs []*sstableRef
	if plan != nil {
		for _, i := range plan.inputs {
			inputs = append(inputs, t.mu.sstables[i])
		}
	}
	t.mu.Unlock()
	if len(inputs) == 0 {
		return false, nil
	}
	return true, t.compact(inputs, plan.level, plan.cutSize, nil)
}

// PendingCompactions estimates the compactions the table has before it
// (nodetool compactionstats' pending tasks): those running, and one more
// when its strategy wants one now.
func (t *Table) PendingCompactions() int {
	t.mu.Lock()
	var cursors levelCursors // an estimate must not move the leveled strategy's place
	wants := pickCompaction(t.summaries(), &t.opts.Compaction, &cursors) != nil
	t.mu.Unlock()
	n := int(t.compacting.Load())
	if wants {
		n++
	}
	return n
}

// CompactMajor merges every SSTable of the table (nodetool compact), after
// flushing the memtable. Under Leveled the result is level 1, cut at the
// strategy's SSTable size; otherwise it is one SSTable.
func (t *Table) CompactMajor() error {
	if err := t.Flush(); err != nil {
		return err
	}
	t.compactMu.Lock()
	defer t.compactMu.Unlock()
	t.mu.Lock()
	inputs := append([]*sstableRef(nil), t.mu.sstables...)
	t.mu.Unlock()
	if len(inputs) == 0 {
		return nil
	}
	if t.opts.Compaction.Strategy == Leveled {
		return t.compact(inputs, 1, t.rewriteCutSize(), nil)
	}
	return t.compact(inputs, 0, 0, nil)
}

// rewriteCutSize is where the outputs of a compaction the strategy did not
// plan are cut: at the SSTable size under Leveled, never otherwise.
func (t *Table) rewriteCutSize() int64 {
	if t.opts.Compaction.Strategy == Leveled {
		return t.opts.Compaction.SSTableSize
	}
	return 0
}

// Cleanup drops every partition outside keep (sorted, as StreamOut takes
// them) after flushing the memtable, as nodetool cleanup does once the
// node no longer replicates some ranges: each SSTable holding some of them
// is rewritten alone, at its level, without them.
func (t *Table) Cleanup(keep []KeySpan) error {
	if len(keep) > 0 {
		if err := checkSpans(keep); err != nil {
			return err
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	t.compactMu.Lock()
	defer t.compactMu.Unlock()
	t.mu.Lock()
	sstables := append([]*sstableRef(nil), t.mu.sstables...)
	t.mu.Unlock()
	inside := func(prefix []byte) bool { return spanOf(keep, prefix) >= 0 }
	for _, ref := range sstables {
		m := ref.meta()
		if m.MinKey == nil {
			continue
		}
		if whole, _ := coverage(m, keep); whole {
			continue
		}
		if err := t.compact([]*sstableRef{ref}, ref.level, t.rewriteCutSize(), inside); err != nil {
			return err
		}
	}
	return nil
}

// compact merges inputs into new SSTables at level, cut at cutSize (0: one
// SSTable), and swaps them for the inputs. A keep that is not nil keeps
// only the partitions whose prefix it accepts.
// REQUIRES: t.compactMu held.
func (t *Table) compact(inputs []*sstableRef, level int, cutSize int64, keep func(prefix []byte) bool) error {
	t.compacting.Add(1)
	defer t.compacting.Add(-1)
	start := t.e.opts.Now()
	now := start.Unix()
	gcBefore := t.gcBefore(now)
	in := map[*sstableRef]bool{}
	var its []mutation.Iterator
	var bound commitlog.Position
	for _, s := range inputs {
		in[s] = true
		s.refs.Add(1)
		defer s.unref()
		it, err := s.r.NewIter(nil, nil)
		if err != nil {
			for _, it := range its {
				it.Close()
			}
			return err
		}
		its = append(its, it)
		m := s.meta()
		if b := (commitlog.Position{Segment: m.CommitLogSegment, Offset: m.CommitLogOffset}); bound.Less(b) {
			bound = b
		}
	}
	// What lies outside the compaction decides which tombstones may go (E3).
	v := t.acquireView()
	defer v.release()
	var outside []*sstableRef
	for _, s := range v.sstables {
		if !in[s] {
			outside = append(outside, s)
		}
	}
	task := Task{Keyspace: t.opts.Keyspace, Table: t.opts.Name, Kind: "compaction", SSTables: len(inputs)}
	if keep != nil {
		task.Kind = "cleanup"
	}
	for _, s := range inputs {
		task.Total += int64(s.meta().DataSize)
	}
	running := t.e.tasks.start(task, start)
	defer t.e.tasks.done(running)
	outs := &compactionOutputs{t: t, level: level, cutSize: cutSize, bound: bound, task: running,
		limiter: newRateLimiter(int(t.e.throughput.Load()), t.e.opts.Now, t.e.compactionsStopped)}
	merged := newMergingIter(its)
	err := t.writeCompacted(merged, outs, v.memtables, outside, now, gcBefore, keep)
	if cerr := merged.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = outs.finish()
	}
	if err != nil {
		outs.abort()
		if givenUp(err) {
			return fmt.Errorf("storage: compact %s.%s: %w", t.opts.Keyspace, t.opts.Name, err)
		}
		return t.e.reportFailure(fmt.Errorf("storage: compact %s.%s: %w", t.opts.Keyspace, t.opts.Name, err))
	}
	if err := t.replace(inputs, outs.done); err != nil {
		// The obsolete log may stand although writing it failed, and then a
		// restart removes the inputs: the outputs must stay on disk. Both
		// sets load side by side after a restart, which reconciles to the
		// same rows (level overlaps go back to level 0).
		outs.release()
		return fmt.Errorf("storage: compact %s.%s: %w", t.opts.Keyspace, t.opts.Name, err)
	}
	t.e.compactions.Add(1)
	t.e.compactedBytes.Add(int64(outs.written))
	t.e.opts.Logger.Debug().Str("keyspace", t.opts.Keyspace).Str("table", t.opts.Name).Int("inputs", len(inputs)).
		Int("outputs", len(outs.done)).Int("output_level", level).Dur("took", t.e.opts.Now().Sub(start)).Msg("compacted")
	return nil
}

// replace swaps a compaction's outputs for its inputs, recording first that
// the inputs are to go (see sstable.WriteObsoleteLog).
func (t *Table) replace(inputs, outputs []*sstableRef) error {
	set, err := t.retireLog(inputs, nil)
	if err != nil {
		return err
	}
	in := map[*sstableRef]bool{}
	for _, s := range inputs {
		in[s] = true
	}
	t.mu.Lock()
	kept := []*sstableRef{}
	inserted := false
	for _, s := range t.mu.sstables {
		if in[s] {
			// The outputs take the place of the oldest input, keeping the
			// list ordered by age for readers that care.
			if !inserted {
				kept = append(kept, outputs...)
				inserted = true
			}
			continue
		}
		kept = append(kept, s)
	}
	t.mu.sstables = kept
	t.mu.Unlock()
	retire(inputs, set)
	t.buildMissingIndexes(outputs...)
	return nil
}

// compactionOutputs writes what a compaction keeps, cut into SSTables at
// partition boundaries once one passes cutSize.
type compactionOutputs struct {
	t       *Table
	level   int
	cutSize int64
	bound   commitlog.Position
	limiter *rateLimiter
	task    *runningTask

	w       *sstable.Writer
	gen     uint64
	index   *indexBuilder // the indexes of the output being written
	written uint64        // bytes of the finished outputs
	done    []*sstableRef
}

// add writes e; partitionStart says it is the first entry of its partition.
func (o *compactionOutputs) add(e *mutation.Entry, partitionStart bool) error {
	if o.w != nil && partitionStart && o.cutSize > 0 && int64(o.w.EstimatedSize()) >= o.cutSize {
		if err := o.publish(); err != nil {
			return err
		}
	}
	if o.w == nil {
		var err error
		if o.w, o.gen, err = o.t.createSSTable(o.level); err != nil {
			return err
		}
		o.index = &indexBuilder{specs: o.t.indexSpecs()}
	}
	o.index.add(e, o.t.e.opts.SSTable.TokenLen)
	if err := o.w.Add(e); err != nil {
		return err
	}
	written := o.written + o.w.EstimatedSize()
	o.task.completed.Store(int64(written))
	return o.limiter.wait(written)
}

func (o *compactionOutputs) publish() error {
	size := o.w.EstimatedSize()
	// Every output carries the inputs' commit log bound: replay learns from
	// the SSTables how far the table is flushed, and the inputs are going.
	ref, err := o.t.publish(o.w, o.gen, o.bound)
	o.w = nil
	if err != nil {
		return err
	}
	if o.index != nil {
		o.t.writeIndexes(ref, o.index)
	}
	o.index = nil
	o.written += size
	o.done = append(o.done, ref)
	return nil
}

// finish publishes the last output; a compaction that kept nothing still
// publishes an empty one, to carry the commit log bound.
func (o *compactionOutputs) finish() error {
	if o.w == nil && len(o.done) == 0 {
		var err error
		if o.w, o.gen, err = o.t.createSSTable(o.level); err != nil {
			return err
		}
		o.index = &indexBuilder{specs: o.t.indexSpecs()}
	}
	if o.w == nil {
		return nil
	}
	return o.publish()
}

// release lets go of the published outputs without deleting them.
func (o *compactionOutputs) release() {
	for _, s := range o.done {
		s.unref()
	}
	o.done = nil
}

// abort drops what a failed compaction wrote.
func (o *compactionOutputs) abort() {
	if o.w != nil {
		o.w.Abort()
		o.w = nil
	}
	for _, s := range o.done {
		s.obsolete.Store(true)
		s.unref()
	}
	o.done = nil
}

// compactionGivenUp is why a running compaction of the table gives up at
// its next partition: the node stops its compactions, or a truncation (or
// a drop) waits for the table; nil when it goes on.
func (t *Table) compactionGivenUp() error {
	switch {
	case t.e.compactionsStopping():
		return ErrCompactionStopped
	case t.truncating.Load() > 0:
		return ErrCompactionInterrupted
	}
	return nil
}

// writeCompacted streams the merged inputs into the outputs, partition by
// partition: rows lose what the partition's deletions shadow, expired cells
// become tombstones, and tombstones past gc grace that nothing outside could
// need are dropped.
func (t *Table) writeCompacted(it *mergingIter, outs *compactionOutputs, memtables []*memtable.Memtable,
	outside []*sstableRef, now int64, gcBefore func(prefix []byte) (int64, error), keep func(prefix []byte) bool) error {
	tokenLen := t.e.opts.SSTable.TokenLen
	var curPrefix []byte
	var st partitionState
	var minOutside int64 // smallest timestamp outside the compaction that may overlap this partition
	var before int64     // the partition's tombstones with a local deletion time before it may go
	partitionStart, dropped := false, false
	for e := it.First(); e != nil; e = it.Next() {
		n, err := mutation.PartitionPrefixLen(e.Key, tokenLen)
		if err != nil {
			return err
		}
		if curPrefix == nil || !bytes.Equal(e.Key[:n], curPrefix) {
			if err := t.compactionGivenUp(); err != nil {
				return err
			}
			curPrefix = append(curPrefix[:0], e.Key[:n]...)
			if dropped = keep != nil && !keep(curPrefix); dropped {
				continue
			}
			st = partitionState{deletion: mutation.Live}
			partitionStart = true
			minOutside, err = t.minTimestampOutside(curPrefix, memtables, outside)
			if err != nil {
				return err
			}
			if before, err = gcBefore(curPrefix); err != nil {
				return err
			}
		}
		if dropped {
			continue
		}
		purgeable := func(ts int64) bool { return ts < minOutside }
		canDrop := func(d mutation.DeletionTime) bool {
			return d.LocalDeletionTime < before && purgeable(d.MarkedForDeleteAt)
		}
		out := *e
		switch e.Kind {
		case mutation.PartitionDeletionEntry, mutation.RangeTombstoneEntry:
			if e.Kind == mutation.RangeTombstoneEntry && !e.Deletion.Supersedes(st.deletion) {
				continue // the partition deletion covers it
			}
			if err := st.absorb(e, tokenLen); err != nil {
				return err
			}
			if canDrop(e.Deletion) {
				continue
			}
		case mutation.StaticRowEntry, mutation.RowEntry:
			r := e.Row.ShadowedBy(st.shadowOf(e, e.Key[n+1:]))
			if r != nil {
				r = r.Purge(now, before, purgeable)
			}
			if r == nil {
				continue
			}
			out.Row = r
		}
		if err := outs.add(&out, partitionStart); err != nil {
			return err
		}
		partitionStart = false
	}
	return it.Error()
}

// gcBefore is, for a compaction at now, the local deletion time before
// which a partition's tombstones may go (Cassandra's gcBefore), by its
// engine key prefix, under the table's purge rule.
func (t *Table) gcBefore(now int64) func(prefix []byte) (int64, error) {
	rule := t.purge.Load()
	constant := func(v int64) func([]byte) (int64, error) { return func([]byte) (int64, error) { return v, nil } }
	switch rule.gc.Mode {
	case GCNever:
		return constant(math.MinInt64)
	case GCImmediately:
		return constant(now)
	case GCAfterRepair:
		p, history := t.e.opts.Partitioner, t.e.opts.RepairHistory
		n := p.TokenBytesLen()
		return func(prefix []byte) (int64, error) {
			if len(prefix) < n {
				return 0, fmt.Errorf("storage: a partition key prefix of %d bytes holds no token", len(prefix))
			}
			token, err := p.TokenFromBytes(prefix[:n])
			if err != nil {
				return 0, err
			}
			at, ok := history.RepairedAt(t.id, token)
			if !ok {
				return math.MinInt64, nil
			}
			return at - rule.gc.PropagationDelay, nil
		}
	}
	return constant(now - rule.gcGrace)
}

// minTimestampOutside returns the smallest write timestamp of the memtables
// and of the SSTables outside the compaction that may hold the partition;
// math.MaxInt64 when none may.
func (t *Table) minTimestampOutside(prefix []byte, memtables []*memtable.Memtable, outside []*sstableRef) (int64, error) {
	lo := int64(math.MaxInt64)
	for _, m := range memtables {
		lo = min(lo, m.MinTimestamp())
	}
	for _, s := range outside {
		if s.meta().MinTimestamp >= lo {
			continue
		}
		ok, err := s.r.MayContainPartition(prefix)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = s.meta().MinTimestamp
		}
	}
	return lo, nil
}

// rateLimiter holds compaction writes to a throughput, so that foreground
// latency stays flat while it runs.
type rateLimiter struct {
	bytesPerSec float64
	now         func() time.Time
	start       time.Time
	stop        <-chan struct{} // ends a wait: the engine stops compactions
}

func newRateLimiter(mibPerSec int, now func() time.Time, stop <-chan struct{}) *rateLimiter {
	return &rateLimiter{bytesPerSec: float64(mibPerSec) * (1 << 20), now: now, start: now(), stop: stop}
}

// wait sleeps until writing total bytes fits the rate, or the engine
// stops its compactions.
func (l *rateLimiter) wait(total uint64) error {
	if l.bytesPerSec <= 0 {
		return nil
	}
	due := l.start.Add(time.Duration(float64(total) / l.bytesPerSec * float64(time.Second)))
	if d := due.Sub(l.now()); d > time.Millisecond {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-l.stop:
			return ErrCompactionStopped
		}
	}
	return nil
}
