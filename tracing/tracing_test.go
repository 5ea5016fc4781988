package tracing

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
)

type recorder struct {
	mu       sync.Mutex
	sessions []Session
	events   []Event
	ends     map[ID]time.Duration
}

func (r *recorder) Begin(s Session) { r.mu.Lock(); r.sessions = append(r.sessions, s); r.mu.Unlock() }
func (r *recorder) Event(e Event)   { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }
func (r *recorder) End(id ID, d time.Duration) {
	r.mu.Lock()
	if r.ends == nil {
		r.ends = map[ID]time.Duration{}
	}
	r.ends[id] = d
	r.mu.Unlock()
}

// clock is a manual clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time             { return c.t }
func (c *clock) advance(d time.Duration)    { c.t = c.t.Add(d) }
func newTracer(c *clock, sink Sink) *Tracer { return newTracerAt("127.0.0.1", c, sink) }
func newTracerAt(source string, c *clock, sink Sink) *Tracer {
	return &Tracer{Source: source, Port: 7000, Env: &cqltype.FunctionEnv{Now: c.now, ClockSeqAndNode: 0x8000000000000000 | uint64(len(source))},
		Rand: rand.New(rand.NewPCG(1, 2)).Float64, Sink: sink}
}

func TestSessionAcrossNodes(t *testing.T) {
	c := &clock{t: time.UnixMilli(1_700_000_000_000)}
	sink := &recorder{}
	coordinator, replica := newTracer(c, sink), newTracerAt("127.0.0.2", c, sink)

	tr := coordinator.New(StageNative)
	tr.Begin("Execute CQL3 query", "127.0.0.9", map[string]string{"query": "SELECT 1"})
	tr.Event("Parsing SELECT 1")
	c.advance(3 * time.Millisecond)
	joined := replica.Join(tr.ID(), StageRead)
	c.advance(2 * time.Millisecond)
	joined.Eventf("Read %d live rows", 1)
	joined.End() // a replica does not end the session
	tr.On(StageResponse).Event("READ message received from /127.0.0.2:7000")
	c.advance(time.Millisecond)
	tr.End()

	if len(sink.sessions) != 1 {
		t.Fatalf("sessions = %v, want one", sink.sessions)
	}
	s := sink.sessions[0]
	if s.ID != tr.ID() || s.Coordinator != "127.0.0.1" || s.CoordinatorPort != 7000 || s.Client != "127.0.0.9" || s.Command != "QUERY" ||
		s.Request != "Execute CQL3 query" || s.Parameters["query"] != "SELECT 1" || !s.StartedAt.Equal(time.UnixMilli(1_700_000_000_000)) {
		t.Errorf("session = %+v", s)
	}
	if ms, err := cqltype.TimeUUIDUnixMillis(s.ID[:]); err != nil || ms != 1_700_000_000_000 {
		t.Errorf("session id's time = %d, %v", ms, err)
	}
	type got struct {
		activity, source, stage string
		elapsed                 time.Duration
	}
	var events []got
	for _, e := range sink.events {
		if e.Session != tr.ID() || len(e.EventID) != 16 || e.SourcePort != 7000 {
			t.Errorf("event %+v", e)
		}
		events = append(events, got{e.Activity, e.Source, e.Stage, e.Elapsed})
	}
	want := []got{
		{"Parsing SELECT 1", "127.0.0.1", StageNative, 0},
		{"Read 1 live rows", "127.0.0.2", StageRead, 2 * time.Millisecond}, // from when the replica joined
		{"READ message received from /127.0.0.2:7000", "127.0.0.1", StageResponse, 5 * time.Millisecond},
	}
	if !slices.Equal(events, want) {
		t.Errorf("events = %+v\nwant %+v", events, want)
	}
	if len(sink.ends) != 1 || sink.ends[tr.ID()] != 6*time.Millisecond {
		t.Errorf("ends = %v, want the coordinator's 6ms", sink.ends)
	}
	// Event ids are time-based and increasing, so that events read back in
	// clustering order are in the order they happened.
	timeuuid := cqltype.Native(cqltype.Timeuuid)
	for i := 1; i < len(sink.events); i++ {
		if timeuuid.Compare(sink.events[i-1].EventID, sink.events[i].EventID) > 0 {
			t.Errorf("event ids out of order at %d", i)
		}
	}
}

// TestUntracedRecordsNothing: an untraced request's trace is nil; every
// method takes it, and its view on another stage is nil too.
func TestUntracedRecordsNothing(t *testing.T) {
	var tr *Trace
	tr.Begin("x", "y", nil)
	tr.Event("x")
	tr.Eventf("%d", 1)
	tr.End()
	if on := tr.On(StageRead); on != nil {
		t.Errorf("a nil trace's view on another stage is %+v", on)
	}
}

func TestProbability(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	tr := newTracer(c, &recorder{})
	for _, bad := range []float64{-0.1, 1.5} {
		if err := tr.SetProbability(bad); err == nil {
			t.Errorf("SetProbability(%v) accepted", bad)
		}
	}
	count := func() int {
		n := 0
		for range 10000 {
			if tr.Sampled() {
				n++
			}
		}
		return n
	}
	if n := count(); n != 0 {
		t.Errorf("probability 0 sampled %d", n)
	}
	if err := tr.SetProbability(0.25); err != nil {
		t.Fatal(err)
	}
	if n := count(); n < 2200 || n > 2800 {
		t.Errorf("probability 0.25 sampled %d of 10000", n)
	}
	if err := tr.SetProbability(1); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 10000 {
		t.Errorf("probability 1 sampled %d of 10000", n)
	}
	if tr.Probability() != 1 {
		t.Errorf("Probability = %v", tr.Probability())
	}
}

func TestIDString(t *testing.T) {
	id := ID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}
	if s := id.String(); s != "12345678-9abc-def0-1122-334455667788" {
		t.Errorf("String = %s", s)
	}
}
