package storage

import (
	"fmt"
	"sync"
)

// memtableSpace accounts for the memory every table's memtables hold, and
// holds writes back once it is all taken (memtable_heap_space): flushes
// start well before that, at a third of it (Cassandra's cleanup threshold
// with two flush workers), so writes wait only when flushing cannot keep
// up, or fails.
type memtableSpace struct {
	mu   sync.Mutex
	cond sync.Cond
	// flushes counts finished flushes (and truncations), so a waiting write
	// can tell that one happened; lastErr is the newest one's error.
	flushes uint64
	lastErr error
}

func (s *memtableSpace) init() { s.cond.L = &s.mu }

// flushed records that a flush ended with err (nil: memory may be free).
func (s *memtableSpace) flushed(err error) {
	s.mu.Lock()
	s.flushes++
	s.lastErr = err
	s.mu.Unlock()
	s.cond.Broadcast()
}

// cleanupThreshold is the memtable memory past which the largest table is
// flushed.
func (e *Engine) cleanupThreshold() int64 { return e.opts.MemtableTotalSpace / 3 }

// flushAttempts is how many failed flushes a write waiting for memtable
// space sees before it fails: the first to end may have started before the
// write waited (and before a fault cleared), so one failure is not enough.
const flushAttempts = 3

// waitForMemtableSpace returns once the memtables hold no more than their
// space, flushing the largest table while they do. Flushes that keep
// failing while a write waits fail the write: the engine refuses writes it
// cannot hold.
func (e *Engine) waitForMemtableSpace() error {
	limit := e.opts.MemtableTotalSpace
	if e.memtableBytes.Load() <= limit {
		return nil
	}
	s := &e.space
	s.mu.Lock()
	defer s.mu.Unlock()
	failed := 0
	for e.memtableBytes.Load() > limit {
		seen := s.flushes
		s.mu.Unlock()
		if t := e.largestTable(); t != nil {
			e.flushInBackground(t)
		}
		s.mu.Lock()
		for s.flushes == seen {
			s.cond.Wait()
		}
		if s.lastErr != nil && e.memtableBytes.Load() > limit {
			if failed++; failed >= flushAttempts {
				return fmt.Errorf("storage: memtables hold %d bytes of their %d-byte space (memtable_heap_space), and flushing failed: %w",
					e.memtableBytes.Load(), limit, s.lastErr)
			}
		}
	}
	return nil
}

// largestTable is the table whose memtables, flushing ones included, hold
// the most memory.
func (e *Engine) largestTable() *Table {
	var largest *Table
	var most int64
	for _, t := range e.tables() {
		if held := t.heldBytes(); largest == nil || held > most {
			largest, most = t, held
		}
	}
	return largest
}
