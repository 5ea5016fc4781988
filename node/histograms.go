package node

import (
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/internal/workers"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// histogramWindow is how long each window of the recent percentiles
// lasts (histogram.Windows of them are kept).
const histogramWindow = time.Minute

// rotateHistograms starts a new window of every recent distribution each
// minute, until the node stops.
func (n *Node) rotateHistograms() {
	t := time.NewTicker(histogramWindow)
	defer t.Stop()
	for {
		select {
		case <-n.stopped:
			return
		case now := <-t.C:
			for _, h := range n.coord.Stats.Latency.All() {
				h.Rotate()
			}
			for _, l := range n.coord.Stats.TableLatencies() {
				for _, h := range l.All() {
					h.Rotate()
				}
			}
			n.lastRotation.Store(now.UnixNano())
			c := n.engine.CacheStats()
			n.cacheRates.sample(now, c.Hits+c.Misses, c.Hits)
			for _, st := range n.engine.Tables() {
				st.Metrics().Rotate()
			}
			if m := n.messaging; m != nil {
				for v := messaging.Verb(0); m.QueueWait(v) != nil; v++ {
					m.QueueWait(v).Rotate()
				}
			}
		}
	}
}

// Percentiles are a distribution's recent figures as nodetool's histograms
// show them: the 50th, 75th, 95th, 98th and 99th percentiles, the least
// and the most, and how many values there were. Percentiles of nothing
// are 0.
type Percentiles struct {
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P95   float64 `json:"p95"`
	P98   float64 `json:"p98"`
	P99   float64 `json:"p99"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Count int64   `json:"count"`
}

func recentPercentiles(h *histogram.Histogram) Percentiles {
	s := h.Recent()
	return Percentiles{P50: float64(s.Quantile(0.5)), P75: float64(s.Quantile(0.75)), P95: float64(s.Quantile(0.95)),
		P98: float64(s.Quantile(0.98)), P99: float64(s.Quantile(0.99)), Min: float64(s.Min), Max: float64(s.Max), Count: s.Count}
}

// estimatedPercentiles are the figures of an SSTable histogram; NaN (in
// JSON, null) for none.
func estimatedPercentiles(h histogram.Estimated) EstimatedPercentiles {
	return EstimatedPercentiles{P50: nanNull(h.Percentile(0.5)), P75: nanNull(h.Percentile(0.75)), P95: nanNull(h.Percentile(0.95)),
		P98: nanNull(h.Percentile(0.98)), P99: nanNull(h.Percentile(0.99)), Min: nanNull(h.Min()), Max: nanNull(h.Max())}
}

// EstimatedPercentiles are Percentiles of an SSTable histogram, nil where
// there is no figure (no SSTable, or a value past the last bucket).
type EstimatedPercentiles struct {
	P50 *float64 `json:"p50"`
	P75 *float64 `json:"p75"`
	P95 *float64 `json:"p95"`
	P98 *float64 `json:"p98"`
	P99 *float64 `json:"p99"`
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
}

func nanNull(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// AdminProxyHistograms are the coordinator's latencies (microseconds),
// nodetool proxyhistograms' columns.
type AdminProxyHistograms struct {
	Read      Percentiles `json:"read"`
	Write     Percentiles `json:"write"`
	Range     Percentiles `json:"range"`
	CASRead   Percentiles `json:"cas_read"`
	CASWrite  Percentiles `json:"cas_write"`
	ViewWrite Percentiles `json:"view_write"`
}

func (n *Node) adminProxyHistograms(*http.Request) (any, error) {
	l := n.coord.Stats.Latency
	return AdminProxyHistograms{Read: recentPercentiles(l.Read), Write: recentPercentiles(l.Write), Range: recentPercentiles(l.Range),
		CASRead: recentPercentiles(l.CASRead), CASWrite: recentPercentiles(l.CASWrite)}, nil
}

// AdminTableHistograms are one table's figures, nodetool tablehistograms'
// columns: local latencies (microseconds) and SSTables per read, recent;
// partition sizes (bytes) and cell counts, of the live SSTables.
type AdminTableHistograms struct {
	Keyspace       string               `json:"keyspace"`
	Table          string               `json:"table"`
	ReadLatency    Percentiles          `json:"read_latency"`
	WriteLatency   Percentiles          `json:"write_latency"`
	SSTables       Percentiles          `json:"sstables_per_read"`
	SSTableCount   int                  `json:"sstables"`
	PartitionSize  EstimatedPercentiles `json:"partition_size"`
	CellCount      EstimatedPercentiles `json:"cell_count"`
	SizesOverflown bool                 `json:"partition_size_overflow,omitempty"`
	CellsOverflown bool                 `json:"cell_count_overflow,omitempty"`
}

func (n *Node) adminTableHistograms(r *http.Request) (any, error) {
	var out []AdminTableHistograms
	err := n.eachTable(r, func(t *schema.Table, st *storage.Table) error {
		m := st.Metrics()
		sizes, cells, sstables := st.SSTableHistograms()
		out = append(out, AdminTableHistograms{Keyspace: t.Keyspace, Table: t.Name, ReadLatency: recentPercentiles(m.ReadLatency),
			WriteLatency: recentPercentiles(m.WriteLatency), SSTables: recentPercentiles(m.SSTablesPerRead), SSTableCount: sstables,
			PartitionSize: estimatedPercentiles(sizes), CellCount: estimatedPercentiles(cells),
			SizesOverflown: sizes.Overflowed(), CellsOverflown: cells.Overflowed()})
		return nil
	})
	return out, err
}

// Prometheus buckets' upper bounds: latencies from 50µs to 10s (in
// seconds), counts per read from 0 to a million.
var (
	latencyBounds = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	countBounds   = []float64{0, 1, 2, 3, 4, 5, 8, 10, 20, 50, 100, 1000, 10000, 100000, 1000000}
	// The same in the recorded units: latencies in microseconds.
	recordedLatencyBounds, recordedCountBounds = recordedBounds(latencyBounds, 1e6), recordedBounds(countBounds, 1)
)

func recordedBounds(bounds []float64, unit float64) []int64 {
	out := make([]int64, len(bounds))
	for i, b := range bounds {
		out[i] = int64(math.Round(b * unit))
	}
	return out
}

// scrapeCollector exposes what is read at each scrape: the distributions
// as Prometheus histograms (everything recorded since the node started),
// and each table's figures. A table's series appear once it has a value
// or data.
type scrapeCollector struct{ n *Node }

// Describe describes nothing: the tables, and so the series, come and go
// (an unchecked collector).
func (scrapeCollector) Describe(chan<- *prometheus.Desc) {}

var (
	clientRequestLatency = prometheus.NewDesc("sibyl_client_request_latency_seconds",
		"Time to answer the requests this node coordinated, by request (Read, Write, RangeSlice, CASRead, CASWrite): Cassandra's ClientRequest Latency.",
		[]string{"request"}, nil)
	tableLabels  = []string{"keyspace", "table"}
	tableMetrics = []struct {
		desc    *prometheus.Desc
		latency bool
		of      func(*storage.TableMetrics) *histogram.Histogram
	}{
		{prometheus.NewDesc("sibyl_table_read_latency_seconds", "Time of this node's partition reads of a table: Cassandra's Table ReadLatency.", tableLabels, nil),
			true, func(m *storage.TableMetrics) *histogram.Histogram { return m.ReadLatency }},
		{prometheus.NewDesc("sibyl_table_write_latency_seconds", "Time of this node's writes to a table: Cassandra's Table WriteLatency.", tableLabels, nil),
			true, func(m *storage.TableMetrics) *histogram.Histogram { return m.WriteLatency }},
		{prometheus.NewDesc("sibyl_table_range_latency_seconds", "Time of this node's range reads of a table: Cassandra's Table RangeLatency.", tableLabels, nil),
			true, func(m *storage.TableMetrics) *histogram.Histogram { return m.RangeLatency }},
		{prometheus.NewDesc("sibyl_table_sstables_per_read", "SSTables a partition read merged: Cassandra's Table SSTablesPerReadHistogram.", tableLabels, nil),
			false, func(m *storage.TableMetrics) *histogram.Histogram { return m.SSTablesPerRead }},
		{prometheus.NewDesc("sibyl_table_tombstones_per_read", "Tombstones a partition read went through, as tombstone_warn_threshold counts them: Cassandra's Table TombstoneScannedHistogram.", tableLabels, nil),
			false, func(m *storage.TableMetrics) *histogram.Histogram { return m.TombstonesPerRead }},
		{prometheus.NewDesc("sibyl_table_live_rows_per_read", "Live rows a partition read returned: Cassandra's Table LiveScannedHistogram.", tableLabels, nil),
			false, func(m *storage.TableMetrics) *histogram.Histogram { return m.LivePerRead }},
	}
)

// Tables' latencies as their coordinator saw them: Cassandra's Table
// CoordinatorReadLatency, CoordinatorWriteLatency, CoordinatorScanLatency.
var tableCoordinatorMetrics = []struct {
	desc *prometheus.Desc
	of   func(*coordinator.TableLatencies) *histogram.Histogram
}{
	{prometheus.NewDesc("sibyl_table_coordinator_read_latency_seconds", "Time to answer the partition reads of a table this node coordinated: Cassandra's Table CoordinatorReadLatency.", tableLabels, nil),
		func(l *coordinator.TableLatencies) *histogram.Histogram { return l.Read }},
	{prometheus.NewDesc("sibyl_table_coordinator_write_latency_seconds", "Time to answer the writes of a table this node coordinated: Cassandra's Table CoordinatorWriteLatency.", tableLabels, nil),
		func(l *coordinator.TableLatencies) *histogram.Histogram { return l.Write }},
	{prometheus.NewDesc("sibyl_table_coordinator_scan_latency_seconds", "Time to answer the range reads of a table this node coordinated: Cassandra's Table CoordinatorScanLatency.", tableLabels, nil),
		func(l *coordinator.TableLatencies) *histogram.Histogram { return l.Range }},
}

// Tables' reads past the tombstone thresholds, as counters: Cassandra's
// Table TombstoneWarnings and TombstoneFailures.
var tableTombstoneCounters = []struct {
	desc *prometheus.Desc
	of   func(*storage.TableMetrics) int64
}{
	{prometheus.NewDesc("sibyl_table_tombstone_warnings_total", "Reads of a table on this node past tombstone_warn_threshold: Cassandra's Table TombstoneWarnings.", tableLabels, nil),
		func(m *storage.TableMetrics) int64 { return m.TombstoneWarnings.Load() }},
	{prometheus.NewDesc("sibyl_table_tombstone_failures_total", "Reads of a table on this node given up past tombstone_failure_threshold: Cassandra's Table TombstoneFailures.", tableLabels, nil),
		func(m *storage.TableMetrics) int64 { return m.TombstoneFailures.Load() }},
}

// speculativeRetries counts a table's reads this node coordinated that
// asked one more replica past the speculative_retry threshold: Cassandra's
// Table SpeculativeRetries.
var speculativeRetries = prometheus.NewDesc("sibyl_table_speculative_retries_total",
	"Reads of a table this node coordinated that asked one more replica past speculative_retry: Cassandra's Table SpeculativeRetries.", tableLabels, nil)

// The SSTables' estimated histograms of a table: Cassandra's Table
// EstimatedPartitionSizeHistogram and EstimatedColumnCountHistogram.
var (
	partitionSizes = prometheus.NewDesc("sibyl_table_partition_size_bytes",
		"Sizes of a table's partitions in its SSTables on this node: Cassandra's Table EstimatedPartitionSizeHistogram.", tableLabels, nil)
	cellCounts = prometheus.NewDesc("sibyl_table_cell_count",
		"Cells of a table's partitions in its SSTables on this node: Cassandra's Table EstimatedColumnCountHistogram.", tableLabels, nil)
	partitionSizeBounds = []int64{100, 1 << 10, 10 << 10, 100 << 10, 1 << 20, 10 << 20, 100 << 20, 1 << 30, 10 << 30}
	cellCountBounds     = []int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000}
)

// Tables' figures, as gauges: Cassandra's Table LiveSSTableCount,
// LiveDiskSpaceUsed, MemtableLiveDataSize and PendingCompactions.
var tableGauges = []struct {
	desc *prometheus.Desc
	of   func(storage.TableStats, *storage.Table) float64
}{
	{prometheus.NewDesc("sibyl_table_live_sstables", "SSTables of a table on this node: Cassandra's Table LiveSSTableCount.", tableLabels, nil),
		func(s storage.TableStats, _ *storage.Table) float64 { return float64(s.SSTables) }},
	{prometheus.NewDesc("sibyl_table_live_disk_space_used_bytes", "The bytes of a table's live SSTables: Cassandra's Table LiveDiskSpaceUsed.", tableLabels, nil),
		func(s storage.TableStats, _ *storage.Table) float64 { return float64(s.LiveBytes) }},
	{prometheus.NewDesc("sibyl_table_memtable_bytes", "The memory a table's memtables hold: Cassandra's Table MemtableLiveDataSize.", tableLabels, nil),
		func(s storage.TableStats, _ *storage.Table) float64 { return float64(s.MemtableBytes) }},
	{prometheus.NewDesc("sibyl_table_pending_compactions", "Compactions a table's SSTables call for: Cassandra's Table PendingCompactions.", tableLabels, nil),
		func(_ storage.TableStats, t *storage.Table) float64 { return float64(t.PendingCompactions()) }},
}

func (c scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.n.coord.Stats.Latency
	for _, r := range []struct {
		name string
		h    *histogram.Histogram
	}{{"Read", l.Read}, {"Write", l.Write}, {"RangeSlice", l.Range}, {"CASRead", l.CASRead}, {"CASWrite", l.CASWrite}} {
		if m := constHistogram(clientRequestLatency, r.h, true, r.name); m != nil {
			ch <- m
		}
	}
	sch := c.n.Schema()
	for _, st := range c.n.engine.Tables() {
		t := sch.TableByID(st.ID())
		if t == nil {
			continue
		}
		for _, tm := range tableMetrics {
			if m := constHistogram(tm.desc, tm.of(st.Metrics()), tm.latency, t.Keyspace, t.Name); m != nil {
				ch <- m
			}
		}
		for _, tc := range tableTombstoneCounters {
			if v := tc.of(st.Metrics()); v > 0 {
				ch <- prometheus.MustNewConstMetric(tc.desc, prometheus.CounterValue, float64(v), t.Keyspace, t.Name)
			}
		}
		coordinated := c.n.coord.Stats.TableLatency(st.ID())
		for _, tm := range tableCoordinatorMetrics {
			if m := constHistogram(tm.desc, tm.of(coordinated), true, t.Keyspace, t.Name); m != nil {
				ch <- m
			}
		}
		if v := coordinated.SpeculativeRetries.Load(); v > 0 {
			ch <- prometheus.MustNewConstMetric(speculativeRetries, prometheus.CounterValue, float64(v), t.Keyspace, t.Name)
		}
		stats := st.Stats()
		if stats.SSTables == 0 && stats.MemtableBytes == 0 {
			continue
		}
		for _, g := range tableGauges {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.of(stats, st), t.Keyspace, t.Name)
		}
		if stats.SSTables > 0 {
			sizes, cells, _ := st.SSTableHistograms()
			ch <- estimatedHistogram(partitionSizes, sizes, partitionSizeBounds, t.Keyspace, t.Name)
			ch <- estimatedHistogram(cellCounts, cells, cellCountBounds, t.Keyspace, t.Name)
		}
	}
}

// estimatedHistogram is an SSTable histogram as a Prometheus histogram.
func estimatedHistogram(desc *prometheus.Desc, h histogram.Estimated, bounds []int64, labels ...string) prometheus.Metric {
	count, sum, atMost := h.Cumulative(bounds)
	buckets := make(map[float64]uint64, len(bounds))
	for i, b := range bounds {
		buckets[float64(b)] = atMost[i]
	}
	return prometheus.MustNewConstHistogram(desc, count, float64(sum), buckets, labels...)
}

// constHistogram is h as a Prometheus histogram (latencies, recorded in
// microseconds, in seconds), or nil when it holds nothing.
func constHistogram(desc *prometheus.Desc, h *histogram.Histogram, latency bool, labels ...string) prometheus.Metric {
	if h.Count() == 0 {
		return nil
	}
	bounds, recorded, unit := countBounds, recordedCountBounds, 1.0
	if latency {
		bounds, recorded, unit = latencyBounds, recordedLatencyBounds, 1e6
	}
	count, sum, atMost := h.Cumulative(recorded)
	if count == 0 {
		return nil
	}
	buckets := make(map[float64]uint64, len(bounds))
	for i, b := range bounds {
		buckets[b] = atMost[i]
	}
	return prometheus.MustNewConstHistogram(desc, count, float64(sum)/unit, buckets, labels...)
}

// AdminPool is one of nodetool tpstats' pools: Cassandra's thread pool
// figures for a stage of the node's work (goroutines block on nothing, so
// nothing is ever blocked).
type AdminPool struct {
	Name string `json:"name"`
	workers.StageCounts
}

// threadPool is one of the node's stages as Cassandra's thread pools
// show it, with how many of its tasks may run at once (0: no bound, a
// goroutine each).
type threadPool struct {
	AdminPool
	Limit int
}

// threadPools are the node's stages: the requests other nodes sent this
// replica, the answers its coordinator took, the engine's background
// work and the native protocol's requests.
func (n *Node) threadPools() []threadPool {
	st := &n.coord.Stats
	flushes, compactions := n.engine.Stages()
	flushLimit, compactionLimit := n.engine.StageLimits()
	var native workers.StageCounts
	if s := n.nativeServer(); s != nil {
		native = s.Stage()
	}
	return []threadPool{{AdminPool{"MutationStage", st.Mutation.Counts()}, 0}, {AdminPool{"ReadStage", st.Read.Counts()}, 0},
		{AdminPool{"RequestResponseStage", st.RequestResponse.Counts()}, 0}, {AdminPool{"CompactionExecutor", compactions}, compactionLimit},
		{AdminPool{"MemtableFlushWriter", flushes}, flushLimit}, {AdminPool{"Native-Transport-Requests", native}, 0}}
}

// AdminMessageWait is how long the messages of one verb from other nodes
// waited for their handler (microseconds), tpstats' second table; Sibyl
// answers every message it takes, so none is dropped.
type AdminMessageWait struct {
	Verb    string  `json:"verb"`
	Dropped int64   `json:"dropped"`
	P50     float64 `json:"p50"`
	P95     float64 `json:"p95"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// AdminTPStats is nodetool tpstats'.
type AdminTPStats struct {
	Pools    []AdminPool        `json:"pools"`
	Messages []AdminMessageWait `json:"messages"`
}

func (n *Node) adminTPStats(*http.Request) (any, error) {
	out := AdminTPStats{Messages: []AdminMessageWait{}}
	for _, p := range n.threadPools() {
		out.Pools = append(out.Pools, p.AdminPool)
	}
	if m := n.messaging; m != nil {
		for v := messaging.Verb(0); m.QueueWait(v) != nil; v++ {
			s := m.QueueWait(v).Recent()
			if name := v.String(); !strings.HasPrefix(name, "VERB_") {
				out.Messages = append(out.Messages, AdminMessageWait{Verb: name + "_REQ", Dropped: m.Dropped(v), P50: float64(s.Quantile(0.5)),
					P95: float64(s.Quantile(0.95)), P99: float64(s.Quantile(0.99)), Max: float64(s.Max)})
			}
		}
	}
	return out, nil
}
