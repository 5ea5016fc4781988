package node

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

// TestBootstrapUnderWrites: a fourth node joins a cluster taking writes:
// it streams the ranges it takes from the nodes that give them up while
// the writes go on (reaching it as a pending replica), and once it is
// normal it holds alone every acknowledged row of its ranges.
func TestBootstrapUnderWrites(t *testing.T) {
	nodes, _, gossipPort := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2};" +
		"CREATE TABLE b.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	const before = 400
	for k := range before {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO b.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	// A writer goes on through the join, through two coordinators.
	var mu sync.Mutex
	var acked []int
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for k := before; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := runAt(t, nodes[k%2], request.Quorum, fmt.Sprintf("INSERT INTO b.kv (k, v) VALUES (%d, 'v%d')", k, k)); err == nil {
				mu.Lock()
				acked = append(acked, k)
				mu.Unlock()
			}
		}
	}()
	fourth := clusterNode(t, 4, t.TempDir(), gossipPort)
	t.Cleanup(func() { fourth.Close() })
	mu.Lock()
	during := len(acked)
	mu.Unlock()
	// A few more once it serves its ranges.
	waitUntil(t, "writes after the join", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) > during+50, fmt.Sprint(len(acked))
	})
	close(stop)
	<-done

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
	all := slices.Clone(acked)
	for k := range before {
		all = append(all, k)
	}
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
