package histogram

import (
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Windows is how many one-minute windows the recent percentiles cover.
const Windows = 4

// sigfigs is the precision kept: values within 1% are not told apart.
const sigfigs = 2

// Histogram is one distribution of values from 0 to a highest one;
// larger values are recorded as the highest.
type Histogram struct {
	highest int64

	mu      sync.Mutex
	windows [Windows]*hdrhistogram.Histogram // windows[current] takes the records
	current int
	// retired are the windows rotated out, merged: with the windows,
	// everything since the start, so that a record is counted once.
	retired *hdrhistogram.Histogram
	sum     int64
}

// New returns a histogram of values up to highest (at least 2).
func New(highest int64) *Histogram { return &Histogram{highest: max(highest, 2)} }

// Record records one value.
func (h *Histogram) Record(v int64) {
	v = min(max(v, 0), h.highest)
	h.mu.Lock()
	if h.retired == nil {
		h.retired = h.hist()
		for i := range h.windows {
			h.windows[i] = h.hist()
		}
	}
	_ = h.windows[h.current].RecordValue(v) // in range: it cannot fail
	h.sum += v
	h.mu.Unlock()
}

func (h *Histogram) hist() *hdrhistogram.Histogram { return hdrhistogram.New(1, h.highest, sigfigs) }

// Rotate starts a new window, forgetting the oldest: called each minute,
// it keeps the recent percentiles to the last few minutes.
func (h *Histogram) Rotate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.retired == nil {
		return
	}
	h.current = (h.current + 1) % Windows
	h.retired.Merge(h.windows[h.current])
	h.windows[h.current].Reset()
}

// Summary is a distribution's recent figures.
type Summary struct {
	Count    int64
	Min, Max int64
	Mean     float64
	recent   *hdrhistogram.Histogram // nil when nothing was recorded
}

// Quantile is the value below which a share q (0 to 1) of the recent
// values fall; 0 when there are none.
func (s Summary) Quantile(q float64) int64 {
	if s.recent == nil || s.Count == 0 {
		return 0
	}
	return s.recent.ValueAtQuantile(q * 100)
}

// Recent summarizes the values of the last windows.
func (h *Histogram) Recent() Summary {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.retired == nil {
		return Summary{}
	}
	merged := h.hist()
	for _, w := range h.windows {
		merged.Merge(w)
	}
	s := Summary{Count: merged.TotalCount(), recent: merged}
	if s.Count > 0 {
		s.Min, s.Max, s.Mean = merged.Min(), merged.Max(), merged.Mean()
	}
	return s
}

// Count is how many values were recorded since the start.
func (h *Histogram) Count() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.retired == nil {
		return 0
	}
	n := h.retired.TotalCount()
	for _, w := range h.windows {
		n += w.TotalCount()
	}
	return n
}

// Cumulative is everything recorded since the start, in Prometheus's
// form: the count, the sum, and for each upper bound (in the recorded
// unit, ascending) how many values were at most it. A value counts
// towards a bound its HdrHistogram bucket's highest equivalent value is
// at most, so that counts never exceed the truth by more than the
// histogram's precision.
func (h *Histogram) Cumulative(bounds []int64) (count uint64, sum int64, atMost []uint64) {
	atMost = make([]uint64, len(bounds))
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.retired == nil {
		return 0, 0, atMost
	}
	for _, part := range append([]*hdrhistogram.Histogram{h.retired}, h.windows[:]...) {
		count += uint64(part.TotalCount())
		for _, bar := range part.Distribution() {
			if bar.Count == 0 {
				continue
			}
			for i := len(bounds) - 1; i >= 0 && bar.To <= bounds[i]; i-- {
				atMost[i] += uint64(bar.Count)
			}
		}
	}
	return count, h.sum, atMost
}
