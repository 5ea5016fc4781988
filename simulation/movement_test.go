package simulation

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
)

// wholeCluster is three whole nodes and a fourth left to join, with a
// table of rows written at QUORUM.
func wholeCluster(t *testing.T, seed uint64, rows int) *Cluster {
	t.Helper()
	return wholeClusterWith(t, Config{Seed: seed}, rows)
}

// wholeClusterWith is wholeCluster with cfg's seed and settings.
func wholeClusterWith(t *testing.T, cfg Config, rows int) *Cluster {
	t.Helper()
	cfg.Whole, cfg.StreamThroughput = true, 64<<10
	cfg.Nodes = []NodeConfig{{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"},
		{Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.4", DataCenter: "dc1", Rack: "r1", Later: true}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := c.Node("127.0.0.1")
	for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE ks.kv (k int PRIMARY KEY, v text)"} {
		if _, err := first.Exec(stmt, request.Quorum); err != nil {
			t.Fatal(err)
		}
	}
	for k := range rows {
		if _, err := first.Exec(fmt.Sprintf("INSERT INTO ks.kv (k, v) VALUES (%d, '%s')", k, value(k)), request.Quorum); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func value(k int) string { return fmt.Sprintf("value %d %s", k, strings.Repeat("x", 200)) }

// startWriter writes new rows at QUORUM through coordinators until
// stopped, remembering those acknowledged.
func startWriter(from int, coordinators ...*Node) *testutil.Writer {
	return testutil.StartWriter(from, 20*time.Millisecond, func(k int) error {
		_, err := coordinators[k%len(coordinators)].Exec(fmt.Sprintf("INSERT INTO ks.kv (k, v) VALUES (%d, '%s')", k, value(k)), request.Quorum)
		return err
	})
}

// finishAfter lets w have 50 more writes acknowledged, then stops it
// once membership has settled, and returns every acknowledged row.
func finishAfter(t *testing.T, c *Cluster, w *testutil.Writer, before int) []int {
	t.Helper()
	for during := w.Count(); w.Count() < during+50; {
		time.Sleep(100 * time.Millisecond)
	}
	rows := w.Finish(before)
	settle(t, c)
	return rows
}

// settle waits for the cluster's membership to settle.
func settle(t *testing.T, c *Cluster) {
	t.Helper()
	if err := c.AwaitMembership(5 * time.Minute); err != nil {
		t.Fatal(err)
	}
}

// restart restarts the crashed node and waits for membership to settle.
func restart(t *testing.T, c *Cluster, n *Node) {
	t.Helper()
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	settle(t, c)
}

// readableAtAll checks that every row reads at ALL through n, with its
// value.
func readableAtAll(t *testing.T, n *Node, rows []int) {
	t.Helper()
	for _, k := range rows {
		res, err := n.Exec(fmt.Sprintf("SELECT v FROM ks.kv WHERE k = %d", k), request.All)
		if err != nil {
			t.Fatalf("row %d at ALL: %v", k, err)
		}
		if len(res.Rows) != 1 || string(res.Rows[0][0]) != value(k) {
			t.Fatalf("row %d at ALL reads %q", k, res.Rows)
		}
	}
}

// replicaOfEveryRing checks that every node up routes with e among the
// replicas of the keyspace's ranges.
func replicaOfEveryRing(t *testing.T, c *Cluster, e ring.Endpoint) {
	t.Helper()
	want := "/" + string(e) + ":7000"
	for _, n := range c.Nodes() {
		whole := n.Whole()
		if whole == nil {
			continue
		}
		in := false
		for _, replicas := range whole.ClusterInfo().Ownership("ks") {
			for _, r := range replicas {
				in = in || r == want
			}
		}
		if !in {
			t.Fatalf("%s's ring has no range on %s", n.Name, e)
		}
	}
}

// replicasOf maps each row to whether, by n's ring, n is one of its
// replicas: the range of a row's token is the first whose end token is at
// or after it, wrapping to the first.
func replicasOf(t *testing.T, n *Node, rows []int) map[int]bool {
	t.Helper()
	part := partitioner.Murmur3()
	self := "/" + string(n.Name) + ":7000"
	type rangeEnd struct {
		end  partitioner.Token
		mine bool
	}
	var ends []rangeEnd
	for end, replicas := range n.Whole().ClusterInfo().Ownership("ks") {
		tok, err := part.ParseToken(end)
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, rangeEnd{tok, slices.Contains(replicas, self)})
	}
	slices.SortFunc(ends, func(a, b rangeEnd) int { return partitioner.Compare(a.end, b.end) })
	out := map[int]bool{}
	for _, k := range rows {
		tok := part.Token(binary.BigEndian.AppendUint32(nil, uint32(k)))
		i, _ := slices.BinarySearchFunc(ends, tok, func(e rangeEnd, t partitioner.Token) int { return partitioner.Compare(e.end, t) })
		out[k] = ends[i%len(ends)].mine
	}
	return out
}

// holdsExactlyItsRanges checks that n's own data is every row of its
// ranges and none of the others.
func holdsExactlyItsRanges(t *testing.T, n *Node, rows []int) {
	t.Helper()
	local := exec.NewSession(localOnly{n})
	mine := 0
	for k, replica := range replicasOf(t, n, rows) {
		res, err := local.QueryText(fmt.Sprintf("SELECT v FROM ks.kv WHERE k = %d", k), exec.QueryParams{Consistency: request.One})
		if err != nil {
			t.Fatal(err)
		}
		if held := len(res.Rows) == 1; held != replica {
			t.Fatalf("%s, a replica of row %d: %v, holds it: %v", n.Name, k, replica, held)
		}
		if replica {
			mine++
		}
	}
	if mine == 0 {
		t.Fatalf("%s is a replica of none of the %d rows", n.Name, len(rows))
	}
	t.Logf("%s holds the %d of %d rows of its ranges, and no other", n.Name, mine, len(rows))
}

// TestBootstrapWithASourceCrash: a fourth node joins a cluster taking
// QUORUM writes, and the first replica it streams from crashes in the
// middle of the stream. Its start fails with the reason; the source comes
// back, the fourth node starts again and joins; every acknowledged write
// reads at ALL, and every node routes to the new one.
func TestBootstrapWithASourceCrash(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const before = 300
		c := wholeCluster(t, 21, before)
		defer c.Close()
		w := startWriter(before, c.Node("127.0.0.1"), c.Node("127.0.0.2"))
		c.CrashOneOf(messaging.VerbStreamChunk, "127.0.0.1", "127.0.0.2", "127.0.0.3")
		joiner := c.Node("127.0.0.4")
		err := joiner.Restart()
		crashed := crashedOf(t, "the join", err, c.Nodes()[:3]...)
		restart(t, c, crashed)
		if err := joiner.Restart(); err != nil {
			t.Fatalf("the join started again: %v", err)
		}
		during := w.Count()
		rows := finishAfter(t, c, w, before)
		replicaOfEveryRing(t, c, joiner.Name)
		holdsExactlyItsRanges(t, joiner, rows)
		readableAtAll(t, joiner, rows)
		t.Logf("%d rows, %d of them acknowledged while the fourth node joined", len(rows), during)
	})
}

// TestDecommissionWithAReceiverCrash: the fourth node of a cluster
// taking QUORUM writes leaves, and the first node asked to pull its
// ranges crashes as the request arrives. The decommission fails and the
// node stays in the ring; the receiver comes back, the decommission is
// run again and completes: every acknowledged write reads at ALL, and
// each node left holds exactly the ranges it owns (all of them, three
// nodes at RF 3).
func TestDecommissionWithAReceiverCrash(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const before = 300
		c := wholeCluster(t, 22, before)
		defer c.Close()
		leaving := c.Node("127.0.0.4")
		if err := leaving.Restart(); err != nil {
			t.Fatal(err)
		}
		settle(t, c)
		w := startWriter(before, c.Node("127.0.0.1"), c.Node("127.0.0.2"))
		c.CrashOneOf(messaging.VerbStreamPull, "127.0.0.1", "127.0.0.2", "127.0.0.3")
		err := leaving.Whole().Decommission(context.Background(), false)
		crashed := crashedOf(t, "the decommission", err, c.Nodes()[:3]...)
		replicaOfEveryRing(t, c, leaving.Name)
		restart(t, c, crashed)
		if err := leaving.Whole().Decommission(context.Background(), false); err != nil {
			t.Fatalf("the decommission run again: %v", err)
		}
		// The node has left the ring and gossip; its process is stopped.
		if err := leaving.Crash(); err != nil {
			t.Fatal(err)
		}
		during := w.Count()
		rows := finishAfter(t, c, w, before)
		for _, n := range c.Nodes()[:3] {
			holdsExactlyItsRanges(t, n, rows)
		}
		readableAtAll(t, c.Node("127.0.0.1"), rows)
		t.Logf("%d rows, %d of them acknowledged while the fourth node left", len(rows), during)
	})
}

// hostID is the node's host id, as system.local holds it.
func hostID(t *testing.T, n *Node) string {
	t.Helper()
	res, err := n.Exec("SELECT host_id FROM system.local", request.One)
	if err != nil || len(res.Rows) != 1 || len(res.Rows[0][0]) != 16 {
		t.Fatalf("the host id of %s: %v, %v", n.Name, res, err)
	}
	return cqltype.UUIDType.Format(res.Rows[0][0])
}

// inNoRing checks that no node up routes to e.
func inNoRing(t *testing.T, c *Cluster, e ring.Endpoint) {
	t.Helper()
	want := "/" + string(e) + ":7000"
	for _, n := range c.Nodes() {
		if whole := n.Whole(); whole != nil {
			for end, replicas := range whole.ClusterInfo().Ownership("ks") {
				if slices.Contains(replicas, want) {
					t.Fatalf("%s's ring still has the range ending %s on %s", n.Name, end, e)
				}
			}
		}
	}
}

// crashedOf is the one node of nodes that is down, failing the test if
// none is.
func crashedOf(t *testing.T, what string, err error, nodes ...*Node) *Node {
	t.Helper()
	for _, n := range nodes {
		if !n.Up() {
			if err == nil {
				t.Fatalf("%s reported success with %s crashed in the middle", what, n.Name)
			}
			t.Logf("with %s crashed %s failed: %v", n.Name, what, err)
			return n
		}
	}
	t.Fatalf("no node crashed; %s returned %v", what, err)
	return nil
}

// fourWholeNodes is wholeCluster with its fourth node joined.
func fourWholeNodes(t *testing.T, seed uint64, rows int) *Cluster {
	t.Helper()
	c := wholeCluster(t, seed, rows)
	if err := c.Node("127.0.0.4").Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitMembership(5 * time.Minute); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRemoveNodeWithATargetCrash: the fourth node dies and is removed
// while QUORUM writes go on; the first node asked to restream its ranges
// crashes as the request arrives, and the removal fails. The node comes
// back, the removal is run again through another node and completes: the
// dead node is in no ring, every acknowledged write reads at ALL, and
// each node left holds exactly its ranges.
func TestRemoveNodeWithATargetCrash(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const before = 300
		c := fourWholeNodes(t, 23, before)
		defer c.Close()
		dead := c.Node("127.0.0.4")
		id := hostID(t, dead)
		if err := dead.Crash(); err != nil {
			t.Fatal(err)
		}
		settle(t, c)
		w := startWriter(before, c.Node("127.0.0.1"), c.Node("127.0.0.2"))
		c.CrashOneOf(messaging.VerbStreamPull, "127.0.0.1", "127.0.0.2")
		err := c.Node("127.0.0.3").Whole().RemoveNode(context.Background(), id)
		crashed := crashedOf(t, "the removal", err, c.Nodes()[:2]...)
		restart(t, c, crashed)
		if err := c.Node("127.0.0.1").Whole().RemoveNode(context.Background(), id); err != nil {
			t.Fatalf("the removal run again: %v", err)
		}
		rows := finishAfter(t, c, w, before)
		inNoRing(t, c, dead.Name)
		for _, n := range c.Nodes()[:3] {
			holdsExactlyItsRanges(t, n, rows)
		}
		readableAtAll(t, c.Node("127.0.0.1"), rows)
	})
}

// TestReplaceWithASourceCrash: the fourth node dies and a new node takes
// its place at its address (replace_address_first_boot) while QUORUM
// writes go on; the first replica it streams from crashes mid-stream and
// its start fails. The source comes back, the replacement starts again
// and completes: it holds exactly the dead node's ranges, and every
// acknowledged write reads at ALL.
func TestReplaceWithASourceCrash(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const before = 300
		c := fourWholeNodes(t, 24, before)
		defer c.Close()
		dead := c.Node("127.0.0.4")
		if err := dead.Crash(); err != nil {
			t.Fatal(err)
		}
		settle(t, c)
		w := startWriter(before, c.Node("127.0.0.1"), c.Node("127.0.0.2"))
		if err := dead.ReplaceWith(); err != nil {
			t.Fatal(err)
		}
		c.CrashOneOf(messaging.VerbStreamChunk, "127.0.0.1", "127.0.0.2", "127.0.0.3")
		err := dead.Restart()
		crashed := crashedOf(t, "the replacement", err, c.Nodes()[:3]...)
		restart(t, c, crashed)
		if err := dead.Restart(); err != nil {
			t.Fatalf("the replacement started again: %v", err)
		}
		rows := finishAfter(t, c, w, before)
		replicaOfEveryRing(t, c, dead.Name)
		holdsExactlyItsRanges(t, dead, rows)
		readableAtAll(t, dead, rows)
	})
}

// TestRepairWithAReplicaCrash: a node down while QUORUM writes go on
// (hinted handoff off, so that only repair can bring it what it missed)
// comes back and is repaired while the writes go on; the first replica
// asked for its tree crashes, and the repair fails. The replica comes
// back, the repair is run again and completes: the node holds every row,
// and every acknowledged write reads at ALL.
func TestRepairWithAReplicaCrash(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const before = 300
		c := wholeClusterWith(t, Config{Seed: 25, Handoff: coordinator.HintedHandoff{Disabled: true}}, before)
		defer c.Close()
		behind := c.Node("127.0.0.3")
		if err := behind.Crash(); err != nil {
			t.Fatal(err)
		}
		w := startWriter(before, c.Node("127.0.0.1"), c.Node("127.0.0.2"))
		for w.Count() < 100 {
			time.Sleep(100 * time.Millisecond)
		}
		restart(t, c, behind)
		missed := 0
		local := exec.NewSession(localOnly{behind})
		for _, k := range w.Acked() {
			res, err := local.QueryText(fmt.Sprintf("SELECT v FROM ks.kv WHERE k = %d", k), exec.QueryParams{Consistency: request.One})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) == 0 {
				missed++
			}
		}
		if missed == 0 {
			t.Fatal("the node that was down missed no write")
		}
		c.CrashOneOf(messaging.VerbRepairTree, "127.0.0.1", "127.0.0.2")
		_, err := behind.Whole().Repair(context.Background(), node.RepairRequest{Keyspace: "ks"})
		crashed := crashedOf(t, "the repair", err, c.Nodes()[:2]...)
		restart(t, c, crashed)
		summary, err := behind.Whole().Repair(context.Background(), node.RepairRequest{Keyspace: "ks"})
		if err != nil {
			t.Fatalf("the repair run again: %v", err)
		}
		rows := w.Finish(before)
		holdsExactlyItsRanges(t, behind, rows)
		readableAtAll(t, behind, rows)
		t.Logf("%d writes missed before the repair: %+v", missed, summary)
	})
}
