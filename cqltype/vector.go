package cqltype

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// VectorOf returns vector<e, n>. Vectors are always frozen: a value is
// one cell.
func VectorOf(e *Type, n int) *Type {
	return &Type{Kind: Vector, Frozen: true, Params: []*Type{e}, Dimension: n}
}

// MaxVectorDimension bounds a vector's size. Cassandra takes any int
// (its guardrail is off by default), but a vector of more than a million
// floats could never be written (it exceeds a mutation's limit), and
// working out a prepared statement's markers builds an example value of
// each type: without a bound, one CREATE TABLE could make that take
// gigabytes.
const MaxVectorDimension = 1 << 20

// fixedSize is the serialized length of every value of t, or -1 when
// values vary in length. Inside a vector, fixed-size elements are written
// without a length.
func (t *Type) fixedSize() int {
	switch t.Kind {
	case Boolean:
		return 1
	case Int, Float:
		return 4
	case Bigint, Double, Timestamp:
		return 8
	case UUID, Timeuuid:
		return 16
	case Vector:
		if n := t.Params[0].fixedSize(); n >= 0 && t.Dimension <= math.MaxInt32/max(n, 1) {
			return n * t.Dimension
		}
	}
	return -1
}

// EncodeVector serializes a vector's elements for type t: concatenated,
// each variable-size element preceded by its length as an unsigned vint.
func EncodeVector(t *Type, elems [][]byte) []byte {
	fixed := t.Params[0].fixedSize()
	var out []byte
	for _, e := range elems {
		if fixed < 0 {
			out = AppendUnsignedVint(out, uint64(len(e)))
		}
		out = append(out, e...)
	}
	return out
}

// DecodeVector splits a vector value of type t into its elements; the
// elements alias b.
func DecodeVector(t *Type, b []byte) ([][]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("Invalid empty vector value")
	}
	fixed := t.Params[0].fixedSize()
	if fixed >= 0 {
		switch want := fixed * t.Dimension; {
		case len(b) < want:
			return nil, fmt.Errorf("Not enough bytes to read a %s", t)
		case len(b) > want:
			return nil, fmt.Errorf("Unexpected %d extraneous bytes after %s value", len(b)-want, t)
		}
		elems := make([][]byte, t.Dimension)
		for i := range elems {
			elems[i] = b[i*fixed : (i+1)*fixed : (i+1)*fixed]
		}
		return elems, nil
	}
	elems := make([][]byte, 0, min(t.Dimension, len(b)))
	for len(b) > 0 {
		if len(elems) == t.Dimension {
			return nil, fmt.Errorf("Unexpected %d extraneous bytes after %s value", len(b), t)
		}
		n, w, err := ReadUnsignedVint(b)
		if err != nil {
			return nil, fmt.Errorf("Not enough bytes to read a %s", t)
		}
		b = b[w:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("Not enough bytes to read a %s", t)
		}
		elems = append(elems, b[:n:n])
		b = b[n:]
	}
	if len(elems) != t.Dimension {
		return nil, fmt.Errorf("Not enough bytes to read a %s", t)
	}
	return elems, nil
}

// IsFloatVector reports whether t is vector<float, n>, the only vectors
// similarity functions and vector indexes take.
func (t *Type) IsFloatVector() bool {
	return t.Kind == Vector && t.Params[0].Kind == Float
}

// vectorClass is the marshal class drivers see for a vector type, as
// VectorType(ElementClass,n).
func vectorClass(t *Type) string {
	return MarshalPackage + "VectorType(" + marshalName(t.Params[0]) + " , " + strconv.Itoa(t.Dimension) + ")"
}

// parseVectorClass reads the parameters of a VectorType class name: the
// element's class and the dimension.
func parseVectorClass(params string) (*Type, error) {
	i := strings.LastIndexByte(params, ',')
	if i < 0 {
		return nil, fmt.Errorf("VectorType needs an element type and a dimension")
	}
	n, err := strconv.Atoi(strings.TrimSpace(params[i+1:]))
	if err != nil || n <= 0 || n > MaxVectorDimension {
		return nil, fmt.Errorf("invalid vector dimension %q", params[i+1:])
	}
	elem, err := TypeFromClass(strings.TrimSpace(params[:i]))
	if err != nil {
		return nil, err
	}
	return VectorOf(elem.Freeze(), n), nil
}

// marshalName is t's Cassandra marshal class with its parameters, as
// AbstractType.toString spells it: the form a custom type option carries.
func marshalName(t *Type) string {
	var b strings.Builder
	writeMarshalName(&b, t)
	return b.String()
}

func writeMarshalName(b *strings.Builder, t *Type) {
	frozen := t.Frozen && (t.IsCollection() || t.Kind == UDT)
	if frozen {
		b.WriteString(MarshalPackage + "FrozenType(")
	}
	params := func(ps []*Type) {
		b.WriteByte('(')
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			writeMarshalName(b, p)
		}
		b.WriteByte(')')
	}
	switch t.Kind {
	case Custom:
		b.WriteString(t.Name)
	case Vector:
		b.WriteString(vectorClass(t))
	case List, Set, Map, Tuple:
		b.WriteString(MarshalPackage + kinds[t.Kind].class)
		params(t.Params)
	case UDT:
		b.WriteString(MarshalPackage + "UserType(" + t.Keyspace + "," + hex.EncodeToString([]byte(t.Name)))
		for i, p := range t.Params {
			b.WriteString("," + hex.EncodeToString([]byte(t.FieldNames[i])) + ":")
			writeMarshalName(b, p)
		}
		b.WriteByte(')')
	default:
		b.WriteString(MarshalClass(t.Kind))
	}
	if frozen {
		b.WriteByte(')')
	}
}

// TypeFromClass reads a marshal class name: a native type's class, or a
// VectorType of one. Anything else is a custom type of that name.
func TypeFromClass(class string) (*Type, error) {
	if k, ok := kindFromClass(class); ok {
		return Native(k), nil
	}
	short := strings.TrimPrefix(class, MarshalPackage)
	if rest, ok := strings.CutPrefix(short, "VectorType("); ok && strings.HasSuffix(rest, ")") {
		return parseVectorClass(rest[:len(rest)-1])
	}
	return CustomOf(class), nil
}

const (
	vectorDimensionError    = "vectors may only have positive dimensions; given %d"
	vectorMaxDimensionError = "vectors may only have up to %d dimensions; given %d"
)

// validateVector checks a vector value's shape and every element.
func (t *Type) validateVector(v []byte) error {
	elems, err := DecodeVector(t, v)
	if err != nil {
		return err
	}
	for _, e := range elems {
		if err := t.Params[0].Validate(e); err != nil {
			return err
		}
	}
	return nil
}

// compareVector orders vectors element by element.
func (t *Type) compareVector(a, b []byte) int {
	ea, errA := DecodeVector(t, a)
	eb, errB := DecodeVector(t, b)
	if errA != nil || errB != nil {
		return bytes.Compare(a, b)
	}
	for i := range ea {
		if c := t.Params[0].Compare(ea[i], eb[i]); c != 0 {
			return c
		}
	}
	return 0
}

// vectorAsList restates a vector value as a frozen list of its elements,
// so the key encoding of lists serves vectors too: equal-length lists
// order element by element, as vectors do.
func (t *Type) vectorAsList(v []byte) (*Type, []byte, error) {
	elems, err := DecodeVector(t, v)
	if err != nil {
		return nil, nil, err
	}
	return ListOf(t.Params[0], true), EncodeCollection(elems), nil
}

// elements splits a list's, a set's or a vector's value into its
// elements.
func (t *Type) elements(v []byte) ([][]byte, error) {
	if t.Kind == Vector {
		return DecodeVector(t, v)
	}
	return DecodeCollection(v)
}

// exampleValues is how many leaf values an example of t holds (a
// collection's example has one element): what the bound on vector sizes
// limits, whatever holds the vectors. It stops counting past the bound.
func (t *Type) exampleValues() int {
	switch t.Kind {
	case Vector:
		return min(t.Dimension*t.Params[0].exampleValues(), MaxVectorDimension+1)
	case List, Set, Map, Tuple, UDT:
		n := 0
		for _, p := range t.Params {
			n = min(n+p.exampleValues(), MaxVectorDimension+1)
		}
		return max(n, 1)
	}
	return 1
}
