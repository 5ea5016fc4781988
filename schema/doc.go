// Package schema describes keyspaces, tables, columns and user types, and
// turns them to and from the rows of the system_schema tables that keep
// them, in Sibyl's own storage engine, as Cassandra does.
//
// Owns: the metadata types (Keyspace, Table, Column, the user types), how a
// table's rows map onto the engine (partition key bytes, the clustering
// layout, one cell per simple column, one cell per element of a multi-cell
// collection or field of a non-frozen user type) and back, the definitions
// of the system and system_schema tables and their table ids, the
// conversion of schema objects to system_schema mutations and from
// system_schema rows, and the schema version.
// Does not own: executing statements (cql/exec), storing or reading rows
// (storage, through node), CQL syntax (cql), type codecs (cqltype).
// May import: mutation, partitioner, cqltype, internal/invariants.
// Must not import: storage, memtable, sstable, commitlog, cql, cql/exec,
// cql/native, ring, gossip, messaging, coordinator, node.
//
// Concurrency: metadata values are immutable once built; a change makes new
// values (copy on write), so readers never lock.
package schema
