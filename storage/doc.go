// Package storage is the storage engine: per table, memtables and SSTables
// with flush, the read merge and compaction; per node, the Engine that owns
// the tables, the commit log and the block cache.
//
// Owns: Table (write path, flush, read path, compaction, truncate), Engine
// (table registry, commit log replay at start, memory-driven flushes), the
// merging iterator, the compaction strategies (size-tiered, leveled,
// time-window), the tombstone-purge decision, memtable space
// accounting with write back-pressure, the sections of SSTables a
// table sends of key spans and imports from another node, and the cleanup
// that drops what lies outside key spans.
// Does not own: what tables exist (package schema, above: the node tells
// the engine), cell reconciliation (package mutation), file formats
// (packages commitlog and sstable).
// May import: memtable, sstable, commitlog, mutation, partitioner,
// internal/invariants, internal/histogram, internal/workers, internal/topk,
// tracing, pebble/vfs, zerolog.
// Must not import: schema, ring, gossip, messaging, coordinator, cql.
//
// Concurrency: Engine and Table methods are safe for concurrent use.
//
// Invariants:
//
//	E1. A write is appended to the commit log and then applied to the active
//	    memtable while the table's write lock is held for reading; a memtable
//	    switch holds it for writing, so every record at or before the
//	    switch's commit log position is in the old memtable or earlier.
//	E2. An SSTable's files are deleted only when no reader holds it.
//	E3. Compaction drops a tombstone only when its table's TombstoneGC
//	    allows (after gc_grace_seconds, or once a repair covered it, or
//	    never, or at once) and when nothing outside the compaction could
//	    hold older data it shadows.
//	E4. SSTables leave a table's directory only through an obsolete log
//	    written before they are swapped out, so a restart removes all of a
//	    compaction's inputs or none.
//	E5. An imported SSTable records no commit log bound, and one whose
//	    import began before a truncation of its table is not published.
package storage
