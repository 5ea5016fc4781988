package testutil

import (
	"iter"
	"time"
)

// Seeds are the seeds a randomized test runs: count of them from first,
// or, with long above zero, one after another from first until long has
// passed (the seed running then is the last).
func Seeds(first uint64, count int, long time.Duration) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		deadline := time.Now().Add(long)
		for seed := first; ; seed++ {
			if long > 0 && !time.Now().Before(deadline) || long <= 0 && seed >= first+uint64(count) {
				return
			}
			if !yield(seed) {
				return
			}
		}
	}
}
