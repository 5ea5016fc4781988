// Package tracing owns request tracing as Cassandra's TRACING ON shows it:
// a traced request is a session, with an id (a time-based uuid) the client
// is given, and each node the request touches records events in it: what
// it did, how long after it first saw the request (source_elapsed), and on
// which stage. The coordinator begins the session, with the request and
// its parameters, and ends it with the duration; replicas join it by its
// id, which travels with the internode messages.
//
// Owns: Tracer (one per node: its address, clock, sink and sampling
// probability), Trace (one node's part of one session, safe to use when
// nil: an untraced request), and the records a sink takes (Session,
// Event).
// Does not own: where the records go (the node writes them to
// system_traces.sessions and events), how a session id crosses the
// network (messaging), what each layer records (its own code does).
// May import: cqltype (time-based uuids).
// Must not import: anything else of Sibyl's.
//
// Concurrency: a Tracer is safe for concurrent use; so is a Trace, whose
// events may come from the goroutines of one request's replicas.
package tracing
