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
// Owns: the cutting of a range, the trees, REPAIR_TREE's codecs and its
// handler.
// Does not own: which ranges a repair compares or with whom, and the
// streams that settle differences (the node decides and streams, package
// streaming).
// May import: coordinator, storage, messaging, mutation, partitioner,
// internal/wire.
// Must not import: node, gossip, metadata, schema, streaming.
//
// Concurrency: a Service is safe for concurrent use; its handler runs on
// messaging's goroutines.
package repair
