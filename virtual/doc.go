// Package virtual answers reads of the virtual tables (system_views and
// system_virtual_schema): tables that hold nothing, whose rows each read
// builds from the node's live state, on the node that serves the read.
//
// Owns: turning the rows a virtual table builds into what a partition read
// or a scan returns (slices, limits, paging, token bounds, in the order
// every table's reads take), the value encoders those rows use, and the
// rows of system_virtual_schema.
// Does not own: the definitions of the virtual tables (schema), what
// their rows say (node gathers the live state), refusing writes to them
// (cql/exec), reading stored tables (storage).
// May import: schema, mutation, mutation/request, partitioner, cqltype,
// storage (its partition resolution, the one reading of entries).
// Must not import: cql, cql/exec, cql/native, coordinator, node.
//
// Concurrency: a Tables is read-only once built; its row builders are
// called concurrently by the reads of several connections.
package virtual
