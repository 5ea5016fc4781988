package partitioner

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// randomMaxHi is the hi word of the stored form of 2^127 (stored = value+1),
// the largest RandomPartitioner token; its lo word is 1.
const randomMaxHi = 1 << 63

// Error-message text for the RandomPartitioner token space.
const randomRange = "[-1, 170141183460469231731687303715884105728] (-1 is the minimum token; keys get 0 to 2^127)"

type randomPartitioner struct{}

func (randomPartitioner) Name() string { return RandomName }
func (randomPartitioner) Kind() Kind   { return RandomKind }

// Token is abs(BigInteger(md5(key))): the digest read as a signed big-endian
// 128-bit integer, then its absolute value, giving [0, 2^127]. 2^127 itself
// comes only from the digest 80 00 .. 00, whose negation is itself.
func (randomPartitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Token{kind: RandomKind}
	}
	return randomFromDigest(md5.Sum(key))
}

func randomFromDigest(d [16]byte) Token {
	hi := binary.BigEndian.Uint64(d[0:8])
	lo := binary.BigEndian.Uint64(d[8:16])
	if hi>>63 != 0 {
		// Two's-complement negation: invert and add one.
		var c uint64
		lo, c = bits.Add64(^lo, 1, 0)
		hi = ^hi + c
	}
	return randomStored(hi, lo)
}

// randomStored builds the token for value (hi, lo) in [0, 2^127], storing
// value+1 so that -1 becomes 0.
func randomStored(hi, lo uint64) Token {
	lo, c := bits.Add64(lo, 1, 0)
	return Token{kind: RandomKind, hi: hi + c, lo: lo}
}

// randomValue returns the value of a non-minimum token in [0, 2^127]; the
// minimum reads as 0 because Cassandra's midpoint treats it as zero.
func randomValue(t Token) (hi, lo uint64) {
	if t.hi == 0 && t.lo == 0 {
		return 0, 0
	}
	lo, b := bits.Sub64(t.lo, 1, 0)
	return t.hi - b, lo
}

func (randomPartitioner) MinToken() Token { return Token{kind: RandomKind} }
func (randomPartitioner) MaxToken() Token { return Token{kind: RandomKind, hi: randomMaxHi, lo: 1} }

// ParseToken accepts what Java's BigInteger(String) accepts in base 10 (an
// optional sign, then digits) and the value range [-1, 2^127].
func (randomPartitioner) ParseToken(s string) (Token, error) {
	digits, neg := s, false
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if digits == "" {
		return Token{}, fmt.Errorf("partitioner: invalid RandomPartitioner token %s: not a decimal integer; tokens are integers in %s",
			quoteInput(s), randomRange)
	}
	var hi, lo uint64
	overflow := false
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return Token{}, fmt.Errorf("partitioner: invalid RandomPartitioner token %s: not a decimal integer; tokens are integers in %s",
				quoteInput(s), randomRange)
		}
		if !overflow {
			hi, lo, overflow = mulAdd10(hi, lo, uint64(c-'0'))
		}
	}
	inRange := !overflow
	if neg {
		// Only -0 and -1 lie in range.
		inRange = inRange && hi == 0 && lo <= 1
		if inRange {
			if lo == 1 {
				return Token{kind: RandomKind}, nil
			}
			return randomStored(0, 0), nil
		}
	} else {
		inRange = inRange && (hi < randomMaxHi || (hi == randomMaxHi && lo == 0))
	}
	if !inRange {
		return Token{}, fmt.Errorf("partitioner: invalid RandomPartitioner token %s: out of range; tokens are integers in %s",
			quoteInput(s), randomRange)
	}
	return randomStored(hi, lo), nil
}

// mulAdd10 returns (hi, lo)*10 + d and whether it overflowed 128 bits.
func mulAdd10(hi, lo, d uint64) (uint64, uint64, bool) {
	carryLo, lo10 := bits.Mul64(lo, 10)
	over, hi10 := bits.Mul64(hi, 10)
	hi10, c1 := bits.Add64(hi10, carryLo, 0)
	lo10, c2 := bits.Add64(lo10, d, 0)
	hi10, c3 := bits.Add64(hi10, 0, c2)
	return hi10, lo10, over != 0 || c1 != 0 || c3 != 0
}

func (randomPartitioner) TokenFromBytes(b []byte) (Token, error) {
	if len(b) != 16 {
		return Token{}, fmt.Errorf("partitioner: RandomPartitioner token must be 16 bytes, got %d", len(b))
	}
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	if hi > randomMaxHi || (hi == randomMaxHi && lo > 1) {
		return Token{}, fmt.Errorf("partitioner: RandomPartitioner token bytes %x encode a value above 2^127", b)
	}
	return Token{kind: RandomKind, hi: hi, lo: lo}, nil
}

func (randomPartitioner) TokenBytesLen() int { return 16 }

func (randomPartitioner) RandomToken(r *rand.Rand) Token {
	for {
		// Key tokens are the 2^127+1 values [0, 2^127]. Draw hi from
		// [0, 2^63] and accept hi = 2^63 only with lo = 0: every accepted
		// value has the same probability, and a retry is rare (about 2^-63).
		hi := r.Uint64N(randomMaxHi + 1)
		lo := r.Uint64()
		if hi < randomMaxHi || lo == 0 {
			return randomStored(hi, lo)
		}
	}
}

// Midpoint follows RandomPartitioner.midpoint: the minimum token counts as
// zero, then FBUtilities.midpoint with 127 significant bits, remainder dropped:
//
//	l < r:  (l+r) >> 1
//	l >= r: (((2^127 + r - l) >> 1) + l) mod 2^127
//
// Values are at most 2^127, so every intermediate fits in 128 bits.
func (randomPartitioner) Midpoint(left, right Token) Token {
	checkKind(RandomKind, "Midpoint", left, right)
	lhi, llo := randomValue(left)
	rhi, rlo := randomValue(right)
	if lhi < rhi || (lhi == rhi && llo < rlo) {
		slo, c := bits.Add64(llo, rlo, 0)
		shi := lhi + rhi + c
		return randomStored(shi>>1, slo>>1|shi<<63)
	}
	// distance = 2^127 + r - l, never negative since l <= 2^127.
	dlo, b := bits.Sub64(rlo, llo, 0)
	dhi := rhi - lhi - b + randomMaxHi
	// mid = distance/2 + l
	mlo, c := bits.Add64(dlo>>1|dhi<<63, llo, 0)
	mhi := dhi>>1 + lhi + c
	mhi &^= randomMaxHi // mod 2^127: mid < 1.5 * 2^127, so clearing bit 127 suffices
	return randomStored(mhi, mlo)
}

// RingFraction measures a token's value (the minimum reads as 0) against
// the ring's 2^127.
func (randomPartitioner) RingFraction(t Token) float64 {
	checkKind(RandomKind, "RingFraction", t)
	hi, lo := randomValue(t)
	return math.Min((float64(hi)*twoTo64+float64(lo))/(1<<127), math.Nextafter(1, 0))
}

func (randomPartitioner) TokenAtFraction(f float64) Token {
	f = clampFraction(f)
	if f == 0 {
		return Token{kind: RandomKind}
	}
	x := f * (1 << 63) // the value's high word, with its fraction below
	hi := uint64(x)
	lo := uint64(math.Min((x-float64(hi))*twoTo64, math.MaxUint64))
	return randomStored(hi, lo)
}
