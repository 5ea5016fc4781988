// Package node wires one Sibyl node together: its configuration, the
// start-up order of its parts, and their shutdown. It hands the data
// requests of its clients to its coordinator, wired to the node's
// storage engine, messaging and gossip.
//
// Owns: Config (the node's settings, with Cassandra's names where it has
// them), start-up order (storage engine, then the tables the schema knows,
// then commit log replay, then joining the cluster (gossip, then the
// metadata log) and recording its tokens in the log,
// then the services that take requests), orderly shutdown, the system
// tables it writes (system.local, system.peers), the admin API and its
// metrics, the coordinator's wiring (coordinator.go: the engine, network
// and liveness it is given), the node's member of the cluster metadata
// log and what it applies (metadata.go: schema changes, the ring, the
// partitioned node policy), the storage failure policies (failure.go),
// which ranges a node streams for a rebuild (streaming.go) or a bootstrap
// (bootstrap.go) and which it
// keeps at a cleanup (cleanup.go), which ranges a repair compares and
// records (repair.go, repairhistory.go), and when the node repairs by
// itself (autorepair.go).
// Does not own: what any part does (storage, schema, cql, coordinator,
// gossip, messaging, ring own that).
// May import: cql/native, cql/exec, coordinator, metadata, gossip,
// messaging, ring, schema, storage, mutation, mutation/request,
// partitioner.
// Must not import: tools, cmd.
//
// Concurrency: Open and Close are called once each, from one goroutine.
// Statements are coordinated concurrently; gossip's changes arrive on one
// goroutine of their own, and the fields they touch during start-up are
// guarded by ringMu.
package node
