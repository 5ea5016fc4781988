// The race run leaves this file out, as events_test.go: its nodes gossip,
// and memberlist v0.7.0 has a data race of its own
// (hashicorp/memberlist#134); make test runs it without the race detector.

//go:build !race

package clients

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/node"
)

// TestTracingAcrossReplicas: on three nodes, a traced write and read at
// QUORUM show the coordinator's messages and each replica's own events,
// named by the replica, in the session any node serves.
func TestTracingAcrossReplicas(t *testing.T) {
	open, nativePort := localCluster(t)
	nodes := []*node.Node{open(1), open(2), open(3)}
	for _, n := range nodes {
		defer n.Close()
	}
	if _, err := nodes[0].StartNative(); err != nil {
		t.Fatal(err)
	}
	waitForRing(t, nodes)
	cluster := gocqlCluster(nativePort)
	cluster.DisableInitialHostLookup = true
	cluster.Hosts = []string{"127.0.0.1"}
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustExec(t, s, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE ks.t (k int PRIMARY KEY, v text)")

	ids := &traceIDs{}
	if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (7, 'seven')`).Consistency(gocql.Quorum).Trace(ids).Exec(); err != nil {
		t.Fatal(err)
	}
	id := ids.take(t)
	replicaSteps := []string{"MUTATION_REQ message received from /127.0.0.1:", "Appending to commitlog", "Adding to t memtable",
		"Enqueuing response to /127.0.0.1:", "Sending MUTATION_RSP message to /127.0.0.1:"}
	write := readTrace(t, s, id, func(events []traceEvent) bool {
		return hasAll("127.0.0.1", "Sending MUTATION_REQ message to /127.0.0.2:", "Sending MUTATION_REQ message to /127.0.0.3:",
			"Appending to commitlog", "MUTATION_RSP message received from")(events) &&
			hasAll("127.0.0.2", replicaSteps...)(events) && hasAll("127.0.0.3", replicaSteps...)(events)
	})
	for _, e := range write.events {
		if e.source != "127.0.0.1" && e.thread != "MutationStage" {
			t.Errorf("replica event on %q: %+v", e.thread, e)
		}
	}

	var v string
	if err := s.Query(`SELECT v FROM ks.t WHERE k = 7`).Consistency(gocql.Quorum).Trace(ids).Scan(&v); err != nil || v != "seven" {
		t.Fatalf("select: %q, %v", v, err)
	}
	id = ids.take(t)
	read := readTrace(t, s, id, func(events []traceEvent) bool {
		if !hasAll("127.0.0.1", "reading data from /127.0.0.1:", "Executing single-partition query on t", "Read 1 live rows")(events) {
			return false
		}
		// The other replica asked, for its digest, is 2 or 3.
		for _, r := range []string{"127.0.0.2", "127.0.0.3"} {
			if hasAll("127.0.0.1", fmt.Sprintf("reading digest from /%s:", r), fmt.Sprintf("READ_RSP message received from /%s:", r))(events) &&
				hasAll(r, "READ_REQ message received from /127.0.0.1:", "Executing single-partition query on t", "Read 1 live rows",
					"Sending READ_RSP message to /127.0.0.1:")(events) {
				return true
			}
		}
		return false
	})
	if read.parameters["consistency_level"] != "QUORUM" {
		t.Errorf("parameters = %v", read.parameters)
	}

	// The session is readable from every node: system_traces is
	// replicated, not kept by the coordinator alone.
	for _, n := range nodes[1:] {
		if _, err := n.StartNative(); err != nil {
			t.Fatal(err)
		}
	}
	for _, host := range []string{"127.0.0.2", "127.0.0.3"} {
		c := gocqlCluster(nativePort)
		c.Hosts, c.DisableInitialHostLookup = []string{host}, true
		other, err := c.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		var request string
		err = other.Query(`SELECT request FROM system_traces.sessions WHERE session_id = ?`, id).Consistency(gocql.All).Scan(&request)
		other.Close()
		if err != nil || request != "Execute CQL3 prepared query" {
			t.Errorf("from %s: %q, %v", host, request, err)
		}
	}
}

// waitForRing waits until every node sees every other up.
func waitForRing(t *testing.T, nodes []*node.Node) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for k, n := range nodes {
		for j := range nodes {
			for !n.Sees(fmt.Sprintf("127.0.0.%d", j+1)) {
				if time.Now().After(deadline) {
					t.Fatalf("node %d does not see node %d up after 30s", k+1, j+1)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}
