package node

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
)

// TestPickAutoRepair checks the order auto repair takes ranges in: the
// never repaired first, then the one repaired longest ago once it is due,
// ties by keyspace, table and range; nothing when none is due.
func TestPickAutoRepair(t *testing.T) {
	r := func(start, end int64) partitioner.Range {
		return partitioner.Range{Start: partitioner.Murmur3Token(start), End: partitioner.Murmur3Token(end)}
	}
	const now, interval = 10_000, 100
	for _, c := range []struct {
		name  string
		cands []autoRepairCandidate
		want  int // index into cands; -1 for none
	}{
		{"none", nil, -1},
		{"none due", []autoRepairCandidate{{"a", "t", r(0, 10), now - 99}, {"a", "t", r(10, 20), now}}, -1},
		{"due at the interval", []autoRepairCandidate{{"a", "t", r(0, 10), now - 99}, {"a", "t", r(10, 20), now - 100}}, 1},
		{"oldest first", []autoRepairCandidate{{"a", "t", r(0, 10), now - 200}, {"a", "t", r(10, 20), now - 500}, {"a", "u", r(0, 10), now - 300}}, 1},
		{"never repaired first", []autoRepairCandidate{{"a", "t", r(0, 10), now - 5000}, {"b", "t", r(10, 20), math.MinInt64}}, 1},
		{"ties by keyspace", []autoRepairCandidate{{"b", "a", r(0, 10), math.MinInt64}, {"a", "z", r(10, 20), math.MinInt64}}, 1},
		{"ties by table", []autoRepairCandidate{{"a", "u", r(0, 10), 1}, {"a", "t", r(10, 20), 1}}, 1},
		{"ties by range", []autoRepairCandidate{{"a", "t", r(10, 20), 1}, {"a", "t", r(-5, 10), 1}}, 1},
	} {
		got, ok := pickAutoRepair(c.cands, now, interval)
		if c.want < 0 {
			if ok {
				t.Errorf("%s: picked %+v, want none", c.name, got)
			}
			continue
		}
		if !ok || got != c.cands[c.want] {
			t.Errorf("%s: picked %+v, %v; want %+v", c.name, got, ok, c.cands[c.want])
		}
	}
}

// TestAutoRepairHealsAReplica: with hints off and auto repair on, a node
// misses writes while it is down. Nobody runs nodetool repair: once it is
// back, the nodes repair their primary ranges by themselves, one at a
// time, until every replica's tree agrees and every node's history
// covers every token of the table; after that, with the ranges repaired
// less than min_repair_interval ago, nothing more is repaired. Drain
// stops it.
func TestAutoRepairHealsAReplica(t *testing.T) {
	config := func(int) Config {
		return Config{HintedHandoffEnabled: new(false),
			AutoRepair: AutoRepair{Enabled: true, MinRepairInterval: Duration(time.Hour), RepairCheckInterval: Duration(200 * time.Millisecond)}}
	}
	nodes, dirs, gossipPort := startThreeWith(t, config)
	waitAllUp(t, nodes)
	stopThird(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE rp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE rp.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	for k := range 200 {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO rp.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // the repairs the others try meanwhile fail: a replica is down
	for _, n := range nodes[:2] {
		if covered := repairedTokens(t, n, 200); covered != 0 {
			t.Fatalf("%s records %d tokens repaired while a replica is down", n.endpoint(), covered)
		}
	}
	third := config(3)
	third.DataDir, third.NativePort = dirs[2], freePort(t)
	nodes[2] = clusterNodeWith(t, 3, third, gossipPort)
	waitAllUp(t, nodes)
	waitUntil(t, "the returning node has rp.kv", func() (bool, string) {
		_, err := nodes[2].Schema().Table("rp", "kv")
		return err == nil, fmt.Sprint(err)
	})
	waitUntilFor(t, "every replica's tree of rp.kv agrees and every node's history covers it", time.Minute, func() (bool, string) {
		trees := replicaTrees(t, nodes, "kv")
		covered := make([]int, len(nodes))
		for i, n := range nodes {
			covered[i] = repairedTokens(t, n, 200)
		}
		return !slices.Contains(trees, true) && !slices.ContainsFunc(covered, func(c int) bool { return c != 200 }),
			fmt.Sprintf("trees differ %v, tokens of the 200 rows covered %v", trees, covered)
	})
	for k := range 200 {
		if p, err := readLocal(nodes[2], mustTable(t, nodes[2], "rp", "kv"), cqltypeInt(k)); err != nil || p == nil || len(p.Rows) != 1 {
			t.Fatalf("row %d on the healed node: %v, %v", k, p, err)
		}
	}
	for _, n := range nodes {
		cands, err := n.autoRepairCandidates()
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := pickAutoRepair(cands, time.Now().Unix(), int64(time.Hour/time.Second)); ok {
			t.Fatalf("%s: after every range was repaired, %+v is still due", n.endpoint(), c)
		}
	}
	if err := nodes[0].Drain(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-nodes[0].autoRepairDone:
	default:
		t.Fatal("automatic repair runs on after drain")
	}
}

// repairedTokens counts the rows 0..rows-1 of rp.kv whose token node n's
// history holds repaired.
func repairedTokens(t *testing.T, n *Node, rows int) int {
	t.Helper()
	tbl := mustTable(t, n, "rp", "kv")
	covered := 0
	for k := range rows {
		if _, ok := n.history.RepairedAt(tbl.ID, n.Partitioner().Token(cqltypeInt(k))); ok {
			covered++
		}
	}
	return covered
}
