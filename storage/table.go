package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/memtable"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/sstable"
)

// sstableRef is a reference-counted open SSTable: its files go only when
// it is obsolete (compacted away, truncated) and no reader holds it
// (INVARIANT E2).
type sstableRef struct {
	r        *sstable.Reader
	gen      uint64
	refs     atomic.Int32 // one for the table's list while in it, one per read view
	obsolete atomic.Bool
	table    *Table
	// level is the SSTable's level as the strategy sees it: the one its
	// Statistics record, unless start-up found it overlapping its level.
	level int
	// first and last are the partition prefixes of its first and last
	// entries; nil when it has none.
	first, last []byte
	// retiredBy is the obsolete log that records its removal.
	retiredBy *obsoleteSet
	// indexes are its secondary indexes' files, read; one it lacks is
	// built in the background, and read without meanwhile.
	indexes atomic.Pointer[sstableIndexes]
}

// obsoleteSet is an obsolete log and how many of its SSTables still have
// files.
type obsoleteSet struct {
	id        uint64
	remaining atomic.Int32
}

func (s *sstableRef) meta() *sstable.Metadata { return s.r.Metadata() }

// createSSTable starts writing a new generation at a level.
func (t *Table) createSSTable(level int) (*sstable.Writer, uint64, error) {
	gen := t.allocGeneration()
	w, err := sstable.Create(t.e.opts.FS, t.dir, gen, level, t.e.opts.SSTable)
	return w, gen, err
}

// publish finishes a written SSTable, recording the commit log position its
// data is complete up to, and opens it.
func (t *Table) publish(w *sstable.Writer, gen uint64, bound commitlog.Position) (*sstableRef, error) {
	w.SetCommitLogBound(bound.Segment, bound.Offset)
	if _, err := w.Finish(); err != nil {
		return nil, err
	}
	for _, p := range w.LargePartitions() {
		t.e.opts.Logger.Warn().Msgf("Writing large partition %s/%s:%s (%s) to sstable %s", t.opts.Keyspace, t.opts.Name,
			t.describeKey(p.Key), prettyBytes(p.Bytes), t.e.opts.FS.PathJoin(t.dir, sstable.DataFileName(gen)))
	}
	return t.openSSTable(gen)
}

// prettyBytes writes a size as Cassandra's logs do: three decimals of the
// largest of KiB, MiB and GiB it reaches.
func prettyBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3fMiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.3fKiB", float64(n)/(1<<10))
}

// openSSTable opens a published generation with the table's list
// reference already counted.
func (t *Table) openSSTable(gen uint64) (*sstableRef, error) {
	r, err := sstable.Open(t.e.opts.FS, t.dir, gen, t.e.cache, t.e.opts.SSTable.TokenLen)
	if err != nil {
		return nil, err
	}
	m := r.Metadata()
	ref := &sstableRef{r: r, gen: gen, table: t, level: m.Level}
	if m.MinKey != nil {
		tokenLen := t.e.opts.SSTable.TokenLen
		n, err := mutation.PartitionPrefixLen(m.MinKey, tokenLen)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("storage: %s: first key: %w", r.Name(), err)
		}
		ref.first = m.MinKey[:n]
		if n, err = mutation.PartitionPrefixLen(m.MaxKey, tokenLen); err != nil {
			r.Close()
			return nil, fmt.Errorf("storage: %s: last key: %w", r.Name(), err)
		}
		ref.last = m.MaxKey[:n]
	}
	ref.refs.Store(1)
	return ref, nil
}

// retireLog records durably that ssts are to be removed, and for a
// truncation the commit log position it took effect at. On an error the log
// may stand nonetheless (see sstable.WriteObsoleteLog).
func (t *Table) retireLog(ssts []*sstableRef, truncation *commitlog.Position) (*obsoleteSet, error) {
	if len(ssts) == 0 && truncation == nil {
		return nil, nil
	}
	set := &obsoleteSet{id: t.allocGeneration()}
	log := sstable.ObsoleteLog{Generations: make([]uint64, len(ssts))}
	for i, s := range ssts {
		log.Generations[i] = s.gen
	}
	if truncation != nil {
		log.Truncation = &sstable.CommitLogBound{Segment: truncation.Segment, Offset: truncation.Offset}
	}
	if err := sstable.WriteObsoleteLog(t.e.opts.FS, t.dir, set.id, log); err != nil {
		return nil, err
	}
	set.remaining.Store(int32(len(ssts)))
	return set, nil
}

// finishRetireLog deletes an obsolete log none of whose SSTables is left.
func (t *Table) finishRetireLog(set *obsoleteSet) {
	if err := sstable.FinishObsoleteLog(t.e.opts.FS, t.dir, set.id); err != nil {
		t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Msg("finishing an obsolete log")
	}
}

// retire drops the list's reference to SSTables taken out of it, whose
// removal set records; their files go when the last read lets them go.
func retire(ssts []*sstableRef, set *obsoleteSet) {
	for _, s := range ssts {
		s.retiredBy = set
		s.obsolete.Store(true)
		s.unref()
	}
}

func (s *sstableRef) unref() {
	if s.refs.Add(-1) != 0 {
		return
	}
	_ = s.r.Close()
	if !s.obsolete.Load() {
		return
	}
	t := s.table
	if err := sstable.Remove(t.e.opts.FS, t.dir, s.gen); err != nil {
		// The obsolete log stays, and start-up finishes the removal.
		t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Msg("removing an obsolete SSTable")
		return
	}
	if set := s.retiredBy; set != nil && set.remaining.Add(-1) == 0 {
		t.finishRetireLog(set)
	}
}

// flushingMemtable is a memtable switched out for flushing, with the commit
// log position its data is complete up to.
type flushingMemtable struct {
	m     *memtable.Memtable
	bound commitlog.Position
}

// Table is one table: its memtables and SSTables.
type Table struct {
	e    *Engine
	id   mutation.TableID
	opts TableOptions
	dir  string

	// writeMu orders writes against memtable switches (INVARIANT E1).
	writeMu sync.RWMutex
	// flushMu serialises flushes, so SSTables and commit log discards happen
	// in switch order.
	flushMu sync.Mutex
	// compactMu serialises compactions and truncation.
	compactMu sync.Mutex
	// truncating counts the truncations (and drops) waiting for
	// compactMu: a running compaction gives up for them rather than make
	// them wait for as long as it takes.
	truncating atomic.Int32

	// active is the memtable writes go to. It is replaced only with writeMu
	// held for writing and mu held, so a writer holding writeMu for reading
	// and a reader holding mu both see one memtable; being atomic, the write
	// path reads it without taking mu.
	active atomic.Pointer[memtable.Memtable]

	mu struct {
		sync.Mutex
		flushing []flushingMemtable // oldest first
		sstables []*sstableRef      // oldest first
		nextGen  uint64
		// flushed is the newest commit log position whose records are all
		// in SSTables.
		flushed commitlog.Position
		// truncations counts the table's truncations, which an import
		// that began before one must not outlive.
		truncations uint64
		// closed is set by close: an import finishing after it would
		// hold its SSTable open past the engine's close.
		closed bool
	}
	flushPending   atomic.Bool
	compactPending atomic.Bool
	// levelCursors are the leveled strategy's place in each level; under
	// compactMu.
	levelCursors levelCursors
	readStats    struct{ reads, sstables atomic.Int64 }
	metrics      *TableMetrics
	// sampling is the toppartitions session running, or nil.
	sampling atomic.Pointer[Sampling]
	writes   atomic.Int64
	// purge is when tombstones may go (gc grace, tombstone GC mode), which
	// Reconfigure may change.
	purge atomic.Pointer[purgeRule]
	// compacting counts the compactions running.
	compacting atomic.Int32
	// indexes are the table's secondary indexes; memIndexes holds each
	// memtable's (*memtable.Memtable to *memIndex), made with it.
	indexes           atomic.Pointer[[]IndexSpec]
	memIndexes        sync.Map
	indexBuildPending atomic.Bool
	indexBuildMu      sync.Mutex
	// indexesBuilt counts the SSTables the background build indexed.
	indexesBuilt atomic.Int64
}

func openTable(e *Engine, opts TableOptions) (*Table, error) {
	t := &Table{e: e, id: mutation.TableID(opts.ID), opts: opts, metrics: newTableMetrics()}
	t.purge.Store(opts.purgeRule())
	specs := slices.Clone(opts.Indexes)
	t.indexes.Store(&specs)
	t.dir = e.tableDir(&opts)
	fs := e.opts.FS
	if err := fs.MkdirAll(t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", t.dir, err)
	}
	removed, err := sstable.RemoveIncomplete(fs, t.dir)
	if err != nil {
		return nil, err
	}
	for _, name := range removed {
		e.opts.Logger.Warn().Str("table", opts.Name).Str("file", name).Msg("removed what an interrupted flush or compaction left")
	}
	retired, truncations, err := sstable.CompleteObsoleteLogs(fs, t.dir)
	if err != nil {
		return nil, err
	}
	for _, g := range retired {
		e.opts.Logger.Info().Str("table", opts.Name).Uint64("generation", g).Msg("removed an SSTable a compaction or truncation replaced")
	}
	gens, err := sstable.Generations(fs, t.dir)
	if err != nil {
		return nil, err
	}
	t.active.Store(t.newMemtable())
	t.mu.nextGen = 1
	missingIndexes := false
	for _, g := range gens {
		ref, err := t.openSSTable(g)
		if err != nil {
			for _, s := range t.mu.sstables {
				s.r.Close()
			}
			return nil, err
		}
		t.mu.sstables = append(t.mu.sstables, ref)
		t.mu.nextGen = max(t.mu.nextGen, g+1)
		if t.loadIndexes(ref) {
			missingIndexes = true
		}
		m := ref.meta()
		if b := (commitlog.Position{Segment: m.CommitLogSegment, Offset: m.CommitLogOffset}); t.mu.flushed.Less(b) {
			t.mu.flushed = b
		}
	}
	t.demoteOverlapping()
	// A truncation the process stopped in: its SSTables are gone; record
	// its bound, so that replay skips what it removed, then let its log go.
	for _, tr := range truncations {
		t.mu.nextGen = max(t.mu.nextGen, tr.Highest+1)
	}
	for _, tr := range truncations {
		bound := commitlog.Position{Segment: tr.Bound.Segment, Offset: tr.Bound.Offset}
		if err := t.writeBoundMarker(bound); err != nil {
			t.close(false)
			return nil, err
		}
		if t.mu.flushed.Less(bound) {
			t.mu.flushed = bound
		}
		t.finishRetireLog(&obsoleteSet{id: tr.LogID})
	}
	if missingIndexes {
		t.buildIndexesInBackground()
	}
	return t, nil
}

// demoteOverlapping moves to level 0 every SSTable that overlaps another of
// its level (1 and deeper): what a compaction interrupted between publishing
// its outputs and recording its inputs' removal leaves.
func (t *Table) demoteOverlapping() {
	byLevel := map[int][]*sstableRef{}
	for _, s := range t.mu.sstables {
		if s.level > 0 && s.first != nil {
			byLevel[s.level] = append(byLevel[s.level], s)
		}
	}
	for level, ssts := range byLevel {
		sort.Slice(ssts, func(a, b int) bool { return bytes.Compare(ssts[a].first, ssts[b].first) < 0 })
		var reach []byte // the largest last prefix so far
		var prev *sstableRef
		for _, s := range ssts {
			if reach != nil && bytes.Compare(s.first, reach) <= 0 {
				for _, d := range []*sstableRef{prev, s} {
					if d.level != 0 {
						d.level = 0
						t.e.opts.Logger.Warn().Str("table", t.opts.Name).Uint64("generation", d.gen).Int("level", level).
							Msg("SSTable overlaps its level; it goes back to level 0")
					}
				}
			}
			if reach == nil || bytes.Compare(s.last, reach) > 0 {
				reach, prev = s.last, s
			}
		}
	}
}

// ID is the table's id.
func (t *Table) ID() mutation.TableID { return t.id }

// Reconfigure takes the options of an open table that may change while it
// is open (ALTER TABLE): when its tombstones may go. The compaction
// options are taken when the table is next opened.
func (t *Table) Reconfigure(opts TableOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts.EnsureDefaults()
	if mutation.TableID(opts.ID) != t.id {
		return fmt.Errorf("storage: reconfiguring %s.%s (%s) with the options of table %s", t.opts.Keyspace, t.opts.Name, t.id, mutation.TableID(opts.ID))
	}
	t.purge.Store(opts.purgeRule())
	t.reconfigureIndexes(slices.Clone(opts.Indexes))
	return nil
}

func (t *Table) flushedBound() commitlog.Position {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.flushed
}

func (t *Table) memtableSize() int64 { return t.active.Load().Size() }

// heldBytes is the memory of the table's memtables, flushing ones included.
func (t *Table) heldBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.active.Load().Size()
	for _, f := range t.mu.flushing {
		n += f.m.Size()
	}
	return n
}

// payloadBuffers recycle the encoding buffers of commit log records: the
// log copies a record into its own batch before Append returns.
var payloadBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (t *Table) apply(log *commitlog.Log, m *mutation.Mutation) error {
	// A malformed mutation would be acknowledged and then fail every read
	// of its partition, every flush and the commit log's replay: refuse it
	// before anything keeps it.
	if err := m.Check(); err != nil {
		return fmt.Errorf("storage: %s.%s: refusing a write: %w", t.opts.Keyspace, t.opts.Name, err)
	}
	t.writes.Add(1)
	start := time.Now()
	defer func() { t.metrics.WriteLatency.Record(since(start)) }()
	entries := m.AppendEntries(make([]mutation.Entry, 0, len(m.Rows)+1), t.e.opts.Partitioner.Token(m.Key))
	if err := t.e.waitForMemtableSpace(); err != nil {
		return err
	}
	buf := payloadBuffers.Get().(*[]byte)
	*buf = mutation.AppendMutation((*buf)[:0], m)
	if s := t.sampling.Load(); s != nil {
		s.Writes.Add(string(m.Key), 1)
		s.WriteSize.Max(string(m.Key), int64(len(*buf)))
	}
	if invariants.Enabled {
		checkEncoding(m, *buf)
	}
	t.writeMu.RLock()
	_, err := log.Append(t.id, *buf)
	payloadBuffers.Put(buf)
	if err != nil {
		t.writeMu.RUnlock()
		return err
	}
	active := t.active.Load()
	t.e.memtableBytes.Add(active.Apply(entries))
	t.indexApplied(active, entries)
	t.writeMu.RUnlock()
	t.e.afterWrite(t)
	return nil
}

func (t *Table) applyReplayed(entries []mutation.Entry) {
	m := t.active.Load()
	t.e.memtableBytes.Add(m.Apply(entries))
	t.indexApplied(m, entries)
}

// switchMemtable swaps the active memtable for an empty one and returns the
// old one with its commit log bound, or false when there is nothing to flush.
func (t *Table) switchMemtable() (flushingMemtable, bool) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	active := t.active.Load()
	if active.Empty() {
		return flushingMemtable{}, false
	}
	var bound commitlog.Position
	if log := t.e.log(); log != nil {
		bound = log.Position()
	}
	f := flushingMemtable{m: active, bound: bound}
	t.mu.flushing = append(t.mu.flushing, f)
	t.active.Store(t.newMemtable())
	return f, true
}

// Flush writes the active memtable to a new SSTable and waits for it. A
// memtable whose earlier flush failed is flushed first.
func (t *Table) Flush() (err error) {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	defer func() { t.e.space.flushed(err) }()
	t.mu.Lock()
	// Under flushMu, anything still in the flushing list is a failed flush.
	stuck := append([]flushingMemtable(nil), t.mu.flushing...)
	t.mu.Unlock()
	for _, f := range stuck {
		if err := t.flushMemtable(f); err != nil {
			return err
		}
	}
	f, ok := t.switchMemtable()
	if !ok {
		return nil
	}
	return t.flushMemtable(f)
}

// flushMemtable writes one switched-out memtable, the oldest in the
// flushing list.
// REQUIRES: t.flushMu held.
func (t *Table) flushMemtable(f flushingMemtable) error {
	w, gen, err := t.createSSTable(0)
	if err != nil {
		return t.flushFailed(err)
	}
	it := f.m.NewIter(nil, nil)
	b := &indexBuilder{specs: t.indexSpecs()}
	tokenLen := t.e.opts.SSTable.TokenLen
	for e := it.First(); e != nil; e = it.Next() {
		b.add(e, tokenLen)
		if err := w.Add(e); err != nil {
			it.Close()
			w.Abort()
			return t.flushFailed(err)
		}
	}
	// An iterator stops early on an entry it cannot decode: publishing what
	// came before would drop the rest of the memtable with the commit log
	// segments that hold it.
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		w.Abort()
		return t.flushFailed(err)
	}
	ref, err := t.publish(w, gen, f.bound)
	if err != nil {
		return t.flushFailed(err)
	}
	t.writeIndexes(ref, b)
	t.mu.Lock()
	t.mu.sstables = append(t.mu.sstables, ref)
	t.mu.flushing = t.mu.flushing[1:]
	t.memIndexes.Delete(f.m)
	if t.mu.flushed.Less(f.bound) {
		t.mu.flushed = f.bound
	}
	t.mu.Unlock()
	t.e.memtableBytes.Add(-f.m.Size())
	if log := t.e.log(); log != nil {
		if err := log.Discard(t.id, f.bound); err != nil {
			return err
		}
	}
	t.buildMissingIndexes(ref)
	t.e.opts.Logger.Debug().Str("keyspace", t.opts.Keyspace).Str("table", t.opts.Name).Uint64("generation", gen).
		Int64("bytes", ref.meta().DataSize).Msg("flushed")
	t.e.compactInBackground(t)
	return nil
}

// flushFailed reports a failed flush. The memtable stays in the flushing
// list, so reads still see it and the next Flush retries it, and its data
// stays in the commit log, whose segments are not discarded past it.
func (t *Table) flushFailed(err error) error {
	return t.e.reportFailure(fmt.Errorf("storage: flush %s.%s: %w", t.opts.Keyspace, t.opts.Name, err))
}

func (t *Table) allocGeneration() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.mu.nextGen
	t.mu.nextGen++
	return g
}

// view is what a read sees: memtables and referenced SSTables.
type view struct {
	memtables []*memtable.Memtable
	sstables  []*sstableRef
}

// views are recycled: a point read takes one, and building it afresh
// cost several allocations a read.
var views = sync.Pool{New: func() any { return new(view) }}

func (t *Table) acquireView() *view {
	v := views.Get().(*view)
	t.mu.Lock()
	defer t.mu.Unlock()
	v.memtables = append(v.memtables[:0], t.active.Load())
	for _, f := range t.mu.flushing {
		v.memtables = append(v.memtables, f.m)
	}
	v.sstables = v.sstables[:0]
	for _, s := range t.mu.sstables {
		s.refs.Add(1)
		v.sstables = append(v.sstables, s)
	}
	return v
}

// release lets the view's SSTables go; the view may not be used after.
func (v *view) release() {
	for _, s := range v.sstables {
		s.unref()
	}
	clear(v.memtables) // a pooled view must not keep them alive
	clear(v.sstables)
	views.Put(v)
}

// SSTableCount is the number of live SSTables.
func (t *Table) SSTableCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.sstables)
}

// Truncate removes every row of the table: the memtables are dropped and the
// SSTables deleted once no read holds them. A crash part-way leaves an
// obsolete log that start-up carries out, so the truncation happens whole.
func (t *Table) Truncate() error {
	t.truncating.Add(1)
	t.compactMu.Lock()
	t.truncating.Add(-1)
	defer t.compactMu.Unlock()
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	// With flushes and compactions held off, the list changes only here;
	// writes wait until the log records the bound they come after.
	t.writeMu.Lock()
	var bound commitlog.Position
	log := t.e.log()
	if log != nil {
		bound = log.Position()
	}
	t.mu.Lock()
	old := append([]*sstableRef(nil), t.mu.sstables...)
	t.mu.Unlock()
	set, err := t.retireLog(old, &bound)
	if err != nil {
		t.writeMu.Unlock()
		return fmt.Errorf("storage: truncate %s.%s: %w", t.opts.Keyspace, t.opts.Name, err)
	}
	t.mu.Lock()
	dropped := t.active.Load().Size()
	t.memIndexes.Delete(t.active.Load())
	for _, f := range t.mu.flushing {
		dropped += f.m.Size()
		t.memIndexes.Delete(f.m)
	}
	t.active.Store(t.newMemtable())
	t.mu.flushing = nil
	t.mu.sstables = nil
	t.mu.flushed = bound
	t.mu.truncations++
	t.mu.Unlock()
	t.writeMu.Unlock()
	t.e.memtableBytes.Add(-dropped)
	t.e.space.flushed(nil)
	// Replay learns a table's flushed bound from its SSTables, so an empty
	// SSTable records the truncation's bound, before the log that also
	// records it can go.
	if err := t.writeBoundMarker(bound); err != nil {
		for _, s := range old {
			s.unref() // the files stay for start-up to remove through the log
		}
		return err
	}
	if len(old) == 0 {
		t.finishRetireLog(set)
	} else {
		retire(old, set)
	}
	if log != nil {
		return log.Discard(t.id, bound)
	}
	return nil
}

// writeBoundMarker publishes an empty SSTable that records the commit log
// bound, so that a restart does not replay writes a truncate removed.
func (t *Table) writeBoundMarker(bound commitlog.Position) error {
	w, gen, err := t.createSSTable(0)
	if err != nil {
		return err
	}
	ref, err := t.publish(w, gen, bound)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.mu.sstables = append(t.mu.sstables, ref)
	t.mu.Unlock()
	return nil
}

func (t *Table) close(removeFiles bool) error {
	t.mu.Lock()
	old := t.mu.sstables
	t.mu.sstables, t.mu.closed = nil, true
	t.mu.Unlock()
	for _, s := range old {
		if removeFiles {
			s.obsolete.Store(true)
		}
		s.unref()
	}
	if removeFiles {
		// Snapshots outlive the table, as in Cassandra; the directory goes
		// when none is left.
		var errs []error
		names, _ := t.e.opts.FS.List(t.dir)
		kept := false
		for _, n := range names {
			if n == snapshotsDir {
				kept = true
				continue
			}
			errs = append(errs, t.e.opts.FS.Remove(t.e.opts.FS.PathJoin(t.dir, n)))
		}
		if !kept {
			errs = append(errs, t.e.opts.FS.Remove(t.dir))
		}
		return errors.Join(errs...)
	}
	return nil
}

// checkEncoding asserts that a mutation's encoding decodes back to the
// same encoding, so that what the commit log keeps replays as written.
func checkEncoding(m *mutation.Mutation, encoded []byte) {
	back, err := mutation.DecodeMutation(bytes.Clone(encoded))
	if err != nil {
		panic(invariants.Failf("storage: a checked mutation of table %s, key %x, does not decode: %v", m.Table, m.Key, err))
	}
	if again := mutation.AppendMutation(nil, back); !bytes.Equal(again, encoded) {
		panic(invariants.Failf("storage: a mutation of table %s, key %x, encodes differently after a round trip", m.Table, m.Key))
	}
}
