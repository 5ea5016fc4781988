package cqltype

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
)

// Cassandra 5.0's math functions (MathFcts): abs, exp, log, log10 and
// round of every number type, each returning its argument's type, with
// Java's arithmetic: integers computed in double and narrowed as Java
// casts narrow, float and double round as Math.round does, decimals to at
// least 32 significant digits (the argument's precision when larger).

// JavaException is an error Cassandra lets through as a Java exception
// (the client sees a server error carrying its class and message).
type JavaException struct {
	Class   string // "java.lang.ArithmeticException"
	Message string
}

func (e *JavaException) Error() string { return e.Class + ": " + e.Message }

func arithmeticException(msg string) error {
	return &JavaException{Class: "java.lang.ArithmeticException", Message: msg}
}

// mathKinds are the types the math functions take, in Cassandra's order.
var mathKinds = []Kind{Tinyint, Smallint, Int, Float, Bigint, Double, Varint, Decimal, Counter}

func registerMath() {
	type impl func(t *Type, v []byte) ([]byte, error)
	fns := []struct {
		name string
		fn   impl
	}{
		{"abs", mathAbs},
		{"exp", mathTranscendental(math.Exp, decimalExp)},
		{"log", mathTranscendental(math.Log, decimalLog)},
		{"log10", mathTranscendental(math.Log10, decimalLog10)},
		{"round", mathRound},
	}
	for _, f := range fns {
		for _, k := range mathKinds {
			t := Native(k)
			fn := f.fn
			register(&Function{Name: f.name, Args: []*Type{t}, Returns: t, Pure: true,
				impl: func(_ *FunctionEnv, args [][]byte) ([]byte, error) {
					if len(args[0]) == 0 {
						return nil, nil
					}
					return fn(t, args[0])
				}})
		}
	}
}

// JavaDoubleToInt and JavaDoubleToLong are Java's (int) and (long) of a
// double: NaN is 0, values beyond the range saturate, others truncate.
func JavaDoubleToInt(d float64) int32 { return int32(javaSaturate(d, math.MinInt32, math.MaxInt32)) }

// JavaDoubleToLong: see JavaDoubleToInt.
func JavaDoubleToLong(d float64) int64 { return javaSaturate(d, math.MinInt64, math.MaxInt64) }

func javaSaturate(d float64, lo, hi int64) int64 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= float64(hi):
		return hi
	case d <= float64(lo):
		return lo
	}
	return int64(d)
}

// javaRound is Java's Math.round before narrowing: the floor of d + 1/2,
// computed without the rounding error of adding.
func javaRound(d float64) float64 {
	if math.IsNaN(d) || math.IsInf(d, 0) || d == math.Trunc(d) {
		return d
	}
	f := math.Floor(d)
	if d-f >= 0.5 {
		return f + 1
	}
	return f
}

// fromDouble narrows a double to integer kind k as Java's casts do:
// (byte) and (short) go through int.
func fromDouble(k Kind, d float64) []byte {
	switch k {
	case Tinyint:
		return EncodeTinyint(int8(JavaDoubleToInt(d)))
	case Smallint:
		return EncodeSmallint(int16(JavaDoubleToInt(d)))
	case Int:
		return EncodeInt(JavaDoubleToInt(d))
	case Float:
		return EncodeFloat(float32(d))
	case Double:
		return EncodeDouble(d)
	}
	return EncodeBigint(JavaDoubleToLong(d)) // bigint, counter
}

// toDouble is a fixed-size number's value as a double.
func toDouble(k Kind, v []byte) float64 {
	switch k {
	case Tinyint:
		return float64(int8(v[0]))
	case Smallint:
		return float64(int16(binary.BigEndian.Uint16(v)))
	case Int:
		return float64(int32(binary.BigEndian.Uint32(v)))
	case Float:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
	case Double:
		return math.Float64frombits(binary.BigEndian.Uint64(v))
	}
	return float64(int64(binary.BigEndian.Uint64(v)))
}

func mathAbs(t *Type, v []byte) ([]byte, error) {
	switch t.Kind {
	case Tinyint:
		n := int8(v[0])
		if n < 0 {
			n = -n // wraps at -128, as Java's does
		}
		return EncodeTinyint(n), nil
	case Smallint:
		n := int16(binary.BigEndian.Uint16(v))
		if n < 0 {
			n = -n
		}
		return EncodeSmallint(n), nil
	case Int:
		n := int32(binary.BigEndian.Uint32(v))
		if n < 0 {
			n = -n
		}
		return EncodeInt(n), nil
	case Bigint, Counter:
		n := int64(binary.BigEndian.Uint64(v))
		if n < 0 {
			n = -n
		}
		return EncodeBigint(n), nil
	case Float:
		return binary.BigEndian.AppendUint32(nil, binary.BigEndian.Uint32(v)&^(1<<31)), nil
	case Double:
		return binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(v)&^(1<<63)), nil
	case Varint:
		return EncodeVarint(new(big.Int).Abs(varintFromBytes(v))), nil
	}
	u, scale, err := DecodeDecimal(v)
	if err != nil {
		return nil, err
	}
	return EncodeDecimal(new(big.Int).Abs(u), scale), nil
}

func mathRound(t *Type, v []byte) ([]byte, error) {
	switch t.Kind {
	case Float:
		f := float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
		return EncodeFloat(float32(JavaDoubleToInt(javaRound(f)))), nil
	case Double:
		return EncodeDouble(float64(JavaDoubleToLong(javaRound(toDouble(Double, v))))), nil
	case Decimal:
		u, scale, err := DecodeDecimal(v)
		if err != nil {
			return nil, err
		}
		digits := decimal{u, scale}.precision()
		switch {
		case scale <= 0 && int64(-scale)+int64(digits) > maxIntegerDigits:
			return nil, arithmeticException("Overflow")
		case scale <= 0:
			return EncodeDecimal(new(big.Int).Mul(u, pow10(int64(-scale))), 0), nil
		case int(scale) > digits:
			return EncodeDecimal(new(big.Int), 0), nil // below a tenth: 0
		}
		// HALF_UP: halves go away from zero.
		unit := pow10(int64(scale))
		q, r := new(big.Int).QuoRem(u, unit, new(big.Int))
		if twice := new(big.Int).Abs(r); twice.Lsh(twice, 1).Cmp(unit) >= 0 {
			q.Add(q, big.NewInt(int64(u.Sign())))
		}
		return EncodeDecimal(q, 0), nil
	}
	return v, nil // the integer types are their own rounding
}

// mathTranscendental is exp, log or log10: in double for the fixed-size
// types, in decimals for decimal and varint (a varint's result cut to
// its integral part).
func mathTranscendental(f func(float64) float64, dec func(d decimal) (decimal, error)) func(t *Type, v []byte) ([]byte, error) {
	return func(t *Type, v []byte) ([]byte, error) {
		switch t.Kind {
		case Varint:
			r, err := dec(decimal{varintFromBytes(v), 0})
			if err != nil {
				return nil, err
			}
			return r.toVarint()
		case Decimal:
			u, scale, err := DecodeDecimal(v)
			if err != nil {
				return nil, err
			}
			r, err := dec(decimal{u, scale})
			if err != nil {
				return nil, err
			}
			return EncodeDecimal(r.u, r.scale), nil
		}
		return fromDouble(t.Kind, f(toDouble(t.Kind, v))), nil
	}
}

// decimal is a BigDecimal: u × 10^-scale.
type decimal struct {
	u     *big.Int
	scale int32
}

func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// MaxDecimalDigits bounds the numbers decimal arithmetic builds: a scale
// is an int, so aligning 1E-2147483647 with 1 would need a number of two
// billion digits, which Java would try to build; here it is refused.
const MaxDecimalDigits = 100_000

// Pow10 is 10^n for n from 0 to MaxDecimalDigits, and an Overflow
// (java.lang.ArithmeticException) past that.
func Pow10(n int64) (*big.Int, error) {
	if n < 0 || n > MaxDecimalDigits {
		return nil, arithmeticException("Overflow")
	}
	return pow10(n), nil
}

// precision is the number of digits of u (1 for zero).
func (d decimal) precision() int {
	return len(new(big.Int).Abs(d.u).String())
}

// maxIntegerDigits bounds a varint result: the integral part of a
// decimal with an exponent this large would be a value of millions of
// digits, which no query can mean.
const maxIntegerDigits = MaxDecimalDigits

func (d decimal) toVarint() ([]byte, error) {
	digits := d.precision()
	if int(d.scale) >= digits {
		return EncodeVarint(new(big.Int)), nil // below one
	}
	if d.scale >= 0 {
		return EncodeVarint(new(big.Int).Quo(d.u, pow10(int64(d.scale)))), nil
	}
	if int64(-d.scale)+int64(digits) > maxIntegerDigits {
		return nil, arithmeticException("Overflow")
	}
	return EncodeVarint(new(big.Int).Mul(d.u, pow10(int64(-d.scale)))), nil
}

// mathPrecision is BigDecimal's working precision for exp and log: the
// argument's digits, at least 32 and at most 10,000.
func mathPrecision(d decimal) int { return min(max(d.precision(), 32), 10_000) }

// bigFloatOf is d as a big.Float of prec bits; callers keep d's scale
// within what the result needs (a power of ten of the scale is built).
func bigFloatOf(d decimal, prec uint) *big.Float {
	f := new(big.Float).SetPrec(prec).SetInt(d.u)
	if d.scale == 0 {
		return f
	}
	s := new(big.Float).SetPrec(prec).SetInt(pow10(int64(abs64(int64(d.scale)))))
	if d.scale > 0 {
		return f.Quo(f, s)
	}
	return f.Mul(f, s)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// roundedDecimal rounds f to digits significant digits, half to even,
// keeping trailing zeros, as a MathContext does.
func roundedDecimal(f *big.Float, digits int) (decimal, error) {
	if f.IsInf() {
		return decimal{}, arithmeticException("Overflow")
	}
	if f.Sign() == 0 {
		return decimal{new(big.Int), 0}, nil
	}
	text := f.Text('e', digits-1) // d.ddddde±x
	mant, exp, _ := strings.Cut(text, "e")
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return decimal{}, err
	}
	u, ok := new(big.Int).SetString(strings.Replace(mant, ".", "", 1), 10)
	if !ok {
		return decimal{}, fmt.Errorf("cannot read %q", text)
	}
	scale := int64(digits-1) - e
	if scale > math.MaxInt32 || scale < math.MinInt32 {
		return decimal{}, arithmeticException("Overflow")
	}
	return decimal{u, int32(scale)}, nil
}

// workingBits is the big.Float precision for digits decimal digits, with
// guard bits.
func workingBits(digits int) uint { return uint(float64(digits)*math.Log2(10)) + 64 }

// expFloat is e^x at prec bits (x's magnitude below 2^31).
func expFloat(x *big.Float, prec uint) *big.Float {
	// e^x = (e^(x/2^k))^(2^k), with x/2^k small enough for the series.
	k := uint(0)
	if e := x.MantExp(nil); e > -8 {
		k = uint(e + 8)
	}
	prec += k
	r := new(big.Float).SetPrec(prec).SetMantExp(x, -int(k))
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	limit := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -int(prec))
	nf, size := new(big.Float).SetPrec(prec), new(big.Float)
	for n := int64(1); ; n++ {
		term.Mul(term, r)
		term.Quo(term, nf.SetInt64(n))
		sum.Add(sum, term)
		if size.Abs(term).Cmp(limit) < 0 {
			break
		}
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return sum
}

// logFloat is ln x (x > 0) at prec bits: x = m·2^e with m in [1/2, 1),
// ln m found by Newton's iteration on e^y, plus e·ln 2.
func logFloat(x *big.Float, prec uint) *big.Float {
	m := new(big.Float).SetPrec(prec)
	e := x.MantExp(m)
	mf, _ := m.Float64()
	y := new(big.Float).SetPrec(prec).SetFloat64(math.Log(mf))
	two := new(big.Float).SetPrec(prec).SetInt64(2)
	for bits := uint(50); ; bits *= 3 {
		ey := expFloat(y, prec)
		num := new(big.Float).SetPrec(prec).Sub(m, ey)
		den := new(big.Float).SetPrec(prec).Add(m, ey)
		y.Add(y, num.Mul(num, two).Quo(num, den))
		if bits >= prec {
			break
		}
	}
	if e != 0 {
		ln2 := logTwo(prec)
		y.Add(y, ln2.Mul(ln2, new(big.Float).SetPrec(prec).SetInt64(int64(e))))
	}
	return y
}

// logConstants keeps ln 2 and ln 10 by precision: a long decimal's
// functions would compute them again for every row.
var logConstants sync.Map // [2]uint64{precision, of} -> *big.Float

// cachedLog is a constant at prec bits, computed (at prec rounded up to a
// multiple of 256, so few precisions are kept) once.
func cachedLog(prec uint, of int64, compute func(prec uint) *big.Float) *big.Float {
	stored := (prec + 255) &^ 255
	key := [2]uint64{uint64(stored), uint64(of)}
	v, ok := logConstants.Load(key)
	if !ok {
		v = compute(stored)
		logConstants.Store(key, v)
	}
	return new(big.Float).SetPrec(prec).Set(v.(*big.Float))
}

// logTen is ln 10 at prec bits.
func logTen(prec uint) *big.Float {
	return cachedLog(prec, 10, func(p uint) *big.Float { return logFloat(new(big.Float).SetPrec(p).SetInt64(10), p) })
}

// logTwo is ln 2 at prec bits.
func logTwo(prec uint) *big.Float { return cachedLog(prec, 2, seriesLogTwo) }

// seriesLogTwo is ln 2 = Σ 1/(k·2^k) at prec bits.
func seriesLogTwo(prec uint) *big.Float {
	sum := new(big.Float).SetPrec(prec)
	pow := new(big.Float).SetPrec(prec).SetInt64(1)
	for k := int64(1); k <= int64(prec)+8; k++ {
		pow.SetMantExp(pow, -1)
		sum.Add(sum, new(big.Float).SetPrec(prec).Quo(pow, new(big.Float).SetPrec(prec).SetInt64(k)))
	}
	return sum
}

func decimalExp(d decimal) (decimal, error) {
	if d.u.Sign() == 0 {
		return decimal{big.NewInt(1), 0}, nil
	}
	digits := mathPrecision(d)
	switch magnitude := int64(d.precision()) - int64(d.scale); {
	case magnitude > 10:
		// The integral part must be an int, as BigDecimalMath's is.
		return decimal{}, arithmeticException("Overflow")
	case magnitude < -int64(digits)-10:
		// So near 0 that e^x rounds to 1 at this precision.
		return decimal{pow10(int64(digits - 1)), int32(digits - 1)}, nil
	}
	prec := workingBits(digits) + 40
	x := bigFloatOf(d, prec)
	if new(big.Float).Abs(x).Cmp(big.NewFloat(math.MaxInt32)) > 0 {
		return decimal{}, arithmeticException("Overflow")
	}
	// e^x = 10^n · e^(x - n·ln 10), the second factor in [1, 10): only
	// it is computed, so a result of a huge exponent costs no more than
	// another (x carries up to 31 bits before its point, hence the extra
	// bits).
	ln10 := logTen(prec)
	q, _ := new(big.Float).SetPrec(prec).Quo(x, ln10).Float64()
	n := int64(math.Floor(q))
	g := new(big.Float).SetPrec(prec).Mul(ln10, new(big.Float).SetPrec(prec).SetInt64(n))
	g.Sub(x, g)
	r, err := roundedDecimal(expFloat(g, prec), digits)
	if err != nil {
		return decimal{}, err
	}
	scale := int64(r.scale) - n
	if scale > math.MaxInt32 || scale < math.MinInt32 {
		return decimal{}, arithmeticException("Overflow")
	}
	return decimal{r.u, int32(scale)}, nil
}

func decimalLog(d decimal) (decimal, error) {
	if d.u.Sign() <= 0 {
		return decimal{}, arithmeticException("Natural log of number zero or less")
	}
	if d.isOne() {
		return decimal{new(big.Int), 0}, nil
	}
	digits := mathPrecision(d)
	prec := workingBits(digits) + 40 // the scale's digits come before the point
	return roundedDecimal(lnDecimal(d, prec), digits)
}

// lnDecimal is ln(u·10^-scale) = ln u - scale·ln 10: no power of the
// scale is built, however large it is.
func lnDecimal(d decimal, prec uint) *big.Float {
	ln := logFloat(new(big.Float).SetPrec(prec).SetInt(d.u), prec)
	if d.scale != 0 {
		s := new(big.Float).SetPrec(prec).SetInt64(int64(d.scale))
		ln.Sub(ln, s.Mul(s, logTen(prec)))
	}
	return ln
}

func decimalLog10(d decimal) (decimal, error) {
	if d.u.Sign() <= 0 {
		return decimal{}, arithmeticException("Log10 of number zero or less")
	}
	if k, ok := d.powerOfTen(); ok {
		return decimal{big.NewInt(k), 0}, nil
	}
	digits := mathPrecision(d)
	prec := workingBits(digits) + 40
	ln := lnDecimal(d, prec)
	return roundedDecimal(ln.Quo(ln, logTen(prec)), digits)
}

func (d decimal) isOne() bool {
	k, ok := d.powerOfTen()
	return ok && k == 0
}

// powerOfTen reports whether d is 10^k, and k.
func (d decimal) powerOfTen() (int64, bool) {
	s := d.u.String()
	if s[0] != '1' || strings.Trim(s[1:], "0") != "" {
		return 0, false
	}
	return int64(len(s)-1) - int64(d.scale), true
}
