// Package invariants holds the vocabulary for bugs and corruption.
//
// Owns: Failf (an assertion failure, the only value Sibyl code may panic with),
// Enabled (true in builds with the invariants tag, where expensive checks run),
// Sometimes (takes rare paths at random in invariant builds), and
// ErrCorruption (the one sentinel every on-disk format wraps when bytes fail a
// checksum or do not decode).
// Does not own: bad input (typed errors at the boundary that checks it) or
// operating errors (returned and wrapped by their callers).
// May import: the standard library only.
// Must not import: any other Sibyl package.
package invariants
