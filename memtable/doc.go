// Package memtable keeps a table's recent writes in memory, sorted by engine
// key, until they are flushed to an SSTable.
//
// Owns: the sorted in-memory map of entries (google/btree over keys kept in
// pointer-free arena chunks), merging a write into what is there through
// mutation's merge functions, size accounting, and iteration in both
// directions.
// Does not own: when to flush or where (package storage), durability
// (package commitlog), the entry encoding (package mutation).
// May import: mutation, partitioner, internal/invariants, google/btree.
// Must not import: sstable, commitlog, storage, anything above.
//
// Concurrency: Apply and iterators are safe for concurrent use. Arena records
// are immutable but for the value location in a key's header, which an
// overwrite moves to the merged value under the shard's write lock; readers
// decode a fresh entry from the bytes, so an entry a caller holds never
// changes.
//
// Why an arena: a memtable is most of a node's live heap. Held as entries
// (entry, row, cells, key and value slices), every write left half a dozen
// objects for the garbage collector to mark at each cycle; under a CPU
// quota a cycle took longer than a second of the node's time. Held as bytes
// in chunks without pointers, a cycle visits one slice per entry.
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
