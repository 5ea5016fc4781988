package simulation

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/tracing"
)

// traceSummary is what a trace says happened, in a form a test compares:
// each event as its source and activity, sorted (the replicas' work, and
// a coordinator's sends, run at once: their order is the scheduler's).
func traceSummary(events []tracing.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Source + " " + e.Activity
	}
	slices.Sort(out)
	return out
}

// tracedRun runs a QUORUM write and read on three nodes, one replica's
// link slow, and returns the two traces.
func tracedRun(t *testing.T, seed uint64) (write, read []tracing.Event) {
	inBubble(t, func(t *testing.T) {
		c, err := New(Config{Seed: seed, Nodes: []NodeConfig{
			{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"},
			{Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		first := c.Node("127.0.0.1")
		for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
			"CREATE TABLE ks.kv (k int PRIMARY KEY, v text)"} {
			if _, err := first.Exec(stmt, request.One); err != nil {
				t.Fatal(err)
			}
		}
		c.Delay("127.0.0.1", "127.0.0.3", 20*time.Millisecond)
		_, w, err := first.ExecTraced("INSERT INTO ks.kv (k, v) VALUES (7, 'seven')", request.Quorum)
		if err != nil {
			t.Fatal(err)
		}
		res, r, err := first.ExecTraced("SELECT v FROM ks.kv WHERE k = 7", request.Quorum)
		if err != nil || len(res.Rows) != 1 {
			t.Fatalf("read: %v, %v", res, err)
		}
		var ended bool
		var d time.Duration
		write, d, ended = c.Trace(w)
		// The bubble's clock moves only while every goroutine waits: the
		// duration is there, not necessarily above zero.
		if !ended || d < 0 {
			t.Errorf("the write's session has no duration (%v, %v)", d, ended)
		}
		read, _, _ = c.Trace(r)
	})
	return write, read
}

// TestTracedRequestsAcrossReplicas: in the simulation, a traced QUORUM
// write records on its coordinator and on both other replicas (the slow
// one too, after the answer), a traced QUORUM read on the coordinator and
// the replica it asked; and a run with the same seed records the same
// events.
func TestTracedRequestsAcrossReplicas(t *testing.T) {
	write, read := tracedRun(t, 11)
	has := func(events []tracing.Event, source, activity string) bool {
		return slices.ContainsFunc(events, func(e tracing.Event) bool {
			return e.Source == source && strings.HasPrefix(e.Activity, activity)
		})
	}
	for _, want := range []struct{ source, activity string }{
		{"127.0.0.1", "Determining replicas for mutation"}, {"127.0.0.1", "Adding to kv memtable"},
		{"127.0.0.1", "Sending MUTATION_REQ message to /127.0.0.2:7000"}, {"127.0.0.1", "Sending MUTATION_REQ message to /127.0.0.3:7000"},
		{"127.0.0.2", "MUTATION_REQ message received from /127.0.0.1:7000"}, {"127.0.0.2", "Adding to kv memtable"},
		{"127.0.0.3", "MUTATION_REQ message received from /127.0.0.1:7000"}, {"127.0.0.3", "Sending MUTATION_RSP message to /127.0.0.1:7000"},
	} {
		if !has(write, want.source, want.activity) {
			t.Errorf("the write's trace lacks %s %q:\n%s", want.source, want.activity, strings.Join(traceSummary(write), "\n"))
		}
	}
	for _, e := range write {
		if e.Source != "127.0.0.1" && e.Stage != tracing.StageMutation {
			t.Errorf("a replica's event on %s: %+v", e.Stage, e)
		}
		if e.Elapsed < 0 {
			t.Errorf("negative elapsed: %+v", e)
		}
	}
	// The coordinator reads its own data and asks the quicker replica for
	// a digest.
	for _, want := range []struct{ source, activity string }{
		{"127.0.0.1", "reading data from /127.0.0.1:7000"}, {"127.0.0.1", "reading digest from /127.0.0.2:7000"},
		{"127.0.0.1", "Read 1 live rows and 0 tombstone cells"}, {"127.0.0.2", "READ_REQ message received from /127.0.0.1:7000"},
		{"127.0.0.2", "Read 1 live rows and 0 tombstone cells"}, {"127.0.0.1", "READ_RSP message received from /127.0.0.2:7000"},
	} {
		if !has(read, want.source, want.activity) {
			t.Errorf("the read's trace lacks %s %q:\n%s", want.source, want.activity, strings.Join(traceSummary(read), "\n"))
		}
	}
	if has(read, "127.0.0.3", "") {
		t.Errorf("the slow replica took part in the read:\n%s", strings.Join(traceSummary(read), "\n"))
	}
	again, readAgain := tracedRun(t, 11)
	if !slices.Equal(traceSummary(write), traceSummary(again)) || !slices.Equal(traceSummary(read), traceSummary(readAgain)) {
		t.Errorf("the same seed recorded other traces:\n%s\n--\n%s", strings.Join(traceSummary(write), "\n"), strings.Join(traceSummary(again), "\n"))
	}
}
