package partitioner

import (
	"encoding/binary"
	"math/big"
	"strconv"
)

// Kind identifies a partitioner family. The zero Kind belongs to no
// partitioner; it is what the zero Token carries.
type Kind uint8

const (
	// Murmur3Kind is org.apache.cassandra.dht.Murmur3Partitioner: 64-bit tokens.
	Murmur3Kind Kind = 1
	// RandomKind is org.apache.cassandra.dht.RandomPartitioner: MD5-based
	// tokens in [0, 2^127], with -1 as the minimum token.
	RandomKind Kind = 2
)

// String returns the short partitioner family name.
func (k Kind) String() string {
	switch k {
	case Murmur3Kind:
		return "Murmur3"
	case RandomKind:
		return "Random"
	default:
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// signBit flips int64 order into uint64 order: adding 2^63 modulo 2^64 maps
// MinInt64..MaxInt64 onto 0..MaxUint64 monotonically.
const signBit = 1 << 63

// Token is a position on the ring. It is comparable with == and usable as a
// map key. Tokens of different kinds never compare equal; Compare orders them
// by Kind first, which only matters for keeping sorts total.
//
// The zero Token has Kind 0 and belongs to no partitioner; it is not a valid
// position and String reports it as "invalid".
type Token struct {
	kind Kind
	// hi, lo hold an unsigned 128-bit number whose order is the ring order, so
	// comparisons and byte encodings need no sign handling:
	//   Murmur3: hi = uint64(v) ^ 2^63, lo = 0.
	//   Random:  (hi, lo) = v + 1, with v in [-1, 2^127], so the minimum token
	//            is (0, 0) and the largest key token 2^127 is (2^63, 1).
	// Either way the minimum token is (0, 0).
	hi, lo uint64
}

// Murmur3Token returns the Murmur3 token with value v. Every int64 is a valid
// Murmur3 token; math.MinInt64 is the minimum token, which no key hashes to.
func Murmur3Token(v int64) Token {
	return Token{kind: Murmur3Kind, hi: uint64(v) ^ signBit}
}

// Compare returns -1, 0 or +1 as a sorts before, equal to, or after b on the
// ring (starting from the minimum token). Tokens of different kinds are
// ordered by Kind.
func Compare(a, b Token) int {
	switch {
	case a.kind != b.kind:
		if a.kind < b.kind {
			return -1
		}
		return 1
	case a.hi != b.hi:
		if a.hi < b.hi {
			return -1
		}
		return 1
	case a.lo != b.lo:
		if a.lo < b.lo {
			return -1
		}
		return 1
	}
	return 0
}

// successor is the token after t, which the caller never asks of its
// partitioner's largest token.
func (t Token) successor() Token {
	if t.kind == Murmur3Kind {
		t.hi++ // lo is always 0
		return t
	}
	t.lo++
	if t.lo == 0 {
		t.hi++
	}
	return t
}

// Less reports whether t sorts before o (Compare(t, o) < 0).
func (t Token) Less(o Token) bool { return Compare(t, o) < 0 }

// Kind returns the partitioner family the token belongs to.
func (t Token) Kind() Kind { return t.kind }

// IsMinimum reports whether t is its partitioner's minimum token (Murmur3:
// math.MinInt64; Random: -1). No key has the minimum token; it marks the
// start and, as a range end, the end of the ring.
func (t Token) IsMinimum() bool {
	return t.kind != 0 && t.hi == 0 && t.lo == 0
}

// Int64 returns the value of a Murmur3 token. For other kinds it returns 0,
// which means nothing: use BigInt or String instead.
func (t Token) Int64() int64 {
	if t.kind != Murmur3Kind {
		return 0
	}
	return int64(t.hi ^ signBit)
}

// BigInt returns the token's value (Murmur3: the int64; Random: -1 for the
// minimum, otherwise 0..2^127). The zero Token yields 0. The result is a new
// value the caller may modify.
func (t Token) BigInt() *big.Int {
	switch t.kind {
	case Murmur3Kind:
		return big.NewInt(t.Int64())
	case RandomKind:
		v := new(big.Int).SetUint64(t.hi)
		v.Lsh(v, 64)
		v.Or(v, new(big.Int).SetUint64(t.lo))
		return v.Sub(v, big.NewInt(1))
	default:
		return new(big.Int)
	}
}

// String returns the token as Cassandra prints it: Long.toString for Murmur3,
// BigInteger.toString for Random ("-1" for its minimum). ParseToken of the
// matching partitioner reads it back.
func (t Token) String() string {
	switch t.kind {
	case Murmur3Kind:
		return strconv.FormatInt(t.Int64(), 10)
	case RandomKind:
		if t.hi == 0 {
			// Common enough (small tokens, the minimum) to skip big.Int.
			if t.lo == 0 {
				return "-1"
			}
			return strconv.FormatUint(t.lo-1, 10)
		}
		return t.BigInt().String()
	default:
		return "invalid"
	}
}

// AppendBytes appends the token's fixed-width byte-comparable form to dst:
// 8 bytes for Murmur3, 16 for Random, nothing for the zero Token. Within one
// Kind, bytes.Compare on these forms agrees with Compare (invariant P2).
// TokenFromBytes of the matching partitioner inverts it.
func (t Token) AppendBytes(dst []byte) []byte {
	switch t.kind {
	case Murmur3Kind:
		return binary.BigEndian.AppendUint64(dst, t.hi)
	case RandomKind:
		dst = binary.BigEndian.AppendUint64(dst, t.hi)
		return binary.BigEndian.AppendUint64(dst, t.lo)
	default:
		return dst
	}
}
