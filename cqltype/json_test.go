package cqltype

import (
	"testing"
)

func mustFromString(t *testing.T, typ *Type, s string) []byte {
	t.Helper()
	v, err := typ.FromString(s)
	if err != nil {
		t.Fatalf("%s from %q: %v", typ, s, err)
	}
	return v
}

func TestToJSON(t *testing.T) {
	udt := UDTOf("ks", "addr", []string{"street", "Zip"}, []*Type{TextType, IntType}, true)
	cases := []struct {
		typ  *Type
		v    []byte
		want string
	}{
		{TextType, []byte("a\"b\\c\n\x01é/"), `"a\"b\\c\n\u0001é/"`},
		{AsciiType, []byte{}, `""`},
		{IntType, EncodeInt(-42), `-42`},
		{IntType, []byte{}, `""`},
		{BigintType, EncodeBigint(1 << 40), `1099511627776`},
		{SmallintType, EncodeSmallint(7), `7`},
		{TinyintType, EncodeTinyint(-8), `-8`},
		{CounterType, EncodeBigint(3), `3`},
		{VarintType, mustFromString(t, VarintType, "123456789012345678901234567890"), `123456789012345678901234567890`},
		{DecimalType, mustFromString(t, DecimalType, "1.50"), `1.50`},
		{DoubleType, EncodeDouble(1), `1.0`},
		{DoubleType, EncodeDouble(1e10), `1.0E10`},
		{DoubleType, mustFromString(t, DoubleType, "NaN"), `null`},
		{FloatType, EncodeFloat(0.1), `0.1`},
		{BooleanType, EncodeBoolean(true), `true`},
		{BlobType, []byte{0xca, 0xfe}, `"0xcafe"`},
		{BlobType, []byte{}, `"0x"`},
		{TimestampType, EncodeTimestamp(1796032800000), `"2026-11-30 10:00:00.000Z"`},
		{TimestampType, EncodeTimestamp(-1), `"1969-12-31 23:59:59.999Z"`},
		{DateType, mustFromString(t, DateType, "2026-11-30"), `"2026-11-30"`},
		{TimeType, mustFromString(t, TimeType, "10:11:12.5"), `"10:11:12.500000000"`},
		{UUIDType, mustFromString(t, UUIDType, "550e8400-e29b-41d4-a716-446655440000"), `"550e8400-e29b-41d4-a716-446655440000"`},
		{InetType, mustFromString(t, InetType, "::1"), `"0:0:0:0:0:0:0:1"`},
		{InetType, mustFromString(t, InetType, "10.0.0.1"), `"10.0.0.1"`},
		{DurationType, mustFromString(t, DurationType, "1y2mo3d4h5m6s"), `"1y2mo3d4h5m6s"`},
		{DurationType, EncodeDuration(0, 0, 0), `""`},
		{ListOf(IntType, false), EncodeCollection([][]byte{EncodeInt(1), EncodeInt(2)}), `[1, 2]`},
		{SetOf(TextType, false), EncodeCollection([][]byte{[]byte("a")}), `["a"]`},
		{MapOf(IntType, TextType, false), EncodeMap([][]byte{EncodeInt(1)}, [][]byte{[]byte("x")}), `{"1": "x"}`},
		{MapOf(TextType, BooleanType, false), EncodeMap([][]byte{[]byte("k")}, [][]byte{EncodeBoolean(false)}), `{"k": false}`},
		{MapOf(ListOf(IntType, true), IntType, false), EncodeMap([][]byte{EncodeCollection([][]byte{EncodeInt(1)})}, [][]byte{EncodeInt(2)}), `{"[1]": 2}`},
		{TupleOf(IntType, TextType), EncodeTuple([][]byte{EncodeInt(1), nil}), `[1, null]`},
		{udt, EncodeTuple([][]byte{[]byte("Main"), EncodeInt(12345)}), `{"street": "Main", "\"Zip\"": 12345}`},
		{udt, EncodeTuple([][]byte{[]byte("Main")}), `{"street": "Main", "\"Zip\"": null}`},
		{IntType, nil, `null`},
		{IntType, []byte{1}, `"0x01"`},
	}
	for _, c := range cases {
		if got := c.typ.ToJSON(c.v); got != c.want {
			t.Errorf("%s %x: got %s, want %s", c.typ, c.v, got, c.want)
		}
	}
}

func TestFromJSON(t *testing.T) {
	udt := UDTOf("ks", "addr", []string{"street", "Zip"}, []*Type{TextType, IntType}, true)
	cases := []struct {
		typ  *Type
		in   string
		want string // ToJSON of the result, or the error
	}{
		{IntType, `5`, `5`},
		{IntType, `"6"`, `6`},
		{IntType, `1.0`, `Expected an int value, but got a Double: 1.0`},
		{IntType, `3000000000`, `Expected an int value, but got a Long: 3000000000`},
		{IntType, `true`, `Expected an int value, but got a Boolean: true`},
		{IntType, `[1, "a"]`, `Expected an int value, but got a ArrayList: [1, a]`},
		{IntType, `"x"`, `Unable to make int from 'x'`},
		{BigintType, `3000000000`, `3000000000`},
		{BigintType, `1e3`, `Expected a bigint value, but got a Double: 1000.0`},
		{BigintType, `99999999999999999999`, `Expected a bigint value, but got a BigInteger: 99999999999999999999`},
		{SmallintType, `12`, `12`},
		{SmallintType, `1.5`, `Unable to make short from '1.5'`},
		{SmallintType, `false`, `Expected a short value, but got a Boolean: false`},
		{TinyintType, `{}`, `Expected a byte value, but got a LinkedHashMap: {}`},
		{VarintType, `99999999999999999999`, `99999999999999999999`},
		{VarintType, `"12"`, `12`},
		{VarintType, `1.5`, `Value '1.5' is not a valid representation of a varint value`},
		{DecimalType, `1.5`, `1.5`},
		{DecimalType, `"1.50"`, `1.50`},
		{DecimalType, `true`, `Value 'true' is not a valid representation of a decimal value`},
		{DoubleType, `2`, `2.0`},
		{DoubleType, `"2.5"`, `2.5`},
		{DoubleType, `null`, `null`},
		{DoubleType, `{"a": 1}`, `Expected a double value, but got a LinkedHashMap: {a=1}`},
		{FloatType, `0.1`, `0.1`},
		{FloatType, `false`, `Expected a float value, but got a Boolean: false`},
		{BooleanType, `true`, `true`},
		{BooleanType, `"TRUE"`, `true`},
		{BooleanType, `1`, `Expected a boolean value, but got a Integer: 1`},
		{TextType, `"héllo"`, `"héllo"`},
		{TextType, `1`, `Expected a UTF-8 string, but got a Integer: 1`},
		{AsciiType, `1`, `Expected an ascii string, but got a Integer: 1`},
		{BlobType, `"0xcafe"`, `"0xcafe"`},
		{BlobType, `"cafe"`, `Value 'cafe' is not a valid blob representation: String representation of blob is missing 0x prefix: cafe`},
		{BlobType, `"0xcaf"`, `Value '0xcaf' is not a valid blob representation: cannot parse 'caf' as hex bytes`},
		{BlobType, `1`, `Value '1' is not a valid blob representation: class java.lang.Integer cannot be cast to class java.lang.String (java.lang.Integer and java.lang.String are in module java.base of loader 'bootstrap')`},
		{TimestampType, `"2026-11-30 10:00:00+0000"`, `"2026-11-30 10:00:00.000Z"`},
		{TimestampType, `1796032800000`, `"2026-11-30 10:00:00.000Z"`},
		{TimestampType, `5`, `Expected a long or a datestring representation of a timestamp value, but got a Integer: 5`},
		{TimestampType, `1.5`, `Expected a long or a datestring representation of a timestamp value, but got a Double: 1.5`},
		{DateType, `"2026-11-30"`, `"2026-11-30"`},
		{DateType, `1`, `Expected a string representation of a date value, but got a Integer: 1`},
		{TimeType, `1`, `Expected a string representation of a time value, but got a Integer: 1`},
		{UUIDType, `1`, `Expected a string representation of a uuid, but got a Integer: 1`},
		{TimeuuidType, `1`, `Expected a string representation of a timeuuid, but got a Integer: 1`},
		{InetType, `"::1"`, `"0:0:0:0:0:0:0:1"`},
		{InetType, `1`, `Expected a string representation of an inet value, but got a Integer: 1`},
		{DurationType, `"1h"`, `"1h"`},
		{DurationType, `1`, `Expected a string representation of a duration, but got a Integer: 1`},
		{ListOf(IntType, false), `[3, 1, 3]`, `[3, 1, 3]`},
		{ListOf(IntType, false), `"[1, 2]"`, `[1, 2]`},
		{ListOf(IntType, false), `[1, null]`, `Invalid null element in list`},
		{ListOf(IntType, false), `{}`, `Expected a list, but got a LinkedHashMap: {}`},
		{SetOf(IntType, false), `[3, 1, 3]`, `[1, 3]`},
		{SetOf(IntType, false), `[null]`, `Invalid null element in set`},
		{SetOf(IntType, false), `1`, `Expected a list (representing a set), but got a Integer: 1`},
		{MapOf(IntType, TextType, false), `{"2": "b", "1": "a"}`, `{"1": "a", "2": "b"}`},
		{MapOf(IntType, TextType, false), `{"1": null}`, `Invalid null value in map`},
		{MapOf(IntType, TextType, false), `{"x": "a"}`, `Unable to make int from 'x'`},
		{MapOf(IntType, TextType, false), `[]`, `Expected a map, but got a ArrayList: []`},
		{TupleOf(IntType, TextType), `[1, null]`, `[1, null]`},
		{TupleOf(IntType, TextType), `[1]`, `Tuple is missing items (expected 2): [1]`},
		{TupleOf(IntType, TextType), `[1, "a", 2]`, `Tuple contains extra items (expected 2): [1, a, 2]`},
		{TupleOf(IntType, TextType), `{}`, `Expected a list representation of a tuple, but got a LinkedHashMap: {}`},
		{udt, `{"STREET": "Main", "\"Zip\"": 1}`, `{"street": "Main", "\"Zip\"": 1}`},
		{udt, `{"street": "Main"}`, `{"street": "Main", "\"Zip\"": null}`},
		{udt, `{"zip": 1}`, `Unknown field 'zip' in value of user defined type addr`},
		{udt, `"{\"street\": \"x\"}"`, `{"street": "x", "\"Zip\"": null}`},
		{udt, `"{"`, `Error decoding JSON string: unexpected EOF`},
		{CounterType, `1`, `Counter values cannot be read from JSON`},
	}
	for _, c := range cases {
		in, err := ParseJSON(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		v, err := c.typ.FromJSON(in)
		if err == nil {
			v, err = c.typ.Normalize(v) // what a value sent to a node becomes
		}
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = c.typ.ToJSON(v)
		}
		if got != c.want {
			t.Errorf("%s from %s: got %s, want %s", c.typ, c.in, got, c.want)
		}
	}
}

func TestParseJSON(t *testing.T) {
	for _, s := range []string{``, `{`, `{} {}`, `[1,]`} {
		if _, err := ParseJSON(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestJSONKeyAndName(t *testing.T) {
	for in, want := range map[string]string{`Name`: "name", `"Name"`: "Name", `"`: `"`, `""`: ""} {
		if got := JSONKey(in); got != want {
			t.Errorf("JSONKey(%q) = %q, want %q", in, got, want)
		}
	}
	if got := JSONName("Name"); got != `"Name"` {
		t.Errorf("JSONName: %s", got)
	}
	if got := JSONName("name"); got != "name" {
		t.Errorf("JSONName: %s", got)
	}
}

// FuzzFromJSON decodes arbitrary JSON for every test type: no panics, and
// whatever decodes is a valid value whose JSON form decodes back to it.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`1`, `"x"`, `[1, 2]`, `{"a": 1}`, `1.5`, `null`, `"0xcafe"`, `[[1], {"k": "v"}]`, `"2026-11-30"`} {
		for i := range fuzzTypes {
			f.Add(byte(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which byte, src string) {
		typ := fuzzTypes[int(which)%len(fuzzTypes)]
		in, err := ParseJSON(src)
		if err != nil {
			return
		}
		v, err := typ.FromJSON(in)
		if err != nil || len(v) == 0 {
			return // FromString gives some types an empty value Validate refuses
		}
		if err := typ.Validate(v); err != nil {
			t.Fatalf("%s: %s decoded to invalid %x: %v", typ, src, v, err)
		}
		out := typ.ToJSON(v)
		back, err := ParseJSON(out)
		if err != nil {
			t.Fatalf("%s: ToJSON wrote bad JSON %s: %v", typ, out, err)
		}
		if _, err := typ.FromJSON(back); err != nil && len(v) > 0 {
			t.Logf("%s: %s does not read back: %v", typ, out, err)
		}
	})
}

// TestJSONMapKeysInDocumentOrder reads a JSON map whose keys differ as
// text and are one value: the one later in the document stands, as
// Jackson's ordered map gives it to Cassandra.
func TestJSONMapKeysInDocumentOrder(t *testing.T) {
	typ := MapOf(SetOf(IntType, true), IntType, true)
	for doc, want := range map[string]string{
		`{"[2, 1]": 1, "[1, 2]": 2}`: `{"[1, 2]": 2}`,
		`{"[1, 2]": 2, "[2, 1]": 1}`: `{"[1, 2]": 1}`,
		`{"[1]": 5, "[1]": 6}`:       `{"[1]": 6}`,
	} {
		in, err := ParseJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		v, err := typ.FromJSON(in)
		if err == nil {
			v, err = typ.Normalize(v)
		}
		if err != nil || typ.ToJSON(v) != want {
			t.Errorf("%s: %s, %v, want %s", doc, typ.ToJSON(v), err, want)
		}
	}
	in, _ := ParseJSON(`{"b": 1, "a": [true, {"y": 2, "x": 3}]}`)
	if got := javaString(in); got != "{b=1, a=[true, {y=2, x=3}]}" {
		t.Errorf("javaString: %s", got)
	}
}
