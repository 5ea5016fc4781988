package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// The CAST functions of Cassandra 4.1 (CastFcts): numbers convert into each
// other the way Java's Number methods do (wrapping, truncating, saturating
// float-to-int), and numbers, inet, boolean, the time types and uuids turn
// into ascii or text the way their serializers print CQL literals. A CAST in
// a term is a call of castAs<Type>; in a selector it is also named
// "cast(x as type)".

// castFunctions holds the cast overloads by function name, in Cassandra's
// registration order, which its messages list them in.
var castFunctions = map[string][]*function{}

// castName is Cassandra's name of the function that casts to k
// (CastFcts.getFunctionName): "castAsInt".
func castName(k cqltype.Kind) string {
	s := k.String()
	return "castAs" + strings.ToUpper(s[:1]) + s[1:]
}

func addCast(from, to cqltype.Kind, conv func(v []byte) ([]byte, error)) {
	name := castName(to)
	toType := cqltype.Native(to)
	castFunctions[name] = append(castFunctions[name], &function{
		name: "system." + name, args: []*cqltype.Type{cqltype.Native(from)}, returns: toType,
		scalar: func(args [][]byte) ([]byte, error) {
			// Empty values compose to null in Cassandra's Java
			// conversions; null in, null out.
			if len(args[0]) == 0 {
				return nil, nil
			}
			return conv(args[0])
		},
		columnName: func(args []string) string { return "cast(" + args[0] + " as " + to.String() + ")" },
	})
}

func init() {
	numeric := []cqltype.Kind{cqltype.Tinyint, cqltype.Smallint, cqltype.Int, cqltype.Bigint, cqltype.Float,
		cqltype.Double, cqltype.Decimal, cqltype.Counter, cqltype.Varint}
	outputs := []cqltype.Kind{cqltype.Tinyint, cqltype.Smallint, cqltype.Int, cqltype.Bigint, cqltype.Float,
		cqltype.Double, cqltype.Decimal, cqltype.Varint}
	for _, in := range numeric {
		for _, out := range outputs {
			if in != out {
				addCast(in, out, numberCast(in, out))
			}
		}
		addCast(in, cqltype.Ascii, textCast(in))
		addCast(in, cqltype.Text, textCast(in))
	}
	addCast(cqltype.Ascii, cqltype.Text, func(v []byte) ([]byte, error) { return v, nil })
	for _, in := range []cqltype.Kind{cqltype.Inet, cqltype.Boolean} {
		addCast(in, cqltype.Ascii, textCast(in))
		addCast(in, cqltype.Text, textCast(in))
	}
	addCast(cqltype.Timeuuid, cqltype.Date, delegateCast("todate", cqltype.Timeuuid))
	addCast(cqltype.Timeuuid, cqltype.Timestamp, delegateCast("totimestamp", cqltype.Timeuuid))
	addCast(cqltype.Timeuuid, cqltype.Ascii, textCast(cqltype.Timeuuid))
	addCast(cqltype.Timeuuid, cqltype.Text, textCast(cqltype.Timeuuid))
	addCast(cqltype.Timestamp, cqltype.Date, delegateCast("todate", cqltype.Timestamp))
	addCast(cqltype.Timestamp, cqltype.Ascii, textCast(cqltype.Timestamp))
	addCast(cqltype.Timestamp, cqltype.Text, textCast(cqltype.Timestamp))
	addCast(cqltype.Date, cqltype.Timestamp, delegateCast("totimestamp", cqltype.Date))
	addCast(cqltype.Date, cqltype.Ascii, textCast(cqltype.Date))
	addCast(cqltype.Date, cqltype.Text, textCast(cqltype.Date))
	for _, in := range []cqltype.Kind{cqltype.Time, cqltype.UUID} {
		addCast(in, cqltype.Ascii, textCast(in))
		addCast(in, cqltype.Text, textCast(in))
	}
}

// delegateCast casts with one of cqltype's time functions, as
// CastFcts.CassandraFunctionWrapper does.
func delegateCast(name string, from cqltype.Kind) func([]byte) ([]byte, error) {
	f, err := cqltype.LookupFunction(name, []*cqltype.Type{cqltype.Native(from)})
	if err != nil {
		panic(invariants.Failf("cast: no %s(%s): %v", name, from, err))
	}
	return func(v []byte) ([]byte, error) { return f.Call(functionEnv, [][]byte{v}) }
}

// javaNumber is a value of a numeric type as Java's Number sees it.
type javaNumber struct {
	kind  cqltype.Kind
	i     int64   // tinyint, smallint, int, bigint, counter
	f     float64 // float (exactly), double
	u     *big.Int
	scale int32 // decimal: u * 10^-scale; varint: u
}

func readNumber(k cqltype.Kind, v []byte) (javaNumber, error) {
	n := javaNumber{kind: k}
	var err error
	switch k {
	case cqltype.Tinyint:
		var x int8
		x, err = cqltype.DecodeTinyint(v)
		n.i = int64(x)
	case cqltype.Smallint:
		var x int16
		x, err = cqltype.DecodeSmallint(v)
		n.i = int64(x)
	case cqltype.Int:
		var x int32
		x, err = cqltype.DecodeInt(v)
		n.i = int64(x)
	case cqltype.Bigint, cqltype.Counter:
		n.i, err = cqltype.DecodeBigint(v)
	case cqltype.Float:
		var x float32
		x, err = cqltype.DecodeFloat(v)
		n.f = float64(x)
	case cqltype.Double:
		n.f, err = cqltype.DecodeDouble(v)
	case cqltype.Decimal:
		n.u, n.scale, err = cqltype.DecodeDecimal(v)
	case cqltype.Varint:
		n.u, err = cqltype.DecodeVarint(v)
	}
	return n, err
}

func (n javaNumber) isFloat() bool { return n.kind == cqltype.Float || n.kind == cqltype.Double }

// integer is the integral part (truncated toward zero) of a decimal or
// varint, as far as its low 64 bits, all the casts read of it.
func (n javaNumber) integer() *big.Int {
	if n.kind == cqltype.Varint || n.scale == 0 {
		return n.u
	}
	switch {
	case n.scale < -63:
		// 10^k for k >= 64 has 2^64 as a factor: the low 64 bits of
		// the integer are zero, whatever building it would cost.
		return new(big.Int)
	case n.scale > 0 && n.scale >= decimal{n.u, n.scale}.precision():
		return new(big.Int) // below one
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs32(n.scale)), nil)
	if n.scale < 0 {
		return new(big.Int).Mul(n.u, p)
	}
	return new(big.Int).Quo(n.u, p)
}

func abs32(x int32) int64 {
	if x < 0 {
		return -int64(x)
	}
	return int64(x)
}

// low64 is the low 64 bits of x in two's complement, as BigInteger.longValue.
func low64(x *big.Int) int64 {
	m := new(big.Int).And(x, new(big.Int).SetUint64(math.MaxUint64))
	return int64(m.Uint64())
}

func (n javaNumber) intValue() int32 {
	switch {
	case n.isFloat():
		return cqltype.JavaDoubleToInt(n.f)
	case n.u != nil:
		return int32(low64(n.integer()))
	}
	return int32(n.i)
}

func (n javaNumber) longValue() int64 {
	switch {
	case n.isFloat():
		return cqltype.JavaDoubleToLong(n.f)
	case n.u != nil:
		return low64(n.integer())
	}
	return n.i
}

func (n javaNumber) doubleValue() float64 {
	switch {
	case n.isFloat():
		return n.f
	case n.u != nil:
		f, _ := n.rat().Float64()
		return f
	}
	return float64(n.i)
}

func (n javaNumber) floatValue() float32 {
	switch {
	case n.isFloat():
		return float32(n.f)
	case n.u != nil:
		f, _ := n.rat().Float32()
		return f
	}
	return float32(n.i)
}

func (n javaNumber) rat() *big.Rat {
	r := new(big.Rat).SetInt(n.u)
	if n.kind == cqltype.Decimal && n.scale != 0 {
		// Past a double's range the value is 0 or infinite: a power of
		// ten of its size stands in for the one of the scale.
		digits := int64(decimal{n.u, n.scale}.precision())
		switch {
		case int64(n.scale)-digits > 400:
			return new(big.Rat)
		case -int64(n.scale)+digits > 400:
			return r.SetInt(new(big.Int).Mul(big.NewInt(int64(n.u.Sign())), new(big.Int).Exp(big.NewInt(10), big.NewInt(400), nil)))
		}
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs32(n.scale)), nil))
		if n.scale > 0 {
			r.Quo(r, p)
		} else {
			r.Mul(r, p)
		}
	}
	return r
}

// numberCast converts between numeric types with the Java conversions
// CastFcts uses (byteValue, shortValue, ..., BigDecimal.valueOf).
func numberCast(from, to cqltype.Kind) func([]byte) ([]byte, error) {
	return func(v []byte) ([]byte, error) {
		n, err := readNumber(from, v)
		if err != nil {
			return nil, err
		}
		switch to {
		case cqltype.Tinyint:
			// Number.byteValue narrows the int value (floats through
			// Java's saturating int conversion).
			return cqltype.EncodeTinyint(int8(n.intValue())), nil
		case cqltype.Smallint:
			return cqltype.EncodeSmallint(int16(n.intValue())), nil
		case cqltype.Int:
			return cqltype.EncodeInt(n.intValue()), nil
		case cqltype.Bigint:
			return cqltype.EncodeBigint(n.longValue()), nil
		case cqltype.Float:
			return cqltype.EncodeFloat(n.floatValue()), nil
		case cqltype.Double:
			return cqltype.EncodeDouble(n.doubleValue()), nil
		case cqltype.Varint:
			// BigInteger.valueOf(p.longValue()): big values wrap.
			return cqltype.EncodeVarint(big.NewInt(n.longValue())), nil
		case cqltype.Decimal:
			switch from {
			case cqltype.Float, cqltype.Double:
				// new BigDecimal(Float.toString(f)) and
				// BigDecimal.valueOf(d) go through Java's text.
				bits := 64
				if from == cqltype.Float {
					bits = 32
				}
				s := cqltype.JavaFloatText(n.f, bits)
				out, err := cqltype.DecimalType.FromString(s)
				if err != nil {
					return nil, fmt.Errorf("In call to function system.castAsDecimal, value %s cannot be converted to decimal", s)
				}
				return out, nil
			case cqltype.Varint:
				return cqltype.EncodeDecimal(n.u, 0), nil
			}
			return cqltype.EncodeDecimal(big.NewInt(n.longValue()), 0), nil
		}
		panic(invariants.Failf("cast: no conversion from %s to %s", from, to))
	}
}

// textCast prints a value as its serializer's toCQLLiteral does.
func textCast(from cqltype.Kind) func([]byte) ([]byte, error) {
	t := cqltype.Native(from)
	return func(v []byte) ([]byte, error) {
		if err := t.Validate(v); err != nil {
			return nil, err
		}
		return []byte(javaLiteral(from, v)), nil
	}
}

func javaLiteral(k cqltype.Kind, v []byte) string {
	switch k {
	case cqltype.Float:
		f, _ := cqltype.DecodeFloat(v)
		return cqltype.JavaFloatText(float64(f), 32)
	case cqltype.Double:
		f, _ := cqltype.DecodeDouble(v)
		return cqltype.JavaFloatText(f, 64)
	case cqltype.Inet:
		return javaHostAddress(v)
	case cqltype.Timestamp:
		ms, _ := cqltype.DecodeTimestamp(v)
		t := time.UnixMilli(ms).UTC()
		return javaYear(t.Year()) + t.Format("-01-02T15:04:05.000Z")
	case cqltype.Date:
		d, _ := cqltype.DecodeDate(v)
		t := time.Unix(int64(d)*86400, 0).UTC()
		return javaYear(t.Year()) + t.Format("-01-02")
	case cqltype.Time:
		ns, _ := cqltype.DecodeTime(v)
		return fmt.Sprintf("%02d:%02d:%02d.%09d", ns/3600e9, ns/60e9%60, ns/1e9%60, ns%1e9)
	case cqltype.Counter:
		n, _ := cqltype.DecodeBigint(v)
		return strconv.FormatInt(n, 10)
	}
	// Integers, varint, decimal (BigDecimal.toString), boolean and uuids
	// print in cqltype's form, which is Java's for these types.
	return cqltype.Native(k).Format(v)
}

// javaYear prints a year as the "yyyy" pattern of java.time does: the
// year of era, padded to four digits, with a '+' past 9999.
func javaYear(y int) string {
	if y <= 0 {
		y = 1 - y
	}
	if y > 9999 {
		return "+" + strconv.Itoa(y)
	}
	return fmt.Sprintf("%04d", y)
}

// javaHostAddress is InetAddress.getHostAddress: dotted IPv4 (also for
// IPv4-mapped IPv6 addresses, which Java turns into IPv4 addresses), and
// eight uncompressed hex groups for IPv6.
func javaHostAddress(v []byte) string {
	a, ok := netip.AddrFromSlice(v)
	if !ok {
		return ""
	}
	if a.Is4() || a.Is4In6() {
		return a.Unmap().String()
	}
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(binary.BigEndian.Uint16(v[i:])), 16))
	}
	return b.String()
}
