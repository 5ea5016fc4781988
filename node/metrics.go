package node

import (
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/native"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/streaming"
)

// metrics are the node's Prometheus counters, served on the admin API's
// /metrics. Each node has its own registry, so that nodes sharing a
// process (tests) count apart. The coordinator's counters are read from
// its Stats.
type metrics struct {
	registry *prometheus.Registry
	// storageFailures counts the failures the failure policies acted on,
	// by kind.
	storageFailures *prometheus.CounterVec
	// partitionRefusals counts the requests refused while the node was cut
	// off from the metadata voters (partitioned_node_policy refuse).
	partitionRefusals atomic.Int64
	// adminRefusals counts the admin API requests refused by
	// admin_authentication.
	adminRefusals atomic.Int64
}

func newMetrics() *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.storageFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sibyl_storage_failures_total",
		Help: "Storage failures the commit and disk failure policies acted on, by kind (commit log failure, disk failure, corruption)."}, []string{"kind"})
	// Every kind is a series from the start, so that a dashboard's rate
	// of them is 0 rather than no data.
	for _, kind := range []storage.FailureKind{storage.CommitLogFailure, storage.DiskFailure, storage.CorruptionFailure} {
		m.storageFailures.WithLabelValues(kind.String())
	}
	m.registry.MustRegister(m.storageFailures,
		// The scheduler's latencies and the GC's pauses as histograms: what
		// a request's tail waits on besides its own work.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler, collectors.MetricsGC)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watchMetadata adds the metadata log's state: whether the node is cut
// off from a majority of the voters, its epoch, and what it refused.
func (m *metrics) watchMetadata(status func() *metadata.Status) {
	gauge := func(name, help string, v func(*metadata.Status) float64) {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if st := status(); st != nil {
				return v(st)
			}
			return 0
		}))
	}
	gauge("sibyl_metadata_partitioned", "1 while this node cannot reach a majority of the cluster metadata voters (partitioned_node_timeout without a leader).",
		func(st *metadata.Status) float64 {
			if st.Partitioned {
				return 1
			}
			return 0
		})
	gauge("sibyl_metadata_epoch", "The cluster metadata epoch this node has applied.", func(st *metadata.Status) float64 { return float64(st.State.Epoch) })
	gauge("sibyl_metadata_seconds_without_leader", "How long this node has gone without hearing from a metadata leader.",
		func(st *metadata.Status) float64 { return st.SinceContact.Seconds() })
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sibyl_admin_auth_failures_total",
		Help: "Admin API requests refused for want of credentials, or wrong ones (admin_authentication)."},
		func() float64 { return float64(m.adminRefusals.Load()) }))
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sibyl_partitioned_refusals_total",
		Help: "Requests refused with Unavailable while this node was cut off from the metadata voters (partitioned_node_policy: refuse)."},
		func() float64 { return float64(m.partitionRefusals.Load()) }))
}

// counterFunc registers a counter read at each scrape.
func (m *metrics) counterFunc(name, help string, labels prometheus.Labels, read func() float64) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, read))
}

// watchAuth adds the logins and statements refused.
func (m *metrics) watchAuth(a *auth.Service) {
	m.counterFunc("sibyl_auth_failures_total", "Logins refused: an unknown role, a wrong password, or a role that may not log in.", nil,
		func() float64 { return float64(a.Failures.Load()) })
	m.counterFunc("sibyl_auth_unauthorized_total", "Statements refused for a permission their role lacks.", nil,
		func() float64 { return float64(a.Refusals.Load()) })
}

// watchGossip adds the gossip dropped as coming from outside the
// cluster (refused reads it; 0 without gossip).
func (m *metrics) watchGossip(refused func() int64) {
	m.counterFunc("sibyl_gossip_refused_total",
		"Gossip packets and streams dropped for another cluster's name or a key this node does not hold (gossip_encryption_keys).", nil,
		func() float64 { return float64(refused()) })
}

// watchTLS adds a TLS listener's refused handshakes and reloads.
func (m *metrics) watchTLS(listener string, t *tlsconf.Server) {
	labels := prometheus.Labels{"listener": listener}
	m.counterFunc("sibyl_tls_handshake_failures_total",
		"TLS handshakes refused: plaintext on a TLS-only port, an untrusted certificate, a protocol or cipher not allowed.", labels,
		func() float64 { return float64(t.HandshakeFailures.Load()) })
	m.counterFunc("sibyl_tls_reloads_total", "Times the certificate files changed and were read again.", labels,
		func() float64 { return float64(t.Reloads.Load()) })
}

// watchMessaging adds the messages dropped, by verb.
func (m *metrics) watchMessaging(s *messaging.Service) {
	for v := messaging.Verb(0); s.QueueWait(v) != nil; v++ {
		if name := v.String(); !strings.HasPrefix(name, "VERB_") {
			m.counterFunc("sibyl_dropped_messages_total",
				"Requests from other nodes that waited past their coordinator's timeout and were dropped unanswered: Cassandra's DroppedMessage Dropped.",
				prometheus.Labels{"verb": name + "_REQ"}, func() float64 { return float64(s.Dropped(v)) })
		}
	}
}

// watchStreaming adds the data streamed in and out.
func (m *metrics) watchStreaming(s *streaming.Service) {
	m.counterFunc("sibyl_streaming_incoming_bytes_total", "Data streamed in from other nodes: Cassandra's Streaming TotalIncomingBytes.", nil,
		func() float64 { return float64(s.IncomingBytes.Load()) })
	m.counterFunc("sibyl_streaming_outgoing_bytes_total", "Data streamed out to other nodes: Cassandra's Streaming TotalOutgoingBytes.", nil,
		func() float64 { return float64(s.OutgoingBytes.Load()) })
}

// watchEngine adds the engine's own counters.
func (m *metrics) watchEngine(e *storage.Engine) {
	m.counterFunc("sibyl_compaction_bytes_compacted_total", "Data compactions wrote: Cassandra's Compaction BytesCompacted.", nil,
		func() float64 { _, b := e.Compacted(); return float64(b) })
	m.counterFunc("sibyl_compaction_completed_total", "Compactions finished: Cassandra's Compaction CompletedTasks.", nil,
		func() float64 { c, _ := e.Compacted(); return float64(c) })
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sibyl_compaction_pending_tasks",
		Help: "Compactions the tables call for: Cassandra's Compaction PendingTasks."},
		func() float64 { return float64(e.PendingCompactions()) }))
	m.counterFunc("sibyl_commitlog_segment_allocation_failures_total",
		"Times the commit log could not make a new segment (a full disk, most often); writes resume once it can.", nil,
		func() float64 { return float64(e.CommitLogAllocationFailures()) })
}

// watchCoordinator adds the coordinator's counters.
func (m *metrics) watchCoordinator(s *coordinator.Stats) {
	counter := func(name, help string, labels prometheus.Labels, v *atomic.Int64) {
		m.counterFunc(name, help, labels, func() float64 { return float64(v.Load()) })
	}
	const (
		coordinated = "Requests this node coordinated, by kind (write, read, range)."
		forwarded   = "Requests this node sent to other replicas while coordinating, by verb."
		failed      = "Requests refused, timed out or failed, by error (unavailable, write_timeout, read_timeout, write_failure, read_failure) and consistency level."
	)
	for kind, v := range map[string]*atomic.Int64{"write": &s.Writes, "read": &s.Reads, "range": &s.Ranges} {
		counter("sibyl_coordinator_requests_total", coordinated, prometheus.Labels{"kind": kind}, v)
	}
	for verb, v := range map[messaging.Verb]*atomic.Int64{messaging.VerbMutation: &s.ForwardedMutations,
		messaging.VerbRead: &s.ForwardedReads, messaging.VerbRangeRead: &s.ForwardedRanges, messaging.VerbCounterMutation: &s.ForwardedCounterWrites} {
		counter("sibyl_coordinator_replica_requests_total", forwarded, prometheus.Labels{"verb": verb.String()}, v)
	}
	for l := range s.FailuresByLevel {
		for kind, name := range coordinator.FailureNames {
			counter("sibyl_coordinator_failures_total", failed, prometheus.Labels{"error": name, "consistency": request.Consistency(l).String()},
				&s.FailuresByLevel[l][kind])
		}
	}
	counter("sibyl_read_repairs_total", "Read repairs sent: replicas a read found behind the others.", nil, &s.ReadRepairs)
	counter("sibyl_read_digest_mismatches_total", "Reads whose replicas' digests differed, so that every contacted replica's data was read.", nil, &s.DigestMismatches)
	counter("sibyl_hints_stored_total", "Writes kept as hints for replicas that were down or failed them.", nil, &s.HintsStored)
	counter("sibyl_hints_delivered_total", "Hints handed to their replicas once they were up.", nil, &s.HintsDelivered)
	for reason, v := range map[string]*atomic.Int64{"past_window": &s.HintsPastWindow, "over_size": &s.HintsOverSize, "expired": &s.HintsExpired} {
		counter("sibyl_hints_dropped_total", "Missed writes not kept as hints, or hints dropped, by reason: past_window (the replica down past max_hint_window), "+
			"over_size (its hints at max_hints_size_per_host), expired (older than the table's gc_grace_seconds).", prometheus.Labels{"reason": reason}, v)
	}
}

// watchHints adds the space the hints kept take.
func (m *metrics) watchHints(h *hints.Store) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sibyl_hints_pending_bytes",
		Help: "The space the hints waiting for their replicas take on disk."}, func() float64 { return float64(h.Bytes()) }))
}

// watchTracing adds the trace records a busy node dropped.
func (m *metrics) watchTracing(dropped *atomic.Int64) {
	m.counterFunc("sibyl_trace_records_dropped_total",
		"Trace records (sessions and events of traced requests) not written to system_traces: the node had too many waiting.", nil,
		func() float64 { return float64(dropped.Load()) })
}

// watchSlowQueries adds the requests that took longer than
// slow_query_log_timeout (counted by the native server running).
func (m *metrics) watchSlowQueries(count func() int64) {
	m.counterFunc("sibyl_slow_queries_total",
		"Client requests that took longer than slow_query_log_timeout, and were logged, since the CQL server last started.", nil,
		func() float64 { return float64(count()) })
}

// watchOverloads adds what the native server's admission did with the
// requests past its bounds (nil while no server runs).
func (m *metrics) watchOverloads(counts func() *native.OverloadCounts) {
	read := func(pick func(*native.OverloadCounts) *atomic.Int64) func() float64 {
		return func() float64 {
			if c := counts(); c != nil {
				return float64(pick(c).Load())
			}
			return 0
		}
	}
	m.counterFunc("sibyl_native_requests_refused_total",
		"Client requests answered Overloaded (their connection asked for THROW_ON_OVERLOAD) since the CQL server last started.", prometheus.Labels{"reason": "bytes_in_flight"},
		read(func(c *native.OverloadCounts) *atomic.Int64 { return &c.RefusedBytes }))
	m.counterFunc("sibyl_native_requests_refused_total",
		"Client requests answered Overloaded (their connection asked for THROW_ON_OVERLOAD) since the CQL server last started.", prometheus.Labels{"reason": "requests_per_second"},
		read(func(c *native.OverloadCounts) *atomic.Int64 { return &c.RefusedRate }))
	m.counterFunc("sibyl_native_connections_paused_total",
		"Times a client connection stopped being read after a request past the bounds on request data in flight or requests per second.", nil,
		read(func(c *native.OverloadCounts) *atomic.Int64 { return &c.Paused }))
}

// handler serves the counters in Prometheus's text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
