// Package bench holds the benchmarks of docs/benchmarks.md that compare
// Sibyl with a reference side by side in one process (make bench).
//
// Owns: B1, the storage engine against a plain pebble DB, and B7's reads
// of data many times the block cache against the same.
// Does not own: anything the product runs; it only measures.
// May import: storage, commitlog, mutation, partitioner, the root pebble package.
// Must not import: anything above storage.
package bench
