package topk

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSummaryBoundsTheTruth feeds skewed streams and checks Space-Saving's
// guarantees against exact counts: each kept item's true count lies in
// [Count-Error, Count], and every item seen more often than the least
// count kept is kept.
func TestSummaryBoundsTheTruth(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		capacity := 5 + r.IntN(30)
		s := New(capacity)
		truth := map[string]int64{}
		zipf := rand.NewZipf(r, 1.2, 1, 500)
		for range 5000 {
			item := fmt.Sprint("p", zipf.Uint64())
			truth[item]++
			s.Add(item, 1)
		}
		top := s.Top(capacity)
		kept := map[string]bool{}
		least := top[len(top)-1].Count
		for _, it := range top {
			kept[it.Item] = true
			if real := truth[it.Item]; real > it.Count || real < it.Count-it.Error {
				t.Fatalf("seed %d: %s counted %d±%d, seen %d times", seed, it.Item, it.Count, it.Error, real)
			}
		}
		for item, n := range truth {
			if n > least && !kept[item] {
				t.Fatalf("seed %d: %s seen %d times, more than the least kept (%d), is not kept", seed, item, n, least)
			}
		}
		for i := 1; i < len(top); i++ {
			if top[i].Count > top[i-1].Count {
				t.Fatalf("seed %d: top not in order: %v", seed, top)
			}
		}
	}
}

// TestMaxKeepsTheLargest checks a summary of maxima keeps each item's
// largest value and, when full, the items of the largest values.
func TestMaxKeepsTheLargest(t *testing.T) {
	s := New(3)
	for i, v := range []int64{5, 1, 9, 7, 3, 8, 2} {
		s.Max(fmt.Sprint("q", i), v)
	}
	s.Max("q2", 4) // smaller than its 9: kept as 9
	got := fmt.Sprint(s.Top(10))
	if want := "[{q2 9 0} {q5 8 0} {q3 7 0}]"; got != want {
		t.Errorf("top %s, want %s", got, want)
	}
}
