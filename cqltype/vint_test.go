package cqltype

import (
	"bytes"
	"math"
	"testing"
)

func TestUnsignedVint(t *testing.T) {
	tests := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{127, []byte{0x7F}},
		{128, []byte{0x80, 0x80}},
		{1<<14 - 1, []byte{0xBF, 0xFF}},
		{1 << 14, []byte{0xC0, 0x40, 0x00}},
		{1<<56 - 1, []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{1 << 56, []byte{0xFF, 0x01, 0, 0, 0, 0, 0, 0, 0}},
		{math.MaxUint64, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
	}
	for _, tt := range tests {
		got := AppendUnsignedVint(nil, tt.v)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("AppendUnsignedVint(%d) = %x, want %x", tt.v, got, tt.want)
		}
		if UnsignedVintSize(tt.v) != len(tt.want) {
			t.Errorf("UnsignedVintSize(%d) = %d", tt.v, UnsignedVintSize(tt.v))
		}
		v, n, err := ReadUnsignedVint(append(got, 0xAA))
		if err != nil || v != tt.v || n != len(tt.want) {
			t.Errorf("ReadUnsignedVint(%x) = %d, %d, %v", got, v, n, err)
		}
		if _, _, err := ReadUnsignedVint(got[:len(got)-1]); err == nil {
			t.Errorf("ReadUnsignedVint(truncated %x) succeeded", got)
		}
	}
	// Every size boundary round-trips, and minimal encodings sort like numbers.
	for bitsN := 0; bitsN <= 64; bitsN++ {
		for _, d := range []int64{-1, 0, 1} {
			var v uint64
			if bitsN == 64 {
				v = math.MaxUint64 - uint64(d+1)
			} else {
				v = uint64(int64(1)<<bitsN + d)
			}
			enc := AppendUnsignedVint(nil, v)
			got, n, err := ReadUnsignedVint(enc)
			if err != nil || got != v || n != len(enc) {
				t.Fatalf("round trip %d: %d %d %v", v, got, n, err)
			}
			if _, _, err := readMinimalUnsignedVint(enc); err != nil {
				t.Fatalf("minimal encoding of %d rejected: %v", v, err)
			}
		}
	}
	for i := 0; i < 2000; i++ {
		a, b := uint64(i*i*7919), uint64(i*104729)<<uint(i%40)
		ea, eb := AppendUnsignedVint(nil, a), AppendUnsignedVint(nil, b)
		if sign(bytes.Compare(ea, eb)) != cmpU64(a, b) {
			t.Fatalf("vint order %d vs %d", a, b)
		}
	}
	// Non-minimal forms are read but flagged by the strict reader.
	if v, n, err := ReadUnsignedVint([]byte{0x80, 0x05}); err != nil || v != 5 || n != 2 {
		t.Errorf("non-minimal read: %d %d %v", v, n, err)
	}
	if _, _, err := readMinimalUnsignedVint([]byte{0x80, 0x05}); err == nil {
		t.Error("non-minimal accepted by strict reader")
	}
	if _, _, err := ReadUnsignedVint(nil); err == nil {
		t.Error("empty input accepted")
	}
}

func TestSignedVint(t *testing.T) {
	vals := []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	for _, v := range vals {
		enc := AppendVint(nil, v)
		if len(enc) != VintSize(v) {
			t.Errorf("VintSize(%d) = %d, len %d", v, VintSize(v), len(enc))
		}
		got, n, err := ReadVint(enc)
		if err != nil || got != v || n != len(enc) {
			t.Errorf("ReadVint(%x) = %d, %d, %v; want %d", enc, got, n, err, v)
		}
	}
	if !bytes.Equal(AppendVint(nil, -1), []byte{0x01}) || !bytes.Equal(AppendVint(nil, 1), []byte{0x02}) {
		t.Error("zig-zag of ±1")
	}
	if len(AppendVint(nil, math.MinInt64)) != 9 {
		t.Error("MinInt64 should take 9 bytes")
	}
}

func TestVintAllocations(t *testing.T) {
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendUnsignedVint(buf[:0], 1<<60)
		b = AppendVint(b, -12345)
		if _, _, err := ReadUnsignedVint(b); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadVint(b[9:]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("vint round trip allocates %v times", allocs)
	}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}
