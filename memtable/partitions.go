package memtable

import (
	"bytes"
	"hash/maphash"

	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// A shard indexes its partitions by a hash of their prefix, so that a
// point read learns without descending the tree whether the memtable
// holds the partition at all and, when it holds one entry of it (a table
// without clustering columns, the common key-value shape), which. A
// descent costs a cache miss a level in a tree of a million keys; the
// index, a map without pointers the collector need not scan, one or two.

// partitionRef is what a shard knows of one partition prefix hash.
type partitionRef struct {
	// keys is how many keys of the partition the tree holds, or
	// sharedHash when two partitions have the hash.
	keys uint32
	// at is a key record of the partition: its only key's, when keys is 1.
	at recordAt
}

// sharedHash marks a hash two partitions share: lookups of either go to
// the tree.
const sharedHash = ^uint32(0)

// partitionOverhead approximates what a partition's index entry costs.
const partitionOverhead = 32

var partitionSeed = maphash.MakeSeed()

// hashPrefix hashes a partition prefix; a variable so that tests can make
// partitions share hashes.
var hashPrefix = func(prefix []byte) uint64 { return maphash.Bytes(partitionSeed, prefix) }

// indexKey notes a new key record of the shard (never one that replaced
// another) and returns the bytes the index grew by.
// REQUIRES: sh locked; tokenLen > 0.
func (sh *shard) indexKey(key []byte, at recordAt, tokenLen int) int {
	n, err := mutation.PartitionPrefixLen(key, tokenLen)
	if err != nil {
		sh.unindexed = true // not an engine key: lookups use the tree
		return 0
	}
	prefix := key[:n]
	h := hashPrefix(prefix)
	if sh.partitions == nil {
		sh.partitions = map[uint64]partitionRef{}
	}
	ref, ok := sh.partitions[h]
	switch {
	case !ok:
		sh.partitions[h] = partitionRef{keys: 1, at: at}
		return partitionOverhead
	case ref.keys == sharedHash:
	case !bytes.HasPrefix(sh.arena.key(ref.at), prefix):
		ref.keys = sharedHash
		sh.partitions[h] = ref
	default:
		ref.keys++
		sh.partitions[h] = ref
	}
	return 0
}

// replacedKey notes that the key record at now replaced an older one of
// the same key in the tree: a partition's only key moves there.
// REQUIRES: sh locked; tokenLen > 0.
func (sh *shard) replacedKey(key []byte, now recordAt, tokenLen int) {
	n, err := mutation.PartitionPrefixLen(key, tokenLen)
	if err != nil {
		return
	}
	h := hashPrefix(key[:n])
	if ref, ok := sh.partitions[h]; ok && ref.keys == 1 {
		ref.at = now
		sh.partitions[h] = ref
	}
}

// Lookup tells a point read what the memtable holds of the partition
// with the given prefix: keys 0 when nothing; 1 with its one entry
// (decoded, valid for as long as the caller holds it); -1 when more, or
// when the memtable cannot tell (then iterate it).
func (m *Memtable) Lookup(prefix []byte) (e *mutation.Entry, keys int) {
	if m.tokenLen == 0 {
		return nil, -1
	}
	sh := &m.shards[shardOf(prefix)]
	h := hashPrefix(prefix)
	sh.RLock()
	if sh.unindexed {
		sh.RUnlock()
		return nil, -1
	}
	ref, ok := sh.partitions[h]
	var raw rawEntry
	switch {
	case !ok:
		keys = 0
	case ref.keys == sharedHash:
		keys = -1
	case !bytes.HasPrefix(sh.arena.key(ref.at), prefix):
		keys = 0 // the hash is another partition's alone: this one has none
	case ref.keys == 1:
		keys, raw = 1, sh.arena.raw(sh.arena.key(ref.at))
	default:
		keys = -1
	}
	sh.RUnlock()
	if keys != 1 {
		return nil, keys
	}
	e, err := raw.decode()
	if err != nil {
		panic(invariants.Failf("%v", err))
	}
	return e, 1
}
