package cqltype

import (
	"bytes"
	"math"
	"math/big"
	"testing"
)

// checkOrder asserts that groups are in strictly increasing order by Compare
// and by the comparable encoding, and that values inside one group compare
// equal to each other (their encodings may still differ, by a tie part).
func checkOrder(t *testing.T, typ *Type, groups [][][]byte) {
	t.Helper()
	type item struct {
		group int
		v     []byte
	}
	var items []item
	for g, vs := range groups {
		for _, v := range vs {
			if err := typ.Validate(v); err != nil {
				t.Fatalf("%s: test value %x invalid: %v", typ, v, err)
			}
			items = append(items, item{g, v})
		}
	}
	for _, a := range items {
		ea, err := typ.AppendComparable(nil, a.v)
		if err != nil {
			t.Fatalf("%s: AppendComparable(%x): %v", typ, a.v, err)
		}
		for _, b := range items {
			want := cmpInt(a.group, b.group)
			if got := typ.Compare(a.v, b.v); got != want {
				t.Errorf("%s: Compare(%s, %s) = %d, want %d", typ, typ.Format(a.v), typ.Format(b.v), got, want)
			}
			eb, _ := typ.AppendComparable(nil, b.v)
			got := sign(bytes.Compare(ea, eb))
			if want != 0 && got != want {
				t.Errorf("%s: encoding order of %s vs %s = %d, want %d", typ, typ.Format(a.v), typ.Format(b.v), got, want)
			}
			if want == 0 && (got == 0) != bytes.Equal(a.v, b.v) {
				t.Errorf("%s: encodings of %x and %x equal=%v", typ, a.v, b.v, got == 0)
			}
		}
	}
}

func one(vs ...[]byte) [][][]byte {
	out := make([][][]byte, len(vs))
	for i, v := range vs {
		out[i] = [][]byte{v}
	}
	return out
}

func f32(f float32) []byte { return EncodeFloat(f) }
func f64(f float64) []byte { return EncodeDouble(f) }

func vint(s string) []byte {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return EncodeVarint(v)
}

// timeUUID builds a version 1 UUID with the given 60-bit timestamp and low
// 8 bytes.
func timeUUID(ts uint64, low uint64) []byte {
	b := make([]byte, 16)
	msb := (ts&0xFFFFFFFF)<<32 | (ts>>32&0xFFFF)<<16 | 0x1000 | ts>>48&0x0FFF
	for i := 0; i < 8; i++ {
		b[i] = byte(msb >> (56 - 8*i))
		b[8+i] = byte(low >> (56 - 8*i))
	}
	return b
}

func uuidV(version byte, fill byte) []byte {
	b := bytes.Repeat([]byte{fill}, 16)
	b[6] = version<<4 | fill&0x0F
	return b
}

func TestCompareNative(t *testing.T) {
	t.Run("int", func(t *testing.T) {
		checkOrder(t, IntType, one(nil, EncodeInt(math.MinInt32), EncodeInt(-1), EncodeInt(0), EncodeInt(1), EncodeInt(math.MaxInt32)))
	})
	t.Run("bigint", func(t *testing.T) {
		checkOrder(t, BigintType, one(nil, EncodeBigint(math.MinInt64), EncodeBigint(-256), EncodeBigint(-1), EncodeBigint(0), EncodeBigint(255), EncodeBigint(math.MaxInt64)))
		checkOrder(t, CounterType, one(nil, EncodeBigint(-1), EncodeBigint(0), EncodeBigint(1)))
	})
	t.Run("smallint", func(t *testing.T) {
		checkOrder(t, SmallintType, one(EncodeSmallint(math.MinInt16), EncodeSmallint(-1), EncodeSmallint(0), EncodeSmallint(math.MaxInt16)))
		checkOrder(t, TinyintType, one(EncodeTinyint(-128), EncodeTinyint(-1), EncodeTinyint(0), EncodeTinyint(127)))
	})
	t.Run("timestamp", func(t *testing.T) {
		checkOrder(t, TimestampType, one(nil, EncodeTimestamp(-1000), EncodeTimestamp(0), EncodeTimestamp(1)))
	})
	t.Run("date", func(t *testing.T) {
		// Unsigned: day 0 (far past) < epoch (2^31) < the far future.
		checkOrder(t, DateType, one([]byte{0, 0, 0, 0}, EncodeDate(-1), EncodeDate(0), EncodeDate(1), []byte{0xff, 0xff, 0xff, 0xff}))
	})
	t.Run("time", func(t *testing.T) {
		checkOrder(t, TimeType, one(EncodeTime(0), EncodeTime(1), EncodeTime(MaxTime)))
	})
	t.Run("boolean", func(t *testing.T) {
		checkOrder(t, BooleanType, [][][]byte{{nil}, {{0}}, {{1}, {2}, {0xff}}})
	})
	t.Run("float", func(t *testing.T) {
		nan1 := []byte{0x7f, 0xc0, 0, 0}
		nan2 := []byte{0xff, 0xc0, 0, 1} // negative NaN payload: still the greatest
		checkOrder(t, FloatType, [][][]byte{{nil}, {f32(float32(math.Inf(-1)))}, {f32(-math.MaxFloat32)}, {f32(-1)},
			{f32(-math.SmallestNonzeroFloat32)}, {f32(float32(math.Copysign(0, -1)))}, {f32(0)}, {f32(math.SmallestNonzeroFloat32)},
			{f32(1)}, {f32(math.MaxFloat32)}, {f32(float32(math.Inf(1)))}, {nan1, nan2, f32(float32(math.NaN()))}})
	})
	t.Run("double", func(t *testing.T) {
		checkOrder(t, DoubleType, [][][]byte{{nil}, {f64(math.Inf(-1))}, {f64(-1e300)}, {f64(-0.5)}, {f64(math.Copysign(0, -1))},
			{f64(0)}, {f64(5e-324)}, {f64(0.5)}, {f64(math.Inf(1))}, {f64(math.NaN()), hexb("fff8000000000000"), hexb("7ff0000000000001")}})
	})
	t.Run("varint", func(t *testing.T) {
		checkOrder(t, VarintType, [][][]byte{{nil}, {vint("-340282366920938463463374607431768211456")}, {vint("-129")},
			{vint("-128"), hexb("ff80"), hexb("ffff80")}, {vint("-1"), hexb("ffff")}, {vint("0"), hexb("0000")}, {vint("1")},
			{vint("127")}, {vint("128"), hexb("000080")}, {vint("255")}, {vint("256")}, {vint("340282366920938463463374607431768211456")}})
	})
	t.Run("decimal", func(t *testing.T) {
		checkOrder(t, DecimalType, [][][]byte{{nil}, {dec(-10, 0), dec(-1, -1)}, {dec(-101, 2)}, {dec(-1, 0), dec(-100, 2)}, {dec(-5, 1)},
			{dec(0, 0), dec(0, 5), dec(0, -3)}, {dec(5, 1)}, {dec(1, 0), dec(10, 1), dec(100, 2), append(hexb("00000002"), 0, 0, 100)},
			{dec(101, 2)}, {dec(10, 0), dec(1, -1)}, {dec(1, -2147483648)}})
	})
	t.Run("text", func(t *testing.T) {
		checkOrder(t, TextType, one(nil, []byte("\x00"), []byte("\x00\x00"), []byte("\x00a"), []byte("a"), []byte("a\x00"), []byte("ab"), []byte("b"), []byte("é")))
		checkOrder(t, AsciiType, one(nil, []byte("A"), []byte("a")))
		checkOrder(t, BlobType, one(nil, []byte{0}, []byte{0, 0xff}, []byte{1}, []byte{0xff}, []byte{0xff, 0}))
	})
	t.Run("inet", func(t *testing.T) {
		v6low := make([]byte, 16)
		v6low[15] = 1 // ::1 sorts before every IPv4 address: bytes, not families
		v6high := bytes.Repeat([]byte{0xfe}, 16)
		checkOrder(t, InetType, one(nil, v6low, []byte{0, 0, 0, 1}, []byte{10, 0, 0, 1}, []byte{127, 0, 0, 1}, v6high))
	})
	t.Run("uuid", func(t *testing.T) {
		// Version first; version 1 by timestamp although its bytes say otherwise.
		early := timeUUID(0x0000_0001_FFFF_FFFF, 0xFF)
		late := timeUUID(0x0000_0002_0000_0000, 0)
		if bytes.Compare(early, late) <= 0 {
			t.Fatal("test setup: byte order should disagree with time order")
		}
		checkOrder(t, UUIDType, one(nil, uuidV(0, 0xff), timeUUID(0, 0), timeUUID(0, 0x80), early, late, uuidV(2, 0), uuidV(4, 0x00), uuidV(4, 0x01), uuidV(4, 0xff), uuidV(15, 0)))
	})
	t.Run("timeuuid", func(t *testing.T) {
		early := timeUUID(0x0000_0001_FFFF_FFFF, 0)
		late := timeUUID(0x0000_0002_0000_0000, 0)
		// Same timestamp: the low bytes compare as signed bytes, so 0x80.. < 0xff.. < 0x00..80 < 0x00.. < 0x7f..
		checkOrder(t, TimeuuidType, one(nil, timeUUID(5, 0x8000000000000000), timeUUID(5, 0xFF00000000000000), timeUUID(5, 0x80),
			timeUUID(5, 0), timeUUID(5, 0x7F00000000000000), early, late))
	})
}

func TestCompareComposite(t *testing.T) {
	l := func(vs ...int32) []byte {
		e := make([][]byte, len(vs))
		for i, v := range vs {
			e[i] = EncodeInt(v)
		}
		return EncodeCollection(e)
	}
	t.Run("list", func(t *testing.T) {
		checkOrder(t, ListOf(IntType, true), one(l(), EncodeCollection([][]byte{{}}), l(-1), l(1), l(1, 2), l(1, 3), l(2)))
	})
	t.Run("set", func(t *testing.T) {
		checkOrder(t, SetOf(IntType, true), one(l(), l(1), l(1, 2), l(2)))
	})
	t.Run("map", func(t *testing.T) {
		m := func(kv ...int32) []byte {
			var ks, vs [][]byte
			for i := 0; i < len(kv); i += 2 {
				ks, vs = append(ks, EncodeInt(kv[i])), append(vs, []byte(string(rune('a'+kv[i+1]))))
			}
			return EncodeMap(ks, vs)
		}
		checkOrder(t, MapOf(IntType, TextType, true), one(m(), m(1, 0), m(1, 1), m(1, 1, 2, 0), m(2, 0)))
	})
	t.Run("list of decimal", func(t *testing.T) {
		// A tie in the first element must not override a difference in the second.
		ld := func(vs ...[]byte) []byte { return EncodeCollection(vs) }
		checkOrder(t, ListOf(DecimalType, true), [][][]byte{{ld(dec(1, 0))}, {ld(dec(10, 1), dec(3, 0)), ld(dec(1, 0), dec(30, 1))}, {ld(dec(100, 2), dec(5, 0))}})
	})
	t.Run("tuple", func(t *testing.T) {
		tt := TupleOf(IntType, TextType)
		tu := func(fs ...[]byte) []byte { return EncodeTuple(fs) }
		// tu() is the empty value itself, which sorts before (null, null).
		checkOrder(t, tt, [][][]byte{{tu()}, {tu(nil), tu(nil, nil)}, {tu(nil, []byte("a"))}, {tu([]byte{}, nil)},
			{tu(EncodeInt(1)), tu(EncodeInt(1), nil)}, {tu(EncodeInt(1), []byte{})}, {tu(EncodeInt(1), []byte("a"))}, {tu(EncodeInt(2))}})
	})
	t.Run("udt", func(t *testing.T) {
		udt, _ := testResolver("ks", "addr")
		udt = udt.Freeze()
		u := func(fs ...[]byte) []byte { return EncodeTuple(fs) }
		checkOrder(t, udt, [][][]byte{{u()}, {u(nil, nil), u(nil)}, {u([]byte("a"))}, {u([]byte("a"), EncodeInt(-1))}, {u([]byte("b"), nil)}})
	})
	t.Run("nested", func(t *testing.T) {
		nt := ListOf(TupleOf(BooleanType, DoubleType), true)
		tu := func(b byte, f float64) []byte { return EncodeTuple([][]byte{{b}, f64(f)}) }
		checkOrder(t, nt, [][][]byte{{EncodeCollection(nil)}, {EncodeCollection([][]byte{tu(0, 1)})},
			{EncodeCollection([][]byte{tu(1, -1), tu(0, 0)}), EncodeCollection([][]byte{tu(2, -1), tu(0, 0)})},
			{EncodeCollection([][]byte{tu(1, -1), tu(1, 0)})}})
	})
}

func TestCompareInvalidDoesNotPanic(t *testing.T) {
	bad := [][]byte{nil, {1}, {1, 2, 3}, {0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 1, 0, 0, 0, 9}, bytes.Repeat([]byte{0x80}, 17)}
	for _, typ := range allTestTypes() {
		for _, a := range bad {
			for _, b := range bad {
				c := typ.Compare(a, b)
				if c != -typ.Compare(b, a) {
					t.Errorf("%s: Compare(%x, %x) not antisymmetric", typ, a, b)
				}
			}
		}
	}
}
