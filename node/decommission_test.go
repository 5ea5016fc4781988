package node

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

// moveValue is a row's value: large enough that a throttled stream of
// the ranges takes seconds, for a crash to land in the middle.
var moveValue = strings.Repeat("x", 3000)

// startWrites writes rows of mv.kv through coordinators at QUORUM until
// stopped, remembering the rows acknowledged.
func startWrites(t *testing.T, from int, coordinators ...*Node) *testutil.Writer {
	return startWritesInto(t, "mv.kv", from, coordinators...)
}

// startWritesInto is startWrites into table (keyspace.name).
func startWritesInto(t *testing.T, table string, from int, coordinators ...*Node) *testutil.Writer {
	return testutil.StartWriter(from, 2*time.Millisecond, func(k int) error {
		_, err := runAt(t, coordinators[k%len(coordinators)], request.Quorum, fmt.Sprintf("INSERT INTO %s (k, v) VALUES (%d, '%s')", table, k, moveValue))
		return err
	})
}

// moveCluster is four nodes (the fourth bootstrapped) with keyspace mv
// at replication factor 3 holding rows 0 to rows-1.
func moveCluster(t *testing.T, rows int) (nodes []*Node, dirs []string, gossipPort int) {
	nodes, dirs, gossipPort = startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE mv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE mv.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, t.TempDir())
	fourth := clusterNode(t, 4, dirs[3], gossipPort)
	nodes = append(nodes, fourth)
	t.Cleanup(func() { nodes[3].Close() })
	waitAllUp(t, nodes)
	for k := range rows {
		if _, err := runAt(t, nodes[k%3], request.Quorum, fmt.Sprintf("INSERT INTO mv.kv (k, v) VALUES (%d, '%s')", k, moveValue)); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, dirs, gossipPort
}

// holdsTheirRanges checks that every node of nodes holds in its own
// engine every row of rows its ranges take, and that each row reads at
// ALL through the first node.
func holdsTheirRanges(t *testing.T, nodes []*Node, rows []int) {
	t.Helper()
	m := nodes[0].ring.Load()
	if m.Future() != nil || len(m.Endpoints()) != len(nodes) {
		t.Fatalf("the ring still moves, or has %d nodes for %d", len(m.Endpoints()), len(nodes))
	}
	// A write acknowledged at QUORUM may still be on its way to its third
	// replica, or (that replica slow) become a hint only once it times
	// out: first every send the writes left running ends.
	for _, n := range nodes {
		n.coord.Settle()
	}
	// A write a replica missed reaches it as a hint: a delivery that
	// failed (the replica still joining) is tried again at the next round,
	// and each is throttled.
	waitUntilFor(t, "every hint delivered", 2*hintDeliveryInterval+15*time.Second, func() (bool, string) {
		for _, n := range nodes {
			if p := n.hints.Pending(); len(p) > 0 {
				return false, fmt.Sprintf("%s holds hints %v", n.endpoint(), p)
			}
		}
		return true, ""
	})
	// What is still missing is looked for again for a while: the check
	// is that each replica holds its rows once the writes have settled,
	// and the log says how late any came (none should).
	type miss struct {
		n *Node
		k int
	}
	var late []miss
	for _, n := range nodes {
		for _, k := range rows {
			tok := n.engine.Partitioner().Token(cqltypeInt(k))
			if !slices.Contains(ring.SimpleStrategy{Factor: 3}.Replicas(m, tok), n.endpoint()) {
				continue
			}
			if p, err := readLocal(n, mustTable(t, n, "mv", "kv"), cqltypeInt(k)); err != nil || p == nil || len(p.Rows) != 1 {
				late = append(late, miss{n, k})
			}
		}
	}
	start := time.Now()
	for len(late) > 0 && time.Since(start) < 15*time.Second {
		time.Sleep(100 * time.Millisecond)
		late = slices.DeleteFunc(late, func(x miss) bool {
			p, err := readLocal(x.n, mustTable(t, x.n, "mv", "kv"), cqltypeInt(x.k))
			if err == nil && p != nil && len(p.Rows) == 1 {
				t.Logf("row %d reached %s %s after the writes settled", x.k, x.n.endpoint(), time.Since(start).Round(time.Millisecond))
				return true
			}
			return false
		})
	}
	if len(late) > 0 {
		// Every row missing, with its token, for finding the ranges they share.
		byNode := map[ring.Endpoint][]string{}
		for _, x := range late {
			byNode[x.n.endpoint()] = append(byNode[x.n.endpoint()], fmt.Sprintf("%d@%s", x.k, x.n.engine.Partitioner().Token(cqltypeInt(x.k))))
		}
		for e, rows := range byNode {
			t.Logf("missing on %s (row@token): %s", e, strings.Join(rows, " "))
		}
	}
	missing := 0
	for _, x := range late {
		if missing++; missing < 5 {
			var on []ring.Endpoint
			for _, o := range nodes {
				if p, _ := readLocal(o, mustTable(t, o, "mv", "kv"), cqltypeInt(x.k)); p != nil && len(p.Rows) == 1 {
					on = append(on, o.endpoint())
				}
			}
			t.Errorf("row %d of %s's ranges is not on it (it is on %v)", x.k, x.n.endpoint(), on)
			for _, o := range nodes {
				st := &o.coord.Stats
				t.Logf("%s: ring epoch %d, hints stored %d delivered %d, write timeouts %d", o.endpoint(), o.ring.Load().Epoch(),
					st.HintsStored.Load(), st.HintsDelivered.Load(), st.WriteTimeouts.Load())
			}
		}
	}
	for _, k := range rows {
		res, err := runAt(t, nodes[0], request.All, fmt.Sprintf("SELECT v FROM mv.kv WHERE k = %d", k))
		if err != nil || len(res.Rows) != 1 {
			if missing++; missing < 10 {
				t.Errorf("row %d at ALL: %v, %v", k, res, err)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d acknowledged rows missing", missing)
	}
}

// awaitStream waits until one of nodes has a streaming session of
// operation (one it sends, with sending), and returns its index; the
// operation ending first (a value on ended) fails the test.
func awaitStream(t *testing.T, nodes []*Node, operation string, sending bool, ended <-chan error) int {
	t.Helper()
	found := -1
	waitUntil(t, "a stream of "+operation, func() (bool, string) {
		select {
		case err := <-ended:
			t.Fatalf("%s ended before its streams were seen: %v", operation, err)
		default:
		}
		var seen []string
		for i, n := range nodes {
			for _, s := range n.streaming.Sessions() {
				if s.Operation == operation && !(sending && s.Receiving) {
					found = i
					return true, ""
				}
				seen = append(seen, n.cfg.ListenAddress+": "+s.Operation)
			}
		}
		return false, fmt.Sprint(seen)
	})
	return found
}

// TestDecommissionUnderWrites: a node leaves a four-node cluster while a
// writer goes on at QUORUM. Its first decommission is cut short by its
// crash in the middle of the streams: restarted, it is back in the ring
// as it was. The second goes through: the node is out of the ring and of
// the metadata group, each node left holds every acknowledged row of its
// ranges, every row reads at ALL, and the node that left will not start
// again with its data.
func TestDecommissionUnderWrites(t *testing.T) {
	const before = 2500
	nodes, dirs, gossipPort := moveCluster(t, before)
	fourNodes := nodes[0].ring.Load()
	t.Cleanup(func() {
		if t.Failed() { // for placing the rows missing in the ring before
			for _, e := range fourNodes.Endpoints() {
				t.Logf("tokens of %s before the decommission: %v", e, fourNodes.TokensOf(e))
			}
		}
	})
	w := startWrites(t, before, nodes[0], nodes[1])
	// The first attempt: the leaving node crashes in its streams.
	throttle(nodes[3], 256<<10)
	first := decommissionInBackground(nodes[3])
	awaitStream(t, nodes[3:], "Unbootstrap", false, first)
	if err := nodes[3].Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err == nil {
		t.Fatal("a decommission cut short by the node's stop reported success")
	}
	nodes[3] = clusterNode(t, 4, dirs[3], gossipPort)
	id := raftID(nodes[3].hostID)
	if st := nodes[3].meta.Status().State.Nodes[id].State; st != metadata.Normal {
		t.Fatalf("restarted after a decommission cut short, the node is %s", st)
	}
	waitAllUp(t, nodes)
	// The second goes through.
	if err := nodes[3].Decommission(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if mode := nodes[3].operationMode(); mode != modeDecommissioned {
		t.Fatalf("after its decommission the node's mode is %s", mode)
	}
	during := w.Count()
	waitUntil(t, "writes after the decommission", func() (bool, string) { return w.Count() > during+50, fmt.Sprint(w.Count()) })
	rows := w.Finish(before)
	rest := nodes[:3]
	waitUntil(t, "the node that left is out of every ring and of the metadata group", func() (bool, string) {
		for _, n := range rest {
			st := n.meta.Status()
			if n.ring.Load().Contains(nodes[3].endpoint()) || st.State.Members[id].ID != 0 || st.State.Nodes[id].State != metadata.Left {
				return false, fmt.Sprintf("%s: record %s, members %v", n.endpoint(), st.State.Nodes[id].State, st.State.MemberIDs())
			}
		}
		return true, ""
	})
	holdsTheirRanges(t, rest, rows)
	t.Logf("%d rows, %d acknowledged while the node left", len(rows), len(rows)-before)
	if err := nodes[3].Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := Open(nodes[3].cfg); err == nil || !strings.Contains(err.Error(), "decommissioned") {
		if n != nil {
			n.Close()
		}
		t.Fatalf("a decommissioned node restarted with its data: %v", err)
	}
	// Three nodes at RF 3: one more would leave too few.
	if err := rest[2].Decommission(context.Background(), false); err == nil ||
		err.Error() != "Not enough live nodes to maintain replication factor in keyspace mv (RF = 3, N = 3). Perform a forceful decommission to ignore." {
		t.Fatalf("a decommission below the replication factor: %v", err)
	}
}

// TestRemoveNodeUnderWrites: a dead node is removed from a four-node
// cluster while a writer goes on at QUORUM. The node running the first
// removal crashes in the middle of the streams; removenode run again
// through another node goes on and completes: each node left holds every
// acknowledged row of its ranges (those of the dead node's, streamed
// from the live replicas), and every row reads at ALL.
func TestRemoveNodeUnderWrites(t *testing.T) {
	const before = 2500
	nodes, dirs, gossipPort := moveCluster(t, before)
	dead := nodes[3]
	deadID, deadHost := raftID(dead.hostID), hostIDOf(dead)
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the fourth node down", func() (bool, string) { return !nodes[0].peerAlive(dead.endpoint()), "" })
	if err := nodes[0].RemoveNode(context.Background(), hostIDOf(nodes[1])); err == nil || !strings.Contains(err.Error(), "is alive and owns this ID") {
		t.Fatalf("removing a live node: %v", err)
	}
	if err := nodes[0].RemoveNode(context.Background(), hostIDOf(nodes[0])); err == nil || err.Error() != "Cannot remove self" {
		t.Fatalf("removing itself: %v", err)
	}
	w := startWrites(t, before, nodes[0], nodes[1])
	for _, n := range nodes[:3] {
		throttle(n, 128<<10)
	}
	first := make(chan error, 1)
	go func() {
		ctx, cancel := nodes[2].untilStopped()
		defer cancel()
		first <- nodes[2].RemoveNode(ctx, deadHost)
	}()
	awaitStream(t, nodes[:3], "Removenode", false, first)
	if got := nodes[2].RemovalStatus(); !strings.HasPrefix(got, "RemovalStatus: Removing token (") {
		t.Fatalf("removenode status while it runs: %q", got)
	}
	if err := nodes[2].Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err == nil {
		t.Fatal("a removal cut short by its node's stop reported success")
	}
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	rest := nodes[:3]
	for _, n := range rest {
		throttle(n, 0)
	}
	if st := nodes[0].meta.Status().State.Nodes[deadID].State; st != metadata.Leaving {
		t.Fatalf("after the removal was cut short the dead node is %s", st)
	}
	waitUntil(t, "the restarted node up", func() (bool, string) { return nodes[0].peerAlive(nodes[2].endpoint()), "" })
	if err := nodes[0].RemoveNode(context.Background(), deadHost); err != nil {
		t.Fatal(err)
	}
	during := w.Count()
	waitUntil(t, "writes after the removal", func() (bool, string) { return w.Count() > during+50, fmt.Sprint(w.Count()) })
	rows := w.Finish(before)
	waitUntil(t, "the dead node is out of every ring and of the metadata group", func() (bool, string) {
		for _, n := range rest {
			st := n.meta.Status()
			if n.ring.Load().Contains(dead.endpoint()) || st.State.Members[deadID].ID != 0 {
				return false, fmt.Sprintf("%s: members %v", n.endpoint(), st.State.MemberIDs())
			}
		}
		return true, ""
	})
	holdsTheirRanges(t, rest, rows)
	if got := nodes[0].RemovalStatus(); got != "RemovalStatus: No removals in process." {
		t.Fatalf("removenode status after: %q", got)
	}
	if err := nodes[0].ForceRemoval(); err == nil || err.Error() != "No tokens to force removal on, call 'removenode' first" {
		t.Fatalf("removenode force with nothing to force: %v", err)
	}
}

// throttle bounds what n streams, its sections sent as entries and whole.
func throttle(n *Node, bps int64) {
	n.setStreamThroughput(bps, false)
	n.setStreamThroughput(bps, true)
}

// decommissionInBackground runs n's decommission as nodetool does.
func decommissionInBackground(n *Node) chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := n.untilStopped()
		defer cancel()
		done <- n.Decommission(ctx, false)
	}()
	return done
}

func hostIDOf(n *Node) string { return cqltype.UUIDType.Format(n.hostID) }

// TestReplaceUnderWrites: a new node, empty, replaces a dead one at its
// address (replace_address_first_boot) while a writer goes on at QUORUM.
// A node it streams from crashes in the middle, which fails the
// replacement; started again, the new node goes on replacing, now from
// the live replicas, and ends normal with the dead node's tokens, the
// dead node left (and out of the metadata group), every node holding
// every acknowledged row of its ranges and every row reading at ALL.
func TestReplaceUnderWrites(t *testing.T) {
	const before = 2500
	nodes, dirs, gossipPort := moveCluster(t, before)
	dead := nodes[3]
	deadID, deadTokens := raftID(dead.hostID), slices.Clone(dead.tokens)
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the fourth node down", func() (bool, string) { return !nodes[0].peerAlive(dead.endpoint()), "" })
	w := startWrites(t, before, nodes[0], nodes[1])
	for _, n := range nodes[:3] {
		throttle(n, 128<<10)
	}
	cfg := Config{DataDir: t.TempDir(), NativePort: freePort(t), ReplaceAddressFirstBoot: dead.cfg.ListenAddress}
	open := func() (*Node, error) {
		return Open(Config{DataDir: cfg.DataDir, ListenAddress: dead.cfg.ListenAddress, NativePort: cfg.NativePort, GossipPort: gossipPort,
			StoragePort: storagePortOf(t, gossipPort), Seeds: dead.cfg.Seeds, ClusterName: dead.cfg.ClusterName, Rack: dead.cfg.Rack,
			ReplaceAddressFirstBoot: cfg.ReplaceAddressFirstBoot})
	}
	first := make(chan error, 1)
	go func() {
		n, err := open()
		if n != nil {
			n.Close()
		}
		first <- err
	}()
	// A source of the replacement crashes in its stream, and comes back.
	source := awaitStream(t, nodes[:3], "Bootstrap", true, first)
	if err := nodes[source].Close(); err != nil {
		t.Fatal(err)
	}
	nodes[source] = clusterNode(t, source+1, dirs[source], gossipPort)
	if err := <-first; err == nil {
		t.Fatal("a replacement whose source crashed mid-stream reported success")
	}
	for _, n := range nodes[:3] {
		throttle(n, 0)
	}
	replacer, err := open()
	if err != nil {
		t.Fatalf("the replacement started again: %v", err)
	}
	nodes[3] = replacer
	rec := replacer.meta.Status().State.Nodes[raftID(replacer.hostID)]
	if rec.State != metadata.Normal || rec.Replaces != deadID || !slices.Equal(rec.Tokens, deadTokens) {
		t.Fatalf("after the replacement its record is %+v (the dead node's tokens %v)", rec, deadTokens)
	}
	during := w.Count()
	waitUntil(t, "writes after the replacement", func() (bool, string) { return w.Count() > during+50, fmt.Sprint(w.Count()) })
	rows := w.Finish(before)
	waitUntil(t, "the dead node left and out of the metadata group", func() (bool, string) {
		for _, n := range nodes {
			st := n.meta.Status()
			if st.State.Nodes[deadID].State != metadata.Left || st.State.Members[deadID].ID != 0 {
				return false, fmt.Sprintf("%s: %s, members %v", n.endpoint(), st.State.Nodes[deadID].State, st.State.MemberIDs())
			}
		}
		return true, ""
	})
	holdsTheirRanges(t, nodes, rows)
}
