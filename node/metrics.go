package node

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/storage"
)

// metrics are the node's Prometheus counters, served on the admin API's
// /metrics. Each node has its own registry, so that nodes sharing a
// process (tests) count apart.
type metrics struct {
	registry *prometheus.Registry
	// coordinated counts the requests this node coordinated, by kind:
	// write, read, range.
	coordinated *prometheus.CounterVec
	// forwarded counts the requests it sent to other replicas, by verb.
	// A token-aware client that reaches a replica of an RF 1 keyspace
	// makes none.
	forwarded *prometheus.CounterVec
	// failed counts the requests it refused or that timed out, by error:
	// unavailable, write_timeout, read_timeout.
	failed *prometheus.CounterVec
	// repaired counts the read repairs sent: one per replica a read found
	// behind.
	repaired prometheus.Counter
	// digestMismatches counts the reads whose replicas' digests differed
	// from the data's, which then read everyone's data.
	digestMismatches prometheus.Counter
	// hintsStored and hintsDelivered count the writes kept for replicas
	// that were down, and those handed to them since.
	hintsStored, hintsDelivered prometheus.Counter
	// storageFailures counts the failures the failure policies acted on,
	// by kind.
	storageFailures *prometheus.CounterVec

	// The children of coordinated and forwarded every request counts,
	// looked up once rather than by label on each request.
	writes, reads, ranges                               prometheus.Counter
	forwardedMutations, forwardedReads, forwardedRanges prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		coordinated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sibyl_coordinator_requests_total",
			Help: "Requests this node coordinated, by kind (write, read, range)."}, []string{"kind"}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sibyl_coordinator_replica_requests_total",
			Help: "Requests this node sent to other replicas while coordinating, by verb."}, []string{"verb"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sibyl_coordinator_failures_total",
			Help: "Requests refused or timed out, by error (unavailable, write_timeout, read_timeout)."}, []string{"error"}),
		repaired: prometheus.NewCounter(prometheus.CounterOpts{Name: "sibyl_read_repairs_total",
			Help: "Read repairs sent: replicas a read found behind the others."}),
	}
	m.digestMismatches = prometheus.NewCounter(prometheus.CounterOpts{Name: "sibyl_read_digest_mismatches_total",
		Help: "Reads whose replicas' digests differed, so that every contacted replica's data was read."})
	m.hintsStored = prometheus.NewCounter(prometheus.CounterOpts{Name: "sibyl_hints_stored_total",
		Help: "Writes kept as hints for replicas that were down or failed them."})
	m.hintsDelivered = prometheus.NewCounter(prometheus.CounterOpts{Name: "sibyl_hints_delivered_total",
		Help: "Hints handed to their replicas once they were up."})
	m.storageFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sibyl_storage_failures_total",
		Help: "Storage failures the commit and disk failure policies acted on, by kind (commit log failure, disk failure, corruption)."}, []string{"kind"})
	m.writes, m.reads, m.ranges = m.coordinated.WithLabelValues("write"), m.coordinated.WithLabelValues("read"), m.coordinated.WithLabelValues("range")
	m.forwardedMutations = m.forwarded.WithLabelValues(messaging.VerbMutation.String())
	m.forwardedReads = m.forwarded.WithLabelValues(messaging.VerbRead.String())
	m.forwardedRanges = m.forwarded.WithLabelValues(messaging.VerbRangeRead.String())
	m.registry.MustRegister(m.coordinated, m.forwarded, m.failed, m.repaired, m.digestMismatches, m.hintsStored, m.hintsDelivered, m.storageFailures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watchEngine adds the engine's own counters.
func (m *metrics) watchEngine(e *storage.Engine) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sibyl_commitlog_segment_allocation_failures_total",
		Help: "Times the commit log could not make a new segment (a full disk, most often); writes resume once it can."},
		func() float64 { return float64(e.CommitLogAllocationFailures()) }))
}

// handler serves the counters in Prometheus's text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// countFailure counts a coordinator failure (an *exec.Error of a replica
// kind) and passes it on.
func (m *metrics) countFailure(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		switch e.Code {
		case exec.Unavailable:
			m.failed.WithLabelValues("unavailable").Inc()
		case exec.WriteTimeout:
			m.failed.WithLabelValues("write_timeout").Inc()
		case exec.ReadTimeout:
			m.failed.WithLabelValues("read_timeout").Inc()
		}
	}
	return err
}
