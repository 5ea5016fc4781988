// Package coordinator decides, for a request at a consistency level,
// which replicas must answer and whether enough of them are alive: the
// block-for counts of each level, Unavailable before anything is sent,
// and the acknowledgements that complete a write or time it out.
//
// Owns: consistency levels and their counts, the live-replica check, the
// counting of a write's acknowledgements.
// Does not own: where replicas are (ring), how messages travel
// (messaging), how data is stored (storage); node wires them together.
// May import: ring, messaging, gossip, storage, schema, mutation,
// partitioner.
// Must not import: cql, node, tools.
//
// Deterministic: no clocks and no goroutines here; the node's driver
// code waits and times out.
package coordinator
