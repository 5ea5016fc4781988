// Package topk finds the most frequent items of a stream in bounded
// memory: the Space-Saving algorithm (Metwally, Agrawal and El Abbadi),
// as the stream summary Cassandra's nodetool toppartitions samples with.
//
// Owns: the summary and its error bounds.
// Does not own: what is sampled or when (storage, node).
// May import: nothing of Sibyl's.
// Must not import: any other Sibyl package.
//
// Concurrency: a Summary is safe for concurrent use.
package topk
