package cqlsh

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

// traceIDs keeps the trace ids of a traced statement's requests.
type traceIDs struct {
	mu  sync.Mutex
	ids []gocql.UUID
}

func (t *traceIDs) Trace(id []byte) {
	if u, err := gocql.UUIDFromBytes(id); err == nil {
		t.mu.Lock()
		t.ids = append(t.ids, u)
		t.mu.Unlock()
	}
}

// trace is a session and its events as the shell prints them.
type trace struct {
	id          gocql.UUID
	request     string
	coordinator string
	client      string
	startedAt   time.Time
	duration    *int
	events      []traceEvent
}

type traceEvent struct {
	id       gocql.UUID
	activity string
	source   string
	elapsed  *int
	thread   string
}

// errNoTrace is a session with no row in system_traces.sessions.
var errNoTrace = errors.New("no trace session")

// readTrace reads session id from system_traces: once its duration is
// in (complete), or as it is (partial), waiting up to MaxTraceWait with
// the driver's back-off for it to appear or complete. A trace still
// incomplete then is returned with complete false.
func (s *Shell) readTrace(id gocql.UUID, partial bool) (tr *trace, complete bool, err error) {
	deadline := time.Now().Add(s.opts.MaxTraceWait)
	wait := 3 * time.Millisecond
	for {
		tr, err = s.readTraceOnce(id)
		switch {
		case err == nil && (partial || tr.duration != nil && !tr.startedAt.IsZero()):
			return tr, true, nil
		case err != nil && !errors.Is(err, errNoTrace):
			return nil, false, err
		case time.Now().Add(wait).After(deadline):
			return tr, false, err
		}
		time.Sleep(wait)
		wait *= 2
	}
}

func (s *Shell) readTraceOnce(id gocql.UUID) (*trace, error) {
	tr := &trace{id: id}
	var client, coordinator *string
	err := s.session.Query(`SELECT request, coordinator, client, started_at, duration FROM system_traces.sessions WHERE session_id = ?`, id).
		Consistency(s.consistency).Scan(&tr.request, &coordinator, &client, &tr.startedAt, &tr.duration)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, errNoTrace
	}
	if err != nil {
		return nil, err
	}
	if coordinator != nil {
		tr.coordinator = *coordinator
	}
	if client != nil {
		tr.client = *client
	}
	iter := s.session.Query(`SELECT event_id, activity, source, source_elapsed, thread FROM system_traces.events WHERE session_id = ?`, id).
		Consistency(s.consistency).Iter()
	var e traceEvent
	for iter.Scan(&e.id, &e.activity, &e.source, &e.elapsed, &e.thread) {
		tr.events = append(tr.events, e)
		e = traceEvent{}
	}
	return tr, iter.Close()
}

// printTraces prints the traces of a statement's requests, as cqlsh
// does after its result; a PREPARE's trace (gocql prepares statements the
// Python driver sends as they are) is left out.
func (s *Shell) printTraces(ids *traceIDs) {
	ids.mu.Lock()
	list := append([]gocql.UUID(nil), ids.ids...)
	ids.mu.Unlock()
	for _, id := range list {
		tr, complete, err := s.readTrace(id, false)
		switch {
		case err != nil && !errors.Is(err, errNoTrace):
			s.error(fmt.Sprintf("Unable to fetch query trace: %v", err))
			continue
		case !complete:
			s.error(fmt.Sprintf("Statement trace did not complete within %d seconds; trace data may be incomplete.", int(s.opts.MaxTraceWait.Seconds())))
			s.showSession(id, true)
			continue
		case tr.request == "Preparing CQL3 query":
			continue
		}
		s.printTrace(tr)
	}
}

// showSession is SHOW SESSION: a trace as it is.
func (s *Shell) showSession(id gocql.UUID, partial bool) {
	tr, _, err := s.readTrace(id, partial)
	switch {
	case errors.Is(err, errNoTrace) || err == nil && tr == nil:
		s.error(fmt.Sprintf("Session %s wasn't found.", id))
	case err != nil:
		s.error(fmt.Sprintf("Unable to fetch query trace: %v", err))
	default:
		s.printTrace(tr)
	}
}

// printTrace prints a trace as cqlsh's tracing module does: the request,
// each event with its stage, and the request's end, with times in local
// time as Python prints datetimes.
func (s *Shell) printTrace(tr *trace) {
	if len(tr.events) == 0 {
		s.error(fmt.Sprintf("No rows for session %s found.", tr.id))
		return
	}
	// As cqlsh, an elapsed time of none (or 0, which Python holds false)
	// shows as --, but the request's own row's 0.
	micros := func(v *int) string {
		if v == nil || *v == 0 {
			return "--"
		}
		return strconv.Itoa(*v)
	}
	rows := [][]string{{tr.request, pythonDatetime(tr.startedAt), tr.coordinator, "0", tr.client}}
	for _, e := range tr.events {
		rows = append(rows, []string{fmt.Sprintf("%s [%s]", e.activity, e.thread), pythonDatetime(e.id.Time()), e.source,
			micros(e.elapsed), tr.client})
	}
	if tr.duration != nil && *tr.duration != 0 {
		end := tr.startedAt.Add(time.Duration(*tr.duration) * time.Microsecond)
		rows = append(rows, []string{"Request complete", pythonDatetime(end), tr.coordinator, micros(tr.duration), tr.client})
	}
	out := s.results()
	fmt.Fprintln(out)
	label := "Tracing session: "
	if s.opts.Color {
		label = colorMagenta + label + colorReset
	}
	fmt.Fprintf(out, "%s%s\n", label, tr.id)
	cols := make([]gocql.ColumnInfo, 0, 5)
	for _, name := range []string{"activity", "timestamp", "source", "source_elapsed", "client"} {
		cols = append(cols, gocql.ColumnInfo{Name: name})
	}
	s.printPage(cols, rows, true, 0)
	fmt.Fprintln(out)
}

// pythonDatetime is a time as Python's str(datetime) writes it, in local
// time: microseconds only when there are some.
func pythonDatetime(t time.Time) string {
	t = t.Local()
	if us := t.Nanosecond() / 1000; us != 0 {
		return t.Format("2006-01-02 15:04:05") + fmt.Sprintf(".%06d", us)
	}
	return t.Format("2006-01-02 15:04:05")
}

// readsTraces reports whether a statement is in system_traces (by name,
// or in it as the current keyspace): cqlsh does not trace those, whose
// own traces would bury what is being read.
func (s *Shell) readsTraces(stmt string) bool {
	lower := strings.ToLower(stmt)
	return strings.Contains(lower, "system_traces.") || s.keyspace == "system_traces"
}
