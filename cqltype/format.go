package cqltype

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Format returns v as cqlsh prints it: 42, 'abc' (quotes doubled), 0xcafe,
// true, 2021-03-04 05:06:07.000000+0000, 1.5, uuids lower-case with dashes,
// [1, 2], {1, 2}, {'a': 1}, (1, 'x'), {f: 1}. Inside collections, tuples and
// UDTs, timestamps and inet addresses are quoted as cqlsh quotes them there.
// Floats and doubles use cqlsh's default display precision (5, for both in
// cqlsh 5.0) and its rule for when to switch to an exponent.
//
// The empty value prints as cqlsh prints it (nothing), except for the string
// types (”) and blob (0x). Null is the caller's job ("null" at top level;
// null tuple components and UDT fields print as null here). Bytes that are
// not a valid value of t print as a hex dump, never a panic.
//
// Deviations from cqlsh, kept because Format output is also read back as
// CQL: booleans print as true/false (cqlsh: True/False), text at the top
// level is quoted, a zero duration prints as 0s, and control characters in
// text are not escaped.
func (t *Type) Format(v []byte) string {
	if t.Validate(v) != nil {
		return hexDump(v)
	}
	var w valueWriter
	t.format(&w, v, false)
	return w.String()
}

// Display returns v as cqlsh shows it in a result table, where Format's
// deviations do not apply: text at the top level unquoted (backslashes
// doubled and control characters escaped as Python escapes them, inside
// collections too), booleans True and False, a zero duration empty, empty
// text empty.
func (t *Type) Display(v []byte) string {
	return t.DisplayPainted(v, nil)
}

// DisplayClass says what a piece of a displayed value is, for a shell that
// colours the pieces as cqlsh does.
type DisplayClass uint8

const (
	// DisplayText is text, and the field names of user types.
	DisplayText DisplayClass = iota
	// DisplayNumber is numbers, booleans, dates, times, timestamps, uuids,
	// inet addresses and durations.
	DisplayNumber
	// DisplayBlob is blobs.
	DisplayBlob
	// DisplayEscape is an escape sequence for a control character in text.
	DisplayEscape
	// DisplayPunct is the brackets and separators of collections, tuples
	// and user types.
	DisplayPunct
	// DisplayError is a null inside a tuple or user type, and bytes that
	// are not a valid value.
	DisplayError
)

// DisplayPainted is Display with each piece passed through paint (nil:
// Display itself). With a painter, a backslash in text shows single, as a
// coloured cqlsh shows it: the colour already tells it from an escape.
func (t *Type) DisplayPainted(v []byte, paint func(DisplayClass, string) string) string {
	return t.display(&valueWriter{display: true, paint: paint}, v)
}

// display writes v, or its bytes when it is not a value of t.
func (t *Type) display(w *valueWriter, v []byte) string {
	if t.Validate(v) != nil {
		w.put(DisplayError, hexDump(v))
	} else {
		t.format(w, v, false)
	}
	return w.String()
}

// DisplayStyle changes what DisplayWith writes, as cqlsh's COPY TO
// changes its display form.
type DisplayStyle struct {
	// Precision is the significant digits of floats and doubles; 0 is
	// cqlsh's display precision, 5.
	Precision int
	// Exact writes floats and doubles in the shortest form that reads
	// back as the same value, whatever Precision says.
	Exact bool
	// Timestamp writes a timestamp (Unix milliseconds); nil writes
	// cqlsh's display form.
	Timestamp func(ms int64) string
	// True and False are how booleans are written; "" is True and False.
	True, False string
	// FieldNull, when set, is what a user type's null field is written
	// as (cqlsh's COPY TO writes its NULL text there); nil writes null.
	FieldNull *string
}

// DisplayWith is Display with options.
func (t *Type) DisplayWith(v []byte, o DisplayStyle) string {
	return t.display(&valueWriter{display: true, opts: o}, v)
}

// valueWriter collects a formatted value: Format's rules, or Display's
// when display is set (with opts), with pieces painted when paint is set.
type valueWriter struct {
	strings.Builder
	display bool
	opts    DisplayStyle
	paint   func(DisplayClass, string) string
}

func (w *valueWriter) precision() int {
	if w.opts.Precision > 0 {
		return w.opts.Precision
	}
	return 5
}

func (w *valueWriter) put(class DisplayClass, s string) {
	if w.paint != nil {
		s = w.paint(class, s)
	}
	w.WriteString(s)
}

// putText writes displayed text: escaped as cqlsh escapes it, quoted
// (quotes doubled) when quote is set.
func (w *valueWriter) putText(s string, quote bool) {
	if quote {
		s = strings.ReplaceAll(s, "'", "''")
		w.put(DisplayText, "'")
	}
	run := 0
	flush := func(i int) {
		if i > run {
			w.put(DisplayText, s[run:i])
		}
	}
	for i, r := range s {
		esc := ""
		switch {
		case r == '\\':
			if w.paint != nil {
				continue
			}
			esc = `\\`
		case r == '\t':
			esc = `\t`
		case r == '\n':
			esc = `\n`
		case r == '\r':
			esc = `\r`
		case r < 0x20 || r >= 0x7F && r <= 0xA0:
			esc = `\x` + hex.EncodeToString([]byte{byte(r)})
		default:
			continue
		}
		flush(i)
		class := DisplayEscape
		if r == '\\' {
			class = DisplayText
		}
		w.put(class, esc)
		run = i + utf8.RuneLen(r)
	}
	flush(len(s))
	if quote {
		w.put(DisplayText, "'")
	}
}

func hexDump(v []byte) string { return "0x" + hex.EncodeToString(v) }

// format writes a valid v. nested is true inside collections, tuples and
// UDTs, where cqlsh quotes more types.
func (t *Type) format(w *valueWriter, v []byte, nested bool) {
	display := w.display
	if len(v) == 0 {
		switch {
		case (t.Kind == Ascii || t.Kind == Text) && (!display || nested):
			w.put(DisplayText, "''")
		case t.Kind == Blob || t.Kind == Custom:
			w.put(DisplayBlob, "0x")
		}
		return
	}
	number := func(s string) { w.put(DisplayNumber, s) }
	switch t.Kind {
	case Ascii, Text:
		if display {
			w.putText(string(v), nested)
		} else {
			w.WriteString(quoteString(string(v)))
		}
	case Blob, Custom:
		w.put(DisplayBlob, hexDump(v))
	case Tinyint:
		number(strconv.Itoa(int(int8(v[0]))))
	case Smallint:
		number(strconv.Itoa(int(int16(binary.BigEndian.Uint16(v)))))
	case Int:
		number(strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(v))), 10))
	case Bigint, Counter:
		number(strconv.FormatInt(int64(binary.BigEndian.Uint64(v)), 10))
	case Varint:
		number(varintFromBytes(v).String())
	case Decimal:
		u, scale, _ := DecodeDecimal(v)
		number(formatDecimal(u, scale))
	case Boolean:
		switch {
		case !display:
			number(strconv.FormatBool(v[0] != 0))
		case v[0] != 0 && w.opts.True != "":
			number(w.opts.True)
		case v[0] != 0:
			number("True")
		case w.opts.False != "":
			number(w.opts.False)
		default:
			number("False")
		}
	case Float:
		f := math.Float32frombits(binary.BigEndian.Uint32(v))
		if w.opts.Exact {
			number(formatFloatExact(float64(f), 32))
		} else {
			number(formatFloat(float64(f), w.precision()))
		}
	case Double:
		f := math.Float64frombits(binary.BigEndian.Uint64(v))
		if w.opts.Exact {
			number(formatFloatExact(f, 64))
		} else {
			number(formatFloat(f, w.precision()))
		}
	case Timestamp:
		ms := int64(binary.BigEndian.Uint64(v))
		s := formatTimestamp(ms)
		if w.opts.Timestamp != nil {
			s = w.opts.Timestamp(ms)
		}
		if nested {
			s = "'" + s + "'"
		}
		number(s)
	case Date:
		d, _ := DecodeDate(v)
		number(formatDate(d))
	case Time:
		number(formatTime(int64(binary.BigEndian.Uint64(v))))
	case UUID, Timeuuid:
		number(FormatUUID(v))
	case Inet:
		s := formatInet(v)
		if nested {
			s = "'" + s + "'"
		}
		number(s)
	case Duration:
		m, d, ns, _ := DecodeDuration(v)
		if s := formatDuration(m, d, ns); !display || s != "0s" {
			number(s)
		}
	case List, Set, Vector:
		elems, _ := t.elements(v)
		open, end := "[", "]"
		if t.Kind == Set {
			open, end = "{", "}"
			if display {
				elems = pythonSetOrder(t.Params[0], elems)
			}
		}
		w.put(DisplayPunct, open)
		for i, e := range elems {
			if i > 0 {
				w.put(DisplayPunct, ", ")
			}
			t.Params[0].format(w, e, true)
		}
		w.put(DisplayPunct, end)
	case Map:
		keys, vals, _ := DecodeMap(v)
		w.put(DisplayPunct, "{")
		for i := range keys {
			if i > 0 {
				w.put(DisplayPunct, ", ")
			}
			t.Params[0].format(w, keys[i], true)
			w.put(DisplayPunct, ": ")
			t.Params[1].format(w, vals[i], true)
		}
		w.put(DisplayPunct, "}")
	case Tuple, UDT:
		fields, _ := DecodeTuple(v, len(t.Params))
		open, end := "(", ")"
		if t.Kind == UDT {
			open, end = "{", "}"
		}
		w.put(DisplayPunct, open)
		for i, f := range fields {
			if i > 0 {
				w.put(DisplayPunct, ", ")
			}
			if t.Kind == UDT {
				if i < len(t.FieldNames) {
					w.put(DisplayText, t.FieldNames[i])
				} else {
					w.put(DisplayText, strconv.Itoa(i))
				}
				w.put(DisplayPunct, ": ")
			}
			if f == nil {
				if t.Kind == UDT && w.opts.FieldNull != nil {
					w.put(DisplayText, *w.opts.FieldNull)
				} else {
					w.put(DisplayError, "null")
				}
				continue
			}
			t.Params[i].format(w, f, true)
		}
		w.put(DisplayPunct, end)
	default:
		w.put(DisplayBlob, hexDump(v))
	}
}

// pythonSetOrder orders a set's elements as cqlsh shows them: the Python
// driver sorts a set by its Python values, which for inet addresses (kept
// as strings) and uuids (ordered as 128-bit integers) is not the server's
// order.
func pythonSetOrder(elem *Type, elems [][]byte) [][]byte {
	switch elem.Kind {
	case Inet:
		elems = slices.Clone(elems)
		slices.SortStableFunc(elems, func(a, b []byte) int { return strings.Compare(formatInet(a), formatInet(b)) })
	case UUID, Timeuuid:
		elems = slices.Clone(elems)
		slices.SortStableFunc(elems, bytes.Compare)
	}
	return elems
}

// formatDecimal writes unscaled × 10^-scale as Java's BigDecimal.toString
// (and Python's Decimal, which cqlsh prints) do: plain digits when the scale
// is not negative and the number is not tiny, scientific notation otherwise.
func formatDecimal(u *big.Int, scale int32) string {
	neg := u.Sign() < 0
	digits := new(big.Int).Abs(u).String()
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	adjusted := -int64(scale) + int64(len(digits)-1)
	switch {
	case scale == 0:
		b.WriteString(digits)
	case scale > 0 && adjusted >= -6:
		point := len(digits) - int(scale)
		if point > 0 {
			b.WriteString(digits[:point])
			b.WriteByte('.')
			b.WriteString(digits[point:])
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -point))
			b.WriteString(digits)
		}
	default:
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('E')
		if adjusted >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(adjusted, 10))
	}
	return b.String()
}

// formatFloatExact writes the shortest decimal that reads back as f (of
// bitSize bits), with cqlsh's names for the special values.
func formatFloatExact(f float64, bitSize int) string {
	if s := specialFloat(f); s != "" {
		return s
	}
	return strconv.FormatFloat(f, 'g', -1, bitSize)
}

// specialFloat names NaN and the infinities as Java and cqlsh do; "" for
// the rest.
func specialFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return ""
}

// formatFloat follows cqlsh's format_floating_point_type: Python's '%.*g'
// with the precision raised by the number of integer digits when the value
// is in plain-notation range, so 1234.5678 keeps its integer digits.
func formatFloat(f float64, prec int) string {
	if s := specialFloat(f); s != "" {
		return s
	}
	if a := math.Abs(f); a > 2.220446049250313e-16 {
		exp := int(math.Log10(a)) // truncates toward zero, like Python's int()
		if exp >= -4 && exp < prec {
			prec += exp + 1
		}
	}
	return pythonG(f, prec)
}

// pythonG formats like Python's '%.*g' % (prec, f): prec significant digits,
// scientific notation when the decimal exponent is below -4 or at least
// prec, trailing zeros removed.
func pythonG(f float64, prec int) string {
	if prec <= 0 {
		prec = 1
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64) // d.ddde±XX
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= prec {
		mant := trimZeros(e[:i])
		sign := byte('+')
		if exp < 0 {
			sign, exp = '-', -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		return mant + "e" + string(sign) + es
	}
	return trimZeros(strconv.FormatFloat(f, 'f', prec-1-exp, 64))
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// formatTimestamp prints milliseconds since the epoch as cqlsh does, falling
// back to the number itself outside years 1..9999 (Python's datetime range).
func formatTimestamp(ms int64) string {
	const minMs, maxMs = -62135596800000, 253402300799999 // 0001-01-01 .. 9999-12-31T23:59:59.999
	if ms < minMs || ms > maxMs {
		return strconv.FormatInt(ms, 10)
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000000-0700")
}

// formatDate prints days since the epoch as a date, or the day number outside
// years 1..9999, as the Python driver does.
func formatDate(days int32) string {
	const minDays, maxDays = -719162, 2932896 // 0001-01-01 .. 9999-12-31
	if days < minDays || days > maxDays {
		return strconv.FormatInt(int64(days), 10)
	}
	return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02")
}

func formatTime(ns int64) string {
	h := ns / 3_600_000_000_000
	ns -= h * 3_600_000_000_000
	m := ns / 60_000_000_000
	ns -= m * 60_000_000_000
	s := ns / 1_000_000_000
	ns -= s * 1_000_000_000
	var b [18]byte
	out := b[:0]
	out = append2(out, h)
	out = append(out, ':')
	out = append2(out, m)
	out = append(out, ':')
	out = append2(out, s)
	out = append(out, '.')
	frac := strconv.FormatInt(ns, 10)
	for i := len(frac); i < 9; i++ {
		out = append(out, '0')
	}
	out = append(out, frac...)
	return string(out)
}

func append2(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// FormatUUID writes a uuid's 16 bytes in their usual text form.
func FormatUUID(v []byte) string {
	var buf [36]byte
	hex.Encode(buf[0:8], v[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], v[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], v[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], v[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], v[10:16])
	return string(buf[:])
}

func formatInet(v []byte) string {
	if len(v) == 4 {
		return netip.AddrFrom4([4]byte(v)).String()
	}
	return netip.AddrFrom16([16]byte(v)).String()
}

// formatDuration writes cqlsh's form: an optional '-', then years, months,
// days, hours, minutes, seconds, milliseconds, microseconds and nanoseconds,
// each only when non-zero (1y2mo3d4h5m6s7ms8us9ns).
func formatDuration(months, days int32, nanos int64) string {
	var b strings.Builder
	if months < 0 || days < 0 || nanos < 0 {
		b.WriteByte('-')
	}
	abs := func(v int64) uint64 {
		if v < 0 {
			return uint64(-v)
		}
		return uint64(v)
	}
	unit := func(v uint64, div uint64, name string) uint64 {
		if v >= div && v != 0 {
			b.WriteString(strconv.FormatUint(v/div, 10))
			b.WriteString(name)
			return v % div
		}
		return v
	}
	mo := unit(abs(int64(months)), 12, "y")
	unit(mo, 1, "mo")
	unit(abs(int64(days)), 1, "d")
	ns := abs(nanos)
	for _, u := range []struct {
		div  uint64
		name string
	}{{3_600_000_000_000, "h"}, {60_000_000_000, "m"}, {1_000_000_000, "s"}, {1_000_000, "ms"}, {1_000, "us"}, {1, "ns"}} {
		ns = unit(ns, u.div, u.name)
	}
	if b.Len() == 0 || b.String() == "-" {
		return "0s"
	}
	return b.String()
}
