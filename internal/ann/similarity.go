package ann

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Similarity is a vector similarity function.
type Similarity uint8

// The similarity functions, by the names CQL gives them.
const (
	Cosine Similarity = iota
	DotProduct
	Euclidean
)

var similarityNames = [...]string{Cosine: "cosine", DotProduct: "dot_product", Euclidean: "euclidean"}

func (s Similarity) String() string {
	if int(s) < len(similarityNames) {
		return similarityNames[s]
	}
	return fmt.Sprintf("similarity(%d)", s)
}

// ParseSimilarity reads a similarity function's name (lower case).
func ParseSimilarity(name string) (Similarity, bool) {
	for i, n := range similarityNames {
		if n == name {
			return Similarity(i), true
		}
	}
	return 0, false
}

// Score is the similarity of a and b (equal lengths) in [0, 1] for unit
// vectors, higher meaning nearer: (1 + cos)/2 for cosine, (1 + a·b)/2 for
// the dot product, 1/(1 + |a - b|²) for euclidean. Cosine of a zero
// vector is NaN.
func (s Similarity) Score(a, b []float32) float32 {
	switch s {
	case DotProduct:
		return (1 + Dot(a, b)) / 2
	case Euclidean:
		return 1 / (1 + SquaredDistance(a, b))
	}
	var dot, na, nb float32
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return (1 + dot/float32(math.Sqrt(float64(na)*float64(nb)))) / 2
}

// Dot is a·b (b at least as long as a). Eight partial sums keep the
// multiplications independent, and the re-slicing lets the compiler drop
// the bounds checks.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		x, y := a[:8:8], b[:8:8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return (s0 + s4) + (s1 + s5) + (s2 + s6) + (s3 + s7)
}

// SquaredDistance is |a - b|² (b at least as long as a).
func SquaredDistance(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for len(a) >= 4 {
		x, y := a[:4:4], b[:4:4]
		d0, d1, d2, d3 := x[0]-y[0], x[1]-y[1], x[2]-y[2], x[3]-y[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		a, b = a[4:], b[4:]
	}
	for i := range a {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s2) + (s1 + s3)
}

// IsZero reports whether v has no length to take a cosine of.
func IsZero(v []float32) bool {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	return n < 1e-30
}

// Exact is exact search, the model approximate search is measured
// against: the positions in vectors of the k most similar to q, most
// similar first (ties in order of position).
func (s Similarity) Exact(vectors [][]float32, q []float32, k int) []int {
	ids := make([]int, len(vectors))
	scores := make([]float32, len(vectors))
	for i, v := range vectors {
		ids[i], scores[i] = i, s.Score(q, v)
	}
	slices.SortStableFunc(ids, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	return ids[:min(k, len(ids))]
}
