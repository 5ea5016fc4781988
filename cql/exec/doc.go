// Package exec executes CQL statements: it checks a parsed statement
// against the schema, turns it into schema changes, mutations or reads, and
// runs them through a Coordinator (the local engine today, the cluster
// later), with Cassandra's results and errors.
//
// Owns: the Coordinator interface it needs, sessions (the current
// keyspace), statement validation with Cassandra's error codes and
// messages, building schema objects from DDL, and the results of
// statements.
// Does not own: CQL syntax (cql), metadata and its storage form (schema),
// the protocol's framing (cql/native), replicas and consistency (the
// coordinator behind the interface).
// May import: cql, schema, mutation, partitioner, cqltype,
// internal/invariants.
// Must not import: storage, memtable, sstable, commitlog, cql/native,
// coordinator, node.
//
// Concurrency: a Session is used by one connection at a time; statements
// of different sessions run concurrently against the Coordinator.
package exec
