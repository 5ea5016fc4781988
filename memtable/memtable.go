package memtable

import (
	"bytes"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// itemOverhead approximates what an entry costs beyond its arena bytes: its
// tree slot and its share of the tree's nodes.
const itemOverhead = 48

// item is what the trees hold: an entry's key and the key's first 8 bytes as
// a word. Keys start with an 8- or 16-byte token, which nearly always decides
// a comparison; kept in the tree's own node, it decides without a load from
// the arena (a cache miss per comparison otherwise).
//
// The key lives in its shard's arena, followed by the entry's header (see
// arena): key[len(key):cap(key)] is the header. An item built to search the
// tree (a pivot) carries a caller's key and no header.
type item struct {
	head uint64
	key  []byte
}

func pivotItem(key []byte) item {
	var head [8]byte
	copy(head[:], key)
	return item{head: binary.BigEndian.Uint64(head[:]), key: key}
}

// lessItem orders items by key. Zero-padding the head of a key shorter
// than 8 bytes keeps the order: the heads of a key and a longer one it
// prefixes can tie, and the full comparison then decides.
func lessItem(a, b item) bool {
	if a.head != b.head {
		return a.head < b.head
	}
	return bytes.Compare(a.key, b.key) < 0
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
	tree  *btree.BTreeG[item]
	arena arena
	// scratch encodes an entry's value before it is copied into the arena.
	scratch []byte
	// Padding keeps two shards' locks off one cache line.
	_ [40]byte
}

// Memtable is one table's in-memory sorted entries.
type Memtable struct {
	shards       [shardCount]shard
	size         atomic.Int64
	minTimestamp atomic.Int64
	maxTimestamp atomic.Int64
	// deletions is whether a partition deletion was ever applied: a
	// point read looks one up only in a memtable that may hold it.
	deletions atomic.Bool
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

// Apply merges entries into the memtable and returns how much its size
// grew: the caller's share, which concurrent writers cannot blur as a
// before/after reading of Size would. The memtable copies what it keeps:
// callers may reuse the entries afterwards.
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
		delta += locked.apply(e)
		if e.Kind == mutation.PartitionDeletionEntry && !m.deletions.Load() {
			m.deletions.Store(true)
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

// apply copies e into the arena and the tree, merging it with the entry
// under its key if there is one, and returns the bytes it took. The new key
// record goes in with one descent of the tree, and its header then points
// at the value: e's, or e merged with the old record's. The old record's
// bytes stay in the arena (and in Size) until the memtable is dropped.
// REQUIRES: sh locked. Readers cannot see the new record before its header
// is set.
func (sh *shard) apply(e *mutation.Entry) int64 {
	key, n := sh.arena.addKey(e.Key, e.Kind)
	old, replaced := sh.tree.ReplaceOrInsert(pivotItem(key))
	value := e
	if replaced {
		raw := sh.arena.raw(old.key)
		prev, err := raw.decode()
		if err != nil {
			panic(invariants.Failf("%v", err))
		}
		value = mutation.MergeEntries(prev, e)
	} else {
		n += itemOverhead
	}
	sh.scratch = mutation.AppendEntryValue(sh.scratch[:0], value)
	return int64(n + sh.arena.setValue(key, sh.scratch))
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

// HasPartitionDeletions reports whether a partition deletion was ever
// applied; when not, no Get of a partition deletion's key can find one.
func (m *Memtable) HasPartitionDeletions() bool { return m.deletions.Load() }

// Get returns the entry under key, or nil.
func (m *Memtable) Get(key []byte) *mutation.Entry {
	sh := &m.shards[shardOf(key)]
	sh.RLock()
	it, ok := sh.tree.Get(pivotItem(key))
	var raw rawEntry
	if ok {
		raw = sh.arena.raw(it.key)
	}
	sh.RUnlock()
	if !ok {
		return nil
	}
	e, err := raw.decode()
	if err != nil {
		panic(invariants.Failf("%v", err))
	}
	return e
}
