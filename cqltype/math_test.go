package cqltype

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func decimalOf(t *testing.T, s string) decimal {
	t.Helper()
	b, err := DecimalType.FromLiteral(FloatLiteral, s)
	if err != nil {
		t.Fatal(err)
	}
	u, scale, _ := DecodeDecimal(b)
	return decimal{u, scale}
}

// TestDecimalMathGolden holds results Cassandra 5.0 gives (big-math
// 2.3.0 at a MathContext of 32 digits, HALF_EVEN).
func TestDecimalMathGolden(t *testing.T) {
	for _, c := range []struct {
		fn       func(decimal) (decimal, error)
		name, in string
		want     string
	}{
		{decimalExp, "exp", "1", "2.7182818284590452353602874713527"},
		{decimalExp, "exp", "5", "148.41315910257660342111558004055"},
		{decimalExp, "exp", "0", "1"},
		{decimalExp, "exp", "100", "2.6881171418161354484126255515800E+43"},
		{decimalLog, "log", "5", "1.6094379124341003746007593332262"},
		{decimalLog, "log", "1", "0"},
		{decimalLog10, "log10", "5", "0.69897000433601880478626110527551"},
		{decimalLog10, "log10", "10", "1"},
	} {
		r, err := c.fn(decimalOf(t, c.in))
		if err != nil {
			t.Fatalf("%s(%s): %v", c.name, c.in, err)
		}
		if got := formatDecimal(r.u, r.scale); got != c.want {
			t.Errorf("%s(%s) = %s, want %s", c.name, c.in, got, c.want)
		}
	}
}

// TestDecimalMathAgainstFloat compares the decimal functions with
// float64's over random arguments: they agree to float64's precision.
func TestDecimalMathAgainstFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 300; i++ {
		u := big.NewInt(r.Int64N(1_000_000_000) + 1)
		d := decimal{u, int32(r.IntN(12))}
		x, _ := new(big.Float).Quo(new(big.Float).SetInt(u), new(big.Float).SetInt(pow10(int64(d.scale)))).Float64()
		for _, c := range []struct {
			name string
			fn   func(decimal) (decimal, error)
			f    func(float64) float64
		}{{"exp", decimalExp, math.Exp}, {"log", decimalLog, math.Log}, {"log10", decimalLog10, math.Log10}} {
			if c.name == "exp" && x > 700 {
				continue
			}
			got, err := c.fn(d)
			if err != nil {
				t.Fatalf("%s(%v): %v", c.name, x, err)
			}
			if got.precision() < 32 && got.u.Sign() != 0 && c.name == "exp" {
				t.Errorf("%s(%v) has %d digits, want 32", c.name, x, got.precision())
			}
			g, _ := bigFloatOf(got, 200).Float64()
			if want := c.f(x); math.Abs(g-want) > 1e-13*math.Max(1, math.Abs(want)) {
				t.Errorf("%s(%v) = %v, float64 says %v", c.name, x, g, want)
			}
		}
	}
}
