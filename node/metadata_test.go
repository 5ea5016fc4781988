package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
)

// TestConflictingDDLOnTwoNodes runs CREATE TABLE of one name, with two
// definitions, through two nodes at once, many times over: each time one
// wins and the other gets AlreadyExists, and every node ends with the
// winner's table id.
func TestConflictingDDLOnTwoNodes(t *testing.T) {
	nodes, _, _ := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE c WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		table := fmt.Sprintf("c.t%d", round)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = exec.NewSession(nodes[i]).Run(fmt.Sprintf("CREATE TABLE %s (k int PRIMARY KEY, v%d text)", table, i))
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			var e *exec.Error
			switch {
			case err == nil && won == -1:
				won = i
			case err == nil:
				t.Fatalf("%s: both CREATE TABLEs succeeded", table)
			case !errors.As(err, &e) || e.Code != exec.AlreadyExists:
				t.Fatalf("%s through node %d: %v, want AlreadyExists", table, i+1, err)
			}
		}
		if won == -1 {
			t.Fatalf("%s: neither CREATE TABLE succeeded: %v", table, errs)
		}
		want := mustTable(t, nodes[won], "c", fmt.Sprintf("t%d", round))
		for _, n := range nodes {
			got := mustTable(t, n, "c", fmt.Sprintf("t%d", round))
			if got.ID != want.ID || got.Columns[1].Name != fmt.Sprintf("v%d", won) {
				t.Fatalf("%s on %s: id %s column %s; the winner's: id %s column v%d", table, n.cfg.ListenAddress, got.ID, got.Columns[1].Name, want.ID, won)
			}
		}
	}
	versions := map[[16]byte]bool{}
	for _, n := range nodes {
		versions[n.Schema().Version()] = true
	}
	if len(versions) != 1 {
		t.Fatalf("%d schema versions after the DDL returned, want 1", len(versions))
	}
	// What drivers read for schema agreement: every node's system.peers
	// shows the others at its own version.
	for _, n := range nodes {
		waitUntil(t, "system.peers agrees with system.local on "+n.cfg.ListenAddress, func() (bool, string) {
			local, err := runAt(t, n, request.One, "SELECT schema_version FROM system.local")
			if err != nil {
				return false, err.Error()
			}
			peers, err := runAt(t, n, request.One, "SELECT peer, schema_version FROM system.peers")
			if err != nil {
				return false, err.Error()
			}
			for _, r := range peers.Rows {
				if string(r[1]) != string(local.Rows[0][0]) {
					return false, fmt.Sprintf("peer %x at %x, local %x", r[0], r[1], local.Rows[0][0])
				}
			}
			return len(peers.Rows) == 2, fmt.Sprintf("%d peers", len(peers.Rows))
		})
	}
}

// TestPartitionedNodeRefusesAndRejoins cuts one node of three off from
// the others' messaging. With partitioned_node_policy refuse it answers
// Unavailable once partitioned_node_timeout has passed, and refuses DDL;
// the majority goes on changing the schema; once healed, the node applies
// what it missed and serves again.
func TestPartitionedNodeRefusesAndRejoins(t *testing.T) {
	faults := messaging.NewFaultyTransport(nil)
	nodes, _, _ := startThreeWith(t, func(k int) Config {
		cfg := Config{Transport: faults, PartitionedNodeTimeout: Duration(2 * time.Second)}
		if k == 3 {
			cfg.PartitionedNodePolicy = PartitionedRefuse
		}
		return cfg
	})
	waitAllUp(t, nodes)
	waitUntil(t, "three voters", func() (bool, string) {
		m := nodes[2].adminMetadata()
		return len(m.Voters) == 3, fmt.Sprintf("%+v", m)
	})
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE p WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE p.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	cut := nodes[2]
	if _, err := runAt(t, cut, request.One, "INSERT INTO p.kv (k, v) VALUES (1, 'before')"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"127.0.0.1", "127.0.0.2"} {
		faults.Cut("127.0.0.3", o)
		faults.Cut(o, "127.0.0.3")
	}
	cutAt := time.Now()
	waitUntil(t, "the cut-off node refuses", func() (bool, string) {
		_, err := runAt(t, cut, request.One, "SELECT * FROM p.kv WHERE k = 1")
		var e *exec.Error
		return errors.As(err, &e) && e.Code == exec.Unavailable && e.Replica.Received == 0 && e.Replica.BlockFor == 1, fmt.Sprint(err)
	})
	// The timeout counts from the last word of the leader, a heartbeat
	// (100ms) or less before the cut.
	if took := time.Since(cutAt); took < 2*time.Second-200*time.Millisecond {
		t.Fatalf("refused %s after the cut, before partitioned_node_timeout (2s)", took)
	}
	if _, err := runAt(t, cut, request.One, "SELECT * FROM system.local"); err != nil {
		t.Fatalf("the node's own system tables while partitioned: %v", err)
	}
	if _, err := exec.NewSession(cut).Run("CREATE TABLE p.minority (k int PRIMARY KEY)"); err == nil || !strings.Contains(err.Error(), "majority of the cluster metadata voters") {
		t.Fatalf("DDL on the cut-off node: %v, want it refused", err)
	}
	if _, err := exec.NewSession(nodes[0]).Run("CREATE TABLE p.majority (k int PRIMARY KEY)"); err != nil {
		t.Fatalf("DDL on the majority: %v", err)
	}
	if _, err := nodes[1].Schema().Table("p", "majority"); err != nil {
		t.Fatalf("the majority's other node: %v", err)
	}
	faults.HealAll()
	waitUntil(t, "the healed node applies the majority's change and serves", func() (bool, string) {
		_, terr := cut.Schema().Table("p", "majority")
		_, err := runAt(t, cut, request.One, "SELECT * FROM p.kv WHERE k = 1")
		return terr == nil && err == nil, fmt.Sprint(terr, err)
	})
	if _, err := cut.Schema().Table("p", "minority"); err == nil {
		t.Fatal("the change refused on the minority is in the schema")
	}
	waitUntil(t, "the healed node at node 1's epoch", func() (bool, string) {
		m := cut.adminMetadata()
		return !m.Partitioned && m.Epoch == nodes[0].adminMetadata().Epoch, fmt.Sprintf("%+v; node 1 at epoch %d", m, nodes[0].adminMetadata().Epoch)
	})
}

// TestWholeClusterRestartKeepsMetadata stops every node and starts them
// again: the schema, its epoch, the host ids, the tokens and the metadata
// group's voters are those from before, and DDL goes on.
func TestWholeClusterRestartKeepsMetadata(t *testing.T) {
	nodes, dirs, gossipPort := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[1]).Run("CREATE KEYSPACE w WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE w.kv (k int PRIMARY KEY, v text); INSERT INTO w.kv (k, v) VALUES (1, 'kept')"); err != nil {
		t.Fatal(err)
	}
	type identity struct {
		host, tokens, version string
		epoch                 uint64
	}
	ids := func() []identity {
		var out []identity
		for _, n := range nodes {
			v := n.Schema().Version()
			out = append(out, identity{host: fmt.Sprintf("%x", n.hostID), tokens: strings.Join(slices.Sorted(slices.Values(n.tokens)), ","),
				version: fmt.Sprintf("%x", v), epoch: n.Schema().Epoch()})
		}
		return out
	}
	waitUntil(t, "three voters", func() (bool, string) {
		m := nodes[0].adminMetadata()
		return len(m.Voters) == 3, fmt.Sprintf("%+v", m)
	})
	before := ids()
	restartAll(t, nodes, dirs, gossipPort, func(int) {})
	if after := ids(); !slices.Equal(after, before) {
		t.Fatalf("after a restart of every node: %+v; before: %+v", after, before)
	}
	res, err := runAt(t, nodes[2], request.Quorum, "SELECT v FROM w.kv WHERE k = 1")
	if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "kept" {
		t.Fatalf("the row after the restart: %v, %v", res, err)
	}
	if _, err := exec.NewSession(nodes[2]).Run("ALTER TABLE w.kv ADD extra int"); err != nil {
		t.Fatalf("DDL after the restart: %v", err)
	}
	if v := nodes[2].adminMetadata().Voters; len(v) != 3 {
		t.Fatalf("voters after the restart: %v", v)
	}
}

// TestUpgradeToTheMetadataLog starts a cluster whose nodes have data and
// tokens but no metadata log (their metadata directories removed, as a
// cluster written before the log existed): the lowest seed founds the log
// with its stored schema, every node records its stored tokens, and the
// schema, rows, host ids and tokens are those from before.
func TestUpgradeToTheMetadataLog(t *testing.T) {
	nodes, dirs, gossipPort := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE u WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE u.kv (k int PRIMARY KEY, v text); INSERT INTO u.kv (k, v) VALUES (1, 'old')"); err != nil {
		t.Fatal(err)
	}
	type identity struct{ host, tokens string }
	ids := func() []identity {
		var out []identity
		for _, n := range nodes {
			out = append(out, identity{host: fmt.Sprintf("%x", n.hostID), tokens: strings.Join(slices.Sorted(slices.Values(n.tokens)), ",")})
		}
		return out
	}
	before, table := ids(), mustTable(t, nodes[0], "u", "kv").ID
	restartAll(t, nodes, dirs, gossipPort, func(i int) {
		if err := os.RemoveAll(filepath.Join(dirs[i], "metadata")); err != nil {
			t.Fatal(err)
		}
	})
	if after := ids(); !slices.Equal(after, before) {
		t.Fatalf("after the upgrade: %+v; before: %+v", after, before)
	}
	for _, n := range nodes {
		if got := mustTable(t, n, "u", "kv").ID; got != table {
			t.Fatalf("%s: table id %s, before %s", n.cfg.ListenAddress, got, table)
		}
		if got := len(n.meta.Status().State.Nodes); got != 3 {
			t.Fatalf("%s: the log records %d nodes, want 3", n.cfg.ListenAddress, got)
		}
		if owners := n.ring.Load().Endpoints(); len(owners) != 3 {
			t.Fatalf("%s: the ring has %v", n.cfg.ListenAddress, owners)
		}
	}
	res, err := runAt(t, nodes[1], request.All, "SELECT v FROM u.kv WHERE k = 1")
	if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "old" {
		t.Fatalf("the row after the upgrade: %v, %v", res, err)
	}
	if _, err := exec.NewSession(nodes[2]).Run("ALTER TABLE u.kv ADD w int"); err != nil {
		t.Fatalf("DDL after the upgrade: %v", err)
	}
}

// restartAll stops every node, runs between(i) for each (its node
// stopped), starts them again one after another, and waits until all are
// up.
func restartAll(t *testing.T, nodes []*Node, dirs []string, gossipPort int, between func(i int)) {
	t.Helper()
	for i, n := range nodes {
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		between(i)
	}
	for k := 1; k <= len(nodes); k++ {
		nodes[k-1] = clusterNode(t, k, dirs[k-1], gossipPort)
	}
	waitAllUp(t, nodes)
}

// TestLeaderCrashDuringDDL closes the metadata leader while a DDL through
// another node is on its way to it: the other two elect a leader, the
// change commits once, and the old leader has it when it is back.
func TestLeaderCrashDuringDDL(t *testing.T) {
	faults := messaging.NewFaultyTransport(nil)
	nodes, dirs, gossipPort := startThreeWith(t, func(int) Config { return Config{Transport: faults} })
	waitAllUp(t, nodes)
	waitUntil(t, "three voters", func() (bool, string) {
		m := nodes[2].adminMetadata()
		return len(m.Voters) == 3 && m.Leader != "", fmt.Sprintf("%+v", m)
	})
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE l WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"); err != nil {
		t.Fatal(err)
	}
	leaderAt := slices.IndexFunc(nodes, func(n *Node) bool { return n.cfg.ListenAddress == nodes[0].adminMetadata().Leader })
	via := nodes[(leaderAt+1)%3]
	faults.Delay(via.cfg.ListenAddress, nodes[leaderAt].cfg.ListenAddress, 300*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		_, err := exec.NewSession(via).Run("CREATE TABLE l.during (k int PRIMARY KEY)")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := nodes[leaderAt].Close(); err != nil {
		t.Fatal(err)
	}
	faults.HealAll()
	if err := <-done; err != nil {
		t.Fatalf("DDL with its leader gone: %v", err)
	}
	id := mustTable(t, via, "l", "during").ID
	for i, n := range nodes {
		if i != leaderAt && mustTable(t, n, "l", "during").ID != id {
			t.Fatalf("%s has another table id", n.cfg.ListenAddress)
		}
	}
	nodes[leaderAt] = clusterNodeWith(t, leaderAt+1, Config{DataDir: dirs[leaderAt], NativePort: freePort(t), Transport: faults}, gossipPort)
	waitUntil(t, "the old leader has the change", func() (bool, string) {
		tb, err := nodes[leaderAt].Schema().Table("l", "during")
		return err == nil && tb.ID == id, fmt.Sprint(err)
	})
}

// TestRestartFromSnapshot makes the metadata log snapshot every five
// entries: a node down through more changes than the log keeps gets the
// leader's snapshot, and a node restarted takes up its own snapshot; both
// end with the schema of the others.
func TestRestartFromSnapshot(t *testing.T) {
	nodes, dirs, gossipPort := startThreeWith(t, func(int) Config { return Config{MetadataSnapshotEntries: 5} })
	open := func(k int) *Node {
		return clusterNodeWith(t, k, Config{DataDir: dirs[k-1], NativePort: freePort(t), MetadataSnapshotEntries: 5}, gossipPort)
	}
	waitAllUp(t, nodes)
	s := exec.NewSession(nodes[0])
	if _, err := s.Run("CREATE KEYSPACE s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}; CREATE TABLE s.t (k int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := nodes[2].Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 110 { // more than the 100 entries a snapshot leaves
		if _, err := s.Run(fmt.Sprintf("ALTER TABLE s.t WITH comment = 'change %d'", i)); err != nil {
			t.Fatal(err)
		}
	}
	nodes[2] = open(3)
	want := mustTable(t, nodes[0], "s", "t").Options.Comment
	// The schema a snapshot brings is in place a moment before the log's
	// published status counts the snapshot.
	waitUntil(t, "the node that was down has the last change, from the leader's snapshot", func() (bool, string) {
		got := mustTable(t, nodes[2], "s", "t").Options.Comment
		restored := nodes[2].meta.Status().Restored
		return got == want && restored > 0, fmt.Sprintf("comment %q, snapshot restored at %d", got, restored)
	})
	if err := nodes[1].Close(); err != nil {
		t.Fatal(err)
	}
	nodes[1] = open(2)
	if got := mustTable(t, nodes[1], "s", "t").Options.Comment; got != want {
		t.Fatalf("restarted from its snapshot, node 2 has comment %q, want %q", got, want)
	}
	if a, b := nodes[1].adminMetadata(), nodes[0].adminMetadata(); a.SchemaEpoch != b.SchemaEpoch {
		t.Fatalf("schema epoch %d after the restart; node 1 at %d", a.SchemaEpoch, b.SchemaEpoch)
	}
}
