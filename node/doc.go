// Package node wires one Sibyl node together: its configuration, the
// start-up order of its parts, and their shutdown.
//
// Owns: Config (the node's settings, with Cassandra's names where it has
// them), start-up order (storage engine, then the tables the schema knows,
// then commit log replay, then the services that take requests), and
// orderly shutdown.
// Does not own: what any part does (storage, schema, cql, coordinator,
// gossip, messaging own that).
// May import: cql/native, cql/exec, coordinator, gossip, messaging, ring,
// schema, storage, mutation, partitioner.
// Must not import: tools, cmd.
//
// Concurrency: Open and Close are called once each, from one goroutine.
package node
