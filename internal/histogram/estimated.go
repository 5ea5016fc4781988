package histogram

import "math"

// Estimated is a fixed-bucket histogram as Cassandra keeps partition
// sizes and cell counts in its SSTables' statistics: bucket i counts the
// values above the offset of bucket i-1 up to its own, the offsets
// growing by a fifth each time (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17,
// ...), and one bucket more takes what is larger than the last offset.
// Histograms of the same size merge by adding their buckets, so a table's
// is the sum of its SSTables'.
type Estimated []int64

// The sizes of Cassandra's histograms: partition sizes in bytes reach
// about 1.4 TB, cell counts about 4 billion.
const (
	PartitionSizeBuckets = 150
	CellCountBuckets     = 118
)

// NewEstimated returns an empty histogram of n offsets (n+1 buckets).
func NewEstimated(n int) Estimated { return make(Estimated, n+1) }

// offsets are the bucket offsets, enough for every size above.
var offsets = func() []int64 {
	out := []int64{1}
	for len(out) < PartitionSizeBuckets {
		prev := out[len(out)-1]
		out = append(out, max(prev+1, int64(math.Round(float64(prev)*1.2))))
	}
	return out
}()

// Add counts one value.
func (h Estimated) Add(v int64) {
	n := len(h) - 1
	lo, hi := 0, n // the first offset at least v, or n (the overflow)
	for lo < hi {
		mid := (lo + hi) / 2
		if offsets[mid] >= v {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	h[lo]++
}

// Merge adds other's buckets (of the same size) to h's.
func (h Estimated) Merge(other Estimated) {
	for i := range min(len(h), len(other)) {
		h[i] += other[i]
	}
}

// Count is how many values were added.
func (h Estimated) Count() int64 {
	var c int64
	for _, b := range h {
		c += b
	}
	return c
}

// Overflowed reports whether a value was larger than the last offset:
// then no percentile is known.
func (h Estimated) Overflowed() bool { return len(h) > 0 && h[len(h)-1] > 0 }

// Percentile is the offset of the bucket holding the value a share q of
// the values are at most, as Cassandra reads it; NaN when empty or
// overflowed.
func (h Estimated) Percentile(q float64) float64 {
	count := h.Count()
	if count == 0 || h.Overflowed() {
		return math.NaN()
	}
	want := int64(math.Ceil(float64(count) * q))
	var seen int64
	for i, b := range h[:len(h)-1] {
		seen += b
		if seen >= want {
			return float64(offsets[i])
		}
	}
	return float64(offsets[len(h)-2])
}

// Min is the least value the first non-empty bucket holds; NaN when empty.
func (h Estimated) Min() float64 {
	for i, b := range h {
		if b > 0 {
			if i == 0 {
				return 0
			}
			return float64(offsets[i-1] + 1)
		}
	}
	return math.NaN()
}

// Max is the offset of the last non-empty bucket (the largest int64 when
// a value overflowed); NaN when empty.
func (h Estimated) Max() float64 {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i] > 0 {
			if i == len(h)-1 {
				return math.MaxInt64
			}
			return float64(offsets[i])
		}
	}
	return math.NaN()
}

// LastOffset is the largest value a histogram of n offsets counts without
// overflowing.
func LastOffset(n int) int64 { return offsets[n-1] }

// Cumulative is the histogram in Prometheus's form: the count, the sum
// (each value taken as its bucket's offset, an upper estimate; the
// overflow bucket's as the last offset) and for each upper bound,
// ascending, how many values were at most it (a bucket counts towards a
// bound its offset is at most).
func (h Estimated) Cumulative(bounds []int64) (count uint64, sum int64, atMost []uint64) {
	atMost = make([]uint64, len(bounds))
	for i, c := range h {
		if c == 0 {
			continue
		}
		count += uint64(c)
		offset := offsets[min(i, len(h)-2)]
		sum += c * offset
		if i == len(h)-1 {
			continue // the overflow: above every offset
		}
		for j := len(bounds) - 1; j >= 0 && offset <= bounds[j]; j-- {
			atMost[j] += uint64(c)
		}
	}
	return count, sum, atMost
}
