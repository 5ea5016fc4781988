package cqltype

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// allTestTypes lists one type per kind plus composites chosen to exercise
// ties inside collections and tuples.
func allTestTypes() []*Type {
	addr, _ := testResolver("ks", "addr")
	ts := []*Type{CustomOf("com.example.T")}
	for k := Ascii; k <= Varint; k++ {
		ts = append(ts, Native(k))
	}
	return append(ts,
		ListOf(IntType, true),
		ListOf(DecimalType, true),
		SetOf(TextType, true),
		MapOf(IntType, TextType, true),
		MapOf(VarintType, ListOf(BooleanType, true), true),
		TupleOf(IntType, TextType, BooleanType),
		TupleOf(DecimalType, IntType),
		ListOf(TupleOf(BooleanType, DoubleType), true),
		addr.Freeze(),
		ListOf(MapOf(TimeuuidType, FloatType, true), true),
		TupleOf(TupleOf(BlobType), UUIDType, InetType),
		ListOf(IntType, false), // non-frozen values serialize the same way
		VectorOf(FloatType, 3),
		VectorOf(TextType, 2),
		VectorOf(DecimalType, 2),
		ListOf(VectorOf(BooleanType, 2), true),
	)
}

// gen returns a random valid value of t. Values are drawn from small pools
// often, so that equal values, equal prefixes and ties are common.
func gen(r *rand.Rand, t *Type, depth int) []byte {
	if r.IntN(12) == 0 && t.Validate(nil) == nil {
		return []byte{}
	}
	switch t.Kind {
	case Int:
		return EncodeInt(int32(genInt(r, 32)))
	case Bigint, Counter, Timestamp:
		return EncodeBigint(genInt(r, 64))
	case Smallint:
		return EncodeSmallint(int16(genInt(r, 16)))
	case Tinyint:
		return EncodeTinyint(int8(genInt(r, 8)))
	case Date:
		return EncodeDate(int32(genInt(r, 32)))
	case Time:
		return EncodeTime(r.Int64N(MaxTime + 1))
	case Boolean:
		return []byte{[]byte{0, 1, 1, 2, 0xff}[r.IntN(5)]}
	case Float:
		specials := []uint32{0x7f800000, 0xff800000, 0x80000000, 0, 1, 0x80000001, 0x7fc00000, 0xffc00000, 0x7f800001, 0x3f800000, 0xbf800000}
		if r.IntN(2) == 0 {
			return binary.BigEndian.AppendUint32(nil, specials[r.IntN(len(specials))])
		}
		return binary.BigEndian.AppendUint32(nil, r.Uint32())
	case Double:
		specials := []uint64{0x7ff0000000000000, 0xfff0000000000000, 1 << 63, 0, 1, 0x7ff8000000000000, 0xfff8000000000001, 0x3ff0000000000000}
		if r.IntN(2) == 0 {
			return binary.BigEndian.AppendUint64(nil, specials[r.IntN(len(specials))])
		}
		return binary.BigEndian.AppendUint64(nil, r.Uint64())
	case UUID:
		b := genBytes(r, 16, 16)
		b[6] = byte(r.IntN(5))<<4 | b[6]&0x0F
		return b
	case Timeuuid:
		return timeUUID(r.Uint64N(8)<<40|r.Uint64N(4), r.Uint64()>>(8*r.IntN(8)))
	case Ascii:
		b := genBytes(r, 0, 5)
		for i := range b {
			b[i] &= 0x7F
		}
		return nonEmptyIfNeeded(b)
	case Text:
		parts := []string{"", "a", "b", "\x00", "é", "ab", "\xff"[:0]}
		s := ""
		for i := r.IntN(4); i > 0; i-- {
			s += parts[r.IntN(len(parts))]
		}
		return []byte(s)
	case Blob, Custom:
		return genBytes(r, 0, 6)
	case Inet:
		if r.IntN(2) == 0 {
			return genBytes(r, 4, 4)
		}
		return genBytes(r, 16, 16)
	case Duration:
		m, d, ns := int32(r.IntN(30)), int32(r.IntN(40)), r.Int64N(1<<50)
		if r.IntN(2) == 0 {
			m, d, ns = -m, -d, -ns
		}
		return EncodeDuration(m, d, ns)
	case Varint:
		return genVarint(r)
	case Decimal:
		scale := int32(r.IntN(9) - 3)
		if r.IntN(20) == 0 {
			scale = []int32{math.MinInt32, math.MaxInt32}[r.IntN(2)]
		}
		v := genVarint(r)
		if len(v) == 0 {
			v = []byte{0}
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(scale)), v...)
	case List, Set:
		n := r.IntN(4)
		if depth > 2 {
			n = r.IntN(2)
		}
		elems := make([][]byte, n)
		for i := range elems {
			elems[i] = gen(r, t.Params[0], depth+1)
		}
		return EncodeCollection(elems)
	case Map:
		n := r.IntN(3)
		ks, vs := make([][]byte, n), make([][]byte, n)
		for i := range ks {
			ks[i], vs[i] = gen(r, t.Params[0], depth+1), gen(r, t.Params[1], depth+1)
		}
		return EncodeMap(ks, vs)
	case Tuple, UDT:
		n := len(t.Params)
		if r.IntN(3) == 0 {
			n = r.IntN(n + 1)
		}
		fs := make([][]byte, n)
		for i := range fs {
			if r.IntN(4) != 0 {
				fs[i] = gen(r, t.Params[i], depth+1)
			}
		}
		return EncodeTuple(fs)
	case Vector:
		elems := make([][]byte, t.Dimension)
		for i := range elems {
			for elems[i] = gen(r, t.Params[0], depth+1); t.Params[0].fixedSize() > 0 && len(elems[i]) == 0; {
				elems[i] = gen(r, t.Params[0], depth+1)
			}
		}
		return EncodeVector(t, elems)
	}
	panic("gen: unhandled kind " + t.Kind.String())
}

func nonEmptyIfNeeded(b []byte) []byte { return b }

func genInt(r *rand.Rand, bits int) int64 {
	switch r.IntN(4) {
	case 0:
		return int64(r.IntN(7) - 3)
	case 1:
		min := int64(-1) << (bits - 1)
		return []int64{min, min + 1, -min - 1, -min - 2}[r.IntN(4)]
	default:
		return int64(r.Uint64()) >> (64 - bits)
	}
}

func genBytes(r *rand.Rand, min, max int) []byte {
	n := min + r.IntN(max-min+1)
	b := make([]byte, n)
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = 0
		case 1:
			b[i] = 0xff
		default:
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func genVarint(r *rand.Rand) []byte {
	var v *big.Int
	switch r.IntN(3) {
	case 0:
		v = big.NewInt(int64(r.IntN(600) - 300))
	case 1:
		v = big.NewInt(int64(r.Uint64()))
	default:
		v = new(big.Int).Lsh(big.NewInt(int64(r.Uint64())), uint(r.IntN(100)))
		if r.IntN(2) == 0 {
			v.Neg(v)
		}
	}
	b := EncodeVarint(v)
	if r.IntN(5) == 0 { // redundant sign bytes: the same number, other bytes
		pad := byte(0)
		if v.Sign() < 0 {
			pad = 0xff
		}
		b = append(bytes.Repeat([]byte{pad}, 1+r.IntN(2)), b...)
	}
	return b
}

// refineCompare is the order the encoding promises: Compare, and for
// Compare-equal values with different bytes the order of their encodings'
// tie parts (which the caller supplies as the encodings).
func refineCompare(typ *Type, a, b, ea, eb []byte) int {
	if c := typ.Compare(a, b); c != 0 {
		return c
	}
	return sign(bytes.Compare(ea, eb))
}

func TestComparableProperties(t *testing.T) {
	for ti, typ := range allTestTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			seed := uint64(1000 + ti)
			r := rand.New(rand.NewPCG(seed, 42))
			const n = 120
			vals := make([][]byte, n)
			encs := make([][]byte, n)
			for i := range vals {
				vals[i] = gen(r, typ, 0)
				if err := typ.Validate(vals[i]); err != nil {
					t.Fatalf("seed %d: generated invalid %x: %v", seed, vals[i], err)
				}
				enc, err := typ.AppendComparable(nil, vals[i])
				if err != nil {
					t.Fatalf("seed %d: AppendComparable(%x): %v", seed, vals[i], err)
				}
				encs[i] = enc
				checkRoundTrip(t, typ, vals[i], enc)
			}
			for p := 0; p < 600; p++ {
				i, j := r.IntN(n), r.IntN(n)
				if p%50 == 0 {
					j = i
				}
				a, b, ea, eb := vals[i], vals[j], encs[i], encs[j]
				c := typ.Compare(a, b)
				if c != -typ.Compare(b, a) {
					t.Fatalf("seed %d: Compare not antisymmetric on %x, %x", seed, a, b)
				}
				e := sign(bytes.Compare(ea, eb))
				if c != 0 && e != c {
					t.Fatalf("seed %d: Compare(%s, %s) = %d but encodings %x, %x order %d", seed, typ.Format(a), typ.Format(b), c, ea, eb, e)
				}
				if c == 0 && (e == 0) != bytes.Equal(a, b) {
					t.Fatalf("seed %d: equal values %x, %x: encodings equal=%v", seed, a, b, e == 0)
				}
				// Descending: inverted encodings sort in reverse.
				ia, ib := append([]byte(nil), ea...), append([]byte(nil), eb...)
				InvertBytes(ia)
				InvertBytes(ib)
				if sign(bytes.Compare(ia, ib)) != -e {
					t.Fatalf("seed %d: inverted order of %x, %x", seed, a, b)
				}
				// Two-column keys compare column by column, whether the first
				// column is ascending or descending.
				k, l := r.IntN(n), r.IntN(n)
				ka := append(append([]byte(nil), ea...), encs[k]...)
				kb := append(append([]byte(nil), eb...), encs[l]...)
				want := refineCompare(typ, a, b, ea, eb)
				if want == 0 {
					want = refineCompare(typ, vals[k], vals[l], encs[k], encs[l])
				}
				if got := sign(bytes.Compare(ka, kb)); got != want {
					t.Fatalf("seed %d: key (%x, %x) vs (%x, %x): got %d want %d", seed, a, vals[k], b, vals[l], got, want)
				}
				da := append(append([]byte(nil), ia...), encs[k]...)
				db := append(append([]byte(nil), ib...), encs[l]...)
				wantDesc := -refineCompare(typ, a, b, ea, eb)
				if wantDesc == 0 {
					wantDesc = refineCompare(typ, vals[k], vals[l], encs[k], encs[l])
				}
				if got := sign(bytes.Compare(da, db)); got != wantDesc {
					t.Fatalf("seed %d: desc key (%x, %x) vs (%x, %x): got %d want %d", seed, a, vals[k], b, vals[l], got, wantDesc)
				}
				// Decoding a key: first column inverted, second not.
				v1, rest, err := typ.DecodeComparableInverted(da)
				if err != nil || !bytes.Equal(v1, a) {
					t.Fatalf("seed %d: DecodeComparableInverted(%x) = %x, %v; want %x", seed, da, v1, err, a)
				}
				v2, rest, err := typ.DecodeComparable(rest)
				if err != nil || !bytes.Equal(v2, vals[k]) || len(rest) != 0 {
					t.Fatalf("seed %d: second column = %x, rest %x, %v", seed, v2, rest, err)
				}
			}
		})
	}
}

func checkRoundTrip(t *testing.T, typ *Type, v, enc []byte) {
	t.Helper()
	got, rest, err := typ.DecodeComparable(enc)
	if err != nil || !bytes.Equal(got, v) || len(rest) != 0 || got == nil {
		t.Fatalf("%s: DecodeComparable(%x) = %x, rest %x, %v; want %x", typ, enc, got, rest, err, v)
	}
	trail := append(append([]byte(nil), enc...), 0xAB, 0x00)
	if _, rest, err := typ.DecodeComparable(trail); err != nil || !bytes.Equal(rest, []byte{0xAB, 0x00}) {
		t.Fatalf("%s: rest after %x = %x, %v", typ, enc, rest, err)
	}
	inv, err := typ.AppendComparableInverted([]byte{0x55}, v)
	if err != nil || !bytes.Equal(inv[1:], invert(enc)) {
		t.Fatalf("%s: AppendComparableInverted(%x) = %x, %v", typ, v, inv, err)
	}
	for cut := 0; cut < len(enc); cut++ {
		if _, _, err := typ.DecodeComparable(enc[:cut]); err == nil {
			t.Fatalf("%s: DecodeComparable accepted a truncated encoding %x of %x", typ, enc[:cut], enc)
		}
	}
}

func invert(b []byte) []byte {
	out := append([]byte(nil), b...)
	InvertBytes(out)
	return out
}

func TestAppendComparableErrors(t *testing.T) {
	dst := []byte{9}
	out, err := IntType.AppendComparable(dst, []byte{1, 2, 3})
	if err == nil || !bytes.Equal(out, dst) {
		t.Errorf("invalid int: %x, %v", out, err)
	}
	if _, err := ListOf(IntType, true).AppendComparable(nil, nil); err == nil {
		t.Error("empty list accepted")
	}
	huge := append(bytes.Repeat([]byte{0}, maxRedundantBytes+1), 1)
	if _, err := VarintType.AppendComparable(nil, huge); err == nil {
		t.Error("varint with too many redundant bytes accepted")
	}
	tooManyZeros := EncodeDecimal(new(big.Int).Exp(big.NewInt(10), big.NewInt(maxDecimalZeros+1), nil), 0)
	if _, err := DecimalType.AppendComparable(nil, tooManyZeros); err == nil {
		t.Error("decimal with too many trailing zeros accepted")
	}
}

func TestComparableGolden(t *testing.T) {
	tests := []struct {
		typ  *Type
		v    []byte
		want string
	}{
		{IntType, nil, "00"},
		{IntType, EncodeInt(1), "01 80000001"},
		{IntType, EncodeInt(-1), "01 7fffffff"},
		{TextType, []byte("a\x00b"), "01 6100ff62 0001"},
		{BooleanType, []byte{2}, "01 01 02"},
		{VarintType, vint("-129"), "01 00 fd ff7f 00"},
		{DecimalType, dec(125, 1), "01 02 8000000000000002 0d33 00 80000001 00"}, // 12.5 = 0.125e2
		{DecimalType, dec(-5, 0), "01 00 7ffffffffffffffe cc ff 80000000 00"},
		{TupleOf(IntType, TextType), EncodeTuple([][]byte{EncodeInt(1)}), "01 02 80000001 00 01"},
		{ListOf(IntType, true), EncodeCollection([][]byte{EncodeInt(0), {}}), "01 02 80000000 01 00"},
	}
	for _, tt := range tests {
		got, err := tt.typ.AppendComparable(nil, tt.v)
		if err != nil || !bytes.Equal(got, hexb(tt.want)) {
			t.Errorf("%s %x: got %x, %v; want %s", tt.typ, tt.v, got, err, tt.want)
		}
	}
}

func TestDecodeComparableRejects(t *testing.T) {
	tests := []struct {
		typ *Type
		enc string
	}{
		{IntType, ""},
		{IntType, "02"},
		{IntType, "01 8000"},
		{SmallintType, "00"},                                         // empty smallint is invalid
		{TextType, "01 0001"},                                        // present but empty
		{TextType, "01 61 0002"},                                     // bad escape
		{TextType, "01 ff 0001"},                                     // invalid UTF-8
		{BooleanType, "01 02"},                                       // bad primary
		{BooleanType, "01 01 00"},                                    // true with a zero tie
		{FloatType, "01 ffffffff 3f800000"},                          // NaN tie that is not a NaN
		{FloatType, "01 ffc00000"},                                   // a NaN written as a number instead of as all ones
		{VarintType, "01 01 02 0001 00"},                             // non-minimal bytes
		{VarintType, "01 00 fe 01 00"},                               // sign disagrees with bytes
		{VarintType, "01 01 01 01 8001"},                             // non-minimal tie vint
		{DecimalType, "01 02 8000000000000001 0b 00 7fffffff 00"},    // 1 with scale -1 would need unscaled 1/10
		{DecimalType, "01 02 8000000000000002 0b 01 00 80000000 00"}, // "1000": the zero pair is not stripped
		{DecimalType, "01 02 8000000000000001 01 00 80000000 00"},    // leading zero digit
		{DecimalType, "01 03"},
		{TimeuuidType, "01 2000000000000000 8080808080808080"},       // version 2 in a timeuuid
		{TimeType, "01 ffffffffffffffff"},                            // out of range
		{InetType, "01 01020304 05 0001"},                            // 5-byte address
		{TupleOf(IntType), "01 00 00"},                               // present tuple with no components
		{TupleOf(IntType), "01 02 80000001 02"},                      // count beyond arity
		{TupleOf(IntType, IntType), "01 02 80000001 02 80000002 01"}, // present component beyond count
		{ListOf(IntType, true), "01 03"},
		{ListOf(SmallintType, true), "01 01 00"}, // empty smallint element
	}
	for _, tt := range tests {
		if v, _, err := tt.typ.DecodeComparable(hexb(tt.enc)); err == nil {
			t.Errorf("%s: DecodeComparable(%s) = %x, want error", tt.typ, tt.enc, v)
		}
	}
}
