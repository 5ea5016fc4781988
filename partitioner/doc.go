// Package partitioner maps partition keys to tokens on the ring, exactly as Cassandra does.
//
// Owns: the Murmur3Partitioner and RandomPartitioner hash rules (bit-exact with
// Cassandra, including Murmur3's sign-extension quirk), the Token type with its
// text and byte-comparable forms, ring ranges (Start, End] with wrap-around,
// midpoints, random tokens for vnode allocation, and the CompositeType encoding
// of multi-column partition keys.
// Does not own: which node owns a token or where replicas go (package ring), how
// a column value is serialized before hashing (package cqltype and callers).
// May import: the standard library, internal/invariants.
// Must not import: any other Sibyl package.
//
// Concurrency: every value here is immutable or stateless; all functions are
// safe for concurrent use. RandomToken uses the caller's *rand.Rand and so is
// only as safe as that generator.
//
// Invariants:
//
//	P1. A non-empty key never gets the minimum token; the minimum token sorts
//	    before every key token, so the range (min, t] selects all keys up to t.
//	P2. Within one Kind, bytes.Compare of AppendBytes output orders tokens
//	    exactly as Compare does, so tokens can lead byte-ordered storage keys.
//	P3. Token values are plain comparable structs: == is token equality and a
//	    Token can be a map key.
package partitioner
