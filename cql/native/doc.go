// Package native is the CQL native protocol server: the binary protocol
// drivers and cqlsh speak to a node, versions 3 and 4 (the 9-byte
// envelope; version 5's segment framing is still to come).
//
// Owns: framing (envelopes, stream ids, the frame size limit), the
// request and response bodies of every opcode, the encoding of CQL types
// as type options, version negotiation as the real clients expect it,
// the prepared statement cache (ids are Cassandra's MD5 of keyspace and
// query), REGISTER and the events sent to registered connections, and
// connection lifecycle (many requests in flight, answered as they
// complete; orderly shutdown).
// Does not own: what statements do (cql/exec), CQL syntax (cql), the
// values' encodings (cqltype).
// May import: cql/exec, cql, cqltype, internal/invariants.
// Must not import: schema, storage, mutation, node, coordinator.
//
// Concurrency: a connection has one reader and one writer goroutine; each
// request runs in its own goroutine with a session of the connection's
// (exec.Session runs one statement at a time), and its response goes to
// the writer, which coalesces what is ready into one write.
package native
