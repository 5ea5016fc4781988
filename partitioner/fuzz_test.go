package partitioner

import (
	"bytes"
	"math"
	"testing"
)

// FuzzToken checks that hashing never panics, keeps key tokens off the
// minimum (invariant P1), is deterministic, and that every token survives the
// text and byte round trips.
func FuzzToken(f *testing.F) {
	for _, v := range murmur3Vectors {
		f.Add(v.key)
	}
	for _, v := range murmur3ExtraVectors {
		f.Add(v.key)
	}
	for _, v := range randomVectors {
		f.Add(v.key)
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		for _, p := range both {
			tok := p.Token(key)
			if tok.Kind() != p.Kind() {
				t.Fatalf("%v: token kind %v", p.Kind(), tok.Kind())
			}
			if tok != p.Token(key) {
				t.Fatalf("%v: Token(%x) is not deterministic", p.Kind(), key)
			}
			if len(key) == 0 {
				if !tok.IsMinimum() {
					t.Fatalf("%v: empty key got %v, want the minimum token", p.Kind(), tok)
				}
				continue
			}
			if tok.IsMinimum() || Compare(tok, p.MaxToken()) > 0 {
				t.Fatalf("%v: Token(%x) = %v, outside the key tokens", p.Kind(), key, tok)
			}
			if p.Kind() == Murmur3Kind && tok.Int64() == math.MinInt64 {
				t.Fatalf("Murmur3 Token(%x) is MinInt64", key)
			}
			if back, err := p.ParseToken(tok.String()); err != nil || back != tok {
				t.Fatalf("%v: ParseToken(%q) = %v, %v", p.Kind(), tok.String(), back, err)
			}
			if back, err := p.TokenFromBytes(tok.AppendBytes(nil)); err != nil || back != tok {
				t.Fatalf("%v: TokenFromBytes round trip gave %v, %v", p.Kind(), back, err)
			}
		}
	})
}

// FuzzSplitCompositeKey checks that decoding never panics and that whatever
// it accepts re-encodes to the same bytes.
func FuzzSplitCompositeKey(f *testing.F) {
	f.Add(mustHex("00040000008f000004000000ea00"))
	f.Add([]byte{})
	f.Add(mustHex("000000"))
	f.Add(mustHex("00"))
	f.Add(mustHex("00016101"))
	f.Add(mustHex("ffff00"))
	f.Add(CompositeKey([]byte("user"), nil, []byte{0xff}))
	f.Fuzz(func(t *testing.T, key []byte) {
		parts, err := SplitCompositeKey(key)
		if err != nil {
			return
		}
		if again := CompositeKey(parts...); !bytes.Equal(again, key) {
			t.Fatalf("SplitCompositeKey(%x) re-encodes to %x", key, again)
		}
	})
}

// FuzzParseToken checks that parsing arbitrary text never panics and that
// accepted text yields a token whose String parses back to it.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"0", "-1", "+7", "-9223372036854775808", "9223372036854775807",
		"170141183460469231731687303715884105728", "170141183460469231731687303715884105729",
		"-2", "", "-", "abc", "1e9", "00000000000000000000000000000000000000000000001"} {
		f.Add(s)
	}
	for _, v := range randomVectors {
		f.Add(v.token)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range both {
			tok, err := p.ParseToken(s)
			if err != nil {
				continue
			}
			if tok.Kind() != p.Kind() {
				t.Fatalf("%v: ParseToken(%q) gave kind %v", p.Kind(), s, tok.Kind())
			}
			if back, err := p.ParseToken(tok.String()); err != nil || back != tok {
				t.Fatalf("%v: ParseToken(%q) -> %v does not round trip: %v, %v", p.Kind(), s, tok, back, err)
			}
			if tok.BigInt().String() != tok.String() {
				t.Fatalf("%v: BigInt %v != String %v", p.Kind(), tok.BigInt(), tok)
			}
		}
	})
}
