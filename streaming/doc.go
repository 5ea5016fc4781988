// Package streaming moves the data of token ranges between nodes: a node
// that must hold ranges it lacks (rebuild, and the operations that change
// ownership) pulls them from a node that holds them.
//
// A session is pulled by its receiver. It asks the source to prepare the
// key spans of some tables (STREAM_PREPARE); the source flushes them and
// answers with the sections that hold them (package storage: an SSTable
// sent whole, or its entries inside the spans). The receiver then asks
// for each section's bytes, chunk by chunk, from an offset
// (STREAM_CHUNK), and ends the session (STREAM_COMPLETE), which lets the
// source's SSTables go. Because the receiver names the offset, a chunk
// lost with a dropped connection is asked for again and the section goes
// on where it stopped; every chunk carries a CRC32C of its bytes, a
// whole SSTable is published only if its size and footer checksum match
// its Statistics, and every entry received is checked (its key inside
// the spans asked for, its token the one its partition key hashes to).
// The source sends at most stream_throughput_outbound bytes a second of
// entries sections over all its sessions, and at most
// entire_sstable_stream_throughput_outbound of whole ones, and drops a session no chunk was asked of for
// IdleTimeout.
//
// Owns: the session protocol and its codecs, the source's sessions, the
// receiver's pull loop with its retries, the throttle, and the progress
// nodetool netstats shows.
// Does not own: which ranges move or from where (the node decides from
// the ring), the SSTable sections themselves (package storage).
// May import: storage, sstable, messaging, mutation, partitioner,
// internal/wire, golang.org/x/time/rate.
// Must not import: coordinator, gossip, metadata, node, schema.
//
// Concurrency: a Service is safe for concurrent use; its handlers run on
// messaging's goroutines.
package streaming
