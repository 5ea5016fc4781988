package partitioner

import (
	"bytes"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
)

func TestRangeCases(t *testing.T) {
	m := Murmur3()
	mt := Murmur3Token
	minT, maxT := m.MinToken(), m.MaxToken()
	for _, c := range []struct {
		name   string
		r      Range
		wraps  bool
		in     []Token
		out    []Token
		pieces []Range
	}{
		{
			name: "ordinary", r: Range{mt(10), mt(20)},
			in:     []Token{mt(11), mt(20)},
			out:    []Token{mt(10), mt(21), mt(-5), minT, maxT},
			pieces: []Range{{mt(10), mt(20)}},
		},
		{
			name: "wrapping", r: Range{mt(20), mt(10)}, wraps: true,
			in:     []Token{mt(21), maxT, minT, mt(-5), mt(10)},
			out:    []Token{mt(11), mt(15), mt(20)},
			pieces: []Range{{mt(20), maxT}, {minT, mt(10)}},
		},
		{
			name: "(min,min] full ring", r: Range{minT, minT},
			in:     []Token{minT, mt(math.MinInt64 + 1), mt(0), maxT},
			pieces: []Range{{minT, maxT}},
		},
		{
			name: "(t,t] full ring", r: Range{mt(7), mt(7)}, wraps: true,
			in:     []Token{minT, mt(6), mt(7), mt(8), maxT},
			pieces: []Range{{mt(7), maxT}, {minT, mt(7)}},
		},
		{
			name: "(x,min] runs to the ring's end", r: Range{mt(100), minT},
			in:     []Token{mt(101), maxT, minT},
			out:    []Token{mt(100), mt(0), mt(math.MinInt64 + 1)},
			pieces: []Range{{mt(100), maxT}},
		},
		{
			name: "(max,min] holds no key", r: Range{maxT, minT},
			in:     []Token{minT},
			out:    []Token{maxT, mt(0), mt(math.MinInt64 + 1)},
			pieces: []Range{},
		},
		{
			name: "(max,x] wraps at once", r: Range{maxT, mt(5)}, wraps: true,
			in:     []Token{minT, mt(math.MinInt64 + 1), mt(5)},
			out:    []Token{mt(6), maxT},
			pieces: []Range{{minT, mt(5)}},
		},
		{
			name: "(min,x] from the ring's start", r: Range{minT, mt(5)},
			in:     []Token{mt(math.MinInt64 + 1), mt(5)},
			out:    []Token{minT, mt(6), maxT},
			pieces: []Range{{minT, mt(5)}},
		},
		{
			name: "(x,max]", r: Range{mt(5), maxT},
			in:     []Token{mt(6), maxT},
			out:    []Token{minT, mt(5)},
			pieces: []Range{{mt(5), maxT}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.IsWrapAround(); got != c.wraps {
				t.Errorf("%v.IsWrapAround() = %v, want %v", c.r, got, c.wraps)
			}
			for _, tok := range c.in {
				if !c.r.Contains(tok) {
					t.Errorf("%v should contain %v", c.r, tok)
				}
			}
			for _, tok := range c.out {
				if c.r.Contains(tok) {
					t.Errorf("%v should not contain %v", c.r, tok)
				}
			}
			if got := c.r.Unwrap(m); !slices.Equal(got, c.pieces) {
				t.Errorf("%v.Unwrap() = %v, want %v", c.r, got, c.pieces)
			}
		})
	}
}

func TestRangeRandomPartitioner(t *testing.T) {
	p := Random()
	tok := func(s string) Token {
		x, err := p.ParseToken(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	minT, maxT := p.MinToken(), p.MaxToken()
	r := Range{tok("100"), tok("5")}
	if !r.IsWrapAround() || !r.Contains(maxT) || !r.Contains(tok("0")) || !r.Contains(minT) || r.Contains(tok("50")) {
		t.Errorf("wrapping Random range misbehaves")
	}
	if got, want := r.Unwrap(p), []Range{{tok("100"), maxT}, {minT, tok("5")}}; !slices.Equal(got, want) {
		t.Errorf("Unwrap = %v, want %v", got, want)
	}
	full := Range{minT, minT}
	if full.IsWrapAround() || !full.Contains(tok("0")) || !full.Contains(maxT) {
		t.Errorf("(-1,-1] should be the whole ring")
	}
	if got := full.String(); got != "(-1,-1]" {
		t.Errorf("String = %q", got)
	}
	if got := (Range{minT, tok("0")}); got.Contains(minT) || !got.Contains(tok("0")) {
		t.Errorf("(-1,0] should hold token 0 only")
	}
}

// TestRangeUnwrapProperties checks, on random ranges, that the pieces hold
// exactly the range's key tokens and that plain comparisons decide them.
func TestRangeUnwrapProperties(t *testing.T) {
	r := testRand(t, 5)
	for _, p := range both {
		for range 3000 {
			rg := Range{anyToken(p, r), anyToken(p, r)}
			if r.IntN(10) == 0 {
				rg.End = rg.Start
			}
			pieces := rg.Unwrap(p)
			wantWrap := Compare(rg.Start, rg.End) >= 0 && !rg.End.IsMinimum()
			if rg.IsWrapAround() != wantWrap {
				t.Fatalf("%v.IsWrapAround() = %v", rg, rg.IsWrapAround())
			}
			for _, pc := range pieces {
				if Compare(pc.Start, pc.End) >= 0 || pc.End.IsMinimum() || pc.IsWrapAround() {
					t.Fatalf("%v.Unwrap() gave a piece %v that is not plain", rg, pc)
				}
			}
			probes := []Token{rg.Start, rg.End, p.MaxToken(), anyToken(p, r), anyToken(p, r)}
			for _, k := range probes {
				if k.IsMinimum() {
					continue // not a key token; pieces may drop it
				}
				inPieces := false
				for _, pc := range pieces {
					plain := Compare(pc.Start, k) < 0 && Compare(k, pc.End) <= 0
					if plain != pc.Contains(k) {
						t.Fatalf("piece %v: Contains(%v) disagrees with plain comparison", pc, k)
					}
					inPieces = inPieces || plain
				}
				if inPieces != rg.Contains(k) {
					t.Fatalf("%v.Contains(%v) = %v but its pieces %v say %v", rg, k, rg.Contains(k), pieces, inPieces)
				}
			}
		}
	}
}

func TestRangeStringParse(t *testing.T) {
	r := testRand(t, 6)
	for _, p := range both {
		for range 200 {
			rg := Range{anyToken(p, r), anyToken(p, r)}
			s := rg.String()
			back, err := ParseRange(p, s)
			if err != nil || back != rg {
				t.Fatalf("ParseRange(%q) = %v, %v", s, back, err)
			}
		}
	}
	if got := (Range{Murmur3Token(10), Murmur3Token(-20)}).String(); got != "(10,-20]" {
		t.Errorf("String = %q, want (10,-20]", got)
	}
	for _, bad := range []string{"", "(1,2)", "[1,2]", "(1 2]", "(1,2", "1,2]", "(a,2]", "(1,b]", "(1,2,3]", "(,]"} {
		if _, err := ParseRange(Murmur3(), bad); err == nil || !strings.HasPrefix(err.Error(), "partitioner: ") {
			t.Errorf("ParseRange(%q) = %v, want an error", bad, err)
		}
	}
}

func TestRangeUnwrapWrongKindPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatalf("Unwrap with another partitioner's tokens did not panic")
		}
	}()
	Range{Murmur3Token(5), Murmur3Token(1)}.Unwrap(Random())
}

// TestRangeBounds: a key token lies in an unwrapped piece exactly when it
// lies within the piece's scan bounds, probed at the ends and the tokens
// either side of them.
func TestRangeBounds(t *testing.T) {
	r := testRand(t, 6)
	for _, p := range both {
		step := func(k Token, by int64) (Token, bool) {
			v := k.BigInt()
			v.Add(v, big.NewInt(by))
			s, err := p.ParseToken(v.String())
			return s, err == nil
		}
		for range 3000 {
			rg := Range{anyToken(p, r), anyToken(p, r)}
			for _, pc := range rg.Unwrap(p) {
				from, to := pc.Bounds(p)
				var probes []Token
				for _, k := range []Token{pc.Start, pc.End, p.MaxToken(), anyToken(p, r)} {
					for _, by := range []int64{-1, 0, 1} {
						if s, ok := step(k, by); ok && !s.IsMinimum() {
							probes = append(probes, s)
						}
					}
				}
				for _, k := range probes {
					within := (from == nil || Compare(*from, k) <= 0) && (to == nil || Compare(k, *to) < 0)
					// The engine compares the tokens' bytes.
					kb := k.AppendBytes(nil)
					withinBytes := (from == nil || bytes.Compare(from.AppendBytes(nil), kb) <= 0) && (to == nil || bytes.Compare(kb, to.AppendBytes(nil)) < 0)
					if within != pc.Contains(k) || withinBytes != within {
						t.Fatalf("piece %v, bounds %v to %v: token %v within %v (by bytes %v), contained %v", pc, from, to, k, within, withinBytes, pc.Contains(k))
					}
				}
			}
		}
	}
}
