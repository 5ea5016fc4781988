package node

import (
	"crypto/tls"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/virtual"
)

// The node answers reads of system_views from its live state: each read
// builds the rows of the table it reads (package virtual slices them).

// newVirtualTables wires system_views to the node's state.
func (n *Node) newVirtualTables() *virtual.Tables {
	latency := func(def *schema.Table, pick func(*storage.Table) *histogram.Histogram) virtual.Table {
		return virtual.Table{Def: def, Rows: func() ([]virtual.Row, error) {
			return n.tableRows(func(st *storage.Table) virtual.Row { return n.latencyRow(pick(st)) }), nil
		}}
	}
	coordinator := func(def *schema.Table, pick func(id [16]byte) *histogram.Histogram) virtual.Table {
		return latency(def, func(st *storage.Table) *histogram.Histogram { return pick(st.ID()) })
	}
	perRead := func(def *schema.Table, pick func(*storage.Table) *histogram.Histogram) virtual.Table {
		return virtual.Table{Def: def, Rows: func() ([]virtual.Row, error) {
			return n.tableRows(func(st *storage.Table) virtual.Row { return perReadRow(pick(st)) }), nil
		}}
	}
	size := func(def *schema.Table, bytes func(*storage.Table) int64) virtual.Table {
		return virtual.Table{Def: def, Rows: func() ([]virtual.Row, error) {
			return n.tableRows(func(st *storage.Table) virtual.Row {
				return virtual.Row{"mebibytes": virtual.Bigint(int64(math.Ceil(float64(bytes(st)) / (1 << 20))))}
			}), nil
		}}
	}
	return virtual.New(n.engine.Partitioner(),
		virtual.Table{Def: schema.ClientsView, Rows: n.clientRows},
		virtual.Table{Def: schema.SettingsView, Rows: func() ([]virtual.Row, error) { return settingRows(n.cfg), nil }},
		virtual.Table{Def: schema.SSTableTasksView, Rows: n.sstableTaskRows},
		virtual.Table{Def: schema.ThreadPoolsView, Rows: n.threadPoolRows},
		virtual.Table{Def: schema.CachesView, Rows: n.cacheRows},
		virtual.Table{Def: schema.PendingHintsView, Rows: n.pendingHintRows},
		latency(schema.LocalReadLatencyView, func(st *storage.Table) *histogram.Histogram { return st.Metrics().ReadLatency }),
		latency(schema.LocalScanLatencyView, func(st *storage.Table) *histogram.Histogram { return st.Metrics().RangeLatency }),
		latency(schema.LocalWriteLatencyView, func(st *storage.Table) *histogram.Histogram { return st.Metrics().WriteLatency }),
		coordinator(schema.CoordinatorReadLatencyView, func(id [16]byte) *histogram.Histogram { return n.coord.Stats.TableLatency(id).Read }),
		coordinator(schema.CoordinatorScanLatencyView, func(id [16]byte) *histogram.Histogram { return n.coord.Stats.TableLatency(id).Range }),
		coordinator(schema.CoordinatorWriteLatencyView, func(id [16]byte) *histogram.Histogram { return n.coord.Stats.TableLatency(id).Write }),
		perRead(schema.TombstonesPerReadView, func(st *storage.Table) *histogram.Histogram { return st.Metrics().TombstonesPerRead }),
		perRead(schema.RowsPerReadView, func(st *storage.Table) *histogram.Histogram { return st.Metrics().LivePerRead }),
		size(schema.DiskUsageView, func(st *storage.Table) int64 { return st.Stats().LiveBytes }),
		size(schema.MaxPartitionSizeView, func(st *storage.Table) int64 {
			sizes, _, sstables := st.SSTableHistograms()
			if sstables == 0 || sizes.Count() == 0 {
				return 0
			}
			return int64(sizes.Max())
		}),
	)
}

// tableRows builds one row per table the engine holds, keyed by its
// keyspace and name, as Cassandra's per-table views list every table.
func (n *Node) tableRows(build func(*storage.Table) virtual.Row) []virtual.Row {
	sch := n.Schema()
	var rows []virtual.Row
	for _, st := range n.engine.Tables() {
		t := sch.TableByID(st.ID())
		if t == nil {
			continue // dropped, its files not yet gone
		}
		r := build(st)
		r["keyspace_name"], r["table_name"] = virtual.Text(t.Keyspace), virtual.Text(t.Name)
		rows = append(rows, r)
	}
	return rows
}

// latencyRow is a latency view's figures of a distribution in
// microseconds: the count since the start, recent percentiles in
// milliseconds, and the recent rate.
func (n *Node) latencyRow(h *histogram.Histogram) virtual.Row {
	count := h.Count()
	recent := h.Recent()
	ms := func(us int64) []byte { return virtual.Double(round3(float64(us) / 1000)) }
	return virtual.Row{"count": virtual.Bigint(int64(count)), "p50th_ms": ms(recent.Quantile(0.5)),
		"p99th_ms": ms(recent.Quantile(0.99)), "max_ms": ms(recent.Max),
		"per_second": virtual.Double(round3(float64(recent.Count) / n.recentSeconds()))}
}

// perReadRow is a per-read view's figures of a distribution of counts.
func perReadRow(h *histogram.Histogram) virtual.Row {
	count := h.Count()
	recent := h.Recent()
	return virtual.Row{"count": virtual.Bigint(int64(count)), "p50th": virtual.Double(float64(recent.Quantile(0.5))),
		"p99th": virtual.Double(float64(recent.Quantile(0.99))), "max": virtual.Double(float64(recent.Max))}
}

// round3 rounds to three decimals, as Cassandra shows its views' doubles.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// recentSeconds is the time the recent windows of the histograms cover:
// the full windows kept and the current one so far, or the time since
// the start when that is less.
func (n *Node) recentSeconds() float64 {
	covered := time.Since(n.started)
	if last := n.lastRotation.Load(); last != 0 {
		covered = min(covered, time.Duration(histogram.Windows-1)*histogramWindow+time.Since(time.Unix(0, last)))
	}
	return max(covered.Seconds(), 1)
}

// clientRows are the clients connected to the native protocol.
func (n *Node) clientRows() ([]virtual.Row, error) {
	srv := n.nativeServer()
	if srv == nil {
		return nil, nil
	}
	var rows []virtual.Row
	for _, c := range srv.Clients() {
		if c.Address == nil {
			continue
		}
		r := virtual.Row{"address": virtual.Inet(c.Address), "port": virtual.Int(c.Port),
			// No reverse lookup: a read of the view never waits on DNS.
			"hostname": virtual.Text(c.Address.String()), "username": virtual.OptionalText(c.Username),
			"connection_stage": virtual.Text(c.Stage), "request_count": virtual.Bigint(c.Requests),
			"ssl_enabled": virtual.Boolean(c.TLS != nil)}
		if c.Options != nil {
			r["protocol_version"] = virtual.Int(c.ProtocolVersion)
			r["client_options"] = schema.TextMap(c.Options)
			if name, ok := c.Options["DRIVER_NAME"]; ok {
				r["driver_name"] = virtual.Text(name)
			}
			if version, ok := c.Options["DRIVER_VERSION"]; ok {
				r["driver_version"] = virtual.Text(version)
			}
		}
		if c.TLS != nil {
			r["ssl_protocol"] = virtual.Text(strings.Replace(tls.VersionName(c.TLS.Version), "TLS ", "TLSv", 1))
			r["ssl_cipher_suite"] = virtual.Text(tls.CipherSuiteName(c.TLS.CipherSuite))
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// sstableTaskRows are the compactions running.
func (n *Node) sstableTaskRows() ([]virtual.Row, error) {
	var rows []virtual.Row
	for _, t := range n.engine.Tasks() {
		ratio := 1.0
		if t.Total > 0 {
			ratio = float64(t.Completed) / float64(t.Total)
		}
		rows = append(rows, virtual.Row{"keyspace_name": virtual.Text(t.Keyspace), "table_name": virtual.Text(t.Table),
			"task_id": taskID(t), "completion_ratio": virtual.Double(ratio), "kind": virtual.Text(t.Kind),
			"progress": virtual.Bigint(t.Completed), "sstables": virtual.Int(t.SSTables), "total": virtual.Bigint(t.Total),
			"unit": virtual.Text("bytes")})
	}
	return rows, nil
}

// taskID is a compaction's time uuid: when it began, and its number as
// the clock sequence and node (the IETF variant bits set).
func taskID(t storage.Task) []byte {
	return cqltype.TimeUUIDAt(t.Started.UnixNano()/100, t.Seq&^(3<<62)|1<<63)
}

// threadPoolRows are the node's stages. Sibyl's stages never block a
// task: it waits in its stage's queue (pending) instead.
func (n *Node) threadPoolRows() ([]virtual.Row, error) {
	var rows []virtual.Row
	for _, p := range n.threadPools() {
		r := virtual.Row{"name": virtual.Text(p.Name), "active_tasks": virtual.Int(int(p.Active)),
			"pending_tasks": virtual.Int(int(p.Pending)), "completed_tasks": virtual.Bigint(p.Completed),
			"blocked_tasks": virtual.Bigint(0), "blocked_tasks_all_time": virtual.Bigint(0)}
		if p.Limit > 0 {
			r["active_tasks_limit"] = virtual.Int(p.Limit)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// cacheRows are the node's caches: the block cache of SSTable data
// (file_cache_size), Cassandra's chunk cache. Sibyl keeps no key or row
// cache.
func (n *Node) cacheRows() ([]virtual.Row, error) {
	c := n.chunkCache()
	ratio := math.NaN()
	if c.Requests > 0 {
		ratio = float64(c.Hits) / float64(c.Requests)
	}
	return []virtual.Row{{"name": virtual.Text("chunks"), "capacity_bytes": virtual.Bigint(c.CapacityBytes),
		"size_bytes": virtual.Bigint(c.SizeBytes), "entry_count": virtual.Int(int(c.Entries)),
		"request_count": virtual.Bigint(c.Requests), "hit_count": virtual.Bigint(c.Hits), "hit_ratio": virtual.Double(ratio),
		"recent_request_rate_per_second": virtual.Bigint(int64(c.recentRequests)),
		"recent_hit_rate_per_second":     virtual.Bigint(int64(c.recentHits))}}, nil
}

// pendingHintRows are the replicas this node keeps hints for.
func (n *Node) pendingHintRows() ([]virtual.Row, error) {
	var rows []virtual.Row
	for _, h := range n.adminPendingHints() {
		id, err := cqltype.UUIDType.FromString(h.HostID)
		if err != nil {
			continue // a replica gossip has not told of: it has no key
		}
		host, port, _ := net.SplitHostPort(h.Address)
		r := virtual.Row{"host_id": id, "dc": virtual.Text(h.DataCenter), "rack": virtual.Text(h.Rack),
			"status": virtual.Text(h.Status), "files": virtual.Int(h.Files),
			"newest": virtual.Timestamp(time.UnixMilli(h.Newest)), "oldest": virtual.Timestamp(time.UnixMilli(h.Oldest))}
		if addr := inetBytes(host); addr != nil {
			r["address"] = addr
		}
		if p, err := strconv.Atoi(port); err == nil {
			r["port"] = virtual.Int(p)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// recentRates keeps running totals sampled once a minute, to tell their
// rates over the last quarter of an hour (Cassandra's caches show
// fifteen-minute rates).
type recentRates struct {
	mu      sync.Mutex
	samples []rateSample // oldest first
}

type rateSample struct {
	at            time.Time
	first, second int64
}

// maxRateSamples is a quarter of an hour of minutes.
const maxRateSamples = 15

// sample records the totals at a time.
func (r *recentRates) sample(at time.Time, first, second int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, rateSample{at, first, second})
	if len(r.samples) > maxRateSamples {
		r.samples = r.samples[len(r.samples)-maxRateSamples:]
	}
}

// rates are the totals' rates a second since the oldest sample.
func (r *recentRates) rates(now time.Time, first, second int64) (float64, float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.samples) == 0 {
		return 0, 0
	}
	old := r.samples[0]
	secs := max(now.Sub(old.at).Seconds(), 1)
	return float64(first-old.first) / secs, float64(second-old.second) / secs
}
