package clients

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/cqlsh"
)

// traceIDs is a gocql.Tracer that keeps the trace ids the server sent.
type traceIDs struct {
	mu  sync.Mutex
	ids [][]byte
}

func (r *traceIDs) Trace(id []byte) {
	r.mu.Lock()
	r.ids = append(r.ids, append([]byte(nil), id...))
	r.mu.Unlock()
}

// first is the id of the first traced request since the last take.
func (r *traceIDs) first(t *testing.T) gocql.UUID { return r.id(t, false) }

// take is the id of the last traced request (gocql traces the PREPARE of
// a statement it prepares as well as its EXECUTE), and forgets them all.
func (r *traceIDs) take(t *testing.T) gocql.UUID { return r.id(t, true) }

func (r *traceIDs) id(t *testing.T, last bool) gocql.UUID {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) == 0 {
		t.Fatal("no trace id came back")
	}
	b := r.ids[0]
	if last {
		b, r.ids = r.ids[len(r.ids)-1], nil
	}
	id, err := gocql.UUIDFromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// traceSession is a session's row and its events as a client reads them.
type traceSession struct {
	coordinator, request string
	duration             int
	parameters           map[string]string
	startedAt            time.Time
	events               []traceEvent
}

type traceEvent struct {
	activity, source, thread string
	elapsed                  int
}

// readTrace waits for session id's row to have its duration (as drivers
// do) and for done to hold of its events, then returns them.
func readTrace(t *testing.T, s *gocql.Session, id gocql.UUID, done func([]traceEvent) bool) traceSession {
	t.Helper()
	var ts traceSession
	deadline := time.Now().Add(20 * time.Second)
	for {
		var duration *int
		err := s.Query(`SELECT coordinator, request, duration, parameters, started_at FROM system_traces.sessions WHERE session_id = ?`, id).
			Consistency(gocql.One).Scan(&ts.coordinator, &ts.request, &duration, &ts.parameters, &ts.startedAt)
		if err == nil && duration != nil {
			ts.duration = *duration
			ts.events = nil
			iter := s.Query(`SELECT activity, source, source_elapsed, thread FROM system_traces.events WHERE session_id = ?`, id).Consistency(gocql.One).Iter()
			var e traceEvent
			for iter.Scan(&e.activity, &e.source, &e.elapsed, &e.thread) {
				ts.events = append(ts.events, e)
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			if done(ts.events) {
				return ts
			}
		} else if err != nil && err != gocql.ErrNotFound {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s incomplete after 20s: %+v", id, ts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// has reports whether some event of source starts with activity.
func has(events []traceEvent, source, activity string) bool {
	return slices.ContainsFunc(events, func(e traceEvent) bool {
		return (source == "" || e.source == source) && strings.HasPrefix(e.activity, activity)
	})
}

func hasAll(source string, activities ...string) func([]traceEvent) bool {
	return func(events []traceEvent) bool {
		for _, a := range activities {
			if !has(events, source, a) {
				return false
			}
		}
		return true
	}
}

// TestTracingOnOneNode: a client that asks for a trace gets its id back
// and reads the session and its events from system_traces: a write's
// commit log and memtable steps, a read's merge and rows read; a request
// that does not ask gets none, until the trace probability says all.
func TestTracingOnOneNode(t *testing.T) {
	n, cluster := startNode(t)
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)")

	ids := &traceIDs{}
	if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, 1, "one").Consistency(gocql.One).Trace(ids).Exec(); err != nil {
		t.Fatal(err)
	}
	id := ids.take(t)
	write := readTrace(t, s, id, hasAll("127.0.0.1", "Determining replicas for mutation", "Appending to commitlog", "Adding to t memtable"))
	if write.coordinator != "127.0.0.1" || write.request != "Execute CQL3 prepared query" ||
		write.parameters["consistency_level"] != "ONE" || write.parameters["query"] != "INSERT INTO ks.t (k, v) VALUES (?, ?)" {
		t.Errorf("session = %+v", write)
	}
	if since := time.Since(write.startedAt); since < 0 || since > time.Minute || write.duration <= 0 {
		t.Errorf("started %v ago, duration %dµs", since, write.duration)
	}
	for _, e := range write.events {
		if e.thread == "" || e.elapsed < 0 || e.elapsed > write.duration {
			t.Errorf("event %+v (duration %d)", e, write.duration)
		}
	}

	var v string
	if err := s.Query(`SELECT v FROM ks.t WHERE k = 1`).Trace(ids).Scan(&v); err != nil || v != "one" {
		t.Fatalf("select: %q, %v", v, err)
	}
	prepared := ids.first(t)
	id = ids.take(t)
	readTrace(t, s, id, hasAll("127.0.0.1", "Executing single-partition query on t", "Acquiring sstable references",
		"Merged data from memtables and 0 sstables", "Read 1 live rows and 0 tombstone cells"))
	// gocql prepared the statement first, traced as well.
	prepare := readTrace(t, s, prepared, hasAll("127.0.0.1", "Parsing SELECT v FROM ks.t WHERE k = 1", "Preparing statement"))
	if prepare.request != "Preparing CQL3 query" || prepare.parameters["query"] != "SELECT v FROM ks.t WHERE k = 1" {
		t.Errorf("prepare's session = %+v", prepare)
	}

	// After a flush, the read merges an SSTable; a partition outside it
	// is skipped by the bloom filter.
	if err := n.Engine().Flush(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, "DELETE FROM ks.t WHERE k = 2")
	if err := s.Query(`SELECT v FROM ks.t WHERE k = 1`).Trace(ids).Scan(&v); err != nil {
		t.Fatal(err)
	}
	readTrace(t, s, ids.take(t), hasAll("127.0.0.1", "Merged data from memtables and 1 sstables", "Read 1 live rows"))
	if err := s.Query(`SELECT v FROM ks.t WHERE k = 2`).Trace(ids).Exec(); err != nil {
		t.Fatal(err)
	}
	readTrace(t, s, ids.take(t), hasAll("127.0.0.1", "Bloom filter allows skipping sstable", "Read 0 live rows and 1 tombstone cells"))

	// Untraced requests get no id; with probability 1 they are traced,
	// but the client, which did not ask, is still given none.
	before := countSessions(t, s)
	if err := s.Query(`SELECT v FROM ks.t WHERE k = 1`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := n.SetTraceProbability(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`SELECT v FROM ks.t WHERE k = 1`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := n.SetTraceProbability(0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for countSessions(t, s) < before+1 {
		if time.Now().After(deadline) {
			t.Fatal("the sampled request left no session")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := n.SetTraceProbability(1.5); err == nil || err.Error() != "Trace probability must be between 0 and 1" {
		t.Errorf("SetTraceProbability(1.5) = %v", err)
	}
}

func countSessions(t *testing.T, s *gocql.Session) int {
	t.Helper()
	var count int
	if err := s.Query(`SELECT count(*) FROM system_traces.sessions`).Consistency(gocql.One).Scan(&count); err != nil {
		t.Fatal(err)
	}
	return count
}

// TestCqlshTracing: sibyl cqlsh's TRACING ON prints each statement's
// trace after its result, as cqlsh lays it out, and SHOW SESSION prints a
// trace by its id.
func TestCqlshTracing(t *testing.T) {
	var out, errs bytes.Buffer
	_, cluster := startNode(t)
	sh, err := cqlsh.New(cqlsh.Options{Host: "127.0.0.1", Port: cluster.Port, Cluster: cluster, Out: &out, Err: &errs, MaxTraceWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	sh.RunInput(strings.NewReader(createKeyspace+";\nCREATE TABLE ks.t (k int PRIMARY KEY, v text);\nINSERT INTO ks.t (k, v) VALUES (1, 'a');\n"), "setup.cql")
	out.Reset()
	sh.RunInput(strings.NewReader("TRACING ON\nSELECT v FROM ks.t WHERE k = 1;\nTRACING\nTRACING OFF\nSELECT v FROM ks.t WHERE k = 1;\n"), "test.cql")
	if errs.Len() > 0 {
		t.Fatalf("errors: %s", errs.String())
	}
	got := out.String()
	session := regexp.MustCompile(`\nTracing session: ([0-9a-f-]{36})\n\n`).FindStringSubmatch(got)
	if session == nil || strings.Count(got, "Tracing session: ") != 1 {
		t.Fatalf("one trace wanted:\n%s", got)
	}
	lines := strings.Split(got, "\n")
	headerPattern := regexp.MustCompile(`^ activity +\| timestamp {18}\| source {4}\| source_elapsed \| client$`)
	header := slices.IndexFunc(lines, headerPattern.MatchString)
	if !strings.HasPrefix(got, "Now Tracing is enabled\n\n v\n---\n a\n\n(1 rows)\n") || header < 0 {
		t.Fatalf("output:\n%s", got)
	}
	// The request's row, its events and the request's end, right-aligned.
	rowPattern := regexp.MustCompile(`^ +(.+) \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{6})? \| 127\.0\.0\.1 \| +(\d+|--) \| 127\.0\.0\.1$`)
	var activities []string
	for _, l := range lines[header+2:] {
		if l == "" {
			break
		}
		m := rowPattern.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("trace row %q", l)
		}
		activities = append(activities, m[1])
	}
	want := []string{"Execute CQL3 prepared query", "Executing single-partition query on t [Native-Transport-Requests]",
		"Acquiring sstable references [Native-Transport-Requests]", "Merging memtable contents [Native-Transport-Requests]",
		"Merged data from memtables and 0 sstables [Native-Transport-Requests]", "Read 1 live rows and 0 tombstone cells [Native-Transport-Requests]",
		"Request complete"}
	if !slices.Equal(activities, want) {
		t.Errorf("activities %q\nwant %q", activities, want)
	}
	if !strings.HasSuffix(got, "Tracing is currently enabled. Use TRACING OFF to disable\nDisabled Tracing.\n\n v\n---\n a\n\n(1 rows)\n") {
		t.Errorf("after the trace:\n%s", got)
	}

	out.Reset()
	sh.RunInput(strings.NewReader("SHOW SESSION "+session[1]+"\nSHOW SESSION 00000000-0000-1000-8000-000000000000\n"), "show.cql")
	if !strings.Contains(out.String(), "Tracing session: "+session[1]) || !strings.Contains(out.String(), "Read 1 live rows and 0 tombstone cells") {
		t.Errorf("SHOW SESSION printed:\n%s", out.String())
	}
	if e := errs.String(); !strings.Contains(e, "Session 00000000-0000-1000-8000-000000000000 wasn't found.") {
		t.Errorf("SHOW SESSION of no session: %q", e)
	}
}

// syncBuffer is a log destination safe for the node's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSlowQueryLog: a request over slow_query_log_timeout is logged with
// its statement and, when traced, its trace session, and counted; with
// the threshold at 0 none is.
func TestSlowQueryLog(t *testing.T) {
	for _, c := range []struct {
		timeout time.Duration
		logged  bool
	}{{time.Nanosecond, true}, {0, false}} {
		var logs syncBuffer
		logger := zerolog.New(&logs)
		timeout := node.Duration(c.timeout)
		_, nativePort, adminPort := serveNode(t, node.Config{Logger: &logger, SlowQueryLogTimeout: &timeout})
		s := session(t, gocqlCluster(nativePort))
		mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
		ids := &traceIDs{}
		if err := s.Query(`SELECT v FROM ks.t WHERE k = 5`).Trace(ids).Exec(); err != nil {
			t.Fatal(err)
		}
		slow := metric(t, adminPort, "sibyl_slow_queries_total")
		if !c.logged {
			if slow != 0 || strings.Contains(logs.String(), "a slow query") {
				t.Errorf("slow_query_log_timeout 0: %v counted, logs:\n%s", slow, logs.String())
			}
			continue
		}
		id := ids.take(t)
		want := `"statement":"SELECT v FROM ks.t WHERE k = 5",`
		found := false
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"message":"native: a slow query"`) && strings.Contains(line, want) &&
				strings.Contains(line, `"trace_session":"`+id.String()+`"`) && strings.Contains(line, `"level":"warn"`) {
				found = true
			}
		}
		if !found || slow < 3 { // the DDL and the select at least
			t.Errorf("%v slow queries counted; no line of the traced select in:\n%s", slow, logs.String())
		}
	}
}
