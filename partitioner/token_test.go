package partitioner

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

var both = []Partitioner{Murmur3(), Random()}

// testRand returns a seeded generator and logs the seed, so a failure replays.
func testRand(t testing.TB, seed uint64) *rand.Rand {
	t.Helper()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// anyToken draws a token over the whole token space, including the minimum
// and the extremes, which RandomToken alone would almost never produce.
func anyToken(p Partitioner, r *rand.Rand) Token {
	switch r.IntN(8) {
	case 0:
		return p.MinToken()
	case 1:
		return p.MaxToken()
	case 2:
		return p.Token([]byte{byte(r.Uint32())})
	}
	return p.RandomToken(r)
}

func TestPartitionerBasics(t *testing.T) {
	m, rp := Murmur3(), Random()
	if m.Name() != "org.apache.cassandra.dht.Murmur3Partitioner" || m.Kind() != Murmur3Kind || m.TokenBytesLen() != 8 {
		t.Errorf("Murmur3: %s %v %d", m.Name(), m.Kind(), m.TokenBytesLen())
	}
	if rp.Name() != "org.apache.cassandra.dht.RandomPartitioner" || rp.Kind() != RandomKind || rp.TokenBytesLen() != 16 {
		t.Errorf("Random: %s %v %d", rp.Name(), rp.Kind(), rp.TokenBytesLen())
	}
	if got := m.MinToken(); got.Int64() != math.MinInt64 || got.String() != "-9223372036854775808" || !got.IsMinimum() {
		t.Errorf("Murmur3 min = %v", got)
	}
	if got := m.MaxToken(); got.Int64() != math.MaxInt64 || got.String() != "9223372036854775807" || got.IsMinimum() {
		t.Errorf("Murmur3 max = %v", got)
	}
	if got := rp.MinToken(); got.String() != "-1" || got.BigInt().Int64() != -1 || !got.IsMinimum() {
		t.Errorf("Random min = %v", got)
	}
	if got := rp.MaxToken(); got.String() != "170141183460469231731687303715884105728" || got.IsMinimum() {
		t.Errorf("Random max = %v", got)
	}
	if got := rp.MaxToken().Int64(); got != 0 {
		t.Errorf("Random Int64 = %d, want 0", got)
	}
	var zero Token
	if zero.Kind() != 0 || zero.String() != "invalid" || zero.IsMinimum() || zero.BigInt().Sign() != 0 ||
		len(zero.AppendBytes(nil)) != 0 {
		t.Errorf("zero token misbehaves: %v", zero)
	}
	if Murmur3Kind.String() != "Murmur3" || RandomKind.String() != "Random" || Kind(9).String() != "Kind(9)" {
		t.Errorf("Kind.String")
	}
}

func TestByName(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
	}{
		{"org.apache.cassandra.dht.Murmur3Partitioner", Murmur3Kind},
		{"Murmur3Partitioner", Murmur3Kind},
		{"org.apache.cassandra.dht.RandomPartitioner", RandomKind},
		{"RandomPartitioner", RandomKind},
	} {
		p, err := ByName(c.name)
		if err != nil || p.Kind() != c.kind {
			t.Errorf("ByName(%q) = %v, %v", c.name, p, err)
		}
		if q, err := ByKind(c.kind); err != nil || q.Name() != p.Name() {
			t.Errorf("ByKind(%v) = %v, %v", c.kind, q, err)
		}
	}
	for _, bad := range []string{"", "ByteOrderedPartitioner", "murmur3partitioner", "com.example.Murmur3Partitioner",
		"org.apache.cassandra.dht.OrderPreservingPartitioner"} {
		_, err := ByName(bad)
		if err == nil {
			t.Errorf("ByName(%q) succeeded", bad)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "partitioner: ") || !strings.Contains(msg, Murmur3Name) || !strings.Contains(msg, RandomName) {
			t.Errorf("ByName(%q) error does not list valid names: %v", bad, err)
		}
	}
	if _, err := ByKind(0); err == nil {
		t.Errorf("ByKind(0) succeeded")
	}
}

func TestTokenStringRoundTrip(t *testing.T) {
	r := testRand(t, 1)
	for _, p := range both {
		toks := []Token{p.MinToken(), p.MaxToken(), p.Token([]byte("x"))}
		for range 500 {
			toks = append(toks, p.RandomToken(r))
		}
		for _, tok := range toks {
			s := tok.String()
			got, err := p.ParseToken(s)
			if err != nil || got != tok {
				t.Fatalf("%v: ParseToken(%q) = %v, %v; want %v", p.Kind(), s, got, err, tok)
			}
			if tok.BigInt().String() != s {
				t.Fatalf("%v: BigInt %v != String %s", p.Kind(), tok.BigInt(), s)
			}
		}
	}
	// Forms Java's parsers also accept.
	for _, c := range []struct {
		p    Partitioner
		in   string
		want string
	}{
		{Murmur3(), "+42", "42"},
		{Murmur3(), "-0", "0"},
		{Murmur3(), "0007", "7"},
		{Random(), "+42", "42"},
		{Random(), "-0", "0"},
		{Random(), "-000001", "-1"},
		{Random(), "000170141183460469231731687303715884105728", "170141183460469231731687303715884105728"},
		{Random(), "18446744073709551616", "18446744073709551616"},
	} {
		got, err := c.p.ParseToken(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("%v: ParseToken(%q) = %v, %v; want %s", c.p.Kind(), c.in, got, err, c.want)
		}
	}
}

func TestParseTokenErrors(t *testing.T) {
	for _, c := range []struct {
		p       Partitioner
		in      string
		problem string
	}{
		{Murmur3(), "", "not a decimal"},
		{Murmur3(), "abc", "not a decimal"},
		{Murmur3(), "1.5", "not a decimal"},
		{Murmur3(), " 1", "not a decimal"},
		{Murmur3(), "0x10", "not a decimal"},
		{Murmur3(), "9223372036854775808", "out of range"},
		{Murmur3(), "-9223372036854775809", "out of range"},
		{Murmur3(), "99999999999999999999999999999999999999999", "out of range"},
		{Random(), "", "not a decimal"},
		{Random(), "-", "not a decimal"},
		{Random(), "+", "not a decimal"},
		{Random(), "12a", "not a decimal"},
		{Random(), "1_000", "not a decimal"},
		{Random(), "-2", "out of range"},
		{Random(), "-340282366920938463463374607431768211457", "out of range"},
		{Random(), "170141183460469231731687303715884105729", "out of range"},
		{Random(), "340282366920938463463374607431768211455", "out of range"},
		{Random(), "340282366920938463463374607431768211456", "out of range"},
		{Random(), strings.Repeat("9", 1000), "out of range"},
	} {
		_, err := c.p.ParseToken(c.in)
		if err == nil {
			t.Errorf("%v: ParseToken(%q) succeeded", c.p.Kind(), c.in)
			continue
		}
		msg := err.Error()
		var bound string
		if c.p.Kind() == Murmur3Kind {
			bound = "9223372036854775807"
		} else {
			bound = "170141183460469231731687303715884105728"
		}
		quoted := quoteInput(c.in)
		if !strings.HasPrefix(msg, "partitioner: ") || !strings.Contains(msg, c.problem) ||
			!strings.Contains(msg, bound) || !strings.Contains(msg, quoted) {
			t.Errorf("%v: ParseToken(%q) error %q should name the input, %q and the range", c.p.Kind(), c.in, msg, c.problem)
		}
		if len(msg) > 400 {
			t.Errorf("error message not bounded: %d bytes", len(msg))
		}
	}
}

func TestTokenBytesOrder(t *testing.T) {
	r := testRand(t, 2)
	for _, p := range both {
		var a, b []byte
		for range 5000 {
			x, y := anyToken(p, r), anyToken(p, r)
			if r.IntN(10) == 0 {
				y = x
			}
			a, b = x.AppendBytes(a[:0]), y.AppendBytes(b[:0])
			if len(a) != p.TokenBytesLen() {
				t.Fatalf("%v: AppendBytes gave %d bytes", p.Kind(), len(a))
			}
			if got, want := bytes.Compare(a, b), Compare(x, y); got != want {
				t.Fatalf("%v: bytes.Compare(%x, %x) = %d, Compare(%v, %v) = %d", p.Kind(), a, b, got, x, y, want)
			}
			if got, want := x.BigInt().Cmp(y.BigInt()), Compare(x, y); got != want {
				t.Fatalf("%v: big compare %d != Compare %d for %v, %v", p.Kind(), got, want, x, y)
			}
			if x.Less(y) != (Compare(x, y) < 0) || (x == y) != (Compare(x, y) == 0) {
				t.Fatalf("Less/== disagree with Compare for %v, %v", x, y)
			}
			back, err := p.TokenFromBytes(a)
			if err != nil || back != x {
				t.Fatalf("%v: TokenFromBytes(%x) = %v, %v; want %v", p.Kind(), a, back, err, x)
			}
		}
	}
	// AppendBytes appends.
	prefix := []byte("pk")
	if got := Murmur3().MinToken().AppendBytes(prefix); !bytes.Equal(got, []byte("pk\x00\x00\x00\x00\x00\x00\x00\x00")) {
		t.Errorf("AppendBytes(min) = %x", got)
	}
	if got := Random().MaxToken().AppendBytes(nil); !bytes.Equal(got, mustHex("80000000000000000000000000000001")) {
		t.Errorf("AppendBytes(random max) = %x", got)
	}
}

func TestTokenFromBytesErrors(t *testing.T) {
	for _, c := range []struct {
		p Partitioner
		b []byte
	}{
		{Murmur3(), nil},
		{Murmur3(), make([]byte, 7)},
		{Murmur3(), make([]byte, 9)},
		{Murmur3(), make([]byte, 16)},
		{Random(), make([]byte, 8)},
		{Random(), make([]byte, 17)},
		{Random(), mustHex("80000000000000000000000000000002")},
		{Random(), mustHex("80000000000000010000000000000000")},
		{Random(), mustHex("ffffffffffffffffffffffffffffffff")},
	} {
		if tok, err := c.p.TokenFromBytes(c.b); err == nil || !strings.HasPrefix(err.Error(), "partitioner: ") {
			t.Errorf("%v: TokenFromBytes(%x) = %v, %v; want an error", c.p.Kind(), c.b, tok, err)
		}
	}
}

func TestCompareAcrossKinds(t *testing.T) {
	m := Murmur3().MaxToken()
	rt := Random().MinToken()
	if Compare(m, rt) != -1 || Compare(rt, m) != 1 || m == rt {
		t.Errorf("tokens of different kinds must order by kind")
	}
	if Murmur3().MinToken() == Random().MinToken() {
		t.Errorf("minimum tokens of different kinds compare equal")
	}
	seen := map[Token]bool{Murmur3().Token([]byte("k")): true}
	if !seen[Murmur3().Token([]byte("k"))] || seen[Random().Token([]byte("k"))] || seen[Murmur3().Token([]byte("j"))] {
		t.Errorf("Token does not work as a map key")
	}
}

func TestRandomToken(t *testing.T) {
	for _, p := range both {
		r1, r2 := testRand(t, 3), testRand(t, 3)
		var below int
		mid := p.Midpoint(p.MinToken(), p.MaxToken())
		const n = 4000
		for range n {
			a, b := p.RandomToken(r1), p.RandomToken(r2)
			if a != b {
				t.Fatalf("%v: same seed gave %v and %v", p.Kind(), a, b)
			}
			if a.IsMinimum() || a.Kind() != p.Kind() || Compare(a, p.MaxToken()) > 0 {
				t.Fatalf("%v: RandomToken gave %v, outside the key tokens", p.Kind(), a)
			}
			if _, err := p.ParseToken(a.String()); err != nil {
				t.Fatalf("%v: RandomToken gave unparseable %v: %v", p.Kind(), a, err)
			}
			if Compare(a, mid) <= 0 {
				below++
			}
		}
		// A crude uniformity check: half the draws land below the middle
		// (binomial, sd ~32; 6 sd of slack).
		if below < n/2-200 || below > n/2+200 {
			t.Errorf("%v: %d of %d random tokens below the midpoint %v", p.Kind(), below, n, mid)
		}
	}
}

// refMidpoint transliterates Cassandra's midpoint code with big.Int.
func refMidpoint(p Partitioner, left, right Token) *big.Int {
	l, r := left.BigInt(), right.BigInt()
	if p.Kind() == Murmur3Kind {
		if l.Cmp(r) < 0 {
			return new(big.Int).Rsh(new(big.Int).Add(l, r), 1)
		}
		maxV, minV := big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64)
		m := new(big.Int).Sub(maxV, minV)
		m.Add(m, l).Add(m, r).Rsh(m, 1)
		if m.Cmp(maxV) > 0 {
			m.Sub(m, maxV).Add(m, minV)
		}
		return m
	}
	if left.IsMinimum() {
		l.SetInt64(0)
	}
	if right.IsMinimum() {
		r.SetInt64(0)
	}
	if l.Cmp(r) < 0 {
		return new(big.Int).Rsh(new(big.Int).Add(l, r), 1)
	}
	maxV := new(big.Int).Lsh(big.NewInt(1), 127)
	d := new(big.Int).Add(maxV, r)
	d.Sub(d, l).Rsh(d, 1).Add(d, l)
	return d.Mod(d, maxV)
}

func TestMidpoint(t *testing.T) {
	m, rp := Murmur3(), Random()
	mt := Murmur3Token
	rt := func(s string) Token {
		tok, err := rp.ParseToken(s)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, c := range []struct {
		p           Partitioner
		left, right Token
		want        Token
	}{
		{m, mt(0), mt(10), mt(5)},
		{m, mt(0), mt(11), mt(5)},
		{m, mt(-10), mt(10), mt(0)},
		{m, mt(-11), mt(0), mt(-6)}, // floor, as BigInteger.shiftRight
		{m, m.MinToken(), m.MaxToken(), mt(-1)},
		{m, mt(math.MinInt64), mt(math.MinInt64 + 1), mt(math.MinInt64)},
		// Wrap-around: (100, -50] is 2^64-151 wide; halfway from 100 is min+25.
		{m, mt(100), mt(-50), mt(math.MinInt64 + 25)},
		{m, mt(10), mt(-10), mt(math.MaxInt64)},
		{m, mt(5), mt(5), mt(math.MinInt64 + 5)},      // full ring: opposite side
		{m, m.MinToken(), m.MinToken(), mt(-1)},       // full ring from min
		{m, m.MaxToken(), m.MinToken(), m.MaxToken()}, // (max, min] is empty of keys
		{m, mt(math.MaxInt64 - 9), mt(math.MinInt64 + 11), mt(math.MinInt64 + 1)},
		{rp, rt("0"), rt("10"), rt("5")},
		{rp, rp.MinToken(), rt("10"), rt("5")},                                           // minimum counts as zero
		{rp, rt("10"), rt("0"), rt("85070591730234615865843651857942052869")},            // 2^126 + 5
		{rp, rp.MinToken(), rp.MinToken(), rt("85070591730234615865843651857942052864")}, // 2^126
		{rp, rt("170141183460469231731687303715884105718"), rt("20"), rt("5")},           // (2^127-10, 20]
		{rp, rp.MaxToken(), rp.MaxToken(), rt("85070591730234615865843651857942052864")},
		{rp, rt("0"), rp.MaxToken(), rt("85070591730234615865843651857942052864")},
	} {
		got := c.p.Midpoint(c.left, c.right)
		if got != c.want {
			t.Errorf("%v: Midpoint(%v, %v) = %v, want %v", c.p.Kind(), c.left, c.right, got, c.want)
		}
		if ref := refMidpoint(c.p, c.left, c.right); got.BigInt().Cmp(ref) != 0 {
			t.Errorf("%v: Midpoint(%v, %v) = %v, Cassandra's formula gives %v", c.p.Kind(), c.left, c.right, got, ref)
		}
	}
}

func TestMidpointMatchesReference(t *testing.T) {
	r := testRand(t, 4)
	for _, p := range both {
		for range 5000 {
			a, b := anyToken(p, r), anyToken(p, r)
			if r.IntN(20) == 0 {
				b = a
			}
			got := p.Midpoint(a, b)
			if ref := refMidpoint(p, a, b); got.BigInt().Cmp(ref) != 0 || got.Kind() != p.Kind() {
				t.Fatalf("%v: Midpoint(%v, %v) = %v, want %v", p.Kind(), a, b, got, ref)
			}
			if !a.IsMinimum() && !b.IsMinimum() && a != b && !(Range{a, b}).Contains(got) && got != a {
				// Cassandra's own tests assert the midpoint lies in the range
				// unless the range is one token wide.
				t.Fatalf("%v: Midpoint(%v, %v) = %v lies outside the range", p.Kind(), a, b, got)
			}
		}
	}
}

func TestMidpointWrongKindPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatalf("mixing partitioners did not panic")
		}
	}()
	Murmur3().Midpoint(Random().MinToken(), Murmur3().MaxToken())
}

func TestMurmur3TokenNoAllocs(t *testing.T) {
	p := Murmur3()
	key := []byte("0123456789abcdef")
	var sink Token
	if n := testing.AllocsPerRun(100, func() { sink = p.Token(key) }); n != 0 {
		t.Errorf("Murmur3 Token allocates %v times per call", n)
	}
	long := bytes.Repeat([]byte{0xfe}, 37)
	if n := testing.AllocsPerRun(100, func() { sink = p.Token(long) }); n != 0 {
		t.Errorf("Murmur3 Token allocates %v times per call (37-byte key)", n)
	}
	rp := Random()
	if n := testing.AllocsPerRun(100, func() { sink = rp.Token(key) }); n != 0 {
		t.Errorf("Random Token allocates %v times per call", n)
	}
	buf := make([]byte, 0, 16)
	if n := testing.AllocsPerRun(100, func() { buf = sink.AppendBytes(buf[:0]) }); n != 0 {
		t.Errorf("AppendBytes allocates %v times per call", n)
	}
}

func BenchmarkMurmur3Token(b *testing.B) {
	p := Murmur3()
	key := []byte("0123456789abcdef")
	b.SetBytes(int64(len(key)))
	b.ReportAllocs()
	var sink Token
	for b.Loop() {
		sink = p.Token(key)
	}
	_ = sink
}

func BenchmarkRandomToken(b *testing.B) {
	p := Random()
	key := []byte("0123456789abcdef")
	b.SetBytes(int64(len(key)))
	b.ReportAllocs()
	var sink Token
	for b.Loop() {
		sink = p.Token(key)
	}
	_ = sink
}

// TestRingFraction checks the ring's measure: the ends, the middle, and
// that TokenAtFraction inverts it and keeps ring order.
func TestRingFraction(t *testing.T) {
	for _, p := range []Partitioner{Murmur3(), Random()} {
		if f := p.RingFraction(p.MinToken()); f != 0 {
			t.Errorf("%s: the minimum token at %v", p.Name(), f)
		}
		if f := p.RingFraction(p.MaxToken()); f < 0.999999 || f >= 1 {
			t.Errorf("%s: the maximum token at %v", p.Name(), f)
		}
		if tok := p.TokenAtFraction(0); Compare(tok, p.MinToken()) != 0 {
			t.Errorf("%s: fraction 0 is %v", p.Name(), tok)
		}
		for _, f := range []float64{-1, 2, math.NaN()} {
			if got := p.RingFraction(p.TokenAtFraction(f)); got < 0 || got >= 1 {
				t.Errorf("%s: fraction %v gave a token at %v", p.Name(), f, got)
			}
		}
		mid := p.Midpoint(p.MinToken(), p.MaxToken())
		if f := p.RingFraction(mid); math.Abs(f-0.5) > 1e-12 {
			t.Errorf("%s: the midpoint at %v", p.Name(), f)
		}
		prev := p.MinToken()
		for i := 1; i < 1000; i++ {
			f := float64(i) / 1000
			tok := p.TokenAtFraction(f)
			if got := p.RingFraction(tok); math.Abs(got-f) > 1e-12 {
				t.Errorf("%s: fraction %v round-trips as %v", p.Name(), f, got)
			}
			if !prev.Less(tok) {
				t.Fatalf("%s: the token at %v (%v) is not after the one before (%v)", p.Name(), f, tok, prev)
			}
			prev = tok
		}
	}
	if got := Murmur3().TokenAtFraction(0.5).String(); got != "0" {
		t.Errorf("Murmur3: the middle of the ring is %s, want 0", got)
	}
}
