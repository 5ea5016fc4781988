package node

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// traceTTL is how long trace records live: Cassandra's tracetype_query_ttl
// (one day).
const traceTTL = 24 * 60 * 60

// traceQueue bounds the trace records waiting to be written. A node too
// busy to write them drops the newest rather than slow the requests being
// traced, and counts them.
const traceQueue = 8192

// traceWriter is the node's tracing.Sink: each record becomes a write of
// system_traces, sent at ANY through the coordinator (the tables are
// replicated as their keyspace says) by one goroutine, in the order the
// records came, so that a session's duration, which clients wait for, is
// written after the coordinator's events.
type traceWriter struct {
	n       *Node
	queue   chan *mutation.Mutation
	dropped atomic.Int64
	stop    chan struct{}
	stopped sync.Once
	done    sync.WaitGroup
}

func newTraceWriter(n *Node) *traceWriter {
	w := &traceWriter{n: n, queue: make(chan *mutation.Mutation, traceQueue), stop: make(chan struct{})}
	w.done.Add(1)
	go w.run()
	return w
}

// newTracer is the node's tracer, writing through w.
func (n *Node) newTracer(w *traceWriter) *tracing.Tracer {
	return &tracing.Tracer{Source: n.cfg.ListenAddress, Port: n.cfg.StoragePort, Env: &cqltype.FunctionEnv{}, Sink: w,
		Rand: rand.Float64}
}

func (w *traceWriter) run() {
	defer w.done.Done()
	for {
		select {
		case m := <-w.queue:
			batch := []*mutation.Mutation{m}
		more: // what else is queued goes in the same write
			for len(batch) < 64 {
				select {
				case m := <-w.queue:
					batch = append(batch, m)
				default:
					break more
				}
			}
			if err := w.n.coord.Apply(batch, request.Any, nil); err != nil {
				w.n.cfg.Logger.Debug().Err(err).Int("records", len(batch)).Msg("tracing: trace records not written")
			}
		case <-w.stop:
			return
		}
	}
}

// close stops the writer (a node may be closed twice); records still
// queued are dropped.
func (w *traceWriter) close() {
	w.stopped.Do(func() { close(w.stop) })
	w.done.Wait()
}

func (w *traceWriter) put(t *schema.Table, values map[string][]byte) {
	now := time.Now()
	cw := &schema.CellWriter{Timestamp: now.UnixMicro(), TTL: traceTTL, Now: now.Unix()}
	m, err := t.InsertMutation(values, cw)
	if err != nil {
		w.n.cfg.Logger.Error().Err(err).Str("table", t.String()).Msg("tracing: a trace record that does not fit its table")
		return
	}
	select {
	case w.queue <- m:
	default:
		w.dropped.Add(1)
	}
}

// Begin writes a session's row but its duration.
func (w *traceWriter) Begin(s tracing.Session) {
	values := map[string][]byte{"session_id": s.ID[:], "command": []byte(s.Command), "coordinator": inetBytes(s.Coordinator),
		"coordinator_port": cqltype.EncodeInt(int32(s.CoordinatorPort)), "request": []byte(s.Request),
		"started_at": cqltype.EncodeTimestamp(s.StartedAt.UnixMilli()), "parameters": schema.TextMap(s.Parameters)}
	if c := inetBytes(s.Client); c != nil {
		values["client"] = c
	}
	w.put(schema.TraceSessionsTable, values)
}

// Event writes one event's row.
func (w *traceWriter) Event(e tracing.Event) {
	w.put(schema.TraceEventsTable, map[string][]byte{"session_id": e.Session[:], "event_id": e.EventID, "activity": []byte(e.Activity),
		"source": inetBytes(e.Source), "source_port": cqltype.EncodeInt(int32(e.SourcePort)),
		"source_elapsed": cqltype.EncodeInt(int32(e.Elapsed.Microseconds())), "thread": []byte(e.Stage)})
}

// End writes a session's duration, in microseconds.
func (w *traceWriter) End(id tracing.ID, d time.Duration) {
	w.put(schema.TraceSessionsTable, map[string][]byte{"session_id": id[:], "duration": cqltype.EncodeInt(int32(d.Microseconds()))})
}

// SetTraceProbability sets the share of requests traced though their
// clients did not ask (nodetool settraceprobability).
func (n *Node) SetTraceProbability(p float64) error { return n.tracer.SetProbability(p) }

// TraceProbability is the share of requests traced unasked.
func (n *Node) TraceProbability() float64 { return n.tracer.Probability() }
