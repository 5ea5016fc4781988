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

// compactOnce runs one size-tiered compaction if one is due.
func (t *Table) compactOnce() (bool, error) {
	t.compactMu.Lock()
	defer t.compactMu.Unlock()
	t.mu.Lock()
	sizes := make([]int64, len(t.mu.sstables))
	for i, s := range t.mu.sstables {
		sizes[i] = s.meta().DataSize
	}
	picked := pickSizeTiered(sizes, t.opts.Compaction)
	var inputs []*sstableRef
	for _, i := range picked {
		inputs = append(inputs, t.mu.sstables[i])
	}
	t.mu.Unlock()
	if len(inputs) == 0 {
		return false, nil
	}
	return true, t.compact(inputs)
}

// CompactMajor merges every SSTable of the table into one (nodetool
// compact), after flushing the memtable.
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
	return t.compact(inputs)
}

// compact merges inputs into one new SSTable and swaps them out.
// REQUIRES: t.compactMu held.
func (t *Table) compact(inputs []*sstableRef) error {
	start := t.e.opts.Now()
	now := start.Unix()
	gcBefore := now - t.opts.gcGrace()
	in := map[*sstableRef]bool{}
	var its []mutation.Iterator
	var bound commitlog.Position
	level := 0
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
		level = max(level, m.Level)
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
	w, gen, err := t.createSSTable(level)
	if err != nil {
		return err
	}
	merged := newMergingIter(its)
	limiter := newRateLimiter(t.e.opts.CompactionThroughput, t.e.opts.Now)
	err = t.writeCompacted(merged, w, v.memtables, outside, now, gcBefore, limiter)
	if cerr := merged.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("storage: compact %s.%s: %w", t.opts.Keyspace, t.opts.Name, err)
	}
	out, err := t.publish(w, gen, bound)
	if err != nil {
		return err
	}
	t.mu.Lock()
	kept := []*sstableRef{}
	inserted := false
	for _, s := range t.mu.sstables {
		if in[s] {
			// The output takes the place of the oldest input, keeping the list
			// ordered by age for readers that care.
			if !inserted {
				kept = append(kept, out)
				inserted = true
			}
			continue
		}
		kept = append(kept, s)
	}
	t.mu.sstables = kept
	t.mu.Unlock()
	for _, s := range inputs {
		s.obsolete.Store(true)
		s.unref() // the list's reference
	}
	t.e.opts.Logger.Debug().Str("keyspace", t.opts.Keyspace).Str("table", t.opts.Name).Int("inputs", len(inputs)).
		Uint64("generation", gen).Dur("took", t.e.opts.Now().Sub(start)).Msg("compacted")
	return nil
}

// writeCompacted streams the merged inputs into w, partition by partition:
// rows lose what the partition's deletions shadow, expired cells become
// tombstones, and tombstones past gc grace that nothing outside could need
// are dropped.
func (t *Table) writeCompacted(it *mergingIter, w *sstable.Writer, memtables []*memtable.Memtable,
	outside []*sstableRef, now, gcBefore int64, limiter *rateLimiter) error {
	tokenLen := t.e.opts.SSTable.TokenLen
	var curPrefix []byte
	var st partitionState
	var minOutside int64 // smallest timestamp outside the compaction that may overlap this partition
	for e := it.First(); e != nil; e = it.Next() {
		n, err := mutation.PartitionPrefixLen(e.Key, tokenLen)
		if err != nil {
			return err
		}
		if curPrefix == nil || !bytes.Equal(e.Key[:n], curPrefix) {
			curPrefix = append(curPrefix[:0], e.Key[:n]...)
			st = partitionState{deletion: mutation.Live}
			minOutside, err = t.minTimestampOutside(curPrefix, memtables, outside)
			if err != nil {
				return err
			}
		}
		purgeable := func(ts int64) bool { return ts < minOutside }
		canDrop := func(d mutation.DeletionTime) bool {
			return d.LocalDeletionTime < gcBefore && purgeable(d.MarkedForDeleteAt)
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
				r = r.Purge(now, gcBefore, purgeable)
			}
			if r == nil {
				continue
			}
			out.Row = r
		}
		if err := w.Add(&out); err != nil {
			return err
		}
		limiter.wait(w.EstimatedSize())
	}
	return it.Error()
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
}

func newRateLimiter(mibPerSec int, now func() time.Time) *rateLimiter {
	return &rateLimiter{bytesPerSec: float64(mibPerSec) * (1 << 20), now: now, start: now()}
}

// wait sleeps until writing total bytes fits the rate.
func (l *rateLimiter) wait(total uint64) {
	if l.bytesPerSec <= 0 {
		return
	}
	due := l.start.Add(time.Duration(float64(total) / l.bytesPerSec * float64(time.Second)))
	if d := due.Sub(l.now()); d > time.Millisecond {
		time.Sleep(d)
	}
}
