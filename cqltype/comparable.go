package cqltype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The byte-comparable encoding.
//
// AppendComparable writes a value so that plain bytes.Compare on encodings
// agrees with Compare, and so that encodings are prefix-free: no encoding is
// a prefix of another, so a clustering key made of several encoded columns
// compares column by column, and DecodeComparable finds where each ends.
//
// Every encoding starts with a marker: 0x00 for the empty value (nothing
// follows) and 0x01 for any other. Then comes the body, in two parts:
//
//	primary  sorts exactly as Compare: equal primaries <=> Compare == 0
//	tie      what Compare ignores but the bytes need (see below)
//
// Compare calls some different byte strings equal: decimal 1.0 and 1.00,
// varints with redundant sign bytes, booleans 0x01 and 0x02, NaNs with
// different payloads, and tuples whose trailing components are null versus
// omitted. DecodeComparable must give back the exact bytes, so the tie part
// records what the primary drops. Inside lists, maps and tuples all the
// element primaries come first and all the element ties after them, so a
// tie in an early element never overrides a real difference in a later one.
//
// Consequences for callers:
//   - For any valid a, b with Compare(a, b) != 0, bytes.Compare of their
//     encodings has the same sign. Encodings are equal exactly when the
//     values are byte-equal. When Compare(a, b) == 0 but the bytes differ,
//     the encodings differ only in the tie part.
//   - In a concatenation (a clustering key), a tie in one column decides
//     before the next column is looked at. So two keys that Cassandra would
//     call the same clustering (1.0 vs 1.00 in a decimal column) are distinct
//     keys here, adjacent unless a later column differs. Callers that need
//     Cassandra's merge should write Normalize'd values; Normalize leaves
//     decimals alone because their scale is user-visible.
//
// Bodies, by kind (fixed widths need no terminator):
//
//	int, bigint, counter, smallint, tinyint, timestamp, time
//	                big-endian with the sign bit flipped
//	date            the 4 bytes as they are (already unsigned order)
//	boolean         0x00 or 0x01; tie: the raw byte when true
//	float, double   bits with the sign bit set (positive) or all bits inverted
//	                (negative); NaN is all 0xFF; tie: the raw bits when NaN
//	uuid            16 bytes reordered so the version, then the timestamp
//	                (version 1) or the remaining high bits, lead
//	timeuuid        reordered timestamp, then the low 8 bytes with each top
//	                bit flipped (signed byte order)
//	text, ascii, blob, inet, custom, duration
//	                bytes with 0x00 written as 0x00 0xFF, ended by 0x00 0x01
//	varint          sign (0x00 negative, 0x01 otherwise), the minimal length
//	                as an unsigned vint (bits inverted when negative), the
//	                minimal bytes; tie: the count of redundant sign bytes
//	decimal         class (0x00 negative, 0x01 zero, 0x02 positive); for
//	                non-zero, the exponent E as 8 bytes with the sign bit
//	                flipped and the digits two per byte (pair+1) ended by 0x00,
//	                all inverted when negative, where |value| = 0.digits×10^E;
//	                tie: the scale (4 bytes, sign bit flipped) and the count
//	                of redundant sign bytes in the unscaled value
//	list, set       per element 0x01 (empty) or 0x02 + primary, then 0x00;
//	                tie: the ties of the elements in order
//	map             per entry the key then the value as list elements, then
//	                0x00; tie: the ties of the keys and values in order
//	tuple, UDT      per declared component 0x00 (null or omitted), 0x01
//	                (empty) or 0x02 + primary; tie: the number of serialized
//	                components as an unsigned vint, then the components' ties
//
// For descending clustering order, invert the encoding of the column with
// InvertBytes (or use AppendComparableInverted): inverting a prefix-free
// encoding reverses its order against every other encoding of the type.

// Markers. The top-level ones are the same for every type; the element ones
// give null and empty elements their own slot below every present element.
const (
	markEmpty   = 0x00
	markPresent = 0x01

	elemNull    = 0x00 // tuple components only; also the end of a list or map
	elemEmpty   = 0x01
	elemPresent = 0x02
)

// Limits on what the encoding carries as counts rather than bytes, so that a
// short hostile input cannot make DecodeComparable allocate without bound.
// Both exceed anything that fits in a clustering value (64 KiB): a 64 KiB
// unscaled value has fewer than 160,000 decimal digits.
const (
	maxRedundantBytes = 1 << 16 // redundant sign bytes of a varint
	maxDecimalZeros   = 1 << 18 // trailing decimal zeros of an unscaled value
)

// AppendComparable appends the byte-comparable, prefix-free encoding of v,
// which must be a valid value of t (Validate); see the comment above for the
// format and what it promises. On error dst is returned unchanged.
func (t *Type) AppendComparable(dst, v []byte) ([]byte, error) {
	return t.appendComparable(dst, v, true)
}

func (t *Type) appendComparable(dst, v []byte, withTie bool) ([]byte, error) {
	if err := t.Validate(v); err != nil {
		return dst, err
	}
	if len(v) == 0 {
		return append(dst, markEmpty), nil
	}
	start := len(dst)
	dst = append(dst, markPresent)
	dst, err := t.appendPrimary(dst, v)
	if err == nil && withTie && t.hasTie() {
		dst, err = t.appendTie(dst, v)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// AppendComparableTerm appends the encoding without its tie part: values
// Compare calls equal (decimal 1.0 and 1.00) encode alike, and encodings
// still sort as Compare does. It is what a secondary index keys values by.
func (t *Type) AppendComparableTerm(dst, v []byte) ([]byte, error) {
	return t.appendComparable(dst, v, false)
}

// AppendComparableInverted appends the encoding of v with every byte
// inverted, for columns in descending order.
func (t *Type) AppendComparableInverted(dst, v []byte) ([]byte, error) {
	start := len(dst)
	dst, err := t.AppendComparable(dst, v)
	if err != nil {
		return dst, err
	}
	InvertBytes(dst[start:])
	return dst, nil
}

// InvertBytes inverts every bit of b in place. Applied to one column's
// encoding inside a key, it makes that column sort in reverse (DESC).
func InvertBytes(b []byte) {
	// Eight bytes at a time; keys are short, but this is on the write path.
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, ^binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for i := range b {
		b[i] = ^b[i]
	}
}

// hasTie reports whether encodings of t can carry a tie part.
func (t *Type) hasTie() bool {
	switch t.Kind {
	case Boolean, Float, Double, Varint, Decimal, Tuple, UDT:
		return true
	case List, Set, Map, Vector:
		for _, p := range t.Params {
			if p.hasTie() {
				return true
			}
		}
	}
	return false
}

// appendPrimary appends the primary part of a valid, non-empty v.
func (t *Type) appendPrimary(dst, v []byte) ([]byte, error) {
	switch t.Kind {
	case Vector:
		l, lv, err := t.vectorAsList(v)
		if err != nil {
			return dst, err
		}
		return l.appendPrimary(dst, lv)
	case Int, Bigint, Counter, Smallint, Tinyint, Timestamp, Time:
		n := len(dst)
		dst = append(dst, v...)
		dst[n] ^= 0x80
	case Date:
		dst = append(dst, v...)
	case Boolean:
		if v[0] != 0 {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case Float:
		u := binary.BigEndian.Uint32(v)
		if isNaN32(u) {
			return append(dst, 0xFF, 0xFF, 0xFF, 0xFF), nil
		}
		return binary.BigEndian.AppendUint32(dst, floatKey32(u)), nil
	case Double:
		u := binary.BigEndian.Uint64(v)
		if isNaN64(u) {
			return binary.BigEndian.AppendUint64(dst, math.MaxUint64), nil
		}
		return binary.BigEndian.AppendUint64(dst, floatKey64(u)), nil
	case UUID:
		dst = binary.BigEndian.AppendUint64(dst, uuidKey(binary.BigEndian.Uint64(v)))
		dst = append(dst, v[8:16]...)
	case Timeuuid:
		dst = binary.BigEndian.AppendUint64(dst, timeUUIDKey(binary.BigEndian.Uint64(v)))
		for _, c := range v[8:16] {
			dst = append(dst, c^0x80)
		}
	case Ascii, Text, Blob, Inet, Custom, Duration:
		dst = appendEscaped(dst, v)
	case Varint:
		dst = appendVarintPrimary(dst, v)
	case Decimal:
		return appendDecimalPrimary(dst, v)
	case List, Set, Map:
		// Map entries are a key and a value in turn, each written like a
		// list element; the key's marker doubles as "another entry follows".
		r := collReader{b: v, what: t.Kind.String()}
		n, err := r.count()
		if err != nil {
			return dst, err
		}
		for i := 0; i < n; i++ {
			for _, et := range t.Params {
				e, err := r.next()
				if err != nil {
					return dst, err
				}
				if dst, err = et.appendElemPrimary(dst, e); err != nil {
					return dst, err
				}
			}
		}
		dst = append(dst, elemNull)
	case Tuple, UDT:
		pos := 0
		for _, ct := range t.Params {
			c, null, ok := nextComponent(v, &pos)
			if !ok {
				return dst, fmt.Errorf("malformed %s value", t.Kind)
			}
			if null {
				dst = append(dst, elemNull)
				continue
			}
			var err error
			if dst, err = ct.appendElemPrimary(dst, c); err != nil {
				return dst, err
			}
		}
	default:
		return dst, fmt.Errorf("no comparable encoding for kind %s", t.Kind)
	}
	return dst, nil
}

// appendElemPrimary writes an element or component: its own marker, then its
// primary part.
func (t *Type) appendElemPrimary(dst, e []byte) ([]byte, error) {
	if len(e) == 0 {
		return append(dst, elemEmpty), nil
	}
	return t.appendPrimary(append(dst, elemPresent), e)
}

// appendTie appends the tie part of a valid, non-empty v.
func (t *Type) appendTie(dst, v []byte) ([]byte, error) {
	switch t.Kind {
	case Vector:
		l, lv, err := t.vectorAsList(v)
		if err != nil {
			return dst, err
		}
		return l.appendTie(dst, lv)
	case Boolean:
		if v[0] != 0 {
			dst = append(dst, v[0])
		}
	case Float:
		if isNaN32(binary.BigEndian.Uint32(v)) {
			dst = append(dst, v...)
		}
	case Double:
		if isNaN64(binary.BigEndian.Uint64(v)) {
			dst = append(dst, v...)
		}
	case Varint:
		extra := len(v) - len(minimalVarint(v))
		if extra > maxRedundantBytes {
			return dst, fmt.Errorf("varint has %d redundant leading bytes; at most %d are supported in keys", extra, maxRedundantBytes)
		}
		dst = AppendUnsignedVint(dst, uint64(extra))
	case Decimal:
		extra := len(v) - 4 - len(minimalVarint(v[4:]))
		if extra > maxRedundantBytes {
			return dst, fmt.Errorf("decimal has %d redundant leading bytes; at most %d are supported in keys", extra, maxRedundantBytes)
		}
		dst = binary.BigEndian.AppendUint32(dst, binary.BigEndian.Uint32(v)^0x80000000)
		dst = AppendUnsignedVint(dst, uint64(extra))
	case List, Set, Map:
		r := collReader{b: v, what: t.Kind.String()}
		n, err := r.count()
		if err != nil {
			return dst, err
		}
		for i := 0; i < n; i++ {
			for _, et := range t.Params {
				e, err := r.next()
				if err != nil {
					return dst, err
				}
				if len(e) > 0 && et.hasTie() {
					if dst, err = et.appendTie(dst, e); err != nil {
						return dst, err
					}
				}
			}
		}
	case Tuple, UDT:
		// Count the serialized components first: it is what tells an
		// omitted component from a null one.
		pos, count := 0, 0
		for range t.Params {
			if pos == len(v) {
				break
			}
			if _, _, ok := nextComponent(v, &pos); !ok {
				return dst, fmt.Errorf("malformed %s value", t.Kind)
			}
			count++
		}
		dst = AppendUnsignedVint(dst, uint64(count))
		pos = 0
		for _, ct := range t.Params {
			c, null, _ := nextComponent(v, &pos)
			if null || len(c) == 0 || !ct.hasTie() {
				continue
			}
			var err error
			if dst, err = ct.appendTie(dst, c); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// appendEscaped writes v with each 0x00 as 0x00 0xFF and a 0x00 0x01
// terminator: the terminator sorts below any continuation, so a string sorts
// before its extensions, and no encoding is a prefix of another.
func appendEscaped(dst, v []byte) []byte {
	for {
		i := indexZero(v)
		if i < 0 {
			dst = append(dst, v...)
			break
		}
		dst = append(dst, v[:i+1]...)
		dst = append(dst, 0xFF)
		v = v[i+1:]
	}
	return append(dst, 0x00, 0x01)
}

func indexZero(v []byte) int {
	for i, c := range v {
		if c == 0 {
			return i
		}
	}
	return -1
}

func appendVarintPrimary(dst, v []byte) []byte {
	m := minimalVarint(v)
	if m[0]&0x80 != 0 {
		dst = append(dst, 0x00)
		n := len(dst)
		dst = AppendUnsignedVint(dst, uint64(len(m)))
		InvertBytes(dst[n:]) // longer negatives are smaller
	} else {
		dst = append(dst, 0x01)
		dst = AppendUnsignedVint(dst, uint64(len(m)))
	}
	return append(dst, m...)
}

func appendDecimalPrimary(dst, v []byte) ([]byte, error) {
	d, ok := normDecimal(v)
	if !ok {
		return dst, fmt.Errorf("Expected 0 or at least 5 bytes for a decimal (%d)", len(v))
	}
	if d.sign == 0 {
		return append(dst, 0x01), nil
	}
	if d.zeros > maxDecimalZeros {
		return dst, fmt.Errorf("decimal unscaled value has %d trailing zeros; at most %d are supported in keys", d.zeros, maxDecimalZeros)
	}
	class, inv := byte(0x02), byte(0x00)
	if d.sign < 0 {
		class, inv = 0x00, 0xFF
	}
	dst = append(dst, class)
	n := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(d.exp)^(1<<63))
	ds := d.digits
	for i := 0; i < len(ds); i += 2 {
		pair := (ds[i] - '0') * 10
		if i+1 < len(ds) {
			pair += ds[i+1] - '0'
		}
		dst = append(dst, pair+1)
	}
	dst = append(dst, 0x00)
	if inv != 0 {
		InvertBytes(dst[n:])
	}
	return dst, nil
}
