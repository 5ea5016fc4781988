// Package repair compares what replicas hold of a token range without
// sending the data: each replica cuts the range into pieces at their
// midpoints (Leaves) and hashes each piece's partitions (Tree), and a
// node that gathers the replicas' trees streams only the pieces whose
// hashes differ.
//
// A piece's hash is an MD5 over its partitions in key order, each its key
// and the digest of its raw entries (tombstones included) that reads
// compare (coordinator.EntriesDigest): replicas that hold the same data,
// however their memtables and SSTables split it, hash alike.
//
// A History is where repairs have made every replica of a table agree:
// per table, disjoint stretches of tokens, each with the time the newest
// repair that covered it began. The storage engine asks it (as its
// RepairHistory) before it drops a tombstone of a table whose
// tombstone_gc waits for repair; REPAIR_RECORD tells a replica of a
// repair the node running it finished.
//
// REPAIR_PAXOS asks a replica which partitions of a range hold a Paxos
// proposal accepted and not committed, for the node to finish them before
// it compares the data.
//
// Owns: the cutting of a range, the trees, the repair history in memory,
// REPAIR_TREE's, REPAIR_RECORD's and REPAIR_PAXOS's codecs and handlers.
// Does not own: which ranges a repair compares or with whom, the streams
// that settle differences (the node decides and streams, package
// streaming), nor where the history is kept (the node writes it to
// system.repair_history).
// May import: coordinator, storage, messaging, mutation, partitioner,
// internal/wire.
// Must not import: node, gossip, metadata, schema, streaming.
//
// Concurrency: a Service is safe for concurrent use; its handler runs on
// messaging's goroutines.
package repair
