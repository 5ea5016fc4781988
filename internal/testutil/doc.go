// Package testutil holds test helpers shared by several packages' tests:
// the iterator conformance suite that every mutation.Iterator passes.
//
// Owns: CheckIterator (random moves checked against a sorted-slice model),
// RunAndKill (one SIGKILL cycle of a crash test's child process), and
// MemStore (an in-memory stand-in for the storage engine, for packages that
// may not import it), Writer (a load of acknowledged rows that goes on
// while a cluster is reconfigured), the register model lightweight
// transactions' histories are checked against (RegisterStep), and the
// engine benchmarks' keys and rows (BenchKey, OneValueRow).
// Does not own: anything production code runs.
// May import: mutation, partitioner, internal/invariants.
// Must not import: memtable, sstable, commitlog, storage, anything above.
package testutil
