package cqltype

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// fuzzTypes are the types the fuzz targets pick from by the first input byte.
var fuzzTypes = allTestTypes()

func FuzzDecodeComparable(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 7))
	for i, typ := range fuzzTypes {
		for j := 0; j < 3; j++ {
			enc, err := typ.AppendComparable(nil, gen(r, typ, 0))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(byte(i), enc)
		}
		f.Add(byte(i), []byte{0x01, 0x00, 0xff, 0x02})
	}
	f.Fuzz(func(t *testing.T, which byte, src []byte) {
		typ := fuzzTypes[int(which)%len(fuzzTypes)]
		v, rest, err := typ.DecodeComparable(src)
		if err != nil {
			return
		}
		used := src[:len(src)-len(rest)]
		if err := typ.Validate(v); err != nil {
			t.Fatalf("%s: decoded %x from %x is invalid: %v", typ, v, src, err)
		}
		enc, err := typ.AppendComparable(nil, v)
		if err != nil {
			t.Fatalf("%s: re-encoding %x: %v", typ, v, err)
		}
		if !bytes.Equal(enc, used) {
			t.Fatalf("%s: %x decoded to %x which re-encodes to %x", typ, used, v, enc)
		}
		inv := append([]byte(nil), src...)
		InvertBytes(inv)
		v2, rest2, err := typ.DecodeComparableInverted(inv)
		if err != nil || !bytes.Equal(v2, v) || len(rest2) != len(rest) {
			t.Fatalf("%s: inverted decode disagrees: %x %v", typ, v2, err)
		}
	})
}

func FuzzValidate(f *testing.F) {
	r := rand.New(rand.NewPCG(8, 8))
	for i, typ := range fuzzTypes {
		for j := 0; j < 3; j++ {
			f.Add(byte(i), gen(r, typ, 0))
		}
		f.Add(byte(i), []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	}
	f.Fuzz(func(t *testing.T, which byte, v []byte) {
		typ := fuzzTypes[int(which)%len(fuzzTypes)]
		// None of these may panic, valid input or not.
		_ = typ.Format(v)
		c := typ.Compare(v, v)
		if err := typ.Validate(v); err != nil {
			return
		}
		if c != 0 {
			t.Fatalf("%s: Compare(v, v) = %d for valid %x", typ, c, v)
		}
		norm, err := typ.Normalize(v)
		if err != nil {
			t.Fatalf("%s: Normalize of valid %x: %v", typ, v, err)
		}
		if again, err := typ.Normalize(norm); err != nil || !bytes.Equal(again, norm) {
			t.Fatalf("%s: Normalize of its own result %x: %x, %v", typ, norm, again, err)
		}
		enc, err := typ.AppendComparable(nil, norm)
		if err != nil {
			// Only the documented size limits may refuse a valid value.
			return
		}
		got, rest, err := typ.DecodeComparable(enc)
		if err != nil || !bytes.Equal(got, norm) || len(rest) != 0 {
			t.Fatalf("%s: round trip of %x: %x, %x, %v", typ, norm, got, rest, err)
		}
	})
}
