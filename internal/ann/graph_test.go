package ann

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func randomVectors(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func buildGraph(t testing.TB, sim Similarity, vs [][]float32) *Graph {
	g := NewGraph(sim, len(vs[0]), 7)
	for i, v := range vs {
		id, err := g.Add(v)
		if err != nil || id != int32(i) {
			t.Fatalf("Add %d: id %d, %v", i, id, err)
		}
	}
	return g
}

func TestRecallAgainstExactSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vs := randomVectors(r, 3000, 24)
	queries := randomVectors(r, 50, 24)
	for _, sim := range []Similarity{Cosine, DotProduct, Euclidean} {
		g := buildGraph(t, sim, vs)
		hits, total := 0, 0
		for _, q := range queries {
			want := sim.Exact(vs, q, 10)
			got := g.Search(q, 10, 100)
			if len(got) != 10 {
				t.Fatalf("%s: %d results, want 10", sim, len(got))
			}
			for i, n := range got {
				if i > 0 && n.Score > got[i-1].Score {
					t.Fatalf("%s: results out of order: %v", sim, got)
				}
				if s := sim.Score(q, vs[n.ID]); s-n.Score > 1e-4 || n.Score-s > 1e-4 {
					t.Fatalf("%s: node %d scored %v, its similarity is %v", sim, n.ID, n.Score, s)
				}
				if slices.Contains(want, int(n.ID)) {
					hits++
				}
			}
			total += 10
		}
		if recall := float64(hits) / float64(total); recall < 0.95 {
			t.Errorf("%s: recall@10 %.3f, want >= 0.95", sim, recall)
		}
	}
}

func TestGraphRoundTripsThroughItsBinaryForm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vs := randomVectors(r, 500, 8)
	g := buildGraph(t, Euclidean, vs)
	b := g.AppendBinary(nil)
	d, err := DecodeGraph(b, vs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.AppendBinary(nil), b) {
		t.Fatal("decoded graph encodes differently")
	}
	for _, q := range randomVectors(r, 20, 8) {
		if a, b := g.Search(q, 5, 40), d.Search(q, 5, 40); !slices.Equal(a, b) {
			t.Fatalf("searches differ: %v and %v", a, b)
		}
	}
	// Damage anywhere is refused or yields a graph whose links are all in
	// bounds: searching it must not fail.
	for i := 0; i < 2000; i++ {
		m := slices.Clone(b)
		m[r.IntN(len(m))] ^= byte(1 + r.IntN(255))
		if d, err := DecodeGraph(m, vs); err == nil {
			d.Search(vs[0], 5, 40)
		}
		if d, err := DecodeGraph(m[:r.IntN(len(m))], vs); err == nil {
			d.Search(vs[0], 5, 40)
		}
	}
}

func TestGraphRefusesWhatItCannotRank(t *testing.T) {
	g := NewGraph(Cosine, 3, 1)
	if _, err := g.Add([]float32{0, 0, 0}); err == nil {
		t.Error("a zero vector was added under cosine")
	}
	if _, err := g.Add([]float32{1, 2}); err == nil {
		t.Error("a vector of the wrong dimension was added")
	}
	if _, err := g.Add([]float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if got := g.Search([]float32{1, 2}, 1, 10); got != nil {
		t.Errorf("search with the wrong dimension found %v", got)
	}
	if got := g.Search([]float32{1, 2, 3}, 1, 10); len(got) != 1 || got[0].ID != 0 || got[0].Score < 0.9999 {
		t.Errorf("search found %v, want node 0 with score 1", got)
	}
}

func TestScoresAreCassandras(t *testing.T) {
	a, b := []float32{1, 0}, []float32{0, 1}
	for _, c := range []struct {
		sim  Similarity
		want float32
	}{{Cosine, 0.5}, {DotProduct, 0.5}, {Euclidean, 1.0 / 3}} {
		if got := c.sim.Score(a, b); got != c.want {
			t.Errorf("%s score %v, want %v", c.sim, got, c.want)
		}
	}
}

// BenchmarkAdd is the cost of adding a vector to a graph of 20,000.
func BenchmarkAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 9))
	vs := randomVectors(r, 20_000+b.N, 64)
	g := buildGraph(b, Cosine, vs[:20_000])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.Add(vs[20_000+i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch is a search for the nearest 10 in a graph of 20,000.
func BenchmarkSearch(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 9))
	vs := randomVectors(r, 20_000, 64)
	g := buildGraph(b, Cosine, vs)
	qs := randomVectors(r, 100, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Search(qs[i%len(qs)], 10, 100)
	}
}
