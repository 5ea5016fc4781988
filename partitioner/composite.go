package partitioner

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// MaxComponentLen is the longest component CompositeKey can encode: the
// length prefix is 16 bits. Cassandra also refuses partition keys longer than
// this, so callers validate before encoding.
const MaxComponentLen = 0xFFFF

// compositeOverhead is the bytes each component adds: a 2-byte length and the
// end-of-component byte.
const compositeOverhead = 3

// CompositeKey returns Cassandra's CompositeType encoding of a multi-column
// partition key, the bytes that are hashed for its token: for each component
// in declaration order, a 2-byte big-endian length, the component, and an
// end-of-component byte 0x00. Drivers build the same bytes as routing keys.
//
// A component longer than MaxComponentLen cannot be represented; as in
// Cassandra's CompositeType.build only the low 16 bits of its length are
// written, and the result does not split back. Check lengths first.
func CompositeKey(components ...[]byte) []byte {
	return AppendCompositeKey(nil, components...)
}

// AppendCompositeKey appends the CompositeKey encoding of components to dst
// and returns the extended slice.
func AppendCompositeKey(dst []byte, components ...[]byte) []byte {
	n := 0
	for _, c := range components {
		n += compositeOverhead + len(c)
	}
	dst = slices.Grow(dst, n)
	for _, c := range components {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(c)))
		dst = append(dst, c...)
		dst = append(dst, 0)
	}
	return dst
}

// SplitCompositeKey inverts CompositeKey. The components alias key (capacity
// clipped, so appending to one cannot overwrite the next). An empty key has
// no components, as in Cassandra's CompositeType.split.
//
// It is stricter than Cassandra's split, which skips the end-of-component
// byte unread: a partition key always has 0x00 there, and requiring it makes
// every accepted input re-encode to the same bytes.
func SplitCompositeKey(key []byte) ([][]byte, error) {
	count := 0
	for off := 0; off < len(key); count++ {
		if len(key)-off < 2 {
			return nil, fmt.Errorf("partitioner: composite key component %d at offset %d: need 2 length bytes, %d left",
				count, off, len(key)-off)
		}
		n := int(binary.BigEndian.Uint16(key[off:]))
		end := off + 2 + n
		if end >= len(key) {
			return nil, fmt.Errorf("partitioner: composite key component %d at offset %d: length %d plus end-of-component byte overruns the key (%d bytes left)",
				count, off, n, len(key)-off-2)
		}
		if eoc := key[end]; eoc != 0 {
			return nil, fmt.Errorf("partitioner: composite key component %d at offset %d: end-of-component byte is 0x%02x, want 0x00",
				count, off, eoc)
		}
		off = end + 1
	}
	parts := make([][]byte, 0, count)
	for off := 0; off < len(key); {
		n := int(binary.BigEndian.Uint16(key[off:]))
		start, end := off+2, off+2+n
		parts = append(parts, key[start:end:end])
		off = end + 1
	}
	return parts, nil
}
