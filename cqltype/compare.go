package cqltype

import (
	"bytes"
	"encoding/binary"
	"math/big"
)

// Compare orders serialized values of t the way Cassandra's comparator for
// the type does, which is the order CLUSTERING ORDER BY sorts by. It returns
// -1, 0 or +1.
//
//   - The empty value sorts before every non-empty value, for every type.
//   - Signed integers, timestamp, time and counter compare numerically;
//     date compares as an unsigned 32-bit number (its wire form is offset by
//     2^31 for exactly this reason).
//   - varint and decimal compare by numeric value: decimal 1.0 and 1.00 are
//     equal, as Java's BigDecimal.compareTo says.
//   - float and double follow Java's Float.compare/Double.compare: -0.0 is
//     below 0.0, and NaN (any payload) is equal to NaN and above +Infinity.
//   - boolean: false < true (any non-zero byte is true).
//   - text, ascii, blob, inet and custom compare as unsigned bytes, so IPv4
//     addresses are not grouped apart from IPv6 ones.
//   - uuid follows UUIDType: version first; then, for version 1, the 60-bit
//     timestamp, otherwise the high 64 bits unsigned; then the low 64 bits
//     unsigned.
//   - timeuuid follows TimeUUIDType: timestamp, then the low 8 bytes each as
//     a SIGNED byte (a Cassandra compatibility quirk, CASSANDRA-8730).
//   - lists and sets compare element by element, a shorter prefix first;
//     maps compare entry by entry (key, then value), a shorter prefix first.
//   - tuples and UDTs compare component by component, a null component
//     first; omitted trailing components count as null (Cassandra 5.0).
//   - duration has no order in Cassandra and cannot be a clustering column
//     (see IsComparable); Compare falls back to comparing bytes so callers
//     that must sort anyway get a deterministic answer.
//
// Values that are not valid for t never panic: they are compared as bytes,
// which is deterministic but meaningless.
func (t *Type) Compare(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmpInt(len(a), len(b))
	}
	switch t.Kind {
	case Int, Bigint, Counter, Smallint, Tinyint, Timestamp, Time:
		if len(a) != len(b) {
			return bytes.Compare(a, b)
		}
		return compareSigned(a, b)
	case Boolean:
		return cmpBool(a[0] != 0, b[0] != 0)
	case Float:
		if len(a) != 4 || len(b) != 4 {
			return bytes.Compare(a, b)
		}
		return compareFloat32(binary.BigEndian.Uint32(a), binary.BigEndian.Uint32(b))
	case Double:
		if len(a) != 8 || len(b) != 8 {
			return bytes.Compare(a, b)
		}
		return compareFloat64(binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b))
	case UUID:
		if len(a) != 16 || len(b) != 16 {
			return bytes.Compare(a, b)
		}
		return compareUUID(a, b)
	case Timeuuid:
		if len(a) != 16 || len(b) != 16 {
			return bytes.Compare(a, b)
		}
		return compareTimeUUID(a, b)
	case Varint:
		return compareVarint(a, b)
	case Decimal:
		return compareDecimal(a, b)
	case List, Set:
		return t.compareListOrSet(a, b)
	case Map:
		return t.compareMap(a, b)
	case Tuple, UDT:
		return t.compareTuple(a, b)
	case Vector:
		return t.compareVector(a, b)
	default: // Ascii, Text, Blob, Inet, Date, Custom, Duration
		return bytes.Compare(a, b)
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareSigned compares equal-length big-endian two's complement numbers:
// flipping the sign bit turns signed order into unsigned byte order.
func compareSigned(a, b []byte) int {
	if a[0] != b[0] {
		return cmpInt(int(a[0]^0x80), int(b[0]^0x80))
	}
	return bytes.Compare(a[1:], b[1:])
}

// floatKey32 maps float bits to an unsigned key in Float.compare order for
// non-NaN values: positive numbers get the sign bit set, negative numbers
// are inverted so larger magnitudes sort lower. -0.0 lands just below +0.0.
func floatKey32(u uint32) uint32 {
	if u&0x80000000 != 0 {
		return ^u
	}
	return u | 0x80000000
}

func floatKey64(u uint64) uint64 {
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | 1<<63
}

func isNaN32(u uint32) bool { return u&0x7F800000 == 0x7F800000 && u&0x007FFFFF != 0 }
func isNaN64(u uint64) bool {
	return u&0x7FF0000000000000 == 0x7FF0000000000000 && u&0x000FFFFFFFFFFFFF != 0
}

func compareFloat32(a, b uint32) int {
	an, bn := isNaN32(a), isNaN32(b)
	if an || bn {
		return cmpBool(an, bn)
	}
	return cmpU64(uint64(floatKey32(a)), uint64(floatKey32(b)))
}

func compareFloat64(a, b uint64) int {
	an, bn := isNaN64(a), isNaN64(b)
	if an || bn {
		return cmpBool(an, bn)
	}
	return cmpU64(floatKey64(a), floatKey64(b))
}

// uuidVersion returns the version nibble of a 16-byte UUID.
func uuidVersion(u []byte) int { return int(u[6] >> 4) }

// timeUUIDKey reorders the high 64 bits of a version 1 UUID
// (time_low, time_mid, version+time_hi) so that the version and then the
// timestamp, most significant part first, lead: comparing the result as an
// unsigned number compares timestamps.
func timeUUIDKey(msb uint64) uint64 {
	return msb<<48 | (msb<<16)&0xFFFF00000000 | msb>>32
}

// timeUUIDUnkey inverts timeUUIDKey.
func timeUUIDUnkey(k uint64) uint64 {
	return k<<32 | (k>>16)&0xFFFF0000 | k>>48
}

// uuidKey returns UUIDType's sort key for the high 64 bits: version on top,
// then the timestamp for version 1, otherwise the remaining bits in order.
func uuidKey(msb uint64) uint64 {
	version := (msb >> 12) & 0xF
	if version == 1 {
		return timeUUIDKey(msb)
	}
	return version<<60 | (msb>>4)&0x0FFFFFFFFFFFF000 | msb&0xFFF
}

func uuidUnkey(k uint64) uint64 {
	version := k >> 60
	if version == 1 {
		return timeUUIDUnkey(k)
	}
	return (k<<4)&0xFFFFFFFFFFFF0000 | version<<12 | k&0xFFF
}

func compareUUID(a, b []byte) int {
	ma, mb := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b)
	if c := cmpU64(uuidKey(ma), uuidKey(mb)); c != 0 {
		return c
	}
	return bytes.Compare(a[8:], b[8:])
}

func compareTimeUUID(a, b []byte) int {
	ma, mb := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b)
	if c := cmpU64(timeUUIDKey(ma), timeUUIDKey(mb)); c != 0 {
		return c
	}
	for i := 8; i < 16; i++ {
		if a[i] != b[i] {
			return cmpInt(int(int8(a[i])), int(int8(b[i])))
		}
	}
	return 0
}

// minimalVarint strips redundant leading sign bytes (00 before a byte with
// the top bit clear, FF before one with it set) from a non-empty varint.
func minimalVarint(v []byte) []byte {
	for len(v) > 1 && (v[0] == 0x00 && v[1]&0x80 == 0 || v[0] == 0xFF && v[1]&0x80 != 0) {
		v = v[1:]
	}
	return v
}

// compareVarint compares non-empty varints without allocating: by sign, then
// by minimal length (longer is larger for positives, smaller for negatives),
// then bytewise (same-length same-sign two's complement sorts unsigned).
func compareVarint(a, b []byte) int {
	a, b = minimalVarint(a), minimalVarint(b)
	an, bn := a[0]&0x80 != 0, b[0]&0x80 != 0
	if an != bn {
		return cmpBool(bn, an)
	}
	if len(a) != len(b) {
		if an {
			return cmpInt(len(b), len(a))
		}
		return cmpInt(len(a), len(b))
	}
	return bytes.Compare(a, b)
}

// decimalNorm is a decimal's value in a normal form that orders by value:
// sign, then exponent E and digits such that |value| = 0.digits × 10^E with
// no leading or trailing zero digit. Zero has sign 0 and no digits.
type decimalNorm struct {
	sign   int
	exp    int64
	digits []byte // ASCII '0'..'9'
	zeros  int64  // trailing zeros stripped from the unscaled value
	scale  int32
	extra  int // redundant leading sign bytes in the unscaled varint
}

func normDecimal(v []byte) (decimalNorm, bool) {
	if len(v) < 5 {
		return decimalNorm{}, false
	}
	d := decimalNorm{scale: int32(binary.BigEndian.Uint32(v))}
	raw := v[4:]
	m := minimalVarint(raw)
	d.extra = len(raw) - len(m)
	u := varintFromBytes(m)
	d.sign = u.Sign()
	if d.sign == 0 {
		return d, true
	}
	digits := u.Abs(u).Append(nil, 10)
	n := len(digits)
	for n > 1 && digits[n-1] == '0' {
		n--
	}
	d.zeros = int64(len(digits) - n)
	d.digits = digits[:n]
	d.exp = int64(len(digits)) - int64(d.scale)
	return d, true
}

func compareDecimal(a, b []byte) int {
	if len(a) >= 5 && len(b) >= 5 && bytes.Equal(a[:4], b[:4]) {
		// Same scale: the unscaled values decide, without going to decimal.
		return compareVarint(a[4:], b[4:])
	}
	da, oka := normDecimal(a)
	db, okb := normDecimal(b)
	if !oka || !okb {
		return bytes.Compare(a, b)
	}
	if da.sign != db.sign {
		return cmpInt(da.sign, db.sign)
	}
	if da.sign == 0 {
		return 0
	}
	c := cmpInt64(da.exp, db.exp)
	if c == 0 {
		c = bytes.Compare(da.digits, db.digits)
	}
	return c * da.sign
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (t *Type) compareListOrSet(a, b []byte) int {
	if len(t.Params) != 1 {
		return bytes.Compare(a, b)
	}
	ra, rb := collReader{b: a, what: "list"}, collReader{b: b, what: "list"}
	na, errA := ra.count()
	nb, errB := rb.count()
	if errA != nil || errB != nil {
		return bytes.Compare(a, b)
	}
	for i := 0; i < na && i < nb; i++ {
		ea, errA := ra.next()
		eb, errB := rb.next()
		if errA != nil || errB != nil {
			return bytes.Compare(a, b)
		}
		if c := t.Params[0].Compare(ea, eb); c != 0 {
			return c
		}
	}
	return cmpInt(na, nb)
}

func (t *Type) compareMap(a, b []byte) int {
	if len(t.Params) != 2 {
		return bytes.Compare(a, b)
	}
	ra, rb := collReader{b: a, what: "map"}, collReader{b: b, what: "map"}
	na, errA := ra.count()
	nb, errB := rb.count()
	if errA != nil || errB != nil {
		return bytes.Compare(a, b)
	}
	for i := 0; i < na && i < nb; i++ {
		for _, et := range t.Params {
			ea, errA := ra.next()
			eb, errB := rb.next()
			if errA != nil || errB != nil {
				return bytes.Compare(a, b)
			}
			if c := et.Compare(ea, eb); c != 0 {
				return c
			}
		}
	}
	return cmpInt(na, nb)
}

// nextComponent reads the tuple component at *pos: its bytes, or null (also
// for a component omitted at the end). ok is false for malformed input.
func nextComponent(v []byte, pos *int) (c []byte, null bool, ok bool) {
	if *pos == len(v) {
		return nil, true, true
	}
	if len(v)-*pos < 4 {
		return nil, false, false
	}
	size := int32(binary.BigEndian.Uint32(v[*pos:]))
	*pos += 4
	if size < 0 {
		return nil, true, true
	}
	if int64(size) > int64(len(v)-*pos) {
		return nil, false, false
	}
	c = v[*pos : *pos+int(size)]
	*pos += int(size)
	return c, false, true
}

func (t *Type) compareTuple(a, b []byte) int {
	pa, pb := 0, 0
	for _, ct := range t.Params {
		ca, nullA, okA := nextComponent(a, &pa)
		cb, nullB, okB := nextComponent(b, &pb)
		if !okA || !okB {
			return bytes.Compare(a, b)
		}
		switch {
		case nullA && nullB:
			continue
		case nullA:
			return -1
		case nullB:
			return 1
		}
		if c := ct.Compare(ca, cb); c != 0 {
			return c
		}
	}
	return 0
}

// bigTen is shared read-only.
var bigTen = big.NewInt(10)
