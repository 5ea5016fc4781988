package cqltype

import (
	"errors"
	"math/bits"
)

// Cassandra's variable-length integers (VIntCoding). The unsigned form puts
// the count of extra bytes in the leading one-bits of the first byte, then
// the value big-endian: 0xxxxxxx is 7 bits, 10xxxxxx+1 byte is 14 bits, ...,
// 11111110+7 bytes is 56 bits and 11111111+8 bytes is the full 64 bits. The
// signed form zig-zags first so small negative numbers stay short.
//
// Written minimally, the unsigned form also sorts bytewise like the numbers
// it encodes (more leading ones means a longer, larger value), which the
// byte-comparable encoding relies on.

var (
	errVintEmpty     = errors.New("vint: no bytes to read")
	errVintTruncated = errors.New("vint: truncated")
)

// UnsignedVintSize returns how many bytes AppendUnsignedVint writes for v (1..9).
func UnsignedVintSize(v uint64) int {
	// Each extra byte adds 7 usable bits up to 8 bytes (56 bits); the ninth
	// byte form carries all 64. The expression computes ceil(bitlen/7),
	// capped at 9, without a branch per size.
	lz := bits.LeadingZeros64(v | 1)
	return (639 - lz*9) >> 6
}

// AppendUnsignedVint appends v in Cassandra's unsigned vint form, using the
// fewest bytes. It does not allocate when dst has room for 9 more bytes.
func AppendUnsignedVint(dst []byte, v uint64) []byte {
	n := UnsignedVintSize(v)
	if n == 1 {
		return append(dst, byte(v))
	}
	extra := n - 1
	// First byte: extra one-bits, a zero bit (absent when extra == 8), then
	// the top bits of v.
	first := byte(0xFF<<(8-extra)) | byte(v>>(8*extra))
	dst = append(dst, first)
	for i := extra - 1; i >= 0; i-- {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// ReadUnsignedVint reads an unsigned vint from the front of b, returning the
// value and the number of bytes used. It accepts non-minimal encodings, as
// Cassandra does.
func ReadUnsignedVint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errVintEmpty
	}
	first := b[0]
	if first < 0x80 {
		return uint64(first), 1, nil
	}
	extra := bits.LeadingZeros8(^first)
	if len(b) < 1+extra {
		return 0, 0, errVintTruncated
	}
	v := uint64(first & (0xFF >> extra)) // all zero when extra == 8
	for i := 1; i <= extra; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, 1 + extra, nil
}

// readMinimalUnsignedVint is ReadUnsignedVint that also rejects non-minimal
// encodings, for decoders whose input must be canonical.
func readMinimalUnsignedVint(b []byte) (uint64, int, error) {
	v, n, err := ReadUnsignedVint(b)
	if err != nil {
		return 0, 0, err
	}
	if n != UnsignedVintSize(v) {
		return 0, 0, errors.New("vint: non-minimal encoding")
	}
	return v, n, nil
}

// ZigZag maps signed to unsigned so that small magnitudes stay small.
func ZigZag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// UnZigZag inverts ZigZag.
func UnZigZag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// VintSize returns how many bytes AppendVint writes for v.
func VintSize(v int64) int { return UnsignedVintSize(ZigZag(v)) }

// AppendVint appends v in Cassandra's signed (zig-zag) vint form.
func AppendVint(dst []byte, v int64) []byte { return AppendUnsignedVint(dst, ZigZag(v)) }

// ReadVint reads a signed vint from the front of b, returning the value and
// the number of bytes used.
func ReadVint(b []byte) (int64, int, error) {
	u, n, err := ReadUnsignedVint(b)
	if err != nil {
		return 0, 0, err
	}
	return UnZigZag(u), n, nil
}
