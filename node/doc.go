// Package node wires one Sibyl node together: its configuration, the
// start-up order of its parts, and their shutdown; and, as the
// coordinator of the statements run through it, the requests it sends
// the replicas.
//
// Owns: Config (the node's settings, with Cassandra's names where it has
// them), start-up order (storage engine, then the tables the schema knows,
// then commit log replay, then joining the cluster and choosing tokens,
// then the services that take requests), orderly shutdown, the system
// tables it writes (system.local, system.peers), the admin API and its
// metrics, the payloads of its internode verbs (messages.go), coordinating
// reads, writes and scans over the replicas (replicas.go), schema
// agreement (schemasync.go) and hinted handoff (hints.go).
// Does not own: what any part does (storage, schema, cql, coordinator's
// counts, gossip, messaging, ring own that).
// May import: cql/native, cql/exec, coordinator, gossip, messaging, ring,
// schema, storage, mutation, partitioner.
// Must not import: tools, cmd.
//
// Concurrency: Open and Close are called once each, from one goroutine.
// Statements are coordinated concurrently; gossip's changes arrive on one
// goroutine of their own, and the fields they touch during start-up are
// guarded by ringMu.
package node
