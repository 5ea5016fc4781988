// Package cqltype is the one home of CQL types: their names and parsing,
// the serialized form of every value, validation of those bytes, Cassandra's
// sort order over them, a byte-comparable (order-preserving, prefix-free)
// encoding used for clustering keys, and cqlsh-style formatting.
//
// Owns: Kind and Type, Parse and String, Validate, Compare, AppendComparable
// and DecodeComparable, Format, the value codecs (Encode*/Decode*) and
// Cassandra's variable-length integers (vints).
// Does not own: schema objects (tables, keyspaces, the UDT catalog), CQL
// statement parsing, the native protocol framing, or mutation encoding; those
// packages call in here for anything about a single value.
// May import: the standard library, internal/invariants.
// Must not import: any other Sibyl package.
package cqltype
