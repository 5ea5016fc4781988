package schema

import (
	"testing"
	"time"
)

func TestRetryPolicyThreshold(t *testing.T) {
	recent := func(percentile float64) (time.Duration, bool) {
		return time.Duration(percentile) * time.Millisecond, true // 99p: 99 ms
	}
	none := func(float64) (time.Duration, bool) { return 0, false }
	last := 7 * time.Millisecond
	for _, c := range []struct {
		policy    string
		latencyAt func(float64) (time.Duration, bool)
		wait      time.Duration
		speculate bool
	}{
		{"NEVER", recent, 0, false},
		{"none", recent, 0, false},
		{"ALWAYS", recent, 0, true},
		{"99p", recent, 99 * time.Millisecond, true},
		{"99p", none, last, true}, // no samples yet: the last threshold stands
		{"50.5ms", recent, 50 * time.Millisecond, true},
		{"MIN(99p,50ms)", recent, 50 * time.Millisecond, true},
		{"MAX(50ms,99p)", recent, 99 * time.Millisecond, true},
		{"MIN(30p,50ms)", recent, 30 * time.Millisecond, true},
		{"MAX(99p,50ms)", none, last, true},
		{"MIN(99p,5ms)", none, last, true},
	} {
		p, err := ParseRetryPolicy(c.policy)
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		again, err := ParseRetryPolicy(p.String())
		if err != nil || again != p {
			t.Errorf("%s: written back as %s, which reads as %+v (%v)", c.policy, p, again, err)
		}
		wait, speculate := p.Threshold(c.latencyAt, last)
		if wait != c.wait || speculate != c.speculate {
			t.Errorf("%s: threshold %v %v, want %v %v", c.policy, wait, speculate, c.wait, c.speculate)
		}
	}
}
