package partitioner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/sibyldb/sibyl/internal/invariants"
)

// Partitioner turns partition keys into tokens and does the token arithmetic
// that depends on the token space. Implementations are stateless and safe for
// concurrent use.
type Partitioner interface {
	// Name returns the Cassandra class name, as system.local reports it to
	// drivers (they pick their token hash from it).
	Name() string
	Kind() Kind
	// Token hashes a serialized partition key (composite keys already in
	// CompositeType form; see CompositeKey). An empty key gets MinToken.
	Token(key []byte) Token
	// MinToken is the sentinel before every key token (Murmur3:
	// math.MinInt64; Random: -1). It is never a key's token.
	MinToken() Token
	// MaxToken is the largest token (Murmur3: math.MaxInt64; Random: 2^127).
	MaxToken() Token
	// ParseToken reads the decimal form String produces. The error names the
	// input and the valid range.
	ParseToken(s string) (Token, error)
	// TokenFromBytes inverts Token.AppendBytes; it fails on a wrong length or
	// a value outside the token space.
	TokenFromBytes(b []byte) (Token, error)
	// TokenBytesLen is the length of AppendBytes output: 8 or 16.
	TokenBytesLen() int
	// RandomToken draws uniformly from the tokens a key can have (never
	// MinToken), using only r so runs replay from a seed. r must not be nil.
	RandomToken(r *rand.Rand) Token
	// Midpoint returns Cassandra's midpoint of the range (left, right],
	// going clockwise and wrapping past MaxToken when left >= right. Both
	// tokens must belong to this partitioner.
	Midpoint(left, right Token) Token
	// RingFraction places t on the ring as a fraction in [0, 1), MinToken
	// at 0: the measure that token ownership adds up.
	RingFraction(t Token) float64
	// TokenAtFraction is the token at fraction f of the ring (f is clamped
	// to [0, 1)), the inverse of RingFraction to within float64's
	// precision. At 0 it is MinToken.
	TokenAtFraction(f float64) Token
}

// Class names as they appear in cassandra.yaml and system.local.
const (
	Murmur3Name = "org.apache.cassandra.dht.Murmur3Partitioner"
	RandomName  = "org.apache.cassandra.dht.RandomPartitioner"
)

// classPrefix is what Cassandra prepends to a partitioner name without a dot.
const classPrefix = "org.apache.cassandra.dht."

// Murmur3 returns the Murmur3Partitioner, Cassandra's default.
func Murmur3() Partitioner { return murmur3Partitioner{} }

// Random returns the RandomPartitioner (MD5), for clusters created before
// Cassandra 1.2 changed the default.
func Random() Partitioner { return randomPartitioner{} }

// ByName returns the partitioner with the given class name. Like Cassandra's
// config loader it also accepts a short name without the package
// ("Murmur3Partitioner"), which it resolves in org.apache.cassandra.dht.
func ByName(name string) (Partitioner, error) {
	full := name
	if !strings.Contains(name, ".") {
		full = classPrefix + name
	}
	switch full {
	case Murmur3Name:
		return Murmur3(), nil
	case RandomName:
		return Random(), nil
	}
	return nil, fmt.Errorf("partitioner: unknown partitioner %s; valid names are %s (or Murmur3Partitioner) and %s (or RandomPartitioner)",
		quoteInput(name), Murmur3Name, RandomName)
}

// ByKind returns the partitioner of a token kind, for code that holds tokens
// but not the partitioner they came from.
func ByKind(k Kind) (Partitioner, error) {
	switch k {
	case Murmur3Kind:
		return Murmur3(), nil
	case RandomKind:
		return Random(), nil
	}
	return nil, fmt.Errorf("partitioner: no partitioner for token kind %v", k)
}

// maxQuotedInput bounds how much of a bad input an error message repeats, so
// a megabyte of garbage does not become a megabyte of log line.
const maxQuotedInput = 64

func quoteInput(s string) string {
	if len(s) > maxQuotedInput {
		return fmt.Sprintf("%q... (%d bytes)", s[:maxQuotedInput], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// checkKind enforces that a partitioner only does arithmetic on its own
// tokens. Tokens only come from this package, so a mismatch is a caller bug
// (mixing partitioners), not bad input.
func checkKind(want Kind, op string, ts ...Token) {
	for _, t := range ts {
		if t.kind != want {
			panic(invariants.Failf("partitioner: %s: %v token %s given to the %v partitioner", op, t.kind, t, want))
		}
	}
}

// clampFraction holds a ring fraction to [0, 1); NaN reads as 0.
func clampFraction(f float64) float64 {
	switch {
	case !(f > 0):
		return 0
	case f >= 1:
		return math.Nextafter(1, 0)
	}
	return f
}
