package partitioner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
)

// MurmurHash3 x64_128 constants (Appleby's reference; Cassandra uses them unchanged).
const (
	murmurC1 = 0x87c37b91114253d5
	murmurC2 = 0x4cf5ad432745937f
)

// Murmur3Hash returns MurmurHash3 x64_128 of data with seed 0, as Cassandra's
// MurmurHash.hash3_x64_128 computes it. That differs from the reference
// algorithm in one way that can never be fixed without moving every row: the
// tail bytes (the last len%16) are sign-extended to 64 bits before being
// shifted in, because Java widens a signed byte. Body bytes are unsigned.
// Keys that are pure ASCII, or whose length is a multiple of 16, hash as in
// the reference algorithm.
//
// The Murmur3 token is h1 as an int64, after the adjustments Token makes
// (empty key, math.MinInt64).
func Murmur3Hash(data []byte) (h1, h2 uint64) {
	n := len(data)
	p := data
	for len(p) >= 16 {
		h1 ^= mixK1(binary.LittleEndian.Uint64(p))
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729
		h2 ^= mixK2(binary.LittleEndian.Uint64(p[8:16]))
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
		p = p[16:]
	}
	if len(p) > 8 {
		var k2 uint64
		for i := 8; i < len(p); i++ {
			// XOR is order-independent, so folding bytes in ascending order
			// matches the reference's descending switch fall-through even
			// where sign-extension bits overlap later bytes.
			k2 ^= uint64(int64(int8(p[i]))) << (8 * (i - 8))
		}
		h2 ^= mixK2(k2)
	}
	if len(p) > 0 {
		var k1 uint64
		for i := 0; i < len(p) && i < 8; i++ {
			k1 ^= uint64(int64(int8(p[i]))) << (8 * i)
		}
		h1 ^= mixK1(k1)
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func mixK1(k uint64) uint64 {
	k *= murmurC1
	k = bits.RotateLeft64(k, 31)
	return k * murmurC2
}

func mixK2(k uint64) uint64 {
	k *= murmurC2
	k = bits.RotateLeft64(k, 33)
	return k * murmurC1
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// murmur3TokenFromHash applies Cassandra's one adjustment to a non-empty
// key's hash: math.MinInt64 is reserved for the minimum token (invariant P1),
// so a key hashing there is moved to math.MaxInt64.
func murmur3TokenFromHash(h1 uint64) Token {
	v := int64(h1)
	if v == math.MinInt64 {
		v = math.MaxInt64
	}
	return Murmur3Token(v)
}

type murmur3Partitioner struct{}

func (murmur3Partitioner) Name() string { return Murmur3Name }
func (murmur3Partitioner) Kind() Kind   { return Murmur3Kind }

func (murmur3Partitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Murmur3Token(math.MinInt64)
	}
	h1, _ := Murmur3Hash(key)
	return murmur3TokenFromHash(h1)
}

func (murmur3Partitioner) MinToken() Token { return Murmur3Token(math.MinInt64) }
func (murmur3Partitioner) MaxToken() Token { return Murmur3Token(math.MaxInt64) }

func (murmur3Partitioner) ParseToken(s string) (Token, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		problem := "not a decimal integer"
		if errors.Is(err, strconv.ErrRange) {
			problem = "out of range"
		}
		return Token{}, fmt.Errorf("partitioner: invalid Murmur3Partitioner token %s: %s; tokens are integers in [%d, %d]",
			quoteInput(s), problem, int64(math.MinInt64), int64(math.MaxInt64))
	}
	return Murmur3Token(v), nil
}

func (murmur3Partitioner) TokenFromBytes(b []byte) (Token, error) {
	if len(b) != 8 {
		return Token{}, fmt.Errorf("partitioner: Murmur3Partitioner token must be 8 bytes, got %d", len(b))
	}
	return Token{kind: Murmur3Kind, hi: binary.BigEndian.Uint64(b)}, nil
}

func (murmur3Partitioner) TokenBytesLen() int { return 8 }

func (murmur3Partitioner) RandomToken(r *rand.Rand) Token {
	for {
		// hi == 0 is the minimum token, which no key can have; rejecting it
		// keeps the draw uniform over the 2^64-1 key tokens.
		if hi := r.Uint64(); hi != 0 {
			return Token{kind: Murmur3Kind, hi: hi}
		}
	}
}

// Midpoint follows Murmur3Partitioner.midpoint, in unsigned form. With
// l, r = v + 2^63:
//
//	l < r:  floor((L+R)/2)                becomes floor((l+r)/2)
//	l >= r: floor((L+R+max-min)/2)        becomes floor((l+r+2^64-1)/2),
//	        past max folded to min+(m-max) becomes m-(2^64-1)
//
// The wrapping case treats the ring as 2^64-1 positions (min is skipped), and
// the sums need up to 66 bits, hence the carries.
func (murmur3Partitioner) Midpoint(left, right Token) Token {
	checkKind(Murmur3Kind, "Midpoint", left, right)
	l, r := left.hi, right.hi
	if l < r {
		sum, carry := bits.Add64(l, r, 0)
		return Token{kind: Murmur3Kind, hi: sum>>1 | carry<<63}
	}
	lo, c1 := bits.Add64(l, r, 0)
	lo, c2 := bits.Add64(lo, math.MaxUint64, 0)
	hi := c1 + c2
	mid := lo>>1 | hi<<63
	if hi>>1 != 0 {
		// mid is past max (at most 1.5*2^64), so this cannot overflow.
		mid++
	}
	return Token{kind: Murmur3Kind, hi: mid}
}

const twoTo64 = 1 << 64

func (murmur3Partitioner) RingFraction(t Token) float64 {
	checkKind(Murmur3Kind, "RingFraction", t)
	return math.Min(float64(t.hi)/twoTo64, math.Nextafter(1, 0)) // the top tokens round up to 1
}

func (murmur3Partitioner) TokenAtFraction(f float64) Token {
	f = clampFraction(f)
	x := f * twoTo64
	if x >= twoTo64 {
		return Token{kind: Murmur3Kind, hi: math.MaxUint64}
	}
	return Token{kind: Murmur3Kind, hi: uint64(x)}
}
