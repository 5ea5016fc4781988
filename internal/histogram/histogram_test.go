package histogram

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// within reports whether got is v to the histogram's precision.
func within(got, v int64) bool { return math.Abs(float64(got-v)) <= math.Max(1, 0.01*float64(v)) }

// TestQuantilesAgainstSorted compares the recent quantiles with the exact
// ones of the values recorded.
func TestQuantilesAgainstSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	h := New(60_000_000)
	var values []int64
	for range 20000 {
		v := int64(r.ExpFloat64() * 800) // microseconds, a long tail
		values = append(values, v)
		h.Record(v)
	}
	slices.Sort(values)
	s := h.Recent()
	if s.Count != int64(len(values)) || !within(s.Min, values[0]) || !within(s.Max, values[len(values)-1]) {
		t.Fatalf("count %d min %d max %d, want %d %d %d", s.Count, s.Min, s.Max, len(values), values[0], values[len(values)-1])
	}
	for _, q := range []float64{0.5, 0.75, 0.95, 0.98, 0.99, 0.999} {
		exact := values[int(math.Ceil(q*float64(len(values))))-1]
		if got := s.Quantile(q); !within(got, exact) {
			t.Errorf("quantile %v = %d, exact %d", q, got, exact)
		}
	}
}

// TestWindowsForget: the recent figures cover the last Windows rotations;
// the cumulative ones everything.
func TestWindowsForget(t *testing.T) {
	h := New(200) // exact: below 256, two digits are every value
	if s := h.Recent(); s.Count != 0 || s.Quantile(0.5) != 0 {
		t.Fatalf("empty: %+v", s)
	}
	h.Record(150)
	for i := 1; i < Windows; i++ {
		h.Rotate()
		if s := h.Recent(); s.Count != 1 {
			t.Fatalf("after %d rotations: count %d", i, s.Count)
		}
	}
	h.Rotate()
	if s := h.Recent(); s.Count != 0 {
		t.Fatalf("after %d rotations the value is still recent: %+v", Windows, s)
	}
	h.Record(10)
	h.Record(5000) // past the highest: recorded as it
	h.Record(-3)   // below zero: recorded as zero
	count, sum, atMost := h.Cumulative([]int64{0, 10, 149, 200})
	if count != 4 || sum != 150+10+200+0 || !slices.Equal(atMost, []uint64{1, 2, 2, 4}) {
		t.Errorf("cumulative: %d %d %v", count, sum, atMost)
	}
	if s := h.Recent(); s.Count != 3 || s.Max != 200 || s.Min != 0 {
		t.Errorf("recent: %+v", s)
	}
}

func TestConcurrentRecords(t *testing.T) {
	h := New(1 << 20)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h.Record(int64(g*1000 + i))
				if i%250 == 0 {
					h.Rotate()
					_ = h.Recent()
				}
			}
		}()
	}
	wg.Wait()
	if count, _, _ := h.Cumulative(nil); count != 4000 {
		t.Errorf("count %d, want 4000", count)
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New(60_000_000)
	b.RunParallel(func(pb *testing.PB) {
		v := int64(1)
		for pb.Next() {
			h.Record(v)
			v = (v*7 + 3) & 0xFFFFF
		}
	})
}

// TestEstimatedAsCassandra: the offsets and what the percentiles, min and
// max read from a histogram of known values, as Cassandra's
// EstimatedHistogram reads them.
func TestEstimatedAsCassandra(t *testing.T) {
	if want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72, 86, 103, 124, 149, 179, 215}; !slices.Equal(offsets[:len(want)], want) {
		t.Fatalf("offsets %v", offsets[:len(want)])
	}
	h := NewEstimated(CellCountBuckets)
	if len(h) != CellCountBuckets+1 || !math.IsNaN(h.Percentile(0.5)) || !math.IsNaN(h.Min()) || !math.IsNaN(h.Max()) {
		t.Fatalf("empty: %d buckets, %v %v %v", len(h), h.Percentile(0.5), h.Min(), h.Max())
	}
	for _, v := range []int64{0, 1, 9, 10, 11, 60, 61, 100} {
		h.Add(v)
	}
	// 0 and 1 are in bucket 0 (at most 1), 9 and 10 in the one up to 10,
	// 11 up to 12, 60 up to 60, 61 up to 72, 100 up to 103.
	for q, want := range map[float64]float64{0.25: 1, 0.5: 10, 0.75: 60, 0.95: 103, 1: 103} {
		if got := h.Percentile(q); got != want {
			t.Errorf("percentile %v = %v, want %v", q, got, want)
		}
	}
	if h.Min() != 0 || h.Max() != 103 || h.Count() != 8 {
		t.Errorf("min %v max %v count %d", h.Min(), h.Max(), h.Count())
	}
	other := NewEstimated(CellCountBuckets)
	other.Add(5000)
	h.Merge(other)
	if h.Min() != 0 || h.Max() != 5722 || h.Count() != 9 {
		t.Errorf("merged: min %v max %v count %d", h.Min(), h.Max(), h.Count())
	}
	h.Add(math.MaxInt64)
	if !h.Overflowed() || !math.IsNaN(h.Percentile(0.5)) || h.Max() != math.MaxInt64 {
		t.Errorf("overflowed: %v %v %v", h.Overflowed(), h.Percentile(0.5), h.Max())
	}
}

// TestEstimatedCumulative checks an estimated histogram's cumulative
// counts against its values: a value counts towards every bound at least
// its bucket's offset, and one past the last offset towards none.
func TestEstimatedCumulative(t *testing.T) {
	h := NewEstimated(PartitionSizeBuckets)
	values := []int64{1, 5, 100, 101, 5000, 1 << 20}
	for _, v := range values {
		h.Add(v)
	}
	h.Add(LastOffset(PartitionSizeBuckets) + 1) // overflow
	bounds := []int64{1, 100, 1000, 1 << 21}
	count, sum, atMost := h.Cumulative(bounds)
	if count != uint64(len(values)+1) {
		t.Errorf("count %d", count)
	}
	// 1 and 5 fall in buckets 1 and 5; 100 and 101 in the one whose
	// offset is 103, above the bound 100; 5000 and 1 MiB under 2 MiB.
	if want := []uint64{1, 2, 4, 6}; fmt.Sprint(atMost) != fmt.Sprint(want) {
		t.Errorf("at most %v: %v, want %v", bounds, atMost, want)
	}
	var least int64
	for _, v := range values {
		least += v
	}
	if sum < least {
		t.Errorf("sum %d below the values' %d", sum, least)
	}
}

// TestCountKeepsEverything checks Count counts every value recorded,
// windows rotated out included.
func TestCountKeepsEverything(t *testing.T) {
	h := New(1000)
	if h.Count() != 0 {
		t.Fatalf("an empty histogram counts %d", h.Count())
	}
	for i := range 3 * Windows {
		h.Record(int64(i))
		h.Rotate()
	}
	h.Record(5)
	if got := h.Count(); got != 3*Windows+1 {
		t.Errorf("count %d, want %d", got, 3*Windows+1)
	}
	if c, _, _ := h.Cumulative(nil); int64(c) != h.Count() {
		t.Errorf("Cumulative counts %d, Count %d", c, h.Count())
	}
}
