package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/internal/histogram"
)

// TestIntervalQuantiles checks an interval's percentiles are read from
// the difference of two countings: values recorded before the first one
// do not count.
func TestIntervalQuantiles(t *testing.T) {
	h := histogram.New(maxTestLatency)
	for range 1000 {
		h.Record(50_000) // 50 ms, before the interval
	}
	before := countsOf(h)
	for i := range 100 {
		h.Record(int64(100 + i)) // 0.1 to 0.2 ms
	}
	after := countsOf(h)
	if p50 := intervalQuantile(before, after, 0.5); p50 < 0.14 || p50 > 0.2 {
		t.Errorf("p50 of the interval %v ms, want about 0.15", p50)
	}
	if p99 := intervalQuantile(before, after, 0.99); p99 < 0.19 || p99 > 0.25 {
		t.Errorf("p99 of the interval %v ms, want about 0.2", p99)
	}
	if q := intervalQuantile(after, after, 0.5); q != 0 {
		t.Errorf("an empty interval's median %v", q)
	}
}

const maxTestLatency = int64(time.Hour / time.Microsecond)

// TestActivityKeepsTenMinutes checks a node's samples are kept in order,
// once each, for the window.
func TestActivityKeepsTenMinutes(t *testing.T) {
	var a activity
	start := time.Unix(1_000_000, 0)
	for i := range 200 {
		at := start.Add(time.Duration(i) * activityInterval)
		a.add("127.0.0.2", activitySample{At: at.UnixMilli(), Writes: float64(i)}, at)
		a.add("127.0.0.2", activitySample{At: at.UnixMilli(), Writes: -1}, at) // gossip brings it again
	}
	got := a.samples["127.0.0.2"]
	if want := int(activityWindow/activityInterval) + 1; len(got) != want {
		t.Fatalf("%d samples kept, want %d", len(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].At <= got[i-1].At || got[i].Writes < 0 {
			t.Fatalf("samples %d and %d: %+v, %+v", i-1, i, got[i-1], got[i])
		}
	}
}

// TestDashboardStateOfANode samples a node around its writes and reads
// its dashboard state: itself up, owning the whole ring, with the rate
// and latencies of the writes it coordinated.
func TestDashboardStateOfANode(t *testing.T) {
	n, s := openNode(t)
	if _, err := s.Run(`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.t (k int PRIMARY KEY, v int)`); err != nil {
		t.Fatal(err)
	}
	var a activity
	t0 := time.Now()
	a.sample(n, t0)
	const writes = 50
	for i := range writes {
		if _, err := s.Run(fmt.Sprintf("INSERT INTO ks.t (k, v) VALUES (%d, 1)", i)); err != nil {
			t.Fatal(err)
		}
	}
	a.sample(n, t0.Add(10*time.Second))
	got := a.samples[n.cfg.ListenAddress]
	if len(got) != 1 {
		t.Fatalf("%d samples after two samplings, want 1 (the first only counts)", len(got))
	}
	if s := got[0]; s.Writes != writes/10.0 || s.WriteP99 <= 0 || s.WriteP50 > s.WriteP99 || s.Reads != 0 {
		t.Errorf("sample %+v, want %v writes a second with latencies", s, writes/10.0)
	}
	n.activity.mu.Lock()
	n.activity.samples = a.samples
	n.activity.mu.Unlock()
	v, err := n.dashboardState(nil)
	if err != nil {
		t.Fatal(err)
	}
	st := v.(dashboardState)
	if len(st.Nodes) != 1 || st.Nodes[0].Status != "UP" || st.Nodes[0].Ownership != 1 ||
		len(st.Nodes[0].TokenFractions) != n.cfg.NumTokens || st.Self != n.cfg.ListenAddress {
		t.Errorf("nodes %+v", st.Nodes)
	}
	for _, f := range st.Nodes[0].TokenFractions {
		if f < 0 || f >= 1 {
			t.Errorf("token fraction %v", f)
		}
	}
	if len(st.Activity[n.cfg.ListenAddress]) != 1 || st.Traces == nil {
		t.Errorf("activity %v, traces %v", st.Activity, st.Traces)
	}
}
