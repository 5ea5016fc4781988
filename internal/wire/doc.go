// Package wire holds the one field encoding of Sibyl's internode payloads
// and small on-disk records: fields one after another, byte strings
// prefixed by their uvarint length, numbers as varints. A Reader keeps the
// first error it meets, so that a decoder reads every field and checks
// once at the end.
//
// Owns: Writer, Reader, ErrShort.
// Does not own: what any payload holds (its owner's codec says).
// May import: the standard library.
// Must not import: any other Sibyl package.
package wire
