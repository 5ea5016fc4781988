package cqltype

import (
	"math/big"
	"strings"
	"testing"
)

func hexb(s string) []byte {
	b, err := decodeHex(s)
	if err != nil {
		panic(err)
	}
	return b
}

func decodeHex(s string) ([]byte, error) {
	s = strings.ReplaceAll(s, " ", "")
	out := make([]byte, len(s)/2)
	for i := range out {
		v, err := parseHexByte(s[2*i : 2*i+2])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func parseHexByte(s string) (byte, error) {
	var v byte
	for _, c := range []byte(s) {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= c - '0'
		case c >= 'a' && c <= 'f':
			v |= c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v |= c - 'A' + 10
		default:
			return 0, &hexError{s}
		}
	}
	return v, nil
}

type hexError struct{ s string }

func (e *hexError) Error() string { return "bad hex " + e.s }

func mustParse(s string) *Type {
	t, err := Parse(s, "ks", testResolver)
	if err != nil {
		panic(err)
	}
	return t
}

func dec(unscaled int64, scale int32) []byte { return EncodeDecimal(big.NewInt(unscaled), scale) }

func TestValidate(t *testing.T) {
	v1 := hexb("00000000 0000 1000 8000 000000000000") // version 1
	v4 := hexb("00000000 0000 4000 8000 000000000000") // version 4
	tup := TupleOf(IntType, TextType)
	udt, _ := testResolver("ks", "addr")
	tests := []struct {
		typ     *Type
		good    [][]byte
		bad     [][]byte
		wantErr string // for bad[0]
	}{
		{AsciiType, [][]byte{nil, []byte("abc"), {0, 127}}, [][]byte{{128}}, "Invalid byte for ascii: 128"},
		{TextType, [][]byte{nil, []byte("héllo"), {0}}, [][]byte{{0xff}, {0xed, 0xa0, 0x80}}, "String didn't validate."},
		{BlobType, [][]byte{nil, {0, 1, 255}}, nil, ""},
		{CustomOf("x.Y"), [][]byte{nil, {1}}, nil, ""},
		{IntType, [][]byte{nil, EncodeInt(-5)}, [][]byte{{1, 2, 3}, {1, 2, 3, 4, 5}}, "Expected 4 or 0 byte int (3)"},
		{BigintType, [][]byte{nil, EncodeBigint(1)}, [][]byte{EncodeInt(1)}, "Expected 8 or 0 byte long (4)"},
		{CounterType, [][]byte{nil, EncodeBigint(1)}, [][]byte{{1}}, "Expected 8 or 0 byte long (1)"},
		{SmallintType, [][]byte{EncodeSmallint(-1)}, [][]byte{nil, {1}}, "Expected 2 bytes for a smallint (0)"},
		{TinyintType, [][]byte{EncodeTinyint(-1)}, [][]byte{nil, {1, 2}}, "Expected 1 byte for a tinyint (0)"},
		{BooleanType, [][]byte{nil, {0}, {1}, {7}}, [][]byte{{0, 0}}, "Expected 1 or 0 byte value (2)"},
		{FloatType, [][]byte{nil, EncodeFloat(1.5)}, [][]byte{EncodeDouble(1)}, "Expected 4 or 0 byte value for a float (8)"},
		{DoubleType, [][]byte{nil, EncodeDouble(1.5)}, [][]byte{EncodeFloat(1)}, "Expected 8 or 0 byte value for a double (4)"},
		{TimestampType, [][]byte{nil, EncodeTimestamp(-1)}, [][]byte{{1}}, "Expected 8 or 0 byte long for date (1)"},
		{DateType, [][]byte{{0, 0, 0, 0}, {255, 255, 255, 255}}, [][]byte{nil, {1}}, "Expected 4 byte long for date (0)"},
		{TimeType, [][]byte{EncodeTime(0), EncodeTime(MaxTime)}, [][]byte{EncodeTime(MaxTime + 1), EncodeTime(-1), nil}, "Time value 86400000000000 out of range"},
		{UUIDType, [][]byte{nil, v1, v4}, [][]byte{{1, 2}}, "UUID should be 16 or 0 bytes (2)"},
		{TimeuuidType, [][]byte{nil, v1}, [][]byte{v4, {1}}, "Invalid version for TimeUUID type."},
		{InetType, [][]byte{nil, {127, 0, 0, 1}, make([]byte, 16)}, [][]byte{{1, 2, 3}, make([]byte, 5)}, "Invalid length for inet address (3)"},
		{VarintType, [][]byte{nil, {0}, {0xff, 0x7f}, {0, 0, 1}}, nil, ""},
		{DecimalType, [][]byte{nil, dec(1, 2), dec(-1, -2)}, [][]byte{{0, 0, 0, 1}, {1}}, "Expected 0 or at least 5 bytes for a decimal (4)"},
		{DurationType, [][]byte{EncodeDuration(1, 2, 3), EncodeDuration(-1, -2, -3), EncodeDuration(0, 0, 0)},
			[][]byte{EncodeDuration(1, -2, 3), nil, {2, 2}, append(EncodeDuration(1, 1, 1), 0),
				append(append(AppendVint(nil, 1<<40), 0), 0), {0, 0, 0xff}},
			"The duration months, days and nanoseconds must be all of the same sign (1, -2, 3)"},
		{ListOf(IntType, true), [][]byte{EncodeCollection(nil), EncodeCollection([][]byte{EncodeInt(1), {}})},
			[][]byte{nil, EncodeCollection([][]byte{nil}), EncodeCollection([][]byte{{1}}), {0, 0, 0, 1}, {0xff, 0xff, 0xff, 0xff},
				append(EncodeCollection(nil), 0), {0, 0, 0, 9, 0, 0, 0, 0}},
			"Not enough bytes to read a list"},
		{SetOf(TextType, true), [][]byte{EncodeCollection([][]byte{[]byte("a")})},
			[][]byte{EncodeCollection([][]byte{nil}), EncodeCollection([][]byte{{0xff}})}, "Null value read when not allowed"},
		{MapOf(TextType, IntType, true), [][]byte{EncodeMap([][]byte{[]byte("a")}, [][]byte{EncodeInt(1)})},
			[][]byte{EncodeMap([][]byte{[]byte("a")}, [][]byte{nil}), EncodeMap([][]byte{nil}, [][]byte{EncodeInt(1)}),
				EncodeMap([][]byte{[]byte("a")}, [][]byte{{1}}), nil},
			"Null value read when not allowed"},
		{tup, [][]byte{nil, EncodeTuple([][]byte{EncodeInt(1)}), EncodeTuple([][]byte{nil, nil}), EncodeTuple([][]byte{EncodeInt(1), []byte("x")})},
			[][]byte{EncodeTuple([][]byte{EncodeInt(1), []byte("x"), nil}), EncodeTuple([][]byte{{1}}), {0, 0}, {0, 0, 0, 5, 1}},
			"Expected 2 values for tuple<int, text> column, but got more"},
		{udt, [][]byte{nil, EncodeTuple([][]byte{[]byte("main st")})}, [][]byte{EncodeTuple([][]byte{nil, {1}})}, "Expected 4 or 0 byte int (1)"},
		{&Type{Kind: 99}, nil, [][]byte{{1}}, "unknown kind"},
	}
	for _, tt := range tests {
		for _, v := range tt.good {
			if err := tt.typ.Validate(v); err != nil {
				t.Errorf("%s.Validate(%x): %v", tt.typ, v, err)
			}
		}
		for i, v := range tt.bad {
			err := tt.typ.Validate(v)
			if err == nil {
				t.Errorf("%s.Validate(%x) succeeded", tt.typ, v)
				continue
			}
			if i == 0 && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s.Validate(%x) = %q, want %q", tt.typ, v, err, tt.wantErr)
			}
		}
	}
}

func TestValueCodecs(t *testing.T) {
	if v, err := DecodeInt(EncodeInt(-7)); err != nil || v != -7 {
		t.Error("int")
	}
	if v, err := DecodeBigint(EncodeBigint(-7)); err != nil || v != -7 {
		t.Error("bigint")
	}
	if v, err := DecodeSmallint(EncodeSmallint(-7)); err != nil || v != -7 {
		t.Error("smallint")
	}
	if v, err := DecodeTinyint(EncodeTinyint(-7)); err != nil || v != -7 {
		t.Error("tinyint")
	}
	if v, err := DecodeBoolean(EncodeBoolean(true)); err != nil || !v {
		t.Error("boolean")
	}
	if v, err := DecodeDouble(EncodeDouble(-0.25)); err != nil || v != -0.25 {
		t.Error("double")
	}
	if v, err := DecodeFloat(EncodeFloat(-0.25)); err != nil || v != -0.25 {
		t.Error("float")
	}
	if v, err := DecodeTimestamp(EncodeTimestamp(-1)); err != nil || v != -1 {
		t.Error("timestamp")
	}
	if v, err := DecodeDate(EncodeDate(-3)); err != nil || v != -3 {
		t.Error("date")
	}
	if !equalBytes(EncodeDate(0), []byte{0x80, 0, 0, 0}) {
		t.Error("date epoch is 2^31")
	}
	if v, err := DecodeTime(EncodeTime(5)); err != nil || v != 5 {
		t.Error("time")
	}
	for _, s := range []string{"0", "1", "-1", "127", "128", "-128", "-129", "255", "256", "-256", "123456789012345678901234567890", "-98765432109876543210"} {
		want, _ := new(big.Int).SetString(s, 10)
		enc := EncodeVarint(want)
		got, err := DecodeVarint(enc)
		if err != nil || got.Cmp(want) != 0 {
			t.Errorf("varint %s: %x -> %v %v", s, enc, got, err)
		}
		if len(minimalVarint(enc)) != len(enc) {
			t.Errorf("varint %s encoded non-minimally: %x", s, enc)
		}
	}
	for s, want := range map[string]string{"0": "00", "128": "0080", "-1": "ff", "-129": "ff7f", "-128": "80", "127": "7f"} {
		v, _ := new(big.Int).SetString(s, 10)
		if got := EncodeVarint(v); !equalBytes(got, hexb(want)) {
			t.Errorf("EncodeVarint(%s) = %x, want %s", s, got, want)
		}
	}
	if v, err := DecodeVarint(hexb("0000ff")); err != nil || v.Int64() != 255 {
		t.Error("non-minimal varint")
	}
	u, s, err := DecodeDecimal(EncodeDecimal(big.NewInt(-12345), 3))
	if err != nil || u.Int64() != -12345 || s != 3 {
		t.Error("decimal")
	}
	elems, err := DecodeCollection(EncodeCollection([][]byte{{1}, {}, {2, 3}}))
	if err != nil || len(elems) != 3 || len(elems[1]) != 0 || elems[2][1] != 3 {
		t.Errorf("collection: %v %v", elems, err)
	}
	keys, vals, err := DecodeMap(EncodeMap([][]byte{{1}, {2}}, [][]byte{{3}, {}}))
	if err != nil || len(keys) != 2 || vals[0][0] != 3 || len(vals[1]) != 0 {
		t.Errorf("map: %v %v %v", keys, vals, err)
	}
	fields, err := DecodeTuple(EncodeTuple([][]byte{{1}, nil, {}}), 4)
	if err != nil || len(fields) != 4 || fields[1] != nil || fields[2] == nil || fields[3] != nil {
		t.Errorf("tuple: %v %v", fields, err)
	}
	if _, err := DecodeTuple(EncodeTuple([][]byte{{1}, {2}}), 1); err == nil {
		t.Error("tuple with too many components decoded")
	}
	m, d, ns, err := DecodeDuration(EncodeDuration(-14, -3, -5_000_000_000))
	if err != nil || m != -14 || d != -3 || ns != -5_000_000_000 {
		t.Error("duration")
	}
	for _, b := range [][]byte{nil, {1, 2, 3}} {
		if _, err := DecodeInt(b); err == nil {
			t.Errorf("DecodeInt(%x) succeeded", b)
		}
	}
	if _, err := DecodeVarint(nil); err == nil {
		t.Error("DecodeVarint(nil) succeeded")
	}
	if _, _, err := DecodeDecimal([]byte{0, 0, 0, 0}); err == nil {
		t.Error("DecodeDecimal of 4 bytes succeeded")
	}
}

func equalBytes(a, b []byte) bool { return string(a) == string(b) }
