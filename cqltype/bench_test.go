package cqltype

import "testing"

func TestComparableAllocations(t *testing.T) {
	buf := make([]byte, 0, 256)
	vals := []struct {
		typ *Type
		v   []byte
	}{
		{IntType, EncodeInt(7)},
		{TextType, []byte("hello\x00world")},
		{TimeuuidType, timeUUID(12345, 678)},
		{ListOf(IntType, true), EncodeCollection([][]byte{EncodeInt(1), EncodeInt(2)})},
		{TupleOf(IntType, TextType), EncodeTuple([][]byte{EncodeInt(1), []byte("x")})},
	}
	for _, tt := range vals {
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := tt.typ.AppendComparable(buf[:0], tt.v); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: AppendComparable allocates %v times", tt.typ, allocs)
		}
	}
}

func BenchmarkAppendComparableInt(b *testing.B) {
	buf := make([]byte, 0, 64)
	v := EncodeInt(12345)
	for i := 0; i < b.N; i++ {
		buf, _ = IntType.AppendComparable(buf[:0], v)
	}
}

func BenchmarkDecodeComparableInt(b *testing.B) {
	enc, _ := IntType.AppendComparable(nil, EncodeInt(12345))
	for i := 0; i < b.N; i++ {
		if _, _, err := IntType.DecodeComparable(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeComparableText(b *testing.B) {
	enc, _ := TextType.AppendComparable(nil, []byte("some clustering text"))
	for i := 0; i < b.N; i++ {
		if _, _, err := TextType.DecodeComparable(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompareTimeuuid(b *testing.B) {
	x, y := timeUUID(1, 2), timeUUID(1, 3)
	for i := 0; i < b.N; i++ {
		TimeuuidType.Compare(x, y)
	}
}
