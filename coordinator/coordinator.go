package coordinator

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/internal/workers"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// Engine is this node's storage, as coordination uses it: the writes and
// reads this node answers as a replica.
type Engine interface {
	Partitioner() partitioner.Partitioner
	// Apply makes mutations durable and visible here.
	Apply(ms []*mutation.Mutation) error
	// Read reads a slice of a partition of a table here: live data.
	Read(table mutation.TableID, key []byte, s request.Slice) (*request.Partition, error)
	// ReadEntries is Read's raw form: the entries the read visited,
	// deletions and all, for reconciling with other replicas' answers.
	ReadEntries(table mutation.TableID, key []byte, s request.Slice) ([]mutation.Entry, error)
	// Scan reads a table's partitions here, in token order: live data.
	Scan(table mutation.TableID, r request.RangeRead) ([]*request.Partition, error)
	// ScanEntries is Scan's raw form.
	ScanEntries(table mutation.TableID, r request.RangeRead) ([]request.RawPartition, error)
	// Resolve turns a partition's reconciled entries into the live data a
	// read with slice s returns.
	Resolve(key []byte, entries []mutation.Entry, s request.Slice) (*request.Partition, error)
	// Truncate removes every row of a table here.
	Truncate(table mutation.TableID) error
}

// Network sends requests to other nodes and waits for their answers: an
// error for a node that cannot be reached or failed the request, and
// messaging.ErrTimeout for one that did not answer before ctx ended.
type Network interface {
	Request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error)
}

// Timeouts bound how long a request waits for its replicas
// (cassandra.yaml's write_request_timeout, read_request_timeout,
// range_request_timeout, truncate_request_timeout,
// cas_contention_timeout: how long a lightweight transaction's Paxos
// rounds may take before its commit, and counter_write_request_timeout).
type Timeouts struct {
	Write, Read, Range, Truncate, CAS time.Duration
	// Counter is counter_write_request_timeout: how long a counter write
	// waits for its leader.
	Counter time.Duration
}

// DefaultTimeouts are Cassandra's defaults.
var DefaultTimeouts = Timeouts{Write: 2 * time.Second, Read: 5 * time.Second, Range: 10 * time.Second, Truncate: 60 * time.Second,
	CAS: time.Second, Counter: 5 * time.Second}

// Config is what a Coordinator is built from.
type Config struct {
	// Self is this node; DataCenter, its data centre.
	Self       ring.Endpoint
	DataCenter string
	Engine     Engine
	// Network reaches the other nodes; nil for a node alone, which is the
	// only replica of everything.
	Network Network
	// Alive is the failure detector's view of a node; nil: only Self is.
	Alive func(ring.Endpoint) bool
	// Ring is the token ring as this node knows it now.
	Ring func() *ring.Metadata
	// CatchUp waits, until ctx ends, for this node's ring to reach a
	// metadata epoch (a replica knew a later ring than this node routed
	// by, or a coordinator one later than this replica's); nil when the
	// ring comes from no metadata log.
	CatchUp func(ctx context.Context, epoch uint64) error
	// Schema is the current schema.
	Schema   func() *schema.Schema
	Timeouts Timeouts
	// Hints keeps the writes for replicas that missed them; nil keeps
	// none. HintedHandoff bounds them.
	Hints         *hints.Store
	HintedHandoff HintedHandoff
	// Downtime is how long the failure detector has seen a node down (0
	// for one up, or never seen); nil: unknown.
	Downtime func(ring.Endpoint) time.Duration
	// StoragePort is the internode port that failures show replicas'
	// addresses with.
	StoragePort int
	Logger      zerolog.Logger
	// Now is the clock replicas' answer times are measured on (the dynamic
	// snitch's scores), and Paxos ballots' times; default time.Now.
	Now func() time.Time
	// After is the timer a read waits on before it speculates; default
	// time.After.
	After func(time.Duration) <-chan time.Time
	// Rand is the randomness of Paxos ballots and of the back-off of
	// rounds that lost to another; default math/rand/v2's.
	Rand func() uint64
	// Tracer makes this node's part of the traced requests other
	// coordinators send it; nil: it records none.
	Tracer *tracing.Tracer
	// Contended, when set, hears of each Paxos round of a partition that
	// lost to another and tries again (nodetool toppartitions samples
	// them).
	Contended func(table mutation.TableID, key []byte)
	// CounterID names this node's shards of the counters it leads writes
	// of: its host id, kept for its life (a node that replaces another
	// has its own); the zero id while it has none, when it leads none.
	CounterID func() mutation.CounterID
}

// Stats count what the coordinator did, for the node's metrics.
type Stats struct {
	// Coordinated requests, by kind.
	Writes, Reads, Ranges atomic.Int64
	// Requests sent to other replicas, by verb (counter writes: to their
	// leader).
	ForwardedMutations, ForwardedReads, ForwardedRanges, ForwardedCounterWrites atomic.Int64
	// Requests that failed, by the failure a client got.
	Unavailables, WriteTimeouts, ReadTimeouts, WriteFailures, ReadFailures atomic.Int64
	// FailuresByLevel are the same by the request's consistency level (as
	// Cassandra's ClientRequest metrics of each level), indexed by level
	// and then Failure.
	FailuresByLevel [request.LocalOne + 1][FailureKinds]atomic.Int64
	// ReadRepairs counts the repairs sent (one per replica a read found
	// behind); DigestMismatches, the reads whose digests differed.
	ReadRepairs, DigestMismatches atomic.Int64
	// HintsStored and HintsDelivered count the writes kept for replicas
	// that could not take them, and those handed over since.
	HintsStored, HintsDelivered atomic.Int64
	// Hints not kept or dropped: for a replica down past max_hint_window,
	// past max_hints_size_per_host, or older than their table's
	// gc_grace_seconds.
	HintsPastWindow, HintsOverSize, HintsExpired atomic.Int64
	// Lightweight transactions: conditional writes and serial reads
	// coordinated, writes whose conditions did not hold, rounds beaten by
	// another and tried again, and rounds that first finished one an
	// earlier round left.
	CASWrites, CASReads, CASConditionNotMet, CASContentions, CASUnfinished atomic.Int64
	// Logged batches written through the batchlog, and batches this
	// node's batchlog replayed.
	LoggedBatches, BatchesReplayed atomic.Int64
	// Writes of counter tables coordinated.
	CounterWrites atomic.Int64
	// Latency are the times of the requests coordinated, answered or
	// failed.
	Latency Latencies
	// byTable holds each table's TableLatencies, by mutation.TableID.
	byTable sync.Map
	// Stages count the requests other nodes sent this replica, by the
	// stage Cassandra runs them on, and the answers this coordinator
	// took from its replicas (RequestResponse).
	Read, Mutation, RequestResponse workers.Stage
}

// The kinds of failure FailuresByLevel counts.
const (
	Unavailable = iota
	WriteTimeout
	ReadTimeout
	WriteFailure
	ReadFailure
	FailureKinds
)

// FailureNames are the kinds of failure as the node's metrics label them.
var FailureNames = [FailureKinds]string{"unavailable", "write_timeout", "read_timeout", "write_failure", "read_failure"}

// Latencies are the times of the requests a coordinator ran, in
// microseconds, by kind: Cassandra's ClientRequest latencies (Read, Write,
// RangeSlice, CASRead, CASWrite). Writes count plain, logged and counter
// writes alike.
type Latencies struct {
	Read, Write, Range, CASRead, CASWrite *histogram.Histogram
}

// maxLatency bounds the latencies kept: longer ones are recorded as it.
const maxLatency = int64(time.Hour / time.Microsecond)

func newLatencies() Latencies {
	return Latencies{Read: histogram.New(maxLatency), Write: histogram.New(maxLatency), Range: histogram.New(maxLatency),
		CASRead: histogram.New(maxLatency), CASWrite: histogram.New(maxLatency)}
}

// All are the latencies, for rotating their windows.
func (l Latencies) All() []*histogram.Histogram {
	return []*histogram.Histogram{l.Read, l.Write, l.Range, l.CASRead, l.CASWrite}
}

// TableLatencies are one table's coordinator latencies, in microseconds:
// Cassandra's per-table CoordinatorReadLatency, CoordinatorWriteLatency
// and CoordinatorScanLatency.
type TableLatencies struct {
	Read, Write, Range *histogram.Histogram
	// SpeculativeRetries counts the reads that asked one more replica
	// after waiting past the table's speculative_retry threshold, and
	// speculation holds that threshold as last worked out.
	SpeculativeRetries atomic.Int64
	speculation        atomic.Pointer[speculation]
}

// All are the latencies, for rotating their windows.
func (l *TableLatencies) All() []*histogram.Histogram {
	return []*histogram.Histogram{l.Read, l.Write, l.Range}
}

// TableLatency returns a table's coordinator latencies.
func (s *Stats) TableLatency(id mutation.TableID) *TableLatencies {
	if v, ok := s.byTable.Load(id); ok {
		return v.(*TableLatencies)
	}
	v, _ := s.byTable.LoadOrStore(id, &TableLatencies{Read: histogram.New(maxLatency), Write: histogram.New(maxLatency),
		Range: histogram.New(maxLatency)})
	return v.(*TableLatencies)
}

// TableLatencies returns the coordinator latencies of every table this
// node has coordinated a request of.
func (s *Stats) TableLatencies() map[mutation.TableID]*TableLatencies {
	out := map[mutation.TableID]*TableLatencies{}
	s.byTable.Range(func(k, v any) bool {
		out[k.(mutation.TableID)] = v.(*TableLatencies)
		return true
	})
	return out
}

// timed records the time from start, on the coordinator's clock, in h
// and, when not nil, in a table's histogram.
func (c *Coordinator) timed(h *histogram.Histogram, start time.Time, table *histogram.Histogram) {
	d := c.cfg.Now().Sub(start).Microseconds()
	h.Record(d)
	if table != nil {
		table.Record(d)
	}
}

// timedWrites records a write's time from start in the write latencies,
// the whole request's and each table's it wrote.
func (c *Coordinator) timedWrites(ms []*mutation.Mutation, start time.Time) {
	d := c.cfg.Now().Sub(start).Microseconds()
	c.Stats.Latency.Write.Record(d)
	for i, m := range ms {
		if !slices.ContainsFunc(ms[:i], func(o *mutation.Mutation) bool { return o.Table == m.Table }) {
			c.Stats.TableLatency(m.Table).Write.Record(d) // once per table written
		}
	}
}

// Coordinator runs the requests of the statements this node coordinates
// against the replicas of their data, and answers as a replica the
// requests other coordinators send it (Handlers).
type Coordinator struct {
	cfg     Config
	lookups atomic.Pointer[lookups]
	handoff *handoff
	snitch  *snitch
	// background are the sends still running after their request
	// returned; Settle waits for them.
	background *background
	// paxos holds this replica's Paxos registers; lastBallot is the time of
	// the latest ballot this node took.
	paxos      *paxosStore
	lastBallot atomic.Int64
	// replaying is held while the batchlog is replayed.
	replaying sync.Mutex
	// counters holds the shards this node last wrote as a counter
	// leader, and the locks of their stripes.
	counters *counterCache
	Stats    Stats
}

// New returns a coordinator.
func New(cfg Config) *Coordinator {
	if cfg.Timeouts == (Timeouts{}) {
		cfg.Timeouts = DefaultTimeouts
	}
	if cfg.HintedHandoff.MaxWindow == 0 {
		cfg.HintedHandoff.MaxWindow = DefaultHintedHandoff.MaxWindow
	}
	if cfg.HintedHandoff.DeliveryThreads <= 0 {
		cfg.HintedHandoff.DeliveryThreads = DefaultHintedHandoff.DeliveryThreads
	}
	if cfg.Timeouts.CAS == 0 {
		cfg.Timeouts.CAS = DefaultTimeouts.CAS
	}
	if cfg.Timeouts.Counter == 0 {
		cfg.Timeouts.Counter = DefaultTimeouts.Counter
	}
	if cfg.Now == nil {
		//lint:ignore DeterministicCores the default clock, which tests and the simulation replace
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		//lint:ignore DeterministicCores the default timer, which tests replace
		cfg.After = time.After
	}
	if cfg.Rand == nil {
		cfg.Rand = defaultRand()
	}
	c := &Coordinator{cfg: cfg, handoff: newHandoff(cfg.HintedHandoff), snitch: newSnitch(), background: newBackground(),
		counters: newCounterCache()}
	c.Stats.Latency = newLatencies()
	c.paxos = newPaxosStore(cfg.Engine, cfg.Schema, func() int64 { return cfg.Now().Unix() })
	return c
}

// rand is the configured randomness.
func (c *Coordinator) rand() uint64 { return c.cfg.Rand() }

// Settle waits for the sends still on their way: a write's replicas it
// did not wait for (and the hints of those that fail), hint deliveries.
// A node calls it once no request runs, before its engine closes; a
// simulation between steps.
func (c *Coordinator) Settle() { c.background.Wait() }

// current are the lookups of the current schema.
func (c *Coordinator) current() *lookups {
	sch := c.cfg.Schema()
	if l := c.lookups.Load(); l != nil && l.schema == sch {
		return l
	}
	l := newLookups(sch, c.cfg.Self)
	c.lookups.Store(l)
	return l
}

// alive is the failure detector's view, with this node always up.
func (c *Coordinator) alive() func(ring.Endpoint) bool {
	self, alive := c.cfg.Self, c.cfg.Alive
	if alive == nil {
		return func(e ring.Endpoint) bool { return e == self }
	}
	return func(e ring.Endpoint) bool { return e == self || alive(e) }
}

// count counts a request's failure by the kind a client gets, and passes
// it on.
func (c *Coordinator) count(err error) error {
	if err == nil {
		return nil
	}
	var (
		u  *request.Unavailable
		wt *request.WriteTimeout
		rt *request.ReadTimeout
		f  *request.Failure
	)
	byLevel := func(l request.Consistency, kind int) {
		if l.Valid() {
			c.Stats.FailuresByLevel[l][kind].Add(1)
		}
	}
	switch {
	case errors.As(err, &u):
		c.Stats.Unavailables.Add(1)
		byLevel(u.Consistency, Unavailable)
	case errors.As(err, &wt):
		c.Stats.WriteTimeouts.Add(1)
		byLevel(wt.Consistency, WriteTimeout)
	case errors.As(err, &rt):
		c.Stats.ReadTimeouts.Add(1)
		byLevel(rt.Consistency, ReadTimeout)
	case errors.As(err, &f) && f.Write:
		c.Stats.WriteFailures.Add(1)
		byLevel(f.Consistency, WriteFailure)
	case errors.As(err, &f):
		c.Stats.ReadFailures.Add(1)
		byLevel(f.Consistency, ReadFailure)
	}
	return err
}
