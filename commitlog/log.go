package commitlog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/internal/durable"
	"github.com/sibyldb/sibyl/mutation"
)

// ErrClosed is returned by operations on a closed log.
var ErrClosed = errors.New("commitlog: closed")

// chunk is encoded bytes waiting to be written to one segment. A chunk for a
// segment whose file is not open yet starts with the segment header.
type chunk struct {
	seg  *segment
	data []byte
}

// Log is the commit log. In mmap mode (the default) an appender copies its
// record into the tail segment's mapping under mu, and it has reached the
// operating system once the copy is done. In write mode appenders encode
// their records into a shared pending buffer under mu; whichever appender
// finds no write in progress becomes the leader, takes the whole pending
// buffer and writes it with one system call. In both, a leader does the
// fsyncs the sync mode asks for, one for every writer waiting.
type Log struct {
	opts Options
	// mapped says segments are memory-mapped; fixed at Open.
	mapped bool

	mu struct {
		sync.Mutex
		cond     sync.Cond
		segments []*segment // oldest first; the last is the tail once there is one
		// tail is the segment appends go to; nil until one could be made.
		tail     *segment
		tailSize int64 // bytes appended to the tail, written or pending
		nextID   uint64
		pending  []chunk
		// retiring are mapped segments the tail moved away from: the next
		// leader fsyncs, unmaps and closes them.
		retiring []*segment
		// spare is a written batch's buffer, kept for the next batch so that
		// appends do not grow a fresh buffer each leader turn.
		spare    []byte
		appended Position // end of the last appended record
		writing  bool     // a leader is doing file operations
		written  Position // every record ending at or before it reached the OS
		synced   Position // every record ending at or before it is fsynced
		lastSync time.Time
		err      error // sticky: after a failed write or sync the log refuses appends
		closed   bool
		// prepared is a mapped segment made ahead of need, so that a full
		// tail is replaced without creating a file under the lock.
		prepared *segment
		late     *segment // prepared after Close began; Close removes it
		// preparing is set while the preparer makes a segment; a rollover
		// waits for it rather than making another.
		preparing bool
		// leaderTail is the tail a leader took for its turn: it may fsync
		// it with the lock released, so the segment is not closed under it.
		leaderTail *segment
		// allocErr is the last failure to make a new segment, allocFailedAt
		// when it came (writes within a second of it do not try again) and
		// allocSince when the failures began; nil once one was made again.
		allocErr      error
		allocFailedAt time.Time
		allocSince    time.Time
	}
	// allocationFailures counts the failures to make a new segment.
	allocationFailures atomic.Int64
	quarantine         quarantine
	// overdue is set when periodic mode's last fsync is more than 1.5
	// periods old, by a timer each fsync re-arms: appends then wait for an
	// fsync, and in the meantime check a flag instead of reading the clock.
	overdue      atomic.Bool
	overdueTimer *time.Timer
	prepare      chan struct{} // wakes the segment preparer
	preparerDone chan struct{}
	// size mirrors Size's answer, updated under mu, so that writers checking
	// the commit log's total space after every write take no lock.
	size       atomic.Int64
	syncerDone chan struct{}
	stop       chan struct{}
}

// updateSizeLocked refreshes size after the segments or the tail changed.
// REQUIRES: l.mu held.
func (l *Log) updateSizeLocked() {
	full := int64(len(l.mu.segments))
	if l.mu.tail != nil {
		full--
	}
	l.size.Store(full*l.opts.SegmentSize + l.mu.tailSize)
}

// Open opens the log in opts.Dir, keeping the segments already there for
// Replay, and starts a new tail segment.
func Open(opts Options) (*Log, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	if err := opts.FS.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("commitlog: create %s: %w", opts.Dir, err)
	}
	ids, err := listSegments(opts.FS, opts.Dir)
	if err != nil {
		return nil, err
	}
	l := &Log{opts: opts, stop: make(chan struct{}), syncerDone: make(chan struct{}), mapped: mmapSupported && !opts.DisableMmap,
		prepare: make(chan struct{}, 1), preparerDone: make(chan struct{})}
	l.mu.cond.L = &l.mu.Mutex
	next := max(opts.MinSegmentID, uint64(opts.Now().UnixMicro()))
	for _, id := range ids {
		l.mu.segments = append(l.mu.segments, &segment{id: id, name: opts.FS.PathJoin(opts.Dir, SegmentFileName(id)), replayed: true, closed: true})
		next = max(next, id+1)
	}
	l.mu.nextID = next
	l.mu.lastSync = opts.Now()
	// Every record to come is after every one found (C2), even before the
	// tail is made.
	l.mu.appended = Position{Segment: next}
	l.mu.written, l.mu.synced = l.mu.appended, l.mu.appended
	l.mu.Lock()
	if err := l.startSegmentLocked(); err != nil {
		// A node on a full disk must still start, replay and flush what
		// it has, which frees the replayed segments: the first write tries
		// again (C4).
		l.allocationFailures.Add(1)
		l.mu.allocErr = fmt.Errorf("%w: %w; writes are refused until one can be made", ErrSegmentAllocation, err)
		l.mu.allocSince = opts.Now()
		l.opts.Logger.Error().Err(err).Msg("commit log: cannot make a segment at start; writes are refused until one can be made")
	}
	l.mu.Unlock()
	if opts.SyncMode == SyncPeriodic {
		l.overdueTimer = time.AfterFunc(opts.SyncPeriod*3/2, func() { l.overdue.Store(true) })
		go l.periodicSyncer()
	} else {
		close(l.syncerDone)
	}
	if l.mapped {
		go l.prepareSegments()
		l.kickPreparer()
	} else {
		close(l.preparerDone)
	}
	return l, nil
}

// startSegmentLocked makes a new tail. In write mode the leader creates its
// file when it writes the header chunk; in mmap mode the file is created,
// allocated and mapped here, and the segment it replaces is handed to the
// next leader to fsync and close.
// REQUIRES: l.mu held.
func (l *Log) startSegmentLocked() error {
	seg := l.takePreparedLocked()
	if seg == nil {
		seg = l.newSegmentLocked()
		if l.mapped {
			mapped, err := l.createMapped(seg)
			if err != nil {
				return err
			}
			if !mapped {
				l.mapped = false // the filesystem has no file descriptors: write mode
			}
			l.kickPreparer() // so that the next rollover finds one ready
		}
	}
	id := seg.id
	if l.mu.tail != nil {
		l.mu.retiring = append(l.mu.retiring, l.mu.tail)
	}
	l.mu.segments = append(l.mu.segments, seg)
	l.mu.tail = seg
	l.mu.tailSize = segmentHeaderSize
	if seg.mapped == nil {
		l.mu.pending = append(l.mu.pending, chunk{seg: seg, data: appendSegmentHeader(nil, id)})
	}
	if start := (Position{Segment: id, Offset: segmentHeaderSize}); l.mu.appended.Less(start) {
		l.mu.appended = start
	}
	if seg.mapped != nil {
		l.mu.written = l.mu.appended
	}
	l.updateSizeLocked()
	return nil
}

// ErrSegmentAllocation is wrapped by the refusal of a write that needed a
// new segment the log could not make (a full disk, most often). Nothing was
// written: the log tries again at a later write, and takes writes again
// once a segment can be made.
var ErrSegmentAllocation = errors.New("commitlog: cannot make a new segment")

// allocationRetryInterval is how long after a failure to make a segment the
// writes that need one are refused without trying again, so that a full
// disk costs each of them no file operations.
const allocationRetryInterval = time.Second

// rollOverLocked replaces a full tail. A failure to make the new segment
// leaves the log as it was, with nothing half-written, so it is not the
// sticky failure of a write: this writer is refused and a later one tries
// again (C4).
// REQUIRES: l.mu held.
func (l *Log) rollOverLocked() error {
	now := l.opts.Now()
	if l.mu.allocErr != nil && now.Sub(l.mu.allocFailedAt) < allocationRetryInterval {
		return l.mu.allocErr
	}
	if err := l.startSegmentLocked(); err != nil {
		l.allocationFailures.Add(1)
		if l.mu.allocErr == nil {
			l.mu.allocSince = now
			l.opts.Logger.Error().Err(err).Msg("commit log: cannot make a new segment; writes are refused until one can be made")
		}
		l.mu.allocErr = fmt.Errorf("%w: %w; writes are refused until one can be made", ErrSegmentAllocation, err)
		l.mu.allocFailedAt = now
		return l.mu.allocErr
	}
	if l.mu.allocErr != nil {
		l.opts.Logger.Info().Dur("after", now.Sub(l.mu.allocSince)).Int64("failures", l.allocationFailures.Load()).
			Msg("commit log: made a new segment again; taking writes")
		l.mu.allocErr = nil
	}
	return nil
}

// AllocationFailures is how many times the log failed to make a new
// segment since it was opened.
func (l *Log) AllocationFailures() int64 { return l.allocationFailures.Load() }

// newSegmentLocked allocates the next segment id.
// REQUIRES: l.mu held.
func (l *Log) newSegmentLocked() *segment {
	id := l.mu.nextID
	l.mu.nextID++
	return &segment{id: id, name: l.opts.FS.PathJoin(l.opts.Dir, SegmentFileName(id)), dirty: map[[16]byte]*Position{}}
}

// MaxRecordSize is the largest payload the log accepts.
func (l *Log) MaxRecordSize() int { return int(l.opts.SegmentSize/2) - recordHeaderSize }

// Append writes a record for table and returns its end position once the
// sync mode's promise holds (INVARIANT C1).
func (l *Log) Append(table mutation.TableID, payload []byte) (Position, error) {
	if len(payload) == 0 {
		return Position{}, errors.New("commitlog: an empty record (a zero length marks the end of a segment's records)")
	}
	if len(payload) > l.MaxRecordSize() {
		return Position{}, fmt.Errorf("commitlog: a mutation of %d bytes is larger than the maximum of %d (half of commitlog_segment_size)",
			len(payload), l.MaxRecordSize())
	}
	size := int64(recordSize(len(payload)))
	hdr := recordHeader(payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return Position{}, ErrClosed
	}
	if l.mu.err != nil {
		return Position{}, l.mu.err
	}
	for l.mu.tail == nil || l.mu.tailSize+size > l.opts.SegmentSize {
		if l.mu.prepared == nil && l.mu.preparing {
			// The next segment is on its way; whoever wakes first makes it
			// the tail, and the others find room in it.
			l.mu.cond.Wait()
			if l.mu.closed {
				return Position{}, ErrClosed
			}
			if l.mu.err != nil {
				return Position{}, l.mu.err
			}
			continue
		}
		if err := l.rollOverLocked(); err != nil {
			return Position{}, err
		}
	}
	tail := l.mu.tail
	if tail.mapped != nil {
		writeRecord(tail.mapped[l.mu.tailSize:l.mu.tailSize+size], hdr, payload)
	} else {
		last := &l.mu.pending
		if n := len(*last); n == 0 || (*last)[n-1].seg != tail {
			*last = append(*last, chunk{seg: tail, data: l.mu.spare})
			l.mu.spare = nil
		}
		c := &(*last)[len(*last)-1]
		c.data = appendFramed(c.data, hdr, payload)
	}
	l.mu.tailSize += size
	l.updateSizeLocked()
	pos := Position{Segment: tail.id, Offset: uint32(l.mu.tailSize)}
	l.mu.appended = pos
	if tail.mapped != nil {
		l.mu.written = pos // copied into the page cache
	}
	tail.markDirty(table, pos)

	needSync := l.opts.SyncMode != SyncPeriodic || l.overdue.Load()
	return pos, l.waitLocked(pos, needSync)
}

// waitLocked returns once pos has been written (and synced when needSync),
// leading the writes itself when no one else is.
// REQUIRES: l.mu held.
func (l *Log) waitLocked(pos Position, needSync bool) error {
	for {
		if l.mu.err != nil {
			return l.mu.err
		}
		done := l.mu.written
		if needSync {
			done = l.mu.synced
		}
		if !done.Less(pos) {
			return nil
		}
		if l.mu.writing {
			l.mu.cond.Wait()
			continue
		}
		if l.mu.closed {
			return ErrClosed // Close's own turn was the last
		}
		l.leadLocked(needSync)
	}
}

// leadLocked writes everything pending, fsyncing when asked, with l.mu
// released during the file operations.
// REQUIRES: l.mu held, no leader.
func (l *Log) leadLocked(sync bool) {
	l.mu.writing = true
	if sync && l.opts.SyncMode == SyncGroup {
		// Wait out the window so that writers arriving meanwhile share the fsync.
		if wait := l.opts.GroupWindow - l.opts.Now().Sub(l.mu.lastSync); wait > 0 {
			l.mu.Unlock()
			time.Sleep(wait)
			l.mu.Lock()
		}
	}
	batch := l.mu.pending
	l.mu.pending = nil
	retiring := l.mu.retiring
	l.mu.retiring = nil
	end := l.mu.appended
	tail := l.mu.tail // nil before the first segment is made
	l.mu.leaderTail = tail
	l.mu.Unlock()

	err := l.writeChunks(batch)
	if err == nil {
		err = l.closeRetiring(retiring)
	}
	if err == nil && sync && tail != nil && tail.file != nil {
		if err = tail.file.Sync(); err != nil {
			err = fmt.Errorf("sync %s: %w", tail.name, err)
		}
	}

	l.mu.Lock()
	l.mu.writing = false
	l.mu.leaderTail = nil
	if err == nil {
		for _, seg := range retiring {
			seg.closed = true
		}
	} else {
		l.mu.retiring = append(retiring, l.mu.retiring...)
	}
	l.recycleLocked(batch)
	if err != nil && l.mu.err == nil {
		l.mu.err = fmt.Errorf("commitlog: %w; the commit log refuses writes from now on", err)
		if l.opts.OnFailure != nil {
			go l.opts.OnFailure(l.mu.err)
		}
	}
	if err == nil {
		if l.mu.written.Less(end) {
			l.mu.written = end // mapped appends may have moved it past end already
		}
		if sync {
			l.mu.synced = end
			l.mu.lastSync = l.opts.Now()
			if l.overdueTimer != nil {
				l.overdue.Store(false)
				l.overdueTimer.Reset(l.opts.SyncPeriod * 3 / 2)
			}
		}
	}
	l.mu.cond.Broadcast()
}

// maxSpareBuffer bounds the buffer kept between leader turns, so that one
// burst does not pin a large allocation.
const maxSpareBuffer = 4 << 20

// recycleLocked keeps the largest written buffer (within maxSpareBuffer)
// and the chunk slice for the next batch.
// REQUIRES: l.mu held, batch written (or failed) and owned by no one.
func (l *Log) recycleLocked(batch []chunk) {
	for i := range batch {
		if c := cap(batch[i].data); c <= maxSpareBuffer && c > cap(l.mu.spare) {
			l.mu.spare = batch[i].data[:0]
		}
		batch[i] = chunk{}
	}
	if l.mu.pending == nil {
		l.mu.pending = batch[:0]
	}
}

// writeChunks writes one leader turn's pending bytes (write mode),
// creating segment files as their header chunks come.
func (l *Log) writeChunks(batch []chunk) error {
	for _, c := range batch {
		if c.seg.file == nil {
			f, err := l.opts.FS.Create(c.seg.name)
			if err != nil {
				return fmt.Errorf("create %s: %w", c.seg.name, err)
			}
			c.seg.file = f
			if err := l.syncDir(); err != nil {
				return err
			}
		}
		if _, err := c.seg.file.Write(c.data); err != nil {
			return fmt.Errorf("write %s: %w", c.seg.name, err)
		}
	}
	return nil
}

func (l *Log) syncDir() error {
	if err := durable.SyncDir(l.opts.FS, l.opts.Dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", l.opts.Dir, err)
	}
	return nil
}

// Sync writes and fsyncs everything appended so far.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	return l.waitLocked(l.mu.appended, true)
}

func (l *Log) periodicSyncer() {
	defer close(l.syncerDone)
	t := time.NewTicker(l.opts.SyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			// An error is sticky in the log and reaches the next writer.
			_ = l.Sync()
		}
	}
}

// Position returns the end of the last appended record: every record
// appended later ends after it.
func (l *Log) Position() Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.appended
}

// Discard records that table has flushed everything up to and including
// upTo, and deletes the segments no table needs any more.
func (l *Log) Discard(table mutation.TableID, upTo Position) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, seg := range l.mu.segments {
		seg.markClean(table, upTo)
	}
	return l.removeCleanLocked()
}

// DiscardReplayed lets go of the segments found at Open, once storage has
// flushed everything Replay gave it.
func (l *Log) DiscardReplayed() error {
	if err := l.closeQuarantine(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, seg := range l.mu.segments {
		seg.replayed = false
	}
	return l.removeCleanLocked()
}

// removeCleanLocked deletes the segments before the tail that are clean,
// fully written, and not kept for replay.
// REQUIRES: l.mu held.
func (l *Log) removeCleanLocked() error {
	kept := l.mu.segments[:0]
	var errs []error
	for _, seg := range l.mu.segments {
		clean := seg != l.mu.tail && len(seg.dirty) == 0 && !seg.replayed
		if clean && !seg.closed && seg.mapped != nil {
			// A retired mapped segment no leader has taken yet holds nothing
			// anyone needs: close it without the fsync. (A written one may
			// still have bytes pending for its leader.)
			if err := l.dropRetiringLocked(seg); err != nil {
				errs = append(errs, err)
			}
		}
		if !clean || !seg.closed {
			kept = append(kept, seg)
			continue
		}
		if err := l.opts.FS.Remove(seg.name); err != nil {
			errs = append(errs, fmt.Errorf("commitlog: remove %s: %w", seg.name, err))
			kept = append(kept, seg)
		}
	}
	l.mu.segments = kept
	l.updateSizeLocked()
	return errors.Join(errs...)
}

// SegmentCount is the number of segment files, for tests and metrics.
func (l *Log) SegmentCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.mu.segments)
}

// Size is the bytes held by live segments, which storage compares with
// commitlog_total_space.
func (l *Log) Size() int64 { return l.size.Load() }

// DirtyTables returns the tables with records in the oldest segment, which
// storage flushes when the log grows past its limit.
func (l *Log) DirtyTables() []mutation.TableID {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []mutation.TableID
	for _, seg := range l.mu.segments {
		if seg == l.mu.tail {
			break
		}
		for id := range seg.dirty {
			out = append(out, id)
		}
		if len(out) > 0 {
			break
		}
	}
	return out
}

// Close writes and fsyncs what is pending and closes the files.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	// Closed first: no append starts and no leader but Close's own turn runs
	// from here, so nothing touches a file once it is closed below.
	l.mu.closed = true
	for l.mu.writing {
		l.mu.cond.Wait()
	}
	var errs []error
	if l.mu.err == nil {
		l.leadLocked(true)
		if l.mu.err != nil {
			errs = append(errs, l.mu.err)
		}
	}
	for _, seg := range l.mu.segments {
		errs = append(errs, seg.release())
	}
	prepared := l.mu.prepared
	l.mu.prepared = nil
	l.mu.Unlock()
	close(l.stop)
	<-l.syncerDone
	<-l.preparerDone
	if l.overdueTimer != nil {
		l.overdueTimer.Stop()
	}
	if prepared != nil {
		errs = append(errs, l.discardPrepared(prepared))
	} else if p := l.takeLatePrepared(); p != nil {
		errs = append(errs, l.discardPrepared(p))
	}
	errs = append(errs, l.closeQuarantine())
	return errors.Join(errs...)
}
