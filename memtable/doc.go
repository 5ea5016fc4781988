// Package memtable keeps a table's recent writes in memory, sorted by engine
// key, until they are flushed to an SSTable.
//
// Owns: the sorted in-memory map of entries (google/btree), merging a write
// into what is there through mutation's merge functions, size accounting, and
// iteration in both directions.
// Does not own: when to flush or where (package storage), durability
// (package commitlog), the entry encoding (package mutation).
// May import: mutation, partitioner, internal/invariants, google/btree.
// Must not import: sstable, commitlog, storage, anything above.
//
// Concurrency: Apply and iterators are safe for concurrent use. Entries in the
// tree are immutable: a write replaces an entry with a merged copy, so an
// iterator holding an entry never sees it change.
//
// The keys are spread over 16 trees by the top bits of their first byte
// (the token's), each under its own lock: a write locks one, and the trees
// in order are the memtable in order.
//
// Iterators read the tree in small batches under the read lock rather than
// over a Clone(): a clone would make the next writes copy the tree's shared
// nodes, a cost every write would pay after every read. A read therefore sees
// each entry as of the moment its batch was taken, which is all a
// last-write-wins store promises.
package memtable
