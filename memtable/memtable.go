package memtable

import (
	"bytes"
	"encoding/binary"
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

// item is what the trees hold: an entry and its key's first 8 bytes as a
// word. Keys start with an 8- or 16-byte token, which nearly always decides
// a comparison; kept in the tree's own node, it decides without a load
// through the entry pointer (a cache miss per comparison otherwise).
type item struct {
	head uint64
	e    *mutation.Entry
}

func itemOf(e *mutation.Entry) item {
	var head [8]byte
	copy(head[:], e.Key)
	return item{head: binary.BigEndian.Uint64(head[:]), e: e}
}

// lessItem orders items by key. Zero-padding the head of a key shorter
// than 8 bytes keeps the order: the heads of a key and a longer one it
// prefixes can tie, and the full comparison then decides.
func lessItem(a, b item) bool {
	if a.head != b.head {
		return a.head < b.head
	}
	return bytes.Compare(a.e.Key, b.e.Key) < 0
}

// shardCount is how many independently locked trees a memtable spreads its
// keys over, so that concurrent writers to different partitions rarely wait
// for each other. Shard i holds the keys whose first byte's top bits are i:
// each shard is a contiguous range of keys, and the shards in order are the
// memtable in order. Keys begin with the token, which spreads them evenly.
const (
	shardBits  = 4
	shardCount = 1 << shardBits
)

func shardOf(key []byte) int {
	if len(key) == 0 {
		return 0
	}
	return int(key[0] >> (8 - shardBits))
}

type shard struct {
	sync.RWMutex
	tree *btree.BTreeG[item]
	// Padding keeps two shards' locks off one cache line.
	_ [40]byte
}

// Memtable is one table's in-memory sorted entries.
type Memtable struct {
	shards       [shardCount]shard
	size         atomic.Int64
	minTimestamp atomic.Int64
	maxTimestamp atomic.Int64
}

// New returns an empty memtable.
func New() *Memtable {
	m := &Memtable{}
	for i := range m.shards {
		m.shards[i].tree = btree.NewG(32, lessItem)
	}
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
	var locked *shard
	for i := range entries {
		e := &entries[i]
		// A mutation's entries share a partition, so one shard takes them all.
		if sh := &m.shards[shardOf(e.Key)]; sh != locked {
			if locked != nil {
				locked.Unlock()
			}
			locked = sh
			locked.Lock()
		}
		it := itemOf(e)
		old, replaced := locked.tree.ReplaceOrInsert(it)
		if replaced {
			merged := mutation.MergeEntries(old.e, e)
			it.e = merged
			locked.tree.ReplaceOrInsert(it)
			delta += EntrySize(merged) - EntrySize(old.e)
		} else {
			delta += EntrySize(e)
		}
		lo, hi = min(lo, e.MinTimestamp()), max(hi, e.MaxTimestamp())
	}
	if locked != nil {
		locked.Unlock()
	}
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
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.RLock()
		n += sh.tree.Len()
		sh.RUnlock()
	}
	return n
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
	sh := &m.shards[shardOf(key)]
	sh.RLock()
	defer sh.RUnlock()
	it, _ := sh.tree.Get(itemOf(&mutation.Entry{Key: key}))
	return it.e
}
