package cqltype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Turning CQL constants into values, as Cassandra 4.1 does it: which
// constants a type accepts (Constants.Literal.testAssignment), and how the
// text becomes bytes (each marshal type's fromString). Error messages are
// Cassandra's, word for word, because drivers and tests match on them.

// LiteralKind is the lexical kind of a CQL constant. The values line up with
// cql.ConstantKind, so the executor may convert one to the other directly.
type LiteralKind uint8

// The kinds of constants.
const (
	StringLiteral   LiteralKind = iota // 'text', with quotes removed and '' unescaped
	IntegerLiteral                     // [-]digits
	FloatLiteral                       // decimal or exponent form, NaN, Infinity, -Infinity
	BooleanLiteral                     // true or false
	UUIDLiteral                        // 8-4-4-4-12 hex digits
	HexLiteral                         // 0x followed by hex digits
	DurationLiteral                    // 1h30m, P1DT2H, P0001-02-03T04:05:06, with optional '-'
)

// String returns the name Cassandra's messages use (its Constants.Type).
func (k LiteralKind) String() string {
	switch k {
	case StringLiteral:
		return "STRING"
	case IntegerLiteral:
		return "INTEGER"
	case FloatLiteral:
		return "FLOAT"
	case BooleanLiteral:
		return "BOOLEAN"
	case UUIDLiteral:
		return "UUID"
	case HexLiteral:
		return "HEX"
	case DurationLiteral:
		return "DURATION"
	}
	return "LITERAL(" + strconv.Itoa(int(k)) + ")"
}

// Assignability is the answer of Cassandra's testAssignment: whether a value
// may be given to a receiver, and whether it is a perfect fit. Overload
// resolution prefers exact matches over weak ones.
type Assignability uint8

// The assignability levels, weakest first.
const (
	NotAssignable Assignability = iota
	WeaklyAssignable
	ExactMatch
)

func (a Assignability) String() string {
	switch a {
	case NotAssignable:
		return "not assignable"
	case WeaklyAssignable:
		return "weakly assignable"
	case ExactMatch:
		return "exact match"
	}
	return "assignability(" + strconv.Itoa(int(a)) + ")"
}

// IsAssignable reports whether a is weak or exact.
func (a Assignability) IsAssignable() bool { return a != NotAssignable }

// InvalidConstantError reports a constant whose kind the type never accepts,
// such as a string for an int column. Cassandra names the receiver (a column,
// a bind variable, a function argument) in the message, which only the
// caller knows: it fills Receiver with For before showing the error.
type InvalidConstantError struct {
	Kind     LiteralKind
	Text     string // the constant as written, without quotes
	Type     *Type
	Receiver string // the receiver's name as Cassandra prints it, "" when not known
}

// For returns a copy of e naming the receiver (a column name, or
// Function.ArgName for a function argument).
func (e *InvalidConstantError) For(receiver string) *InvalidConstantError {
	c := *e
	c.Receiver = receiver
	return &c
}

func (e *InvalidConstantError) Error() string {
	if e.Receiver == "" {
		// Only reached when the caller did not name the receiver; the rest
		// of the message keeps Cassandra's shape.
		return fmt.Sprintf("Invalid %s constant (%s) of type %s", e.Kind, e.Text, e.Type.SchemaString())
	}
	return fmt.Sprintf("Invalid %s constant (%s) for \"%s\" of type %s", e.Kind, e.Text, e.Receiver, e.Type.SchemaString())
}

// WithReceiver names the receiver in err when it is an InvalidConstantError
// and returns every other error unchanged, so callers can wrap whatever
// FromLiteral returned.
func WithReceiver(err error, receiver string) error {
	var ice *InvalidConstantError
	if errors.As(err, &ice) {
		return ice.For(receiver)
	}
	return err
}

// TestLiteral reports whether a constant of the given kind and text may be
// assigned to t, following Cassandra's Constants.Literal.testAssignment: the
// constant's preferred type (ascii or text for strings, the smallest of int,
// bigint and varint for integers, double or decimal for floats) is an exact
// match, other accepted types are weak matches. Custom types accept
// everything (weakly); collections, tuples and UDTs accept no constant.
func (t *Type) TestLiteral(kind LiteralKind, text string) Assignability {
	switch t.Kind {
	case List, Set, Map, Tuple, UDT, Vector:
		return NotAssignable
	case Custom:
		return WeaklyAssignable
	}
	if pref, ok := preferredKind(kind, text); ok && pref == t.Kind {
		return ExactMatch
	}
	if literalAccepts(kind, t.Kind) {
		return WeaklyAssignable
	}
	return NotAssignable
}

// literalAccepts is Cassandra's table of which native types take which kind
// of constant. Strings are not accepted for uuid, blob, boolean, duration or
// the numbers; blobs accept only hex constants (others need typeAsBlob).
func literalAccepts(kind LiteralKind, k Kind) bool {
	switch kind {
	case StringLiteral:
		switch k {
		case Ascii, Text, Inet, Date, Time, Timestamp:
			return true
		}
	case IntegerLiteral:
		switch k {
		case Bigint, Counter, Date, Decimal, Double, Duration, Float, Int, Smallint, Time, Timestamp, Tinyint, Varint:
			return true
		}
	case UUIDLiteral:
		return k == UUID || k == Timeuuid
	case FloatLiteral:
		return k == Decimal || k == Double || k == Float
	case BooleanLiteral:
		return k == Boolean
	case HexLiteral:
		return k == Blob
	case DurationLiteral:
		return k == Duration
	}
	return false
}

// preferredKind is Cassandra's Constants.Type.getPreferedTypeFor.
func preferredKind(kind LiteralKind, text string) (Kind, bool) {
	switch kind {
	case StringLiteral:
		for i := 0; i < len(text); i++ {
			if text[i] >= 0x80 {
				return Text, true
			}
		}
		return Ascii, true
	case IntegerLiteral:
		v, ok := parseJavaBigInteger(text)
		if !ok {
			return 0, false
		}
		switch {
		case v.IsInt64() && v.Int64() == int64(int32(v.Int64())):
			return Int, true
		case v.IsInt64():
			return Bigint, true
		}
		return Varint, true
	case FloatLiteral:
		switch text {
		case "NaN", "-NaN", "Infinity", "-Infinity":
			return Double, true
		}
		unscaled, scale, ok := parseJavaBigDecimal(text)
		if !ok {
			return 0, false
		}
		// A double is preferred when it holds the written value exactly as
		// Java would print it back (BigDecimal.valueOf(double)).
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return Decimal, true
		}
		bu, bscale, ok := parseJavaBigDecimal(strconv.FormatFloat(f, 'g', -1, 64))
		if ok && sameDecimal(unscaled, scale, bu, bscale) {
			return Double, true
		}
		return Decimal, true
	}
	return 0, false
}

// sameDecimal reports whether two decimals are numerically equal. It strips
// trailing zeros instead of scaling by powers of ten, which a hostile
// exponent would make enormous.
func sameDecimal(u1 *big.Int, s1 int32, u2 *big.Int, s2 int32) bool {
	n1, e1 := stripZeros(u1, s1)
	n2, e2 := stripZeros(u2, s2)
	return n1.Cmp(n2) == 0 && (n1.Sign() == 0 || e1 == e2)
}

func stripZeros(u *big.Int, scale int32) (*big.Int, int64) {
	digits := u.String()
	trimmed := strings.TrimRight(digits, "0")
	if trimmed == "" || trimmed == "-" {
		return new(big.Int), 0
	}
	n, _ := new(big.Int).SetString(trimmed, 10)
	return n, int64(scale) - int64(len(digits)-len(trimmed))
}

// FromLiteral returns the serialized value of a constant assigned to t, as
// Cassandra's Constants.Literal.prepare computes it. A constant of a kind t
// does not accept gives an *InvalidConstantError (name the receiver with
// WithReceiver); a constant of an accepted kind whose text does not fit
// (an out-of-range int, a malformed date) gives Cassandra's parse error.
// Hex constants become the blob they spell; counters parse as bigints;
// everything else goes through FromString.
func (t *Type) FromLiteral(kind LiteralKind, text string) ([]byte, error) {
	return t.fromLiteral(kind, text, time.Now)
}

func (t *Type) fromLiteral(kind LiteralKind, text string, now func() time.Time) ([]byte, error) {
	if !t.TestLiteral(kind, text).IsAssignable() {
		return nil, &InvalidConstantError{Kind: kind, Text: text, Type: t}
	}
	if kind == HexLiteral {
		// Cassandra drops the first two characters (the 0x) without
		// looking at them, and decodes the rest as a blob whatever the
		// receiver (a custom type, here).
		if len(text) < 2 {
			return nil, fmt.Errorf("cannot parse '%s' as hex bytes", text)
		}
		return parseHexBlob(text[2:])
	}
	if t.Kind == Custom {
		return nil, fmt.Errorf("Unable to parse '%s' as a value of custom type %s", text, t.SchemaString())
	}
	return t.fromString(text, now)
}

// FromString parses the text form of a value of t, as Cassandra's
// AbstractType.fromString does: the form of CQL string constants, JSON
// strings and cqlsh COPY. The empty string is the empty value for most
// types (false for boolean; an error for date and time). Timestamps accept
// milliseconds since the epoch, 'now', and the date/time forms of
// TimestampSerializer, local times being UTC; dates accept 'yyyy-mm-dd' and
// unsigned day numbers (2^31 is the epoch); times 'hh:mm:ss[.fffffffff]' and
// nanoseconds; durations the three duration syntaxes.
//
// Deviations: inet parses only address literals (Cassandra would also
// resolve host names through DNS); counter parses as bigint (Cassandra's
// counter fromString reads hex, which no CQL path reaches); custom types
// are refused, having no parser here; named time zones are IANA region ids
// and UTC/GMT/UT forms, not Java's localized zone names.
func (t *Type) FromString(s string) ([]byte, error) {
	return t.fromString(s, time.Now)
}

func (t *Type) fromString(s string, now func() time.Time) ([]byte, error) {
	switch t.Kind {
	case Ascii:
		return parseASCII(s)
	case Text:
		return []byte(strings.ToValidUTF8(s, "\uFFFD")), nil
	case Blob:
		return parseHexBlob(s)
	case Boolean:
		switch {
		case s == "" || strings.EqualFold(s, "false"):
			return EncodeBoolean(false), nil
		case strings.EqualFold(s, "true"):
			return EncodeBoolean(true), nil
		}
		return nil, fmt.Errorf("Unable to make boolean from '%s'", s)
	case Tinyint, Smallint, Int, Bigint, Counter:
		return parseFixedInt(t.Kind, s)
	case Varint:
		if s == "" {
			return []byte{}, nil
		}
		v, ok := parseJavaBigInteger(s)
		if !ok {
			return nil, fmt.Errorf("unable to make int from '%s'", s)
		}
		return EncodeVarint(v), nil
	case Decimal:
		if s == "" {
			return []byte{}, nil
		}
		u, scale, ok := parseJavaBigDecimal(s)
		if !ok {
			return nil, fmt.Errorf("unable to make BigDecimal from '%s'", s)
		}
		return EncodeDecimal(u, scale), nil
	case Float:
		if s == "" {
			return []byte{}, nil
		}
		f, ok := parseJavaFloat(s, 32)
		if !ok {
			return nil, fmt.Errorf("Unable to make float from '%s'", s)
		}
		if math.IsNaN(f) {
			return binary.BigEndian.AppendUint32(nil, 0x7fc00000), nil // Java's canonical NaN
		}
		return EncodeFloat(float32(f)), nil
	case Double:
		if s == "" {
			return []byte{}, nil
		}
		f, ok := parseJavaFloat(s, 64)
		if !ok {
			return nil, fmt.Errorf("Unable to make double from '%s'", s)
		}
		if math.IsNaN(f) {
			return binary.BigEndian.AppendUint64(nil, 0x7ff8000000000000), nil
		}
		return EncodeDouble(f), nil
	case UUID:
		if s == "" {
			return []byte{}, nil
		}
		u, ok := parseUUIDText(s)
		if !ok {
			return nil, fmt.Errorf("Unable to make UUID from '%s'", s)
		}
		return u, nil
	case Timeuuid:
		if s == "" {
			return []byte{}, nil
		}
		u, ok := parseUUIDText(s)
		if !ok {
			return nil, fmt.Errorf("Unknown timeuuid representation: %s", s)
		}
		if u[6]>>4 != 1 {
			return nil, fmt.Errorf("TimeUUID supports only version 1 UUIDs")
		}
		return u, nil
	case Inet:
		if s == "" {
			return []byte{}, nil
		}
		a, ok := parseInetLiteral(s)
		if !ok {
			return nil, fmt.Errorf("Unable to make inet address from '%s'", s)
		}
		return a, nil
	case Timestamp:
		if s == "" {
			return []byte{}, nil
		}
		ms, err := parseTimestampString(s, now)
		if err != nil {
			return nil, err
		}
		return EncodeTimestamp(ms), nil
	case Date:
		raw, err := parseDateString(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint32(nil, raw), nil
	case Time:
		ns, err := parseTimeString(s)
		if err != nil {
			return nil, err
		}
		return EncodeTime(ns), nil
	case Duration:
		if s == "" {
			return []byte{}, nil
		}
		m, d, ns, err := ParseDuration(s)
		if err != nil {
			return nil, err
		}
		return EncodeDuration(m, d, ns), nil
	case Custom:
		return nil, fmt.Errorf("Unable to parse '%s' as a value of custom type %s", s, t.SchemaString())
	}
	return nil, fmt.Errorf("Unable to parse '%s' as a value of type %s: only native types have a text form", s, t.SchemaString())
}

func parseASCII(s string) ([]byte, error) {
	for _, r := range s {
		if r < 0x80 {
			continue
		}
		// Java's encoder reports how many UTF-16 units it could not map.
		n := 1
		if r > 0xFFFF {
			n = 2
		}
		return nil, fmt.Errorf("Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = %d", n)
	}
	return []byte(s), nil
}

// parseHexBlob decodes hex digits (either case, no prefix), as Cassandra's
// BytesType.fromString.
func parseHexBlob(s string) ([]byte, error) {
	if len(s)%2 == 1 {
		return nil, fmt.Errorf("cannot parse '%s' as hex bytes", s)
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, lo := hexVal(s[2*i]), hexVal(s[2*i+1])
		if hi < 0 || lo < 0 {
			return nil, fmt.Errorf("cannot parse '%s' as hex bytes", s)
		}
		out[i] = byte(hi<<4 | lo)
	}
	return out, nil
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// parseUUIDText accepts exactly the 8-4-4-4-12 hex form, as UUIDType does.
func parseUUIDText(s string) ([]byte, bool) {
	if len(s) != 36 {
		return nil, false
	}
	out := make([]byte, 0, 16)
	for i := 0; i < 36; {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return nil, false
			}
			i++
			continue
		}
		hi, lo := hexVal(s[i]), hexVal(s[i+1])
		if hi < 0 || lo < 0 {
			return nil, false
		}
		out = append(out, byte(hi<<4|lo))
		i += 2
	}
	return out, true
}

// javaDigit is Character.digit(c, 10) for one UTF-16 unit: Java's integer
// parsers accept the decimal digits of every script in the BMP.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || r > 0xFFFF || !unicode.IsDigit(r) {
		return -1
	}
	// Unicode allocates decimal digits in runs of ten starting at zero, so
	// the offset within a run is the value.
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}

// parseJavaLong is Long.parseLong: an optional sign and at least one digit,
// in range.
func parseJavaLong(s string) (int64, bool) {
	neg := false
	rest := s
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	if rest == "" {
		return 0, false
	}
	// Accumulate negatively, as Java does, so the minimum value fits.
	var v int64
	for _, r := range rest {
		d := javaDigit(r)
		if d < 0 {
			return 0, false
		}
		if v < (math.MinInt64+int64(d))/10 {
			return 0, false
		}
		v = v*10 - int64(d)
	}
	if !neg {
		if v == math.MinInt64 {
			return 0, false
		}
		v = -v
	}
	return v, true
}

// parseFixedInt parses tinyint, smallint, int, bigint and counter text with
// Java's parseByte/parseShort/parseInt/parseLong rules.
func parseFixedInt(k Kind, s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	v, ok := parseJavaLong(s)
	switch k {
	case Tinyint:
		if !ok || v != int64(int8(v)) {
			return nil, fmt.Errorf("Unable to make byte from '%s'", s)
		}
		return EncodeTinyint(int8(v)), nil
	case Smallint:
		if !ok || v != int64(int16(v)) {
			return nil, fmt.Errorf("Unable to make short from '%s'", s)
		}
		return EncodeSmallint(int16(v)), nil
	case Int:
		if !ok || v != int64(int32(v)) {
			return nil, fmt.Errorf("Unable to make int from '%s'", s)
		}
		return EncodeInt(int32(v)), nil
	}
	if !ok {
		return nil, fmt.Errorf("Unable to make long from '%s'", s)
	}
	return EncodeBigint(v), nil
}

// javaDigits converts a run of Java digits to ASCII, or reports false.
func javaDigits(s string) (string, bool) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			ascii = false
			break
		}
	}
	if ascii {
		return s, s != ""
	}
	var b strings.Builder
	for _, r := range s {
		d := javaDigit(r)
		if d < 0 {
			return "", false
		}
		b.WriteByte(byte('0' + d))
	}
	return b.String(), b.Len() > 0
}

// parseJavaBigInteger is new BigInteger(s): an optional sign and digits.
func parseJavaBigInteger(s string) (*big.Int, bool) {
	neg := false
	rest := s
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	digits, ok := javaDigits(rest)
	if !ok {
		return nil, false
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

// parseJavaBigDecimal is new BigDecimal(s): [sign] digits [. digits]
// [e|E [sign] digits], with at least one significand digit; the scale is
// the number of fraction digits minus the exponent and must fit an int.
func parseJavaBigDecimal(s string) (*big.Int, int32, bool) {
	rest := s
	neg := false
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	mant, exp := rest, ""
	if i := strings.IndexAny(rest, "eE"); i >= 0 {
		mant, exp = rest[:i], rest[i+1:]
		if exp == "" {
			return nil, 0, false
		}
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" && frac == "" {
		return nil, 0, false
	}
	digits := ""
	if intPart != "" {
		d, ok := javaDigits(intPart)
		if !ok {
			return nil, 0, false
		}
		digits = d
	}
	if frac != "" {
		d, ok := javaDigits(frac)
		if !ok {
			return nil, 0, false
		}
		digits += d
	}
	scale := int64(utf8.RuneCountInString(frac))
	if exp != "" {
		e, ok := parseJavaLong(exp)
		if !ok || e != int64(int32(e)) {
			return nil, 0, false
		}
		scale -= e
	}
	if scale != int64(int32(scale)) {
		return nil, 0, false
	}
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, 0, false
	}
	if neg {
		u.Neg(u)
	}
	return u, int32(scale), true
}

// parseJavaFloat is Float.parseFloat / Double.parseDouble: surrounding
// control characters and spaces trimmed, an optional sign, then NaN,
// Infinity, a decimal number with optional exponent, or a hex number with a
// binary exponent; an f, F, d or D suffix is allowed after numbers. Values
// too large become infinities and too small ones zero, as in Java.
func parseJavaFloat(s string, bits int) (float64, bool) {
	s = javaTrim(s)
	body := s
	sign := ""
	if body != "" && (body[0] == '+' || body[0] == '-') {
		sign, body = body[:1], body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if sign == "-" {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 0 && strings.IndexByte("fFdD", body[n-1]) >= 0 {
		body = body[:n-1]
	}
	if !javaFloatSyntax(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(sign+body, bits)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// javaFloatSyntax checks an unsigned, suffix-free Java floating point
// number, so that Go's more permissive parser (underscores, "inf") never
// sees anything Java would refuse.
func javaFloatSyntax(s string) bool {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		p := strings.IndexAny(s, "pP")
		if p < 0 {
			return false
		}
		mant, exp := s[2:p], s[p+1:]
		digits := 0
		dots := 0
		for i := 0; i < len(mant); i++ {
			switch {
			case mant[i] == '.':
				dots++
			case hexVal(mant[i]) >= 0:
				digits++
			default:
				return false
			}
		}
		return digits > 0 && dots <= 1 && signedDigits(exp)
	}
	mant, exp := s, ""
	hasExp := false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp, hasExp = s[:i], s[i+1:], true
	}
	digits, dots := 0, 0
	for i := 0; i < len(mant); i++ {
		switch {
		case mant[i] == '.':
			dots++
		case mant[i] >= '0' && mant[i] <= '9':
			digits++
		default:
			return false
		}
	}
	if digits == 0 || dots > 1 {
		return false
	}
	return !hasExp || signedDigits(exp)
}

func signedDigits(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// javaTrim is String.trim: it strips every character at or below space.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// parseInetLiteral reads the address literals java.net.InetAddress accepts:
// dotted IPv4 with one to four parts (127.1 is 127.0.0.1), IPv6 with or
// without brackets and zone, and IPv4-mapped IPv6, which Java turns into the
// 4-byte address.
func parseInetLiteral(s string) ([]byte, bool) {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") && len(s) > 2 {
		return parseIPv6Literal(s[1 : len(s)-1])
	}
	if strings.IndexByte(s, ':') >= 0 {
		return parseIPv6Literal(s)
	}
	return parseIPv4Literal(s)
}

func parseIPv6Literal(s string) ([]byte, bool) {
	if strings.IndexByte(s, ':') < 0 {
		return nil, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return nil, false
	}
	if a.Is4In6() {
		b := a.Unmap().As4()
		return b[:], true
	}
	b := a.WithZone("").As16()
	return b[:], true
}

func parseIPv4Literal(s string) ([]byte, bool) {
	if s == "" || len(s) > 15 {
		return nil, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return nil, false
	}
	var out [4]byte
	for i, p := range parts {
		digits, ok := javaDigits(p)
		if !ok {
			return nil, false
		}
		v, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			return nil, false
		}
		if i < len(parts)-1 {
			if v > 0xff {
				return nil, false
			}
			out[i] = byte(v)
			continue
		}
		// The last part fills all the remaining bytes.
		width := uint(4 - i)
		if v >= 1<<(8*width) {
			return nil, false
		}
		for j := 3; j >= i; j-- {
			out[j] = byte(v)
			v >>= 8
		}
	}
	return out[:], true
}
