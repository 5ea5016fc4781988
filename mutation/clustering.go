package mutation

import (
	"fmt"

	"github.com/sibyldb/sibyl/cqltype"
)

// Clustering encoding.
//
// A clustering (or a prefix of one) is encoded as, per component:
//
//	0x02 | the component's byte-comparable encoding (cqltype), inverted for DESC
//
// Every component encoding is prefix-free, so plain byte comparison of two
// encodings gives the CQL order, component by component. Bounds of slices and
// range tombstones are encodings too, placed between rows:
//
//	start inclusive of prefix P:  enc(P)        (below every row extending P)
//	start exclusive of prefix P:  enc(P) 0x03   (above every row extending P)
//	end inclusive of prefix P:    enc(P) 0x03
//	end exclusive of prefix P:    enc(P)
//
// so a row with clustering c lies in [start, end) exactly when
// start <= enc(c) < end in byte order. The bottom bound is empty; the top
// bound is the single byte 0x03.
const (
	componentMarker = 0x02
	afterPrefix     = 0x03
)

// TopBound sorts after every clustering.
var TopBound = []byte{afterPrefix}

// ClusteringColumn is one clustering column: its type and its order.
type ClusteringColumn struct {
	Type       *cqltype.Type
	Descending bool
}

// ClusteringLayout describes a table's clustering columns in order.
type ClusteringLayout []ClusteringColumn

// Encode appends the encoding of a clustering prefix (at most len(l) values).
func (l ClusteringLayout) Encode(dst []byte, values [][]byte) ([]byte, error) {
	if len(values) > len(l) {
		return dst, fmt.Errorf("mutation: clustering has %d values, the table has %d clustering columns", len(values), len(l))
	}
	for i, v := range values {
		if v == nil {
			return dst, fmt.Errorf("mutation: clustering column %d is null", i)
		}
		dst = append(dst, componentMarker)
		start := len(dst)
		var err error
		dst, err = l[i].Type.AppendComparable(dst, v)
		if err != nil {
			return dst, fmt.Errorf("mutation: clustering column %d: %w", i, err)
		}
		if l[i].Descending {
			cqltype.InvertBytes(dst[start:])
		}
	}
	return dst, nil
}

// Decode returns the values of an encoded clustering prefix. The values
// are freshly allocated.
func (l ClusteringLayout) Decode(enc []byte) ([][]byte, error) {
	var values [][]byte
	var scratch []byte
	for i := 0; len(enc) > 0; i++ {
		if enc[0] != componentMarker {
			return nil, fmt.Errorf("mutation: clustering component %d: bad marker 0x%02x", i, enc[0])
		}
		if i >= len(l) {
			return nil, fmt.Errorf("mutation: clustering has more than %d components", len(l))
		}
		enc = enc[1:]
		src := enc
		if l[i].Descending {
			scratch = append(scratch[:0], enc...)
			cqltype.InvertBytes(scratch)
			src = scratch
		}
		v, rest, err := l[i].Type.DecodeComparable(src)
		if err != nil {
			return nil, fmt.Errorf("mutation: clustering component %d: %w", i, err)
		}
		values = append(values, append([]byte{}, v...))
		enc = enc[len(src)-len(rest):]
	}
	return values, nil
}

// StartBound returns the slice start for an encoded prefix.
func StartBound(prefix []byte, inclusive bool) []byte {
	if inclusive {
		return prefix
	}
	return append(prefix[:len(prefix):len(prefix)], afterPrefix)
}

// EndBound returns the slice end for an encoded prefix.
func EndBound(prefix []byte, inclusive bool) []byte {
	if inclusive {
		return append(prefix[:len(prefix):len(prefix)], afterPrefix)
	}
	return prefix
}
