package cqltype

import (
	"math"
	"math/big"
	"net/netip"
	"testing"
)

func TestFormat(t *testing.T) {
	addr, _ := testResolver("ks", "addr")
	tests := []struct {
		typ  *Type
		v    []byte
		want string
	}{
		{IntType, EncodeInt(42), "42"},
		{IntType, EncodeInt(-2147483648), "-2147483648"},
		{IntType, nil, ""},
		{BigintType, EncodeBigint(-1), "-1"},
		{SmallintType, EncodeSmallint(-300), "-300"},
		{TinyintType, EncodeTinyint(-3), "-3"},
		{CounterType, EncodeBigint(7), "7"},
		{TextType, []byte("it's"), "'it''s'"},
		{TextType, nil, "''"},
		{AsciiType, []byte("abc"), "'abc'"},
		{BlobType, []byte{0xca, 0xfe}, "0xcafe"},
		{BlobType, nil, "0x"},
		{BooleanType, []byte{1}, "true"},
		{BooleanType, []byte{0}, "false"},
		{VarintType, vint("-123456789012345678901234567890"), "-123456789012345678901234567890"},
		{DecimalType, dec(100, 2), "1.00"},
		{DecimalType, dec(-5, 3), "-0.005"},
		{DecimalType, dec(1, -2), "1E+2"},
		{DecimalType, dec(123, 10), "1.23E-8"},
		{DecimalType, dec(0, 0), "0"},
		{DoubleType, EncodeDouble(1.5), "1.5"},
		{DoubleType, EncodeDouble(1), "1"},
		{DoubleType, EncodeDouble(0.1), "0.1"},
		{DoubleType, EncodeDouble(123456.7), "1.2346e+05"},
		{DoubleType, EncodeDouble(12345.6), "12345.6"},
		{DoubleType, EncodeDouble(0.000123456789), "0.000123"}, // cqlsh loses digits here too
		{DoubleType, EncodeDouble(1e20), "1e+20"},
		{DoubleType, EncodeDouble(1.5e-7), "1.5e-07"},
		{DoubleType, EncodeDouble(math.Copysign(0, -1)), "-0"},
		{DoubleType, EncodeDouble(math.NaN()), "NaN"},
		{DoubleType, EncodeDouble(math.Inf(-1)), "-Infinity"},
		{DoubleType, EncodeDouble(math.Pi), "3.14159"},
		{FloatType, EncodeFloat(0.1), "0.1"},
		{FloatType, EncodeFloat(3.14159265), "3.14159"},
		{FloatType, EncodeFloat(float32(math.Inf(1))), "Infinity"},
		{TimestampType, EncodeTimestamp(1614834367000), "2021-03-04 05:06:07.000000+0000"},
		{TimestampType, EncodeTimestamp(-1), "1969-12-31 23:59:59.999000+0000"},
		{TimestampType, EncodeTimestamp(math.MaxInt64), "9223372036854775807"},
		{DateType, EncodeDate(18690), "2021-03-04"},
		{DateType, []byte{0, 0, 0, 0}, "-2147483648"},
		{TimeType, EncodeTime(5*3_600_000_000_000 + 6*60_000_000_000 + 7_000_000_000 + 123), "05:06:07.000000123"},
		{UUIDType, hexb("550E8400E29B41D4A716446655440000"), "550e8400-e29b-41d4-a716-446655440000"},
		{TimeuuidType, timeUUID(1, 2), "00000001-0000-1000-0000-000000000002"},
		{InetType, []byte{127, 0, 0, 1}, "127.0.0.1"},
		{InetType, hexb("20010db8000000000000000000000001"), "2001:db8::1"},
		{DurationType, EncodeDuration(14, 3, 4*3_600_000_000_000+5*60_000_000_000+6_007_008_009), "1y2mo3d4h5m6s7ms8us9ns"},
		{DurationType, EncodeDuration(0, -1, -1000), "-1d1us"},
		{DurationType, EncodeDuration(0, 0, 0), "0s"},
		{ListOf(IntType, true), EncodeCollection([][]byte{EncodeInt(1), EncodeInt(2)}), "[1, 2]"},
		{SetOf(IntType, false), EncodeCollection([][]byte{EncodeInt(1), EncodeInt(2)}), "{1, 2}"},
		{MapOf(TextType, IntType, false), EncodeMap([][]byte{[]byte("a")}, [][]byte{EncodeInt(1)}), "{'a': 1}"},
		{TupleOf(IntType, TextType), EncodeTuple([][]byte{EncodeInt(1), []byte("x")}), "(1, 'x')"},
		{TupleOf(IntType, TextType), EncodeTuple([][]byte{nil}), "(null, null)"},
		{addr, EncodeTuple([][]byte{[]byte("main"), EncodeInt(1)}), "{street: 'main', zip: 1}"},
		{ListOf(TimestampType, true), EncodeCollection([][]byte{EncodeTimestamp(0)}), "['1970-01-01 00:00:00.000000+0000']"},
		{SetOf(InetType, true), EncodeCollection([][]byte{{10, 0, 0, 1}}), "{'10.0.0.1'}"},
		{CustomOf("x.Y"), []byte{1}, "0x01"},
		// Invalid bytes: a hex dump.
		{IntType, []byte{1, 2, 3}, "0x010203"},
		{ListOf(IntType, true), []byte{0, 0, 0, 5}, "0x00000005"},
		{TimeuuidType, make([]byte, 16), "0x00000000000000000000000000000000"},
	}
	for _, tt := range tests {
		if got := tt.typ.Format(tt.v); got != tt.want {
			t.Errorf("%s.Format(%x) = %q, want %q", tt.typ, tt.v, got, tt.want)
		}
	}
	if got := formatDecimal(big.NewInt(12345), 2); got != "123.45" {
		t.Errorf("formatDecimal = %s", got)
	}
}

func TestNormalize(t *testing.T) {
	ints := func(vs ...int32) []byte {
		e := make([][]byte, len(vs))
		for i, v := range vs {
			e[i] = EncodeInt(v)
		}
		return EncodeCollection(e)
	}
	set := SetOf(IntType, true)
	got, err := set.Normalize(ints(3, 1, 2, 1))
	if err != nil || !equalBytes(got, ints(1, 2, 3)) {
		t.Errorf("set: %s, %v", set.Format(got), err)
	}
	list := ListOf(IntType, true)
	if got, _ := list.Normalize(ints(3, 1)); !equalBytes(got, ints(3, 1)) {
		t.Error("list order changed")
	}
	m := MapOf(IntType, TextType, true)
	in := EncodeMap([][]byte{EncodeInt(2), EncodeInt(1), EncodeInt(2)}, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	got, err = m.Normalize(in)
	want := EncodeMap([][]byte{EncodeInt(1), EncodeInt(2)}, [][]byte{[]byte("b"), []byte("c")})
	if err != nil || !equalBytes(got, want) {
		t.Errorf("map: %s, %v", m.Format(got), err)
	}
	// Nested sets inside a list and a tuple; a decimal set merges 1.0 and 1.00.
	nested := TupleOf(ListOf(SetOf(DecimalType, true), true), IntType)
	v := EncodeTuple([][]byte{EncodeCollection([][]byte{EncodeCollection([][]byte{dec(100, 2), dec(5, 0), dec(10, 1)})}), nil})
	got, err = nested.Normalize(v)
	wantV := EncodeTuple([][]byte{EncodeCollection([][]byte{EncodeCollection([][]byte{dec(100, 2), dec(5, 0)})}), nil})
	if err != nil || !equalBytes(got, wantV) {
		t.Errorf("nested: %s, %v", nested.Format(got), err)
	}
	// A tuple field sent as unset (-2) or any negative length is null,
	// written -1; the fields the value came with stay as many.
	tup := TupleOf(IntType, TextType, IntType)
	unsetField := append(append([]byte{0, 0, 0, 4}, EncodeInt(7)...), 0xff, 0xff, 0xff, 0xfe, 0x80, 0, 0, 0)
	if got, err := tup.Normalize(unsetField); err != nil || !equalBytes(got, EncodeTuple([][]byte{EncodeInt(7), nil, nil})) {
		t.Errorf("tuple with unset fields: %x, %v", got, err)
	}
	short := EncodeTuple([][]byte{EncodeInt(7)})
	if got, err := tup.Normalize(short); err != nil || !equalBytes(got, short) {
		t.Errorf("tuple with fewer fields: %x, %v", got, err)
	}
	if _, err := set.Normalize([]byte{1}); err == nil {
		t.Error("invalid value normalized")
	}
	if got, _ := IntType.Normalize(EncodeInt(5)); !equalBytes(got, EncodeInt(5)) {
		t.Error("int changed")
	}
}

func TestDisplay(t *testing.T) {
	person := UDTOf("ks", "person", []string{"name", "age"}, []*Type{TextType, IntType}, true)
	tests := []struct {
		typ           *Type
		v             []byte
		plain, marked string // marked: each piece as <class|text>
	}{
		{TextType, []byte("a\\b\nc"), `a\\b\nc`, `<T|a\b><E|\n><T|c>`},
		{TextType, []byte("it's"), "it's", "<T|it's>"},
		{BooleanType, []byte{1}, "True", "<N|True>"},
		{BlobType, []byte{0xca, 0xfe}, "0xcafe", "<B|0xcafe>"},
		{MapOf(TextType, BlobType, false), EncodeMap([][]byte{[]byte("k'")}, [][]byte{{1}}),
			"{'k''': 0x01}", "<P|{><T|'><T|k''><T|'><P|: ><B|0x01><P|}>"},
		{ListOf(IntType, false), EncodeCollection([][]byte{EncodeInt(1), EncodeInt(2)}),
			"[1, 2]", "<P|[><N|1><P|, ><N|2><P|]>"},
		{person, EncodeTuple([][]byte{[]byte("x"), nil}),
			"{name: 'x', age: null}", "<P|{><T|name><P|: ><T|'><T|x><T|'><P|, ><T|age><P|: ><R|null><P|}>"},
		{IntType, []byte{1, 2}, "0x0102", "<R|0x0102>"},
	}
	mark := func(c DisplayClass, s string) string { return "<" + string("TNBEPR"[c]) + "|" + s + ">" }
	for _, tt := range tests {
		if got := tt.typ.Display(tt.v); got != tt.plain {
			t.Errorf("%s Display(%x) = %q, want %q", tt.typ, tt.v, got, tt.plain)
		}
		if got := tt.typ.DisplayPainted(tt.v, mark); got != tt.marked {
			t.Errorf("%s DisplayPainted(%x) = %q, want %q", tt.typ, tt.v, got, tt.marked)
		}
	}
}

// The Python driver sorts a set by its Python values: cqlsh shows sets of
// inet addresses in string order and sets of uuids in integer order.
func TestDisplaySetsInPythonOrder(t *testing.T) {
	inet := func(s string) []byte {
		a := netip.MustParseAddr(s)
		if a.Is4() {
			b := a.As4()
			return b[:]
		}
		b := a.As16()
		return b[:]
	}
	set := EncodeCollection([][]byte{inet("::1"), inet("127.0.0.1")}) // the server's order
	if got := SetOf(InetType, false).Display(set); got != "{'127.0.0.1', '::1'}" {
		t.Errorf("set<inet> displays %s", got)
	}
	early, _ := UUIDType.FromLiteral(UUIDLiteral, "00000000-0000-1000-8000-000000000002")
	late, _ := UUIDType.FromLiteral(UUIDLiteral, "ffffffff-0000-1000-8000-000000000001")
	uuids := EncodeCollection([][]byte{late, early})
	if got := SetOf(TimeuuidType, false).Display(uuids); got != "{00000000-0000-1000-8000-000000000002, ffffffff-0000-1000-8000-000000000001}" {
		t.Errorf("set<timeuuid> displays %s", got)
	}
	if got := ListOf(InetType, false).Display(set); got != "['::1', '127.0.0.1']" {
		t.Errorf("a list keeps its order: %s", got)
	}
}
