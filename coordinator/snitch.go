package coordinator

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/ring"
)

// snitch scores replicas by how fast they have answered, as Cassandra's
// DynamicEndpointSnitch does, so that reads ask the fastest of the
// replicas a level allows: a latency average per replica (failures count
// as the whole timeout), all forgotten every resetInterval so that a
// replica once slow is tried again.
type snitch struct {
	resetInterval time.Duration

	mu     sync.Mutex
	scores map[ring.Endpoint]float64 // milliseconds, a moving average
	since  time.Time                 // the last reset
}

// Cassandra's defaults: dynamic_snitch_badness_threshold 1.0 (how much
// worse, as a fraction, the replica first in ring order must score than
// the best before the order changes) and dynamic_snitch_reset_interval
// 600 s.
const (
	defaultBadness       = 1.0
	defaultResetInterval = 10 * time.Minute
	// scoreWeight is the weight of a new latency in the average.
	scoreWeight = 0.25
)

func newSnitch() *snitch {
	return &snitch{resetInterval: defaultResetInterval, scores: map[ring.Endpoint]float64{}}
}

// record counts one answer of replica e that took took, at now.
func (s *snitch) record(e ring.Endpoint, took time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetIfDue(now)
	ms := float64(took) / float64(time.Millisecond)
	if old, ok := s.scores[e]; ok {
		ms = old + scoreWeight*(ms-old)
	}
	s.scores[e] = ms
}

// scorer is the scores as of now, for ReadContacts; a replica never
// heard from scores best.
func (s *snitch) scorer(now time.Time) func(ring.Endpoint) float64 {
	s.mu.Lock()
	s.resetIfDue(now)
	s.mu.Unlock()
	return s.score
}

func (s *snitch) score(e ring.Endpoint) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scores[e]
}

func (s *snitch) resetIfDue(now time.Time) {
	if s.since.IsZero() {
		s.since = now
	}
	if now.Sub(s.since) >= s.resetInterval {
		clear(s.scores)
		s.since = now
	}
}

// orderByScore is replicas (in ring order) reordered fastest first, but
// only when the first scores worse than the best by more than badness:
// small differences keep the ring's order, which spreads the load.
func orderByScore(replicas []ring.Endpoint, score func(ring.Endpoint) float64, badness float64) []ring.Endpoint {
	if score == nil || len(replicas) < 2 {
		return replicas
	}
	// Each score is read once: the order is by one view of them.
	type scored struct {
		r ring.Endpoint
		s float64
	}
	var buf [8]scored
	rs := buf[:0]
	for _, r := range replicas {
		rs = append(rs, scored{r, score(r)})
	}
	best := rs[0].s
	for _, x := range rs[1:] {
		best = min(best, x.s)
	}
	if rs[0].s <= best*(1+badness) {
		return replicas
	}
	slices.SortStableFunc(rs, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
	out := make([]ring.Endpoint, len(rs))
	for i, x := range rs {
		out[i] = x.r
	}
	return out
}
