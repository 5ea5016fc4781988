// Package mutation is Sibyl's data model: cells, rows, tombstones and the
// partition updates that carry them, with the one reconcile function and the
// one binary encoding of each.
//
// Owns: Cell, Row, LivenessInfo (the row marker), DeletionTime, RangeTombstone,
// Mutation (one partition of one table); Reconcile (last write wins with
// Cassandra's tie rules) and every merge built on it; the byte-comparable
// clustering encoding and bounds; the engine key layout
// (token | partition key | kind | clustering); the binary encoding of rows,
// entries and mutations (commit log records and SSTable values).
// Does not own: CQL types and value codecs (package cqltype), tokens
// (package partitioner), where entries live (memtable, sstable, storage).
// May import: partitioner, cqltype, internal/invariants.
// Must not import: memtable, sstable, commitlog, storage and everything above.
//
// Concurrency: values are immutable once built; merges return new values and
// never modify their inputs, so readers may share them freely.
//
// Units: write timestamps are microseconds since the epoch; local deletion
// and expiry times are seconds since the epoch; TTLs are seconds.
//
// Invariants:
//
//	M1. A Row's Cells are sorted by (Column, Path) with no duplicates.
//	M2. Merging is commutative and associative: merge(a, b) == merge(b, a).
//	M3. bytes.Compare on engine keys gives Cassandra's order: token, then
//	    partition key bytes unsigned, then clustering in CQL order.
package mutation
