package node

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/repair"
)

// TestRepairConverges: with hints off, a node misses writes and deletes
// while it is down, and then loses a whole table's data. One repair run
// on another node brings it every row it lacks and every deletion, both
// ways (a row only it holds reaches the others), after which every
// replica's tree of every range agrees; a second repair finds nothing
// to stream.
func TestRepairConverges(t *testing.T) {
	nodes, dirs, gossipPort := startThreeWith(t, func(int) Config { return Config{HintedHandoffEnabled: new(false)} })
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE rp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE rp.kv (k int PRIMARY KEY, v text); CREATE TABLE rp.other (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	for k := range 100 {
		for _, table := range []string{"kv", "other"} {
			if _, err := runAt(t, nodes[0], request.All, fmt.Sprintf("INSERT INTO rp.%s (k, v) VALUES (%d, 'v%d')", table, k, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	stopThird(t, nodes)
	for k := 100; k < 300; k++ {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO rp.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 10 {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("DELETE FROM rp.kv WHERE k = %d", k)); err != nil {
			t.Fatal(err)
		}
	}
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	waitAllUp(t, nodes)
	// The third node loses rp.other, and holds a row no other node has.
	other, err := nodes[2].engine.Table(mustTable(t, nodes[2], "rp", "other").ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Truncate(); err != nil {
		t.Fatal(err)
	}
	if _, err := runAt(t, nodes[2], request.One, "INSERT INTO rp.kv (k, v) VALUES (1000, 'only here')"); err != nil {
		t.Fatal(err)
	}
	if trees := replicaTrees(t, nodes, "kv"); !slices.ContainsFunc(trees, func(d bool) bool { return d }) {
		t.Fatal("the replicas' trees agree before the repair")
	}
	sum, err := nodes[0].Repair(context.Background(), RepairRequest{Keyspace: "rp"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Mismatched == 0 || sum.Streams == 0 || sum.Bytes == 0 {
		t.Fatalf("the repair found nothing to stream: %+v", sum)
	}
	for _, table := range []string{"kv", "other"} {
		if d := replicaTrees(t, nodes, table); slices.Contains(d, true) {
			t.Fatalf("after the repair the replicas' trees of rp.%s differ (%v)", table, d)
		}
	}
	kv, ot := mustTable(t, nodes[2], "rp", "kv"), mustTable(t, nodes[2], "rp", "other")
	for k := range 300 {
		p, err := readLocal(nodes[2], kv, cqltypeInt(k))
		if err != nil || (k < 10) != (p == nil || len(p.Rows) == 0) {
			t.Fatalf("row %d of rp.kv on the repaired node: %v, %v", k, p, err)
		}
		if k < 100 {
			if p, err := readLocal(nodes[2], ot, cqltypeInt(k)); err != nil || p == nil || len(p.Rows) != 1 {
				t.Fatalf("row %d of rp.other on the repaired node: %v, %v", k, p, err)
			}
		}
	}
	if p, err := readLocal(nodes[0], mustTable(t, nodes[0], "rp", "kv"), cqltypeInt(1000)); err != nil || p == nil || len(p.Rows) != 1 {
		t.Fatalf("the row only the third node had did not reach the first: %v, %v", p, err)
	}
	again, err := nodes[1].Repair(context.Background(), RepairRequest{Keyspace: "rp", Tables: []string{"kv"}, PrimaryRange: true})
	if err != nil || again.Mismatched != 0 || again.Streams != 0 || again.Ranges == 0 {
		t.Fatalf("a second repair: %+v, %v", again, err)
	}
	if _, err := nodes[0].Repair(context.Background(), RepairRequest{Keyspace: "nope"}); err == nil || err.Error() != "Keyspace [nope] does not exist." {
		t.Fatalf("repair of a keyspace that is not: %v", err)
	}
	if _, err := nodes[0].Repair(context.Background(), RepairRequest{Keyspace: "rp", Tables: []string{"nope"}}); err == nil || err.Error() != "Unknown keyspace/cf pair (rp.nope)" {
		t.Fatalf("repair of a table that is not: %v", err)
	}
}

// replicaTrees compares, for every range of the ring, the three nodes'
// trees of rp.table: true for each range where some differ.
func replicaTrees(t *testing.T, nodes []*Node, table string) []bool {
	t.Helper()
	m := nodes[0].ring.Load()
	var out []bool
	for i := range m.SortedTokens() {
		r := m.RangeOf(i)
		var trees [][][]byte
		for _, n := range nodes {
			tree, err := n.repair.Tree(mustTable(t, n, "rp", table).ID, r, repair.Depth)
			if err != nil {
				t.Fatal(err)
			}
			trees = append(trees, tree)
		}
		out = append(out, !slices.EqualFunc(trees[0], trees[1], bytes.Equal) || !slices.EqualFunc(trees[0], trees[2], bytes.Equal))
	}
	return out
}

// TestRepairUnderWritesAndACrash: a repair runs while a writer goes on
// at QUORUM (hints off, so a node that misses a write keeps missing it);
// a replica crashes in the middle of the repair's streams, which fails
// the repair with the reason. Restarted, with the writes stopped, the
// repair run again (from another node) leaves every replica's tree of
// every range equal and every acknowledged row readable at ALL.
func TestRepairUnderWritesAndACrash(t *testing.T) {
	nodes, dirs, gossipPort := startThreeWith(t, func(int) Config { return Config{HintedHandoffEnabled: new(false)} })
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE rp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE rp.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	stopThird(t, nodes)
	const before = 2000
	for k := range before {
		if _, err := runAt(t, nodes[k%2], request.Quorum, fmt.Sprintf("INSERT INTO rp.kv (k, v) VALUES (%d, '%s')", k, moveValue)); err != nil {
			t.Fatal(err)
		}
	}
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	waitAllUp(t, nodes)
	w := startRepairWrites(t, before, nodes[0])
	for _, n := range nodes {
		throttle(n, 128<<10)
	}
	first := make(chan error, 1)
	go func() {
		ctx, cancel := nodes[0].untilStopped()
		defer cancel()
		_, err := nodes[0].Repair(ctx, RepairRequest{Keyspace: "rp"})
		first <- err
	}()
	awaitStream(t, nodes[1:2], "Repair", true, first)
	if err := nodes[1].Close(); err != nil {
		t.Fatal(err)
	}
	// Back at once: the repair's next try finds its session gone.
	nodes[1] = clusterNode(t, 2, dirs[1], gossipPort)
	for _, n := range nodes {
		throttle(n, 0)
	}
	if err := <-first; err == nil || !strings.Contains(err.Error(), "Repair job failed on rp.kv") {
		t.Fatalf("a repair whose replica crashed: %v", err)
	}
	waitAllUp(t, nodes)
	rows := w.Finish(before)
	if _, err := nodes[2].Repair(context.Background(), RepairRequest{Keyspace: "rp"}); err != nil {
		t.Fatalf("the repair again: %v", err)
	}
	if d := replicaTrees(t, nodes, "kv"); slices.Contains(d, true) {
		t.Fatalf("after the repairs the replicas' trees differ (%v)", d)
	}
	for _, k := range rows {
		if res, err := runAt(t, nodes[0], request.All, fmt.Sprintf("SELECT v FROM rp.kv WHERE k = %d", k)); err != nil || len(res.Rows) != 1 {
			t.Fatalf("row %d at ALL: %v, %v", k, res, err)
		}
	}
	t.Logf("%d rows, %d acknowledged during the repairs", len(rows), len(rows)-before)
}

// startRepairWrites is startWrites into rp.kv.
func startRepairWrites(t *testing.T, from int, coordinator *Node) *testutil.Writer {
	return startWritesInto(t, "rp.kv", from, coordinator)
}
