package memtable

import (
	"bytes"
	"math"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
	"github.com/sibyldb/sibyl/mutation"
)

// entryOverhead approximates the memory of an entry beyond its bytes: the
// tree slot, the Entry and Row structs and slice headers.
const entryOverhead = 96

// cellOverhead approximates the memory of a cell beyond its bytes.
const cellOverhead = 64

func lessEntry(a, b *mutation.Entry) bool { return bytes.Compare(a.Key, b.Key) < 0 }

// Memtable is one table's in-memory sorted entries.
type Memtable struct {
	mu struct {
		sync.RWMutex
		tree *btree.BTreeG[*mutation.Entry]
	}
	size         atomic.Int64
	minTimestamp atomic.Int64
	maxTimestamp atomic.Int64
}

// New returns an empty memtable.
func New() *Memtable {
	m := &Memtable{}
	m.mu.tree = btree.NewG(32, lessEntry)
	m.minTimestamp.Store(math.MaxInt64)
	m.maxTimestamp.Store(math.MinInt64)
	return m
}

// EntrySize estimates the memory an entry holds.
func EntrySize(e *mutation.Entry) int64 {
	n := int64(len(e.Key) + entryOverhead)
	if e.Row != nil {
		for i := range e.Row.Cells {
			c := &e.Row.Cells[i]
			n += int64(len(c.Column) + len(c.Path) + len(c.Value) + cellOverhead)
		}
		n += int64(len(e.Row.Columns) * cellOverhead)
	}
	return n
}

// Apply merges entries into the memtable and returns how much its size
// grew: the caller's share, which concurrent writers cannot blur as a
// before/after reading of Size would. The memtable keeps the entries and
// what they point to: callers must not change them afterwards.
func (m *Memtable) Apply(entries []mutation.Entry) int64 {
	var delta int64
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	m.mu.Lock()
	for i := range entries {
		e := &entries[i]
		old, replaced := m.mu.tree.ReplaceOrInsert(e)
		if replaced {
			merged := mutation.MergeEntries(old, e)
			m.mu.tree.ReplaceOrInsert(merged)
			delta += EntrySize(merged) - EntrySize(old)
		} else {
			delta += EntrySize(e)
		}
		lo, hi = min(lo, e.MinTimestamp()), max(hi, e.MaxTimestamp())
	}
	m.mu.Unlock()
	m.size.Add(delta)
	for {
		cur := m.minTimestamp.Load()
		if lo >= cur || m.minTimestamp.CompareAndSwap(cur, lo) {
			break
		}
	}
	for {
		cur := m.maxTimestamp.Load()
		if hi <= cur || m.maxTimestamp.CompareAndSwap(cur, hi) {
			break
		}
	}
	return delta
}

// Size is the approximate memory the memtable holds, in bytes.
func (m *Memtable) Size() int64 { return m.size.Load() }

// Len is the number of entries.
func (m *Memtable) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.tree.Len()
}

// Empty reports whether nothing was ever applied.
func (m *Memtable) Empty() bool { return m.Len() == 0 }

// MinTimestamp is the smallest write timestamp applied (math.MaxInt64 when
// empty); compaction needs it to decide whether a tombstone may be purged.
func (m *Memtable) MinTimestamp() int64 { return m.minTimestamp.Load() }

// MaxTimestamp is the largest write timestamp applied.
func (m *Memtable) MaxTimestamp() int64 { return m.maxTimestamp.Load() }

// Get returns the entry under key, or nil.
func (m *Memtable) Get(key []byte) *mutation.Entry {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, _ := m.mu.tree.Get(&mutation.Entry{Key: key})
	return e
}
