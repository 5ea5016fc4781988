package coordinator

import (
	"time"

	"github.com/sibyldb/sibyl/schema"
)

// speculation is a table's threshold as worked out at one time.
type speculation struct {
	from      string // the table's speculative_retry
	policy    schema.RetryPolicy
	wait      time.Duration
	speculate bool
	at        time.Time
}

// speculationWait is how long a read of table t waits for the replicas it
// asked before it asks one more; speculate is false when it never does:
// for NEVER, and for a threshold past the read timeout (as Cassandra
// skips it). The threshold is worked out again from the table's recent
// read latencies once per read timeout, as often as Cassandra does.
func (c *Coordinator) speculationWait(t *schema.Table) (wait time.Duration, speculate bool) {
	l := c.Stats.TableLatency(t.ID)
	now := c.cfg.Now()
	last := l.speculation.Load()
	if last != nil && last.from == t.Options.SpeculativeRetry && now.Sub(last.at) < c.cfg.Timeouts.Read {
		return last.wait, last.speculate
	}
	next := &speculation{from: t.Options.SpeculativeRetry, at: now}
	// Before any read was timed a percentile stands at half the read
	// timeout, where Cassandra starts it.
	previous := c.cfg.Timeouts.Read / 2
	if last != nil && last.from == next.from {
		next.policy, previous = last.policy, last.wait
	} else if p, err := schema.ParseRetryPolicy(next.from); err == nil {
		next.policy = p
	} // else NEVER: the schema keeps only policies that parse
	next.wait, next.speculate = next.policy.Threshold(func(percentile float64) (time.Duration, bool) {
		recent := l.Read.Recent()
		if recent.Count == 0 {
			return 0, false
		}
		return time.Duration(recent.Quantile(percentile/100)) * time.Microsecond, true
	}, previous)
	if next.wait > c.cfg.Timeouts.Read {
		next.speculate = false
	}
	l.speculation.Store(next)
	return next.wait, next.speculate
}
