package coordinator

import (
	"fmt"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/ring"
)

func TestOrderByScore(t *testing.T) {
	abc := []ring.Endpoint{"a", "b", "c"}
	for _, c := range []struct {
		scores map[ring.Endpoint]float64
		want   string
	}{
		{map[ring.Endpoint]float64{"a": 10, "b": 1, "c": 6}, "[b c a]"},
		{map[ring.Endpoint]float64{"a": 1.5, "b": 1, "c": 6}, "[a b c]"}, // within the badness threshold
		{map[ring.Endpoint]float64{}, "[a b c]"},
		{map[ring.Endpoint]float64{"a": 3}, "[b c a]"}, // never heard from scores best
	} {
		score := func(e ring.Endpoint) float64 { return c.scores[e] }
		if got := fmt.Sprint(orderByScore(abc, score, defaultBadness)); got != c.want {
			t.Errorf("scores %v: %s, want %s", c.scores, got, c.want)
		}
	}
	if got := fmt.Sprint(orderByScore(abc, nil, defaultBadness)); got != "[a b c]" {
		t.Errorf("no scores: %s", got)
	}
}

// Scores are an average of answer times, forgotten at each reset
// interval.
func TestSnitchScores(t *testing.T) {
	s := newSnitch()
	t0 := time.Unix(1000, 0)
	s.record("a", 100*time.Millisecond, t0)
	s.record("a", 20*time.Millisecond, t0)
	if got := s.scorer(t0)("a"); got != 80 {
		t.Errorf("score after 100 ms and 20 ms: %v, want 80", got)
	}
	if got := s.scorer(t0.Add(defaultResetInterval))("a"); got != 0 {
		t.Errorf("score after the reset interval: %v, want 0", got)
	}
}
