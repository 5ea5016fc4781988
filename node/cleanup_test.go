package node

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

// TestCleanupDropsTheRangesANewNodeTook: after a third node joins a
// two-node cluster, the first still holds rows of ranges it gave up;
// nodetool cleanup drops exactly those and keeps every row it still
// replicates, and refuses the local system keyspaces and a node that is
// being given ranges.
func TestCleanupDropsTheRangesANewNodeTook(t *testing.T) {
	gossipPort := testutil.ClusterPort(t, 3)
	var nodes []*Node
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Close()
		}
	})
	nodes = append(nodes, clusterNode(t, 1, t.TempDir(), gossipPort), clusterNode(t, 2, t.TempDir(), gossipPort))
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE c WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE c.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	const rows = 300
	for k := range rows {
		if _, err := runAt(t, nodes[0], request.One, fmt.Sprintf("INSERT INTO c.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	first := nodes[0]
	kv := mustTable(t, first, "c", "kv")
	held := func() []bool {
		out := make([]bool, rows)
		for k := range rows {
			p, err := readLocal(first, kv, cqltypeInt(k))
			if err != nil {
				t.Fatal(err)
			}
			out[k] = p != nil && len(p.Rows) == 1
		}
		return out
	}
	before := held()

	nodes = append(nodes, clusterNode(t, 3, t.TempDir(), gossipPort))
	waitAllUp(t, nodes)
	third := ring.Endpoint("127.0.0.3")
	waitUntil(t, "the first node's ring holds the third", func() (bool, string) {
		return first.ring.Load().Contains(third), fmt.Sprint(first.ring.Load().Endpoints())
	})
	m := first.ring.Load()
	replicates := func(k int) bool {
		tok := first.engine.Partitioner().Token(cqltypeInt(k))
		return slices.Contains(ring.SimpleStrategy{Factor: 1}.Replicas(m, tok), first.endpoint())
	}
	stray := 0
	for k := range rows {
		if before[k] && !replicates(k) {
			stray++
		}
	}
	if stray == 0 {
		t.Fatal("the third node took none of the first node's rows")
	}

	cleanup := func(query string) error {
		_, err := first.adminCleanup(httptest.NewRequest("POST", "/cleanup?"+query, nil))
		return err
	}
	if err := cleanup("keyspace=system"); err == nil || err.Error() != "Cleanup of the system keyspace is neither necessary nor wise" {
		t.Fatalf("a cleanup of system: %v", err)
	}
	if err := cleanup("keyspace=c&table=nope"); err == nil {
		t.Fatal("a cleanup of a table that is not")
	}
	if err := cleanup(""); err != nil {
		t.Fatal(err)
	}
	after := held()
	for k := range rows {
		if want := before[k] && replicates(k); after[k] != want {
			t.Fatalf("row %d: held %v before, replicated now %v, held after the cleanup %v", k, before[k], replicates(k), after[k])
		}
	}
	t.Logf("the cleanup dropped %d of %d rows", stray, rows)

	// Were the third node leaving, the first would be gaining ranges back:
	// their data is on its way, and a cleanup would drop it.
	var staying []ring.Node
	for _, e := range m.Endpoints() {
		if e != third {
			staying = append(staying, ring.Node{Endpoint: e, Location: m.Location(e), Tokens: m.TokensOf(e)})
		}
	}
	future, err := ring.NewMetadata(first.engine.Partitioner(), staying)
	if err != nil {
		t.Fatal(err)
	}
	first.ring.Store(m.WithFuture(future))
	if err := cleanup("keyspace=c"); err == nil || err.Error() != "Node is involved in cluster membership changes. Not safe to run cleanup." {
		t.Fatalf("a cleanup while the node gains ranges: %v", err)
	}
}
