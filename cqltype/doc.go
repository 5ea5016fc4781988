// Package cqltype is the one home of CQL types: their names and parsing,
// the serialized form of every value, validation of those bytes, Cassandra's
// sort order over them, a byte-comparable (order-preserving, prefix-free)
// encoding used for clustering keys, and cqlsh-style formatting.
//
// Owns: Kind and Type (Parse, String, Equal), Validate, Compare, Normalize,
// AppendComparable and DecodeComparable (the key encoding, described in
// comparable.go), Format, the value codecs (Encode*/Decode*), and Cassandra's
// variable-length integers (AppendUnsignedVint, AppendVint and their readers),
// which mutation encoding and protocol v5 framing reuse. Also the text and
// literal forms of values (FromString, FromLiteral, ParseDuration, with
// Cassandra's assignment rules and messages) and the native scalar functions
// on single values (time, uuid and blob conversion functions: Functions,
// ResolveFunction, Function.Call with a FunctionEnv).
// Does not own: schema objects (tables, keyspaces, the UDT catalog: Parse asks
// a UDTResolver), CQL statement parsing, native protocol framing, mutation
// encoding. Those packages come here for anything about a single value.
// May import: the standard library, internal/invariants.
// Must not import: any other Sibyl package.
//
// Conventions: a value is its serialized bytes ([]byte). nil and the empty
// slice are the same value here (the empty value); null is the caller's
// business, except inside tuples and UDTs, where a nil component is null.
// Nothing in this package panics on bad input: invalid bytes give errors from
// Validate and the decoders, a meaningful-but-arbitrary order from Compare,
// and a hex dump from Format.
//
// Invariants (checked by the tests and fuzz targets):
//
//	T1. For valid a, b of a comparable type with Compare(a, b) != 0, the
//	    encodings from AppendComparable order the same way under
//	    bytes.Compare; the encodings are equal exactly when a and b are.
//	T2. DecodeComparable inverts AppendComparable and accepts nothing else:
//	    a successful decode re-encodes to the bytes it consumed.
//	T3. No encoding is a prefix of another encoding of the same type.
package cqltype
