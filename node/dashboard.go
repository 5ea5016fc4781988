package node

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// The admin API serves a live dashboard at /: the page, its style and
// its script are in the binary, and poll /dashboard/state. Each node
// samples its own activity every activityInterval and gossips the sample
// (gossip.Activity), so the node serving the page draws every node's
// activity from what gossip brings it, asking nothing of the others.

//go:embed dashboard
var dashboardFiles embed.FS

// activityInterval is how often a node samples its activity.
const activityInterval = 5 * time.Second

// activityWindow is how much of each node's activity the dashboard keeps.
const activityWindow = 10 * time.Minute

// activitySample is what a node did over one interval: the requests it
// coordinated a second, their median and 99th percentile latencies in
// ms, and its background work when sampled.
type activitySample struct {
	At                 int64   `json:"t"` // Unix ms
	Reads              float64 `json:"r"`
	Writes             float64 `json:"w"`
	ReadP50            float64 `json:"rp50"`
	ReadP99            float64 `json:"rp99"`
	WriteP50           float64 `json:"wp50"`
	WriteP99           float64 `json:"wp99"`
	PendingCompactions int     `json:"pc"`
	HintFiles          int     `json:"h"`
	Streams            int     `json:"s"`
}

// activityBounds are the upper bounds (µs) the sampler counts latencies
// under, 20% apart from 10 µs to a minute: an interval's percentiles are
// read from the differences of two counts, as Prometheus reads its
// histograms.
var activityBounds = func() []int64 {
	var out []int64
	for b := 10.0; b < 60e6; b *= 1.2 {
		out = append(out, int64(b))
	}
	return out
}()

// cumulativeCounts is a latency histogram's counts at one sampling.
type cumulativeCounts struct {
	count  uint64
	atMost []uint64
}

func countsOf(h *histogram.Histogram) cumulativeCounts {
	count, _, atMost := h.Cumulative(activityBounds)
	return cumulativeCounts{count, atMost}
}

// intervalQuantile is the latency (ms) under which a share q of the
// values recorded between two samplings fell; 0 when there were none.
func intervalQuantile(before, after cumulativeCounts, q float64) float64 {
	total := after.count - before.count
	if total == 0 || before.atMost == nil {
		return 0
	}
	need := uint64(q * float64(total))
	for i, b := range activityBounds {
		if after.atMost[i]-before.atMost[i] >= max(need, 1) {
			return float64(b) / 1000
		}
	}
	return float64(activityBounds[len(activityBounds)-1]) / 1000
}

// activity keeps the samples of every node, by address.
type activity struct {
	mu      sync.Mutex
	samples map[string][]activitySample
	// The coordinator's counts at the last sampling.
	reads, writes         cumulativeCounts // their read and write latencies
	readTotal, writeTotal uint64           // every read and write
	at                    time.Time
	// traces caches the slowest traces a short while: reading them scans
	// system_traces.sessions.
	traces   []dashboardTrace
	tracesAt time.Time
}

// add keeps a node's sample, unless it has it, and forgets samples older
// than the window.
func (a *activity) add(address string, s activitySample, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.samples == nil {
		a.samples = map[string][]activitySample{}
	}
	kept := a.samples[address]
	if n := len(kept); n > 0 && kept[n-1].At >= s.At {
		return
	}
	kept = append(kept, s)
	cut := now.Add(-activityWindow).UnixMilli()
	for len(kept) > 0 && kept[0].At < cut {
		kept = kept[1:]
	}
	a.samples[address] = kept
}

// sampleActivity samples this node's activity each interval, gossips it,
// and takes in what gossip brought of the others', until the node stops.
func (n *Node) sampleActivity() {
	t := time.NewTicker(activityInterval)
	defer t.Stop()
	n.activity.sample(n, time.Now())
	for {
		select {
		case <-n.stopped:
			return
		case now := <-t.C:
			n.activity.sample(n, now)
		}
	}
}

// sample takes one sample of the node's activity.
func (a *activity) sample(n *Node, now time.Time) {
	lat := &n.coord.Stats.Latency
	reads, writes := countsOf(lat.Read), countsOf(lat.Write)
	readTotal := uint64(lat.Range.Count()+lat.CASRead.Count()) + reads.count
	writeTotal := uint64(lat.CASWrite.Count()) + writes.count
	a.mu.Lock()
	s := activitySample{At: now.UnixMilli()}
	if !a.at.IsZero() {
		secs := max(now.Sub(a.at).Seconds(), 0.001)
		s.Reads = float64(readTotal-a.readTotal) / secs
		s.Writes = float64(writeTotal-a.writeTotal) / secs
		s.ReadP50, s.ReadP99 = intervalQuantile(a.reads, reads, 0.5), intervalQuantile(a.reads, reads, 0.99)
		s.WriteP50, s.WriteP99 = intervalQuantile(a.writes, writes, 0.5), intervalQuantile(a.writes, writes, 0.99)
	}
	first := a.at.IsZero()
	a.reads, a.writes, a.at = reads, writes, now
	a.readTotal, a.writeTotal = readTotal, writeTotal
	a.mu.Unlock()
	if first {
		return // rates need two samplings
	}
	s.PendingCompactions = n.engine.PendingCompactions()
	if n.hints != nil {
		for _, p := range n.hints.Pending() {
			s.HintFiles += p.Files
		}
	}
	if n.streaming != nil {
		s.Streams = len(n.streaming.Sessions())
	}
	a.add(n.cfg.ListenAddress, s, now)
	if g := n.gossip; g != nil {
		if b, err := json.Marshal(s); err == nil {
			g.Set(gossip.Activity, string(b))
		}
		for e, st := range g.Endpoints() {
			var peer activitySample
			if e == n.cfg.ListenAddress || json.Unmarshal([]byte(st.Get(gossip.Activity)), &peer) != nil {
				continue
			}
			a.add(e, peer, now)
		}
	}
}

// dashboardNode is one node of the ring as the dashboard draws it.
type dashboardNode struct {
	AdminStatus
	// TokenFractions are its tokens as fractions of the ring (0 to 1).
	TokenFractions []float64 `json:"token_fractions"`
}

// dashboardTrace is one of the slowest recent traced requests.
type dashboardTrace struct {
	SessionID   string `json:"session_id"`
	Coordinator string `json:"coordinator"`
	DurationUS  int64  `json:"duration_us"`
	Request     string `json:"request"`
	StartedAt   int64  `json:"started_at"` // Unix ms
}

// dashboardState is what the page polls.
type dashboardState struct {
	ClusterName string                      `json:"cluster_name"`
	Self        string                      `json:"self"`
	Now         int64                       `json:"now"` // Unix ms
	Nodes       []dashboardNode             `json:"nodes"`
	Activity    map[string][]activitySample `json:"activity"`
	Traces      []dashboardTrace            `json:"traces"`
}

func (n *Node) dashboardState(*http.Request) (any, error) {
	now := time.Now()
	statuses, err := n.statuses("")
	if err != nil {
		return nil, err
	}
	part := n.engine.Partitioner()
	st := dashboardState{ClusterName: n.cfg.ClusterName, Self: n.cfg.ListenAddress, Now: now.UnixMilli(),
		Activity: map[string][]activitySample{}, Traces: n.activity.slowestTraces(n, now)}
	for _, s := range statuses {
		s.Status = strings.ToUpper(s.Status)
		d := dashboardNode{AdminStatus: s, TokenFractions: []float64{}}
		for _, t := range s.Tokens {
			if tok, err := part.ParseToken(t); err == nil {
				d.TokenFractions = append(d.TokenFractions, part.RingFraction(tok))
			}
		}
		st.Nodes = append(st.Nodes, d)
	}
	n.activity.mu.Lock()
	for e, samples := range n.activity.samples {
		st.Activity[e] = slices.Clone(samples)
	}
	n.activity.mu.Unlock()
	return st, nil
}

// slowestTracesShown is how many traces the dashboard lists, and
// slowestTracesAge how far back it looks.
const (
	slowestTracesShown = 10
	slowestTracesAge   = 15 * time.Minute
	tracesCacheTime    = 10 * time.Second
	tracesScanned      = 5000
)

// slowestTraces are the slowest traced requests of the last minutes, from
// system_traces.sessions as the cluster holds it (read at ONE).
func (a *activity) slowestTraces(n *Node, now time.Time) []dashboardTrace {
	a.mu.Lock()
	if !a.tracesAt.IsZero() && now.Sub(a.tracesAt) < tracesCacheTime {
		out := a.traces
		a.mu.Unlock()
		return out
	}
	a.mu.Unlock()
	out := []dashboardTrace{}
	t := schema.TraceSessionsTable
	parts, err := n.Scan(t, request.RangeRead{Limit: tracesScanned, Now: now.Unix(), Consistency: request.One})
	if err == nil {
		cut := now.Add(-slowestTracesAge).UnixMilli()
		for _, p := range parts {
			for _, r := range p.Rows {
				cells, err := t.RowCells(p.Key, r.Clustering, r.Row, p.Static, now.Unix())
				if err != nil {
					continue
				}
				started, _ := cqltype.DecodeBigint(cells["started_at"].Value)
				duration, _ := cqltype.DecodeInt(cells["duration"].Value)
				if started < cut || cells["duration"].Value == nil {
					continue // too old, or not finished
				}
				req := string(cells["request"].Value)
				if keys, vals, err := cqltype.DecodeMap(cells["parameters"].Value); err == nil {
					for i, k := range keys {
						if string(k) == "query" {
							req += ": " + string(vals[i])
						}
					}
				}
				out = append(out, dashboardTrace{SessionID: cqltype.FormatUUID(p.Key), Coordinator: cqltype.InetType.Format(cells["coordinator"].Value),
					DurationUS: int64(duration), Request: req, StartedAt: started})
			}
		}
		slices.SortFunc(out, func(a, b dashboardTrace) int { return int(b.DurationUS - a.DurationUS) })
		out = out[:min(len(out), slowestTracesShown)]
	}
	a.mu.Lock()
	a.traces, a.tracesAt = out, now
	a.mu.Unlock()
	return out
}

// handleDashboard serves the page, its files and its state.
func (n *Node) handleDashboard(mux *http.ServeMux, handle func(pattern string, fn func(r *http.Request) (any, error))) {
	files, _ := fs.Sub(dashboardFiles, "dashboard") // a path the embed above holds
	static := http.StripPrefix("/dashboard/", http.FileServerFS(files))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, files, "index.html")
	})
	mux.Handle("GET /dashboard/", static)
	handle("GET /dashboard/state", n.dashboardState)
}
