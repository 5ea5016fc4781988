// Package request holds what a statement asks of the replicas of its
// data and what it gets back, in the one form every layer shares: the
// consistency level, the partition and range read commands, the live
// partitions they find, and the failures of a request as Cassandra
// reports them (Unavailable, the timeouts, the failures). cql/exec writes
// its Coordinator in these types, coordinator implements it, storage
// answers the same reads on one node, and the internode verbs carry them.
//
// Owns: consistency levels, read commands, read results, request
// failures.
// Does not own: how many replicas a level needs or which ones are asked
// (coordinator), how a read is answered from disk (storage), how a
// failure is written to a client (cql/native).
// May import: mutation, partitioner, tracing (a read's trace).
// Must not import: anything else of Sibyl's.
package request
