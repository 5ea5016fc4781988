package node

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

// TestBootstrapUnderWrites: a fourth node joins a cluster taking writes:
// it streams the ranges it takes from the nodes that give them up while
// the writes go on (reaching it as a pending replica). A source crashes
// in the middle of its stream and comes back: the join goes on from it,
// or fails with the reason and joins when started again; once it is
// normal it holds alone every acknowledged row of its ranges.
func TestBootstrapUnderWrites(t *testing.T) {
	nodes, dirs, gossipPort := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2};" +
		"CREATE TABLE b.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	const before = 2500 // enough that a throttled stream takes seconds
	for k := range before {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO b.kv (k, v) VALUES (%d, '%s')", k, moveValue)); err != nil {
			t.Fatal(err)
		}
	}
	// A writer goes on through the join, through two coordinators.
	w := startWritesInto(t, "b.kv", before, nodes[0], nodes[1])
	for _, n := range nodes {
		throttle(n, 128<<10)
	}
	cfg := Config{DataDir: t.TempDir(), NativePort: freePort(t)}
	type opened struct {
		n   *Node
		err error
	}
	first := make(chan opened, 1)
	ended := make(chan error, 1)
	go func() {
		n, err := openClusterNode(t, 4, cfg, gossipPort)
		if err != nil {
			ended <- err
		}
		first <- opened{n, err}
	}()
	source := awaitStream(t, nodes, "Bootstrap", true, ended)
	if err := nodes[source].Close(); err != nil {
		t.Fatal(err)
	}
	nodes[source] = clusterNode(t, source+1, dirs[source], gossipPort)
	for _, n := range nodes {
		throttle(n, 0)
	}
	// The join either takes up its stream again once the source is back,
	// or fails with the reason and is started again.
	j := <-first
	fourth := j.n
	if j.err != nil {
		t.Logf("with its source %s crashed the join failed: %v", nodes[source].endpoint(), j.err)
		// nodetool status shows the node that stopped joining as DJ.
		waitUntil(t, "the failed joiner down and joining", func() (bool, string) {
			ss := statuses(t, nodes[(source+1)%3])
			for _, st := range ss {
				if st.Address == "127.0.0.4" {
					return st.Status == "Down" && st.State == "Joining", describe(ss)
				}
			}
			return false, describe(ss)
		})
		fourth = clusterNodeWith(t, 4, cfg, gossipPort)
	} else {
		t.Logf("the join went on from its source %s restarted", nodes[source].endpoint())
	}
	t.Cleanup(func() { fourth.Close() })
	during := w.Count()
	// A few more once it serves its ranges.
	waitUntil(t, "writes after the join", func() (bool, string) { return w.Count() > during+50, fmt.Sprint(w.Count()) })
	all := w.Finish(before)

	self := fourth.endpoint()
	rec := fourth.meta.Status().State.Nodes[raftID(fourth.hostID)]
	if rec.State != metadata.Normal || !fourth.ring.Load().Contains(self) || fourth.ring.Load().Future() != nil {
		t.Fatalf("after its bootstrap the fourth node is %s, in its ring %v", rec.State, fourth.ring.Load().Contains(self))
	}
	waitUntil(t, "every node routes by the ring with the fourth node", func() (bool, string) {
		for _, n := range nodes {
			if !n.ring.Load().Contains(self) {
				return false, string(n.endpoint())
			}
		}
		return true, ""
	})
	m := fourth.ring.Load()
	kv := mustTable(t, fourth, "b", "kv")
	mine, missing, streamed := 0, 0, 0
	for _, k := range all {
		tok := fourth.engine.Partitioner().Token(cqltypeInt(k))
		if !slices.Contains(ring.SimpleStrategy{Factor: 2}.Replicas(m, tok), self) {
			continue
		}
		mine++
		if k < before {
			streamed++ // written before it joined: only a stream brings it
		}
		if p, err := readLocal(fourth, kv, cqltypeInt(k)); err != nil || p == nil || len(p.Rows) != 1 {
			missing++
			if missing < 5 {
				t.Errorf("row %d of the fourth node's ranges is not on it: %v, %v", k, p, err)
			}
		}
	}
	if streamed == 0 || missing > 0 {
		t.Fatalf("the fourth node lacks %d of the %d acknowledged rows of its ranges (%d written during the join)", missing, mine, during)
	}
	t.Logf("the fourth node holds all %d rows of its ranges, %d of them streamed; %d rows were acknowledged while it joined", mine, streamed, during)
}
