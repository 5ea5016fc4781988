package cqltype

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
)

// Go-value codecs for the serialized forms of cql-clients.md 1.14. Decoders
// reject the empty value (length 0): it carries no number, and callers that
// allow it check len(b) == 0 first.

// EncodeInt returns the 4-byte form of an int.
func EncodeInt(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// DecodeInt decodes an int.
func DecodeInt(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("Expected 4 byte int (%d)", len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// EncodeBigint returns the 8-byte form of a bigint (also counter).
func EncodeBigint(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// DecodeBigint decodes a bigint or counter.
func DecodeBigint(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("Expected 8 byte long (%d)", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// EncodeSmallint returns the 2-byte form of a smallint.
func EncodeSmallint(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }

// DecodeSmallint decodes a smallint.
func DecodeSmallint(b []byte) (int16, error) {
	if len(b) != 2 {
		return 0, fmt.Errorf("Expected 2 bytes for a smallint (%d)", len(b))
	}
	return int16(binary.BigEndian.Uint16(b)), nil
}

// EncodeTinyint returns the 1-byte form of a tinyint.
func EncodeTinyint(v int8) []byte { return []byte{byte(v)} }

// DecodeTinyint decodes a tinyint.
func DecodeTinyint(b []byte) (int8, error) {
	if len(b) != 1 {
		return 0, fmt.Errorf("Expected 1 byte for a tinyint (%d)", len(b))
	}
	return int8(b[0]), nil
}

// EncodeBoolean returns 1 for true and 0 for false.
func EncodeBoolean(v bool) []byte {
	if v {
		return []byte{1}
	}
	return []byte{0}
}

// DecodeBoolean decodes a boolean; any non-zero byte is true.
func DecodeBoolean(b []byte) (bool, error) {
	if len(b) != 1 {
		return false, fmt.Errorf("Expected 1 byte value for a boolean (%d)", len(b))
	}
	return b[0] != 0, nil
}

// EncodeDouble returns the IEEE-754 binary64 form.
func EncodeDouble(v float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(v))
}

// DecodeDouble decodes a double.
func DecodeDouble(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("Expected 8 byte value for a double (%d)", len(b))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// EncodeFloat returns the IEEE-754 binary32 form.
func EncodeFloat(v float32) []byte {
	return binary.BigEndian.AppendUint32(nil, math.Float32bits(v))
}

// DecodeFloat decodes a float.
func DecodeFloat(b []byte) (float32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("Expected 4 byte value for a float (%d)", len(b))
	}
	return math.Float32frombits(binary.BigEndian.Uint32(b)), nil
}

// EncodeTimestamp returns the form of a timestamp given in milliseconds since
// the Unix epoch.
func EncodeTimestamp(ms int64) []byte { return EncodeBigint(ms) }

// DecodeTimestamp decodes a timestamp to milliseconds since the Unix epoch.
func DecodeTimestamp(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("Expected 8 byte long for date (%d)", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// EncodeDate returns the form of a date given in days since 1970-01-01
// (negative before); the wire form is that number plus 2^31, as a uint32.
func EncodeDate(daysSinceEpoch int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(daysSinceEpoch)^0x80000000)
}

// DecodeDate decodes a date to days since 1970-01-01.
func DecodeDate(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("Expected 4 byte long for date (%d)", len(b))
	}
	return int32(binary.BigEndian.Uint32(b) ^ 0x80000000), nil
}

// MaxTime is the largest valid time value: one nanosecond before midnight.
const MaxTime = 86_399_999_999_999

// EncodeTime returns the form of a time of day in nanoseconds since midnight.
func EncodeTime(nanos int64) []byte { return EncodeBigint(nanos) }

// DecodeTime decodes a time of day to nanoseconds since midnight.
func DecodeTime(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("Expected 8 byte long for time (%d)", len(b))
	}
	v := int64(binary.BigEndian.Uint64(b))
	if v < 0 || v > MaxTime {
		return 0, fmt.Errorf("Time value %d out of range [0, %d]", v, int64(MaxTime))
	}
	return v, nil
}

// EncodeVarint returns the minimal big-endian two's complement form of v
// (0 is 00, 128 is 0080, -1 is FF, -129 is FF7F).
func EncodeVarint(v *big.Int) []byte { return appendVarint(nil, v) }

func appendVarint(dst []byte, v *big.Int) []byte {
	if v.Sign() >= 0 {
		mag := v.Bytes()
		if len(mag) == 0 || mag[0]&0x80 != 0 {
			dst = append(dst, 0)
		}
		return append(dst, mag...)
	}
	// For negative v, the two's complement bytes are the complement of
	// |v|-1, with a leading 0xFF when the top bit would otherwise be clear.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	mag := m.Bytes()
	start := len(dst)
	if len(mag) == 0 || mag[0]&0x80 != 0 {
		dst = append(dst, 0)
	}
	dst = append(dst, mag...)
	for i := start; i < len(dst); i++ {
		dst[i] = ^dst[i]
	}
	return dst
}

// DecodeVarint decodes a varint. Non-minimal forms (redundant leading 00 or
// FF bytes) are accepted, as Cassandra accepts them.
func DecodeVarint(b []byte) (*big.Int, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty varint value")
	}
	return varintFromBytes(b), nil
}

func varintFromBytes(b []byte) *big.Int {
	v := new(big.Int)
	if b[0]&0x80 == 0 {
		return v.SetBytes(b)
	}
	inv := make([]byte, len(b))
	for i, c := range b {
		inv[i] = ^c
	}
	v.SetBytes(inv)
	v.Add(v, big.NewInt(1))
	return v.Neg(v)
}

// EncodeDecimal returns the form of unscaled × 10^-scale: the scale as a
// 4-byte int, then the unscaled value as a varint.
func EncodeDecimal(unscaled *big.Int, scale int32) []byte {
	dst := binary.BigEndian.AppendUint32(make([]byte, 0, 8), uint32(scale))
	return appendVarint(dst, unscaled)
}

// DecodeDecimal decodes a decimal to its unscaled value and scale.
func DecodeDecimal(b []byte) (*big.Int, int32, error) {
	if len(b) < 5 {
		return nil, 0, fmt.Errorf("Expected at least 5 bytes for a decimal (%d)", len(b))
	}
	return varintFromBytes(b[4:]), int32(binary.BigEndian.Uint32(b)), nil
}

// appendValue appends a [bytes] item: a 4-byte length then the bytes, or
// length -1 for nil (null).
func appendValue(dst, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// EncodeCollection returns the serialized list or set of elems: a 4-byte
// count, then each element as a [bytes] item. A nil element is written as
// null (length -1), which Validate rejects; it is there for tests.
func EncodeCollection(elems [][]byte) []byte {
	n := 4
	for _, e := range elems {
		n += 4 + len(e)
	}
	dst := binary.BigEndian.AppendUint32(make([]byte, 0, n), uint32(len(elems)))
	for _, e := range elems {
		dst = appendValue(dst, e)
	}
	return dst
}

// EncodeMap returns the serialized map of parallel keys and vals.
func EncodeMap(keys, vals [][]byte) []byte {
	n := 4
	for i := range keys {
		n += 8 + len(keys[i])
		if i < len(vals) {
			n += len(vals[i])
		}
	}
	dst := binary.BigEndian.AppendUint32(make([]byte, 0, n), uint32(len(keys)))
	for i := range keys {
		dst = appendValue(dst, keys[i])
		var v []byte
		if i < len(vals) {
			v = vals[i]
		}
		dst = appendValue(dst, v)
	}
	return dst
}

// collReader walks the [int n] + [bytes]... layout shared by lists, sets and
// maps, with Cassandra's error wording. Elements alias the input.
type collReader struct {
	b    []byte
	pos  int
	what string // "list", "set" or "map", for messages
}

func (r *collReader) count() (int, error) {
	if len(r.b) < 4 {
		return 0, fmt.Errorf("Not enough bytes to read a %s", r.what)
	}
	n := int32(binary.BigEndian.Uint32(r.b))
	r.pos = 4
	if n < 0 {
		return 0, fmt.Errorf("Invalid negative element count (%d) for a %s", n, r.what)
	}
	// Each element takes at least 4 bytes: refuse counts the input cannot
	// hold before anyone allocates for them.
	if int64(n) > int64(len(r.b)-4)/4 {
		return 0, fmt.Errorf("Not enough bytes to read a %s", r.what)
	}
	return int(n), nil
}

// next reads one element; null elements are an error in every collection.
func (r *collReader) next() ([]byte, error) {
	if len(r.b)-r.pos < 4 {
		return nil, fmt.Errorf("Not enough bytes to read a %s", r.what)
	}
	n := int32(binary.BigEndian.Uint32(r.b[r.pos:]))
	r.pos += 4
	if n < 0 {
		return nil, fmt.Errorf("Null value read when not allowed")
	}
	if int64(n) > int64(len(r.b)-r.pos) {
		return nil, fmt.Errorf("Not enough bytes to read a %s", r.what)
	}
	v := r.b[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return v, nil
}

func (r *collReader) end() error {
	if r.pos != len(r.b) {
		return fmt.Errorf("Unexpected extraneous bytes after %s value", r.what)
	}
	return nil
}

// DecodeCollection splits a serialized list or set into its elements, which
// alias b.
func DecodeCollection(b []byte) ([][]byte, error) {
	r := collReader{b: b, what: "list"}
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for i := range out {
		if out[i], err = r.next(); err != nil {
			return nil, err
		}
	}
	return out, r.end()
}

// DecodeMap splits a serialized map into parallel keys and values, which
// alias b.
func DecodeMap(b []byte) (keys, vals [][]byte, err error) {
	r := collReader{b: b, what: "map"}
	n, err := r.count()
	if err != nil {
		return nil, nil, err
	}
	keys = make([][]byte, n)
	vals = make([][]byte, n)
	for i := 0; i < n; i++ {
		if keys[i], err = r.next(); err != nil {
			return nil, nil, err
		}
		if vals[i], err = r.next(); err != nil {
			return nil, nil, err
		}
	}
	return keys, vals, r.end()
}

// EncodeTuple returns the serialized tuple (or UDT) of fields: one [bytes]
// item each, nil for null.
func EncodeTuple(fields [][]byte) []byte {
	n := 0
	for _, f := range fields {
		n += 4 + len(f)
	}
	dst := make([]byte, 0, n)
	for _, f := range fields {
		dst = appendValue(dst, f)
	}
	return dst
}

// DecodeTuple splits a serialized tuple or UDT with n declared components.
// It always returns n entries: null and omitted trailing components are nil,
// empty ones are non-nil with length 0. Entries alias b.
func DecodeTuple(b []byte, n int) ([][]byte, error) {
	out := make([][]byte, n)
	_, err := splitTuple(b, n, out)
	return out, err
}

// splitTuple fills out (len n) with b's components and returns how many were
// serialized (trailing ones may be omitted).
func splitTuple(b []byte, n int, out [][]byte) (int, error) {
	pos := 0
	for i := 0; i < n; i++ {
		if pos == len(b) {
			for j := i; j < n; j++ {
				out[j] = nil
			}
			return i, nil
		}
		if len(b)-pos < 4 {
			return 0, fmt.Errorf("Not enough bytes to read size of %dth component", i)
		}
		size := int32(binary.BigEndian.Uint32(b[pos:]))
		pos += 4
		if size < 0 {
			out[i] = nil // -1 is null; Cassandra reads any negative size so, unset (-2) among them
			continue
		}
		if int64(size) > int64(len(b)-pos) {
			return 0, fmt.Errorf("Not enough bytes to read %dth component", i)
		}
		out[i] = b[pos : pos+int(size) : pos+int(size)]
		pos += int(size)
	}
	if pos != len(b) {
		return 0, fmt.Errorf("Expected %d values, but got more", n)
	}
	return n, nil
}

// EncodeDuration returns the serialized duration: three signed vints.
func EncodeDuration(months, days int32, nanos int64) []byte {
	dst := make([]byte, 0, 3+9)
	dst = AppendVint(dst, int64(months))
	dst = AppendVint(dst, int64(days))
	return AppendVint(dst, nanos)
}

// DecodeDuration decodes a duration to months, days and nanoseconds, checking
// the ranges and the common sign as Cassandra does. Trailing bytes are an
// error.
func DecodeDuration(b []byte) (int32, int32, int64, error) {
	if len(b) < 3 {
		return 0, 0, 0, fmt.Errorf("Expected at least 3 bytes for a duration (%d)", len(b))
	}
	months, n1, err := ReadVint(b)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("Invalid duration months: %v", err)
	}
	days, n2, err := ReadVint(b[n1:])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("Invalid duration days: %v", err)
	}
	nanos, n3, err := ReadVint(b[n1+n2:])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("Invalid duration nanoseconds: %v", err)
	}
	if n1+n2+n3 != len(b) {
		return 0, 0, 0, fmt.Errorf("Unexpected extraneous bytes after duration value")
	}
	if months != int64(int32(months)) {
		return 0, 0, 0, fmt.Errorf("The duration months must be a 32 bits integer but was: %d", months)
	}
	if days != int64(int32(days)) {
		return 0, 0, 0, fmt.Errorf("The duration days must be a 32 bits integer but was: %d", days)
	}
	if !(months >= 0 && days >= 0 && nanos >= 0 || months <= 0 && days <= 0 && nanos <= 0) {
		return 0, 0, 0, fmt.Errorf("The duration months, days and nanoseconds must be all of the same sign (%d, %d, %d)", months, days, nanos)
	}
	return int32(months), int32(days), nanos, nil
}

// Example returns a valid, non-null value of the type: one (or the
// smallest natural choice) for numbers, a one-byte string or blob, a
// version 1 timeuuid, collections of one example element, tuples and user
// types of example fields. It stands in for a bound value where only the
// value's type matters (working out a prepared statement's markers).
func (t *Type) Example() []byte {
	switch t.Kind {
	case Ascii, Text, Blob:
		return []byte("a")
	case Bigint, Counter, Timestamp, Time:
		return EncodeBigint(1)
	case Int:
		return EncodeInt(1)
	case Smallint:
		return EncodeSmallint(1)
	case Tinyint:
		return EncodeTinyint(1)
	case Boolean:
		return EncodeBoolean(true)
	case Date:
		return EncodeDate(0)
	case Decimal:
		return EncodeDecimal(big.NewInt(1), 0)
	case Varint:
		return EncodeVarint(big.NewInt(1))
	case Double:
		return EncodeDouble(1)
	case Float:
		return EncodeFloat(1)
	case Duration:
		return EncodeDuration(0, 1, 0)
	case Inet:
		return []byte{127, 0, 0, 1}
	case UUID:
		return []byte{0x3c, 0x5f, 0x2e, 0x00, 0x0f, 0x24, 0x4a, 0x5b, 0x9a, 0x1e, 0, 0, 0, 0, 0, 1}
	case Timeuuid:
		return []byte{0x3c, 0x5f, 0x2e, 0x00, 0x0f, 0x24, 0x11, 0xef, 0x9a, 0x1e, 0, 0, 0, 0, 0, 1}
	case List, Set:
		return EncodeCollection([][]byte{t.Params[0].Example()})
	case Map:
		return EncodeMap([][]byte{t.Params[0].Example()}, [][]byte{t.Params[1].Example()})
	case Tuple, UDT:
		fields := make([][]byte, len(t.Params))
		for i, p := range t.Params {
			fields[i] = p.Example()
		}
		return EncodeTuple(fields)
	case Vector:
		elems := make([][]byte, t.Dimension)
		for i := range elems {
			elems[i] = t.Params[0].Example()
		}
		return EncodeVector(t, elems)
	}
	return []byte{}
}
