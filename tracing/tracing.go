package tracing

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
)

// ID is a trace session's id: a time-based uuid, as the client sees it.
type ID [16]byte

func (id ID) String() string { return cqltype.FormatUUID(id[:]) }

// The stages events are recorded on: Cassandra's thread names without the
// thread's number (a goroutine has none worth showing).
const (
	StageNative   = "Native-Transport-Requests"
	StageMutation = "MutationStage"
	StageRead     = "ReadStage"
	StageResponse = "RequestResponseStage"
)

// Session is a session's row: what was asked, by whom, of which
// coordinator.
type Session struct {
	ID ID
	// Client is the client's address; Coordinator and CoordinatorPort,
	// the coordinator's (its internode port).
	Client          string
	Coordinator     string
	CoordinatorPort int
	// Command is the kind of trace: QUERY for a client's request.
	Command string
	// Request names what the client sent ("Execute CQL3 query").
	Request    string
	Parameters map[string]string
	StartedAt  time.Time
}

// Event is one step of a session on one node.
type Event struct {
	Session ID
	// EventID is a time-based uuid of when the step was recorded.
	EventID  []byte
	Activity string
	// Source is the node that recorded it (its address and internode
	// port); Elapsed, how long after that node first saw the request.
	Source     string
	SourcePort int
	Elapsed    time.Duration
	Stage      string
}

// Sink takes a node's trace records: the node writes them to
// system_traces. Its methods must not block for long: the request being
// traced waits for them.
type Sink interface {
	// Begin records a session's start.
	Begin(Session)
	// Event records one step.
	Event(Event)
	// End records the session's duration, once the coordinator has its
	// answer.
	End(id ID, duration time.Duration)
}

// Tracer makes the traces of one node.
type Tracer struct {
	// Source and Port are this node's address and internode port.
	Source string
	Port   int
	// Env is the clock and the source of time-based uuids.
	Env *cqltype.FunctionEnv
	// Rand draws the sampling of untraced requests: uniform in [0, 1).
	Rand func() float64
	Sink Sink
	// probability is the share of requests traced though their client
	// did not ask (nodetool settraceprobability), as float64 bits.
	probability atomic.Uint64
}

// SetProbability sets the share of requests traced unasked, in [0, 1].
func (t *Tracer) SetProbability(p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("Trace probability must be between 0 and 1")
	}
	t.probability.Store(math.Float64bits(p))
	return nil
}

// Probability is the share of requests traced unasked.
func (t *Tracer) Probability() float64 { return math.Float64frombits(t.probability.Load()) }

// Sampled draws whether an untraced request is traced all the same.
func (t *Tracer) Sampled() bool {
	p := t.Probability()
	return p > 0 && (p >= 1 || t.Rand() < p)
}

// New makes a coordinator's trace of a new session, on stage; Begin
// records the session itself.
func (t *Tracer) New(stage string) *Trace {
	var id ID
	copy(id[:], t.Env.NextTimeUUID())
	return t.trace(id, stage, true)
}

// Join makes this node's part of a session another node began, on stage.
func (t *Tracer) Join(id ID, stage string) *Trace { return t.trace(id, stage, false) }

func (t *Tracer) trace(id ID, stage string, coordinator bool) *Trace {
	return &Trace{shared: &shared{tracer: t, id: id, start: t.Env.Time(), coordinator: coordinator}, stage: stage}
}

// shared is what the views of one node's trace on different stages
// share.
type shared struct {
	tracer      *Tracer
	id          ID
	start       time.Time
	coordinator bool
}

// Trace is one node's part of a session. A nil Trace is an untraced
// request: its methods do nothing.
type Trace struct {
	*shared
	stage string
}

// ID is the session's id.
func (tr *Trace) ID() ID { return tr.id }

// On is the same trace, recording on another stage.
func (tr *Trace) On(stage string) *Trace {
	if tr == nil {
		return nil
	}
	return &Trace{shared: tr.shared, stage: stage}
}

// Begin records the session a coordinator's trace is of: the request,
// its parameters and the client's address.
func (tr *Trace) Begin(request, client string, parameters map[string]string) {
	if tr == nil {
		return
	}
	t := tr.tracer
	t.Sink.Begin(Session{ID: tr.id, Client: client, Coordinator: t.Source, CoordinatorPort: t.Port, Command: "QUERY",
		Request: request, Parameters: parameters, StartedAt: tr.start})
}

// End records the session's duration: a coordinator's trace ends once
// the answer is ready.
func (tr *Trace) End() {
	if tr == nil || !tr.coordinator {
		return
	}
	tr.tracer.Sink.End(tr.id, tr.elapsed())
}

func (tr *Trace) elapsed() time.Duration { return tr.tracer.Env.Time().Sub(tr.start) }

// Event records a step.
func (tr *Trace) Event(activity string) {
	if tr == nil {
		return
	}
	t := tr.tracer
	t.Sink.Event(Event{Session: tr.id, EventID: t.Env.NextTimeUUID(), Activity: activity, Source: t.Source, SourcePort: t.Port,
		Elapsed: tr.elapsed(), Stage: tr.stage})
}

// Eventf records a step, formatted only when the request is traced.
func (tr *Trace) Eventf(format string, args ...any) {
	if tr == nil {
		return
	}
	tr.Event(fmt.Sprintf(format, args...))
}
