package cqltype

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// JSON forms of values, as Cassandra 4.1's AbstractType.toJSONString and
// fromJSONObject define them (SELECT JSON, INSERT JSON, toJson, fromJson).

// ToJSON returns v as Cassandra's toJSONString writes it: strings quoted
// and escaped, numbers and booleans bare, the temporal types, uuids, inet
// addresses and durations as quoted strings in Cassandra's formats, blobs
// as "0x..." strings, lists, sets and tuples as arrays, maps as objects
// (keys that are not JSON strings are quoted as strings) and UDTs as
// objects by field name. A nil v is null. NaN and infinities are null, as
// Cassandra writes them (JSON has no such numbers). An empty value of a
// type without an empty form is "", as Cassandra's serializers answer it.
// Bytes that are not a valid value of t come back as a quoted hex dump
// rather than a panic.
func (t *Type) ToJSON(v []byte) string {
	if v == nil {
		return "null"
	}
	if t.Validate(v) != nil {
		return `"` + hexDump(v) + `"`
	}
	var b strings.Builder
	t.toJSON(&b, v)
	return b.String()
}

func (t *Type) toJSON(b *strings.Builder, v []byte) {
	if len(v) == 0 {
		switch t.Kind {
		case Blob, Custom:
			b.WriteString(`"0x"`)
		case List, Set:
			b.WriteString("[]")
		case Map:
			b.WriteString("{}")
		default:
			b.WriteString(`""`)
		}
		return
	}
	switch t.Kind {
	case Ascii, Text:
		writeJSONString(b, string(v))
	case Blob, Custom:
		b.WriteString(`"` + hexDump(v) + `"`)
	case Tinyint, Smallint, Int, Bigint, Counter, Varint, Decimal:
		// Format prints these as Java's toString does.
		b.WriteString(t.Format(v))
	case Boolean:
		b.WriteString(strconv.FormatBool(v[0] != 0))
	case Float:
		b.WriteString(jsonFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 32))
	case Double:
		b.WriteString(jsonFloat(math.Float64frombits(binary.BigEndian.Uint64(v)), 64))
	case Timestamp:
		b.WriteString(`"` + jsonTimestamp(int64(binary.BigEndian.Uint64(v))) + `"`)
	case Date:
		d, _ := DecodeDate(v)
		b.WriteString(`"` + javaLocalDate(int64(d)) + `"`)
	case Time:
		b.WriteString(`"` + formatTime(int64(binary.BigEndian.Uint64(v))) + `"`)
	case UUID, Timeuuid:
		b.WriteString(`"` + FormatUUID(v) + `"`)
	case Inet:
		b.WriteString(`"` + javaHostAddress(v) + `"`)
	case Duration:
		m, d, ns, _ := DecodeDuration(v)
		s := formatDuration(m, d, ns)
		if m == 0 && d == 0 && ns == 0 {
			s = "" // Cassandra's Duration.toString writes nothing for zero
		}
		b.WriteString(`"` + s + `"`)
	case List, Set, Vector:
		elems, _ := t.elements(v)
		b.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				b.WriteString(", ")
			}
			t.Params[0].toJSON(b, e)
		}
		b.WriteByte(']')
	case Map:
		keys, vals, _ := DecodeMap(v)
		b.WriteByte('{')
		for i := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			// JSON object keys are strings: a key whose JSON form is not a
			// string becomes the string of that form.
			var kb strings.Builder
			t.Params[0].toJSON(&kb, keys[i])
			if k := kb.String(); strings.HasPrefix(k, `"`) {
				b.WriteString(k)
			} else {
				writeJSONString(b, k)
			}
			b.WriteString(": ")
			t.Params[1].toJSON(b, vals[i])
		}
		b.WriteByte('}')
	case Tuple, UDT:
		fields, _ := DecodeTuple(v, len(t.Params))
		open, end := byte('['), byte(']')
		if t.Kind == UDT {
			open, end = '{', '}'
		}
		b.WriteByte(open)
		for i := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			if t.Kind == UDT {
				writeJSONString(b, JSONName(t.FieldNames[i]))
				b.WriteString(": ")
			}
			if i >= len(fields) || fields[i] == nil {
				b.WriteString("null")
				continue
			}
			t.Params[i].toJSON(b, fields[i])
		}
		b.WriteByte(end)
	default:
		b.WriteString(`"` + hexDump(v) + `"`)
	}
}

// JSONName is how Cassandra names a column or UDT field in a JSON object:
// as is when it is all lower case, else wrapped in double quotes (which
// INSERT JSON and fromJson read back as a case-sensitive name).
func JSONName(name string) string {
	if name != strings.ToLower(name) {
		return `"` + name + `"`
	}
	return name
}

// JSONKey turns an object key of INSERT JSON or fromJson into the name it
// designates, as Cassandra's Json.handleCaseSensitivity does: a key in
// double quotes is the name inside, case-sensitive; any other is folded to
// lower case.
func JSONKey(key string) string {
	if len(key) >= 2 && strings.HasPrefix(key, `"`) && strings.HasSuffix(key, `"`) {
		return key[1 : len(key)-1]
	}
	return strings.ToLower(key)
}

// AppendJSONString appends s as a JSON string, quoted and escaped.
func AppendJSONString(b *strings.Builder, s string) { writeJSONString(b, s) }

// writeJSONString quotes s as Jackson's JsonStringEncoder does: '"', '\'
// and control characters escaped (\n, \t, \r, \b, \f, else \u00XX with
// upper-case hex), everything else, non-ASCII included, as is.
func writeJSONString(b *strings.Builder, s string) {
	const hexDigits = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// jsonFloat is Java's Float.toString or Double.toString, with null for
// NaN and the infinities, which JSON cannot spell.
func jsonFloat(f float64, bits int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	return JavaFloatText(f, bits)
}

// JavaFloatText is Java's Float.toString (bits 32) or Double.toString:
// plain notation between 10^-3 and 10^7, "1.0E10" outside, always with a
// digit after the point; the digits are the shortest that read back
// (Java 19's algorithm; older Javas occasionally print one more digit).
// CAST to text and JSON both write floats this way.
func JavaFloatText(f float64, bits int) string {
	if s := specialFloat(f); s != "" {
		return s
	}
	switch {
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// jsonTimestamp writes milliseconds since the epoch in Cassandra's JSON
// timestamp format, "yyyy-MM-dd HH:mm:ss.SSSX" in UTC (X is "Z" there).
// Years are Java's year-of-era: at least four digits, '+' past 9999, and
// years before 1 counted backwards from 1 BC (the era is not printed).
func jsonTimestamp(ms int64) string {
	days := ms / 86_400_000
	rem := ms % 86_400_000
	if rem < 0 {
		rem += 86_400_000
		days--
	}
	y, m, d := civilFromDays(days)
	if y <= 0 {
		y = 1 - y
	}
	ys := fmt.Sprintf("%04d", y)
	if y > 9999 {
		ys = "+" + ys
	}
	return fmt.Sprintf("%s-%02d-%02d %02d:%02d:%02d.%03dZ", ys, m, d,
		rem/3_600_000, rem/60_000%60, rem/1000%60, rem%1000)
}

// javaHostAddress is InetAddress.getHostAddress: dotted IPv4 (also for
// IPv4-mapped IPv6 addresses, which Java turns into IPv4 addresses), and
// eight uncompressed hex groups for IPv6.
func javaHostAddress(v []byte) string {
	a, ok := netip.AddrFromSlice(v)
	if !ok {
		return hexDump(v)
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

// ParseJSON decodes a JSON document into what FromJSON takes: nil, bool,
// string, json.Number, []any and *JSONObject. Trailing content after the
// document is an error, as it is for Cassandra's Jackson reader.
func ParseJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := decodeJSONValue(d, false)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, fmt.Errorf("unexpected content after the JSON value")
	}
	return v, nil
}

// JSONObject is a decoded JSON object with its members in document order,
// as Jackson's LinkedHashMap holds them: a key given twice keeps its first
// place and its last value. The order decides which of two map keys that
// read as the same value stands (the later one).
type JSONObject struct {
	Keys   []string
	Values map[string]any
}

// decodeJSONValue reads one value; inside a document (nested), its end is
// an unexpected one, as encoding/json reports it.
func decodeJSONValue(d *json.Decoder, nested bool) (any, error) {
	tok, err := jsonToken(d, nested)
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('['):
		list := []any{}
		for d.More() {
			e, err := decodeJSONValue(d, true)
			if err != nil {
				return nil, err
			}
			list = append(list, e)
		}
		if _, err := jsonToken(d, true); err != nil {
			return nil, err
		}
		return list, nil
	case json.Delim('{'):
		obj := &JSONObject{Values: map[string]any{}}
		for d.More() {
			k, err := jsonToken(d, true)
			if err != nil {
				return nil, err
			}
			key := k.(string) // the decoder gives nothing else in a key's place
			v, err := decodeJSONValue(d, true)
			if err != nil {
				return nil, err
			}
			if _, seen := obj.Values[key]; !seen {
				obj.Keys = append(obj.Keys, key)
			}
			obj.Values[key] = v
		}
		if _, err := jsonToken(d, true); err != nil {
			return nil, err
		}
		return obj, nil
	}
	return tok, nil
}

func jsonToken(d *json.Decoder, nested bool) (json.Token, error) {
	tok, err := d.Token()
	if err == io.EOF && nested {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}

// FromJSON converts a decoded JSON value (see ParseJSON) to the serialized
// form of a value of t, as Cassandra's fromJSONObject does, with its error
// messages. Strings are parsed with FromString for the types that accept
// them; collections, tuples and UDTs also accept a string holding their
// JSON. JSON numbers take the Java class Jackson gives them (Integer, Long,
// BigInteger, Double), which decides what Cassandra accepts: an int column
// refuses 1.0 and 3000000000, and a timestamp refuses numbers that fit an
// Integer, as in Cassandra 4.1. nil is null.
func (t *Type) FromJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	str, isStr := v.(string)
	wrong := func(what string) error {
		return fmt.Errorf("Expected %s, but got a %s: %s", what, javaClass(v), javaString(v))
	}
	switch t.Kind {
	case Ascii, Text:
		if !isStr {
			if t.Kind == Ascii {
				return nil, wrong("an ascii string")
			}
			return nil, wrong("a UTF-8 string")
		}
		return t.FromString(str)
	case Blob:
		if !isStr {
			return nil, fmt.Errorf("Value '%s' is not a valid blob representation: class %s cannot be cast to class java.lang.String (%s and java.lang.String are in module java.base of loader 'bootstrap')",
				javaString(v), javaQualifiedClass(v), javaQualifiedClass(v))
		}
		if !strings.HasPrefix(str, "0x") {
			return nil, fmt.Errorf("Value '%s' is not a valid blob representation: String representation of blob is missing 0x prefix: %s", str, str)
		}
		b, err := parseHexBlob(str[2:])
		if err != nil {
			return nil, fmt.Errorf("Value '%s' is not a valid blob representation: %v", str, err)
		}
		return b, nil
	case Int:
		if isStr {
			return t.FromString(str)
		}
		if javaClass(v) != "Integer" {
			return nil, wrong("an int value")
		}
		n, _ := strconv.ParseInt(string(v.(json.Number)), 10, 32)
		return EncodeInt(int32(n)), nil
	case Bigint:
		if isStr {
			return t.FromString(str)
		}
		if c := javaClass(v); c != "Integer" && c != "Long" {
			return nil, wrong("a bigint value")
		}
		n, _ := strconv.ParseInt(string(v.(json.Number)), 10, 64)
		return EncodeBigint(n), nil
	case Counter:
		// Cassandra has no JSON reader for counters (its fromJSONObject
		// throws), and no statement writes a counter from JSON.
		return nil, fmt.Errorf("Counter values cannot be read from JSON")
	case Smallint, Tinyint:
		if isStr {
			return t.FromString(str)
		}
		if _, ok := v.(json.Number); ok {
			return t.FromString(javaString(v))
		}
		if t.Kind == Smallint {
			return nil, wrong("a short value")
		}
		return nil, wrong("a byte value")
	case Varint:
		s := javaString(v)
		n, ok := parseJavaBigInteger(s)
		if s == "" || !ok {
			return nil, fmt.Errorf("Value '%s' is not a valid representation of a varint value", s)
		}
		return EncodeVarint(n), nil
	case Decimal:
		s := javaString(v)
		b, err := t.FromString(s)
		if err != nil {
			return nil, fmt.Errorf("Value '%s' is not a valid representation of a decimal value", s)
		}
		return b, nil
	case Float, Double:
		if isStr {
			return t.FromString(str)
		}
		n, ok := v.(json.Number)
		if !ok {
			if t.Kind == Float {
				return nil, wrong("a float value")
			}
			return nil, wrong("a double value")
		}
		f := jsonNumberValue(n)
		if t.Kind == Float {
			return EncodeFloat(float32(f)), nil
		}
		return EncodeDouble(f), nil
	case Boolean:
		if isStr {
			return t.FromString(str)
		}
		bv, ok := v.(bool)
		if !ok {
			return nil, wrong("a boolean value")
		}
		return EncodeBoolean(bv), nil
	case Timestamp:
		if javaClass(v) == "Long" {
			n, _ := strconv.ParseInt(string(v.(json.Number)), 10, 64)
			return EncodeTimestamp(n), nil
		}
		if !isStr {
			return nil, wrong("a long or a datestring representation of a timestamp value")
		}
		return t.FromString(str)
	case UUID, Timeuuid, Date, Time, Inet, Duration:
		if !isStr {
			return nil, wrong(map[Kind]string{
				UUID: "a string representation of a uuid", Timeuuid: "a string representation of a timeuuid",
				Date: "a string representation of a date value", Time: "a string representation of a time value",
				Inet: "a string representation of an inet value", Duration: "a string representation of a duration",
			}[t.Kind])
		}
		return t.FromString(str)
	case List, Set, Map, Tuple, UDT, Vector:
		if isStr {
			// A collection given as a string holds its JSON.
			d, err := ParseJSON(str)
			if err != nil {
				return nil, fmt.Errorf("Error decoding JSON string: %v", err)
			}
			if d == nil {
				return nil, nil
			}
			v = d
		}
		return t.fromJSONComposite(v)
	}
	return nil, fmt.Errorf("Unable to read a value of type %s from JSON", t.SchemaString())
}

func (t *Type) fromJSONComposite(v any) ([]byte, error) {
	wrong := func(what string) error {
		return fmt.Errorf("Expected %s, but got a %s: %s", what, javaClass(v), javaString(v))
	}
	switch t.Kind {
	case List, Set:
		list, ok := v.([]any)
		if !ok {
			if t.Kind == List {
				return nil, wrong("a list")
			}
			return nil, wrong("a list (representing a set)")
		}
		elems := make([][]byte, 0, len(list))
		for _, e := range list {
			if e == nil {
				return nil, fmt.Errorf("Invalid null element in %s", t.Kind)
			}
			b, err := t.Params[0].FromJSON(e)
			if err != nil {
				return nil, err
			}
			elems = append(elems, b)
		}
		return EncodeCollection(elems), nil // Normalize puts a set in order
	case Vector:
		list, ok := v.([]any)
		if !ok {
			return nil, wrong("a list")
		}
		if len(list) != t.Dimension {
			return nil, fmt.Errorf("List had incorrect size: expected %d but given %d; %s", t.Dimension, len(list), javaString(v))
		}
		elems := make([][]byte, len(list))
		for i, e := range list {
			if e == nil {
				return nil, fmt.Errorf("Invalid null element in list")
			}
			b, err := t.Params[0].FromJSON(e)
			if err != nil {
				return nil, err
			}
			elems[i] = b
		}
		return EncodeVector(t, elems), nil
	case Map:
		m, ok := v.(*JSONObject)
		if !ok {
			return nil, wrong("a map")
		}
		var keys, vals [][]byte
		for _, key := range m.Keys {
			if m.Values[key] == nil {
				return nil, fmt.Errorf("Invalid null value in map")
			}
			kb, err := t.Params[0].FromJSON(key)
			if err != nil {
				return nil, err
			}
			vb, err := t.Params[1].FromJSON(m.Values[key])
			if err != nil {
				return nil, err
			}
			keys, vals = append(keys, kb), append(vals, vb)
		}
		return EncodeMap(keys, vals), nil // Normalize puts it in order
	case Tuple:
		list, ok := v.([]any)
		if !ok {
			return nil, wrong("a list representation of a tuple")
		}
		switch {
		case len(list) > len(t.Params):
			return nil, fmt.Errorf("Tuple contains extra items (expected %d): %s", len(t.Params), javaString(v))
		case len(list) < len(t.Params):
			return nil, fmt.Errorf("Tuple is missing items (expected %d): %s", len(t.Params), javaString(v))
		}
		fields := make([][]byte, len(list))
		for i, e := range list {
			b, err := t.Params[i].FromJSON(e)
			if err != nil {
				return nil, err
			}
			fields[i] = b
		}
		return EncodeTuple(fields), nil
	default: // UDT
		m, ok := v.(*JSONObject)
		if !ok {
			return nil, wrong("a map")
		}
		byName := make(map[string]any, len(m.Keys))
		for _, k := range m.Keys {
			byName[JSONKey(k)] = m.Values[k]
		}
		fields := make([][]byte, len(t.Params))
		for i, name := range t.FieldNames {
			e, ok := byName[name]
			if !ok {
				continue
			}
			delete(byName, name)
			b, err := t.Params[i].FromJSON(e)
			if err != nil {
				return nil, err
			}
			fields[i] = b
		}
		if len(byName) > 0 {
			return nil, fmt.Errorf("Unknown field '%s' in value of user defined type %s", slices.Min(slices.Collect(maps.Keys(byName))), t.Name)
		}
		return EncodeTuple(fields), nil
	}
}

// isJSONInteger reports whether a JSON number has no fraction or exponent,
// which makes Jackson read it as an integer class.
func isJSONInteger(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

// jsonNumberValue is the number's double value (Java's doubleValue of
// whatever class Jackson read it as; out of range is an infinity).
func jsonNumberValue(n json.Number) float64 {
	if isJSONInteger(n) {
		if b, ok := new(big.Int).SetString(string(n), 10); ok {
			f, _ := new(big.Float).SetInt(b).Float64()
			return f
		}
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

// javaClass is the simple name of the Java class Jackson decodes v into,
// as Cassandra's messages name it.
func javaClass(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "String"
	case bool:
		return "Boolean"
	case []any:
		return "ArrayList"
	case *JSONObject:
		return "LinkedHashMap"
	case json.Number:
		if !isJSONInteger(v) {
			return "Double"
		}
		if _, err := strconv.ParseInt(string(v), 10, 32); err == nil {
			return "Integer"
		}
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "Long"
		}
		return "BigInteger"
	}
	return fmt.Sprintf("%T", v)
}

func javaQualifiedClass(v any) string {
	switch c := javaClass(v); c {
	case "ArrayList", "LinkedHashMap":
		return "java.util." + c
	case "BigInteger":
		return "java.math." + c
	default:
		return "java.lang." + c
	}
}

// javaString is Java's toString of what Jackson decodes v into: numbers as
// their Java class prints them, lists as [a, b], maps as {k=v}.
func javaString(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		if isJSONInteger(v) {
			if b, ok := new(big.Int).SetString(string(v), 10); ok {
				return b.String() // drops a "-0" sign as Java's integers do
			}
			return string(v)
		}
		return JavaFloatText(jsonNumberValue(v), 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *JSONObject:
		var parts []string
		for _, k := range v.Keys {
			parts = append(parts, k+"="+javaString(v.Values[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
