package repair

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// TestHistoryAgainstAModel records random repairs of random ranges, some
// wrapping and some whole-ring, and checks after each that every probed
// token, and random ranges, answer what a model of per-token newest times
// says, and that the stretches stay sorted, disjoint and joined. Every
// boundary is among the probes (or the ring's ends, between which the
// probes next to them stand for the rest), so the probes decide a range.
func TestHistoryAgainstAModel(t *testing.T) {
	p := partitioner.Murmur3()
	probes := []int64{math.MinInt64 + 1, math.MinInt64 + 2, math.MaxInt64 - 1, math.MaxInt64}
	for v := int64(-40); v <= 40; v++ {
		probes = append(probes, v)
	}
	token := func(v int64) partitioner.Token { return partitioner.Murmur3Token(v) }
	randomToken := func(r *rand.Rand) int64 {
		switch r.IntN(10) {
		case 0:
			return math.MinInt64
		case 1:
			return math.MaxInt64
		}
		return r.Int64N(81) - 40
	}
	table, other := mutation.TableID{1}, mutation.TableID{2}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		h := &History{Partitioner: p}
		model := map[int64]int64{}
		for step := range 12 {
			// One to three ranges a repair, which may overlap each other.
			var rgs []partitioner.Range
			for range 1 + r.IntN(3) {
				rgs = append(rgs, partitioner.Range{Start: token(randomToken(r)), End: token(randomToken(r))})
			}
			at := r.Int64N(20)
			segs := h.Record(table, rgs, at)
			for _, v := range probes {
				if slices.ContainsFunc(rgs, func(rg partitioner.Range) bool { return rg.Contains(token(v)) }) {
					model[v] = max(model[v], at+1) // 0 in the model: never repaired
				}
			}
			for _, v := range probes {
				got, ok := h.RepairedAt(table, token(v))
				if want := model[v]; ok != (want > 0) || ok && got != want-1 {
					t.Fatalf("seed %d step %d: after %v at %d, token %d: RepairedAt = %d, %v; want %d, %v\nstretches %v",
						seed, step, rgs, at, v, got, ok, want-1, want > 0, segs)
				}
			}
			for i, s := range segs {
				if partitioner.Compare(s.Range.Start, s.Range.End) >= 0 {
					t.Fatalf("seed %d: stretch %v wraps or is empty", seed, s)
				}
				if i > 0 {
					prev := segs[i-1]
					if c := partitioner.Compare(prev.Range.End, s.Range.Start); c > 0 || c == 0 && prev.At == s.At {
						t.Fatalf("seed %d: stretches %v and %v overlap or are not joined", seed, prev, s)
					}
				}
			}
			for range 8 {
				q := partitioner.Range{Start: token(randomToken(r)), End: token(randomToken(r))}
				// A range without a token to cover (max, min] is not covered.
				want, covered, any := int64(math.MaxInt64), true, false
				for _, v := range probes {
					if q.Contains(token(v)) {
						covered, any = covered && model[v] > 0, true
						want = min(want, model[v]-1)
					}
				}
				covered = covered && any
				if got, ok := h.CoveredSince(table, q); ok != covered || ok && got != want {
					t.Fatalf("seed %d step %d: CoveredSince(%v) = %d, %v; want %d, %v\nstretches %v", seed, step, q, got, ok, want, covered, segs)
				}
			}
			if _, ok := h.RepairedAt(other, token(0)); ok {
				t.Fatalf("seed %d: another table's token counts as repaired", seed)
			}
		}
		h.Forget(table)
		whole := partitioner.Range{Start: p.MinToken(), End: p.MinToken()}
		if _, ok := h.CoveredSince(table, whole); ok || slices.ContainsFunc(probes, func(v int64) bool {
			_, ok := h.RepairedAt(table, token(v))
			return ok
		}) {
			t.Fatalf("seed %d: a forgotten table keeps its history", seed)
		}
	}
}
