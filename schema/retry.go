package schema

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// RetryKind is the form of a speculative retry policy.
type RetryKind uint8

const (
	RetryNever      RetryKind = iota // NEVER (NONE): never speculate
	RetryAlways                      // ALWAYS: ask one more replica from the start
	RetryPercentile                  // 99p: after the table's recent read latency at a percentile
	RetryFixed                       // 50ms: after a fixed wait
	RetryMin                         // MIN(99p,50ms): the shorter of the two
	RetryMax                         // MAX(99p,50ms): the longer of the two
)

// RetryPolicy is a table's speculative_retry (or additional_write_policy):
// how long a read waits for its replicas before it asks one more.
type RetryPolicy struct {
	Kind       RetryKind
	Percentile float64       // RetryPercentile, RetryMin, RetryMax: 0 to 100, exclusive
	Fixed      time.Duration // RetryFixed, RetryMin, RetryMax: whole milliseconds
}

var (
	percentileRetry = regexp.MustCompile(`(?i)^([0-9.]+)p(ercentile)?$`)
	fixedRetry      = regexp.MustCompile(`(?i)^([0-9.]+)ms$`)
	hybridRetry     = regexp.MustCompile(`(?i)^(MIN|MAX)\(([0-9.]+[a-z]+)\s*,\s*([0-9.]+[a-z]+)\)$`)
)

// ParseRetryPolicy reads a policy in any form CQL accepts, with
// Cassandra's messages, which name speculative_retry for both options.
func ParseRetryPolicy(s string) (RetryPolicy, error) {
	invalid := fmt.Errorf("Invalid value %s for option 'speculative_retry'", s)
	switch {
	case strings.EqualFold(s, "ALWAYS"):
		return RetryPolicy{Kind: RetryAlways}, nil
	case strings.EqualFold(s, "NEVER"), strings.EqualFold(s, "NONE"):
		return RetryPolicy{Kind: RetryNever}, nil
	}
	if m := percentileRetry.FindStringSubmatch(s); m != nil {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return RetryPolicy{}, invalid
		}
		// Kept as written back, to four places: one that rounds to 0 or
		// 100 would not read again.
		f = math.Round(f*10000) / 10000
		if f <= 0 || f >= 100 {
			return RetryPolicy{}, fmt.Errorf("Invalid value %s for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)", s)
		}
		return RetryPolicy{Kind: RetryPercentile, Percentile: f}, nil
	}
	if m := fixedRetry.FindStringSubmatch(s); m != nil {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return RetryPolicy{}, invalid
		}
		return RetryPolicy{Kind: RetryFixed, Fixed: time.Duration(min(f, math.MaxInt32)) * time.Millisecond}, nil
	}
	if m := hybridRetry.FindStringSubmatch(s); m != nil {
		a, errA := ParseRetryPolicy(m[2])
		b, errB := ParseRetryPolicy(m[3])
		if errA != nil || errB != nil { // the pattern lets through only percentiles and fixed waits
			return RetryPolicy{}, invalid
		}
		if a.Kind == b.Kind {
			kind := "PERCENTILE"
			if a.Kind == RetryFixed {
				kind = "FIXED"
			}
			return RetryPolicy{}, fmt.Errorf("Invalid value %s for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type %s", s, kind)
		}
		if a.Kind == RetryFixed {
			a, b = b, a
		}
		kind := RetryMin
		if strings.EqualFold(m[1], "MAX") {
			kind = RetryMax
		}
		return RetryPolicy{Kind: kind, Percentile: a.Percentile, Fixed: b.Fixed}, nil
	}
	return RetryPolicy{}, invalid
}

// normalRetryPolicy is a policy as Cassandra writes it back.
func normalRetryPolicy(s string) (string, error) {
	p, err := ParseRetryPolicy(s)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// String is the policy as Cassandra writes it: ALWAYS, NEVER, 99p, 10ms,
// MIN(99p,10ms) (the percentile first).
func (p RetryPolicy) String() string {
	percentile := strconv.FormatFloat(p.Percentile, 'f', -1, 64) + "p"
	fixed := strconv.FormatInt(p.Fixed.Milliseconds(), 10) + "ms"
	switch p.Kind {
	case RetryAlways:
		return "ALWAYS"
	case RetryPercentile:
		return percentile
	case RetryFixed:
		return fixed
	case RetryMin:
		return "MIN(" + percentile + "," + fixed + ")"
	case RetryMax:
		return "MAX(" + percentile + "," + fixed + ")"
	}
	return "NEVER"
}

// Threshold is how long a read waits before it speculates, given the
// latency at a percentile of the table's recent reads (ok false when
// there are none yet) and the threshold last computed, which a policy
// with a percentile keeps while there are no samples, as Cassandra's
// does (MIN and MAX too). speculate is false for NEVER.
func (p RetryPolicy) Threshold(latencyAt func(percentile float64) (time.Duration, bool), last time.Duration) (wait time.Duration, speculate bool) {
	switch p.Kind {
	case RetryNever:
		return 0, false
	case RetryAlways:
		return 0, true
	case RetryFixed:
		return p.Fixed, true
	}
	d, ok := latencyAt(p.Percentile)
	switch {
	case !ok:
		return last, true
	case p.Kind == RetryMin:
		return min(d, p.Fixed), true
	case p.Kind == RetryMax:
		return max(d, p.Fixed), true
	}
	return d, true
}
