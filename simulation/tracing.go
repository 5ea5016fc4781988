package simulation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/tracing"
)

// traceLog is every node's trace sink: the records of the cluster's
// traced requests, in the order they were made.
type traceLog struct {
	mu       sync.Mutex
	sessions []tracing.Session
	events   []tracing.Event
	ends     map[tracing.ID]time.Duration
}

func (l *traceLog) Begin(s tracing.Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sessions = append(l.sessions, s)
}

func (l *traceLog) Event(e tracing.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *traceLog) End(id tracing.ID, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ends == nil {
		l.ends = map[tracing.ID]time.Duration{}
	}
	l.ends[id] = d
}

// Trace is what the nodes recorded of session id: its events, and its
// duration (false while it has none).
func (c *Cluster) Trace(id tracing.ID) ([]tracing.Event, time.Duration, bool) {
	l := &c.traces
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ended := l.ends[id]
	return slices.DeleteFunc(slices.Clone(l.events), func(e tracing.Event) bool { return e.Session != id }), d, ended
}

// newTracer is node n's tracer: the bubble's clock, and randomness from
// the cluster's seed and the node's place, so that a run's traces repeat.
func (n *Node) newTracer() *tracing.Tracer {
	r := rand.New(rand.NewPCG(n.c.cfg.Seed, n.id))
	return &tracing.Tracer{Source: string(n.Name), Port: storagePort, Sink: &n.c.traces, Rand: r.Float64,
		Env: &cqltype.FunctionEnv{Now: time.Now, Rand: rand.New(rand.NewPCG(n.c.cfg.Seed, n.id<<32))}}
}

// ExecTraced runs a statement as Exec does, traced as a client's request
// with the tracing flag is, and returns its trace session's id.
func (n *Node) ExecTraced(text string, cl request.Consistency) (*exec.Result, tracing.ID, error) {
	if !n.Up() {
		return nil, tracing.ID{}, fmt.Errorf("%s is down", n.Name)
	}
	session, err := n.session()
	if err != nil {
		return nil, tracing.ID{}, err
	}
	tr := n.tracer.New(tracing.StageNative)
	tr.Begin("Execute CQL3 query", "127.0.0.100", map[string]string{"query": text, "consistency_level": cl.String()})
	session.SetTrace(tr)
	res, err := session.QueryText(text, exec.QueryParams{Consistency: cl})
	session.SetTrace(nil)
	tr.End()
	time.Sleep(time.Millisecond)
	n.c.Settle()
	return res, tr.ID(), err
}
