package ann

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AppendVector appends v as CQL serializes a vector<float, n>: each
// element's IEEE 754 bits, big-endian, without lengths.
func AppendVector(dst []byte, v []float32) []byte {
	for _, f := range v {
		dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

// DecodeVector reads a serialized vector<float, n> into dst (reused when
// large enough).
func DecodeVector(b []byte, dst []float32) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("Expected a multiple of 4 bytes for a float vector; actual %d", len(b))
	}
	n := len(b) / 4
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
	}
	return dst, nil
}
