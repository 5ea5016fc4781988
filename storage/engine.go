package storage

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/internal/workers"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/sstable"
)

// ErrNotRecovered is returned by writes before Recover has run.
var ErrNotRecovered = errors.New("storage: the engine has not replayed its commit log yet (call Recover)")

// ErrUnknownTable is wrapped by operations on a table the engine does not have.
var ErrUnknownTable = errors.New("storage: unknown table")

// Engine owns a node's tables, its commit log and the shared block cache.
//
// Start-up order: Open, then OpenTable for every table the schema knows,
// then Recover (which replays the commit log into them), then writes.
type Engine struct {
	opts  Options
	cache *sstable.Cache

	mu struct {
		sync.RWMutex
		tables map[mutation.TableID]*Table
		closed bool
	}
	// commitLog is set once by Recover; every write reads it, so it sits
	// outside mu.
	commitLog atomic.Pointer[commitlog.Log]
	// memtableBytes is the memory held by every table's memtables.
	memtableBytes atomic.Int64
	space         memtableSpace
	bg            sync.WaitGroup
	// flushSlots and compactionSlots bound concurrent background flushes
	// and compactions apart (memtable_flush_writers, concurrent_compactors):
	// long compactions never hold off the flushes that writes wait for.
	flushSlots      chan struct{}
	compactionSlots chan struct{}
	// throughput is the compaction throughput limit in MiB/s (0: none),
	// changed at run time by nodetool setcompactionthroughput.
	throughput atomic.Int64
	// flushStage and compactionStage count the background flushes and
	// compactions (Cassandra's MemtableFlushWriter and CompactionExecutor).
	flushStage, compactionStage workers.Stage
	// compactionsStopped is closed by StopCompactions: running compactions
	// give up (their inputs stay), and no new one starts.
	compactionsStopped chan struct{}
	stopCompactions    sync.Once
	// tasks are the compactions running (nodetool compactionstats).
	tasks taskRegistry
	// compactions and compactedBytes count the compactions finished and
	// what they wrote (Cassandra's Compaction CompletedTasks and
	// BytesCompacted).
	compactions, compactedBytes atomic.Int64
}

// ErrCompactionStopped is a compaction that gave up because the engine
// is stopping its compactions (a drain, a shutdown); its inputs stay.
var ErrCompactionStopped = errors.New("storage: compaction stopped: the node is draining or shutting down")

// ErrCompactionInterrupted is a compaction that gave up because its table
// is being truncated or dropped, which would otherwise wait for it to end
// (as Cassandra interrupts a table's compactions for both); its inputs
// stay until the truncation removes them.
var ErrCompactionInterrupted = errors.New("storage: compaction interrupted: its table is being truncated or dropped")

// givenUp reports whether a compaction ended on purpose, which is no
// failure: stopped by the node, or interrupted for its table.
func givenUp(err error) bool {
	return errors.Is(err, ErrCompactionStopped) || errors.Is(err, ErrCompactionInterrupted)
}

// StopCompactions makes running compactions give up at once, their
// partial outputs removed and their inputs kept, and refuses new ones, as
// a drain or a shutdown wants: neither waits for a long compaction.
func (e *Engine) StopCompactions() {
	e.stopCompactions.Do(func() { close(e.compactionsStopped) })
}

// compactionsStopping reports whether StopCompactions was called.
func (e *Engine) compactionsStopping() bool {
	select {
	case <-e.compactionsStopped:
		return true
	default:
		return false
	}
}

// Open prepares an engine; no table is open yet.
func Open(opts Options) (*Engine, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	if err := opts.FS.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", opts.DataDir, err)
	}
	e := &Engine{opts: opts, cache: sstable.NewCache(opts.BlockCacheSize),
		flushSlots: make(chan struct{}, 2), compactionSlots: make(chan struct{}, 2), compactionsStopped: make(chan struct{})}
	e.mu.tables = map[mutation.TableID]*Table{}
	e.throughput.Store(int64(opts.CompactionThroughput))
	e.space.init()
	return e, nil
}

func (e *Engine) tableDir(o *TableOptions) string {
	return e.opts.FS.PathJoin(e.opts.DataDir, o.Keyspace, fmt.Sprintf("%s-%x", o.Name, o.ID))
}

// OpenTable opens (or creates) a table's directory and SSTables.
func (e *Engine) OpenTable(opts TableOptions) (*Table, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.closed {
		return nil, errors.New("storage: engine closed")
	}
	id := mutation.TableID(opts.ID)
	if _, ok := e.mu.tables[id]; ok {
		return nil, fmt.Errorf("storage: table %s.%s (%s) is already open", opts.Keyspace, opts.Name, id)
	}
	t, err := openTable(e, opts)
	if err != nil {
		return nil, err
	}
	e.mu.tables[id] = t
	return t, nil
}

// Table returns an open table.
func (e *Engine) Table(id mutation.TableID) (*Table, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, ok := e.mu.tables[id]
	if !ok {
		return nil, fmt.Errorf("%w %s", ErrUnknownTable, id)
	}
	return t, nil
}

func (e *Engine) tables() []*Table {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]*Table, 0, len(e.mu.tables))
	for _, t := range e.mu.tables {
		out = append(out, t)
	}
	return out
}

// Partitioner is the partitioner the engine orders partitions by.
func (e *Engine) Partitioner() partitioner.Partitioner { return e.opts.Partitioner }

func (e *Engine) log() *commitlog.Log { return e.commitLog.Load() }

// RecoveryStats says what Recover did.
type RecoveryStats struct {
	commitlog.ReplayStats
	Applied int // records applied to memtables
	Skipped int // records of data already in SSTables, or of unknown tables
	// Quarantined counts the records that did not decode and were set
	// aside (Options.IgnoreReplayErrors).
	Quarantined int
}

// unreplayable handles a commit log record whose frame checks but whose
// mutation does not decode: written so by this process's own encoder, a
// bug rather than a torn write. Dropping it and applying the records
// around it would lose an acknowledged write in silence, so replay stops
// with the table and the key (the commit log adds the file and offset);
// with Options.IgnoreReplayErrors the record goes to the commit log's
// quarantine file instead and replay goes on.
func (e *Engine) unreplayable(log *commitlog.Log, pos commitlog.Position, payload []byte, byID map[mutation.TableID]*Table, cause error) error {
	about := map[string]string{"error": cause.Error()}
	what := "a mutation"
	if id, key, err := mutation.DecodeMutationHeader(payload); err == nil {
		about["table_id"], about["key"] = id.String(), hex.EncodeToString(key)
		what = fmt.Sprintf("a mutation of table %s, key %x,", id, key)
		if t, ok := byID[id]; ok {
			about["table"] = t.opts.Keyspace + "." + t.opts.Name
			what = fmt.Sprintf("a mutation of table %s, key %x,", about["table"], key)
		}
	}
	if !e.opts.IgnoreReplayErrors {
		return fmt.Errorf("storage: %s does not decode: %w (start with --commitlog-ignore-replay-errors "+
			"to set such records aside in a quarantine file in %s)", what, cause, e.opts.CommitLog.Dir)
	}
	file, err := log.Quarantine(pos, payload, about)
	if err != nil {
		return err
	}
	e.opts.Logger.Error().Str("segment", commitlog.SegmentFileName(pos.Segment)).Uint32("end_offset", pos.Offset).
		Str("table", about["table"]).Str("key", about["key"]).Err(cause).Str("quarantine", file).
		Msg("commit log record does not decode; set aside in the quarantine file")
	return nil
}

// Recover opens the commit log, replays what the tables have not flushed,
// flushes it, and lets the replayed segments go. Writes are refused until it
// has run.
func (e *Engine) Recover() (RecoveryStats, error) {
	var stats RecoveryStats
	tables := e.tables()
	opts := e.opts.CommitLog
	for _, t := range tables {
		if b := t.flushedBound(); b.Segment >= opts.MinSegmentID {
			opts.MinSegmentID = b.Segment + 1
		}
	}
	log, err := commitlog.Open(opts)
	if err != nil {
		return stats, err
	}
	byID := map[mutation.TableID]*Table{}
	for _, t := range tables {
		byID[t.id] = t
	}
	stats.ReplayStats, err = log.Replay(func(pos commitlog.Position, payload []byte) error {
		if id, _, err := mutation.DecodeMutationHeader(payload); err == nil {
			if t, ok := byID[id]; !ok || !t.flushedBound().Less(pos) {
				stats.Skipped++
				return nil
			}
		}
		// The payload is only valid during the call, and the memtable keeps
		// what the mutation points into: decode a copy.
		m, err := mutation.DecodeMutation(bytes.Clone(payload))
		if err != nil {
			if err := e.unreplayable(log, pos, payload, byID, err); err != nil {
				return err
			}
			stats.Quarantined++
			return nil
		}
		byID[m.Table].applyReplayed(m.AppendEntries(nil, e.opts.Partitioner.Token(m.Key)))
		stats.Applied++
		return nil
	})
	if err != nil {
		log.Close()
		return stats, err
	}
	e.commitLog.Store(log)
	for _, t := range tables {
		if err := t.Flush(); err != nil {
			return stats, err
		}
	}
	if err := log.DiscardReplayed(); err != nil {
		return stats, err
	}
	e.opts.Logger.Info().Int("segments", stats.Segments).Int("applied", stats.Applied).
		Int("skipped", stats.Skipped).Msg("commit log replayed")
	return stats, nil
}

// Apply makes a mutation durable and visible: commit log first, then the
// table's memtable (INVARIANT E1). The mutation must not be changed
// afterwards.
func (e *Engine) Apply(m *mutation.Mutation) error {
	log := e.log()
	if log == nil {
		return ErrNotRecovered
	}
	t, err := e.Table(m.Table)
	if err != nil {
		return err
	}
	return t.apply(log, m)
}

// CommitLogAllocationFailures is how many times the commit log failed to
// make a new segment since Recover opened it (a full disk, most often).
func (e *Engine) CommitLogAllocationFailures() int64 {
	if log := e.log(); log != nil {
		return log.AllocationFailures()
	}
	return 0
}

// Flush writes every table's memtable to an SSTable.
func (e *Engine) Flush() error {
	var errs []error
	for _, t := range e.tables() {
		errs = append(errs, t.Flush())
	}
	return errors.Join(errs...)
}

// DropTable removes a table and its files.
func (e *Engine) DropTable(id mutation.TableID) error {
	t, err := e.Table(id)
	if err != nil {
		return err
	}
	if err := t.Truncate(); err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.mu.tables, id)
	e.mu.Unlock()
	return t.close(true)
}

// afterWrite starts the flushes that memory or commit log space call for.
func (e *Engine) afterWrite(t *Table) {
	if t.memtableSize() >= e.opts.MemtableSize {
		e.flushInBackground(t)
		return
	}
	if e.memtableBytes.Load() > e.cleanupThreshold() {
		e.flushInBackground(e.largestTable())
	}
	if log := e.log(); log != nil && log.Size() > e.opts.CommitLogTotalSpace {
		for _, id := range log.DirtyTables() {
			if dirty, err := e.Table(id); err == nil {
				e.flushInBackground(dirty)
			}
		}
	}
}

func (e *Engine) flushInBackground(t *Table) {
	if !t.flushPending.CompareAndSwap(false, true) {
		return
	}
	e.inBackground(t, "flush", e.flushSlots, &e.flushStage, func() error {
		t.flushPending.Store(false)
		return t.Flush()
	})
}

func (e *Engine) compactInBackground(t *Table) {
	if e.opts.DisableAutoCompaction || t.opts.Compaction.Disabled || e.compactionsStopping() || !t.compactPending.CompareAndSwap(false, true) {
		return
	}
	e.inBackground(t, "compaction", e.compactionSlots, &e.compactionStage, func() error {
		defer t.compactPending.Store(false)
		for {
			did, err := t.compactOnce()
			if err != nil || !did {
				return err
			}
		}
	})
}

// inBackground runs work on its own goroutine once it gets one of slots,
// and logs its error: nobody waits for background work's result.
func (e *Engine) inBackground(t *Table, what string, slots chan struct{}, stage *workers.Stage, work func() error) {
	e.bg.Add(1)
	stage.Queued()
	go func() {
		defer e.bg.Done()
		slots <- struct{}{}
		defer func() { <-slots }()
		stage.Started()
		defer stage.Done()
		if err := work(); err != nil && !givenUp(err) {
			e.opts.Logger.Error().Err(err).Str("keyspace", t.opts.Keyspace).Str("table", t.opts.Name).Msg(what + " failed")
		}
	}()
}

// Close flushes nothing (the commit log keeps unflushed writes), stops
// running compactions (StopCompactions), waits for the rest of the
// background work and closes every file.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.mu.closed {
		e.mu.Unlock()
		return errors.New("storage: engine closed twice")
	}
	e.mu.closed = true
	e.mu.Unlock()
	e.StopCompactions()
	e.bg.Wait()
	var errs []error
	for _, t := range e.tables() {
		errs = append(errs, t.close(false))
	}
	if log := e.log(); log != nil {
		errs = append(errs, log.Close())
	}
	e.cache.Close()
	return errors.Join(errs...)
}
