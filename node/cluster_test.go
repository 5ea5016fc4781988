package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// waitUntil polls cond for up to 15 seconds; it describes what it saw
// when it gives up.
func waitUntil(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	waitUntilFor(t, what, 15*time.Second, cond)
}

// waitUntilFor is waitUntil with its own limit.
func waitUntilFor(t *testing.T, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s", what, saw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clusterNode opens node k of a local cluster: 127.0.0.k, gossip on the
// shared port, 127.0.0.1 the seed.
func clusterNode(t *testing.T, k int, dir string, gossipPort int) *Node {
	t.Helper()
	return clusterNodeOn(t, k, dir, gossipPort, freePort(t))
}

// clusterNodeOn is clusterNode with the native protocol on a given port.
func clusterNodeOn(t *testing.T, k int, dir string, gossipPort, nativePort int) *Node {
	t.Helper()
	return clusterNodeWith(t, k, Config{DataDir: dir, NativePort: nativePort}, gossipPort)
}

// clusterNodeWith opens node k of a local cluster with cfg's data
// directory, native port, transport, partitioned node settings, metadata
// snapshot interval, hinted handoff and auto repair.
func clusterNodeWith(t *testing.T, k int, cfg Config, gossipPort int) *Node {
	t.Helper()
	n, err := openClusterNode(t, k, cfg, gossipPort)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// openClusterNode is clusterNodeWith, returning Open's error.
func openClusterNode(t *testing.T, k int, cfg Config, gossipPort int) (*Node, error) {
	return Open(Config{DataDir: cfg.DataDir, ListenAddress: fmt.Sprintf("127.0.0.%d", k), NativePort: cfg.NativePort, Transport: cfg.Transport,
		GossipPort: gossipPort, StoragePort: storagePortOf(t, gossipPort), Seeds: []string{fmt.Sprintf("127.0.0.1:%d", gossipPort)},
		ClusterName: clusterNameOf(gossipPort), Rack: fmt.Sprintf("rack%d", k),
		PartitionedNodePolicy: cfg.PartitionedNodePolicy, PartitionedNodeTimeout: cfg.PartitionedNodeTimeout,
		MetadataSnapshotEntries: cfg.MetadataSnapshotEntries, HintedHandoffEnabled: cfg.HintedHandoffEnabled, AutoRepair: cfg.AutoRepair,
		Authenticator: cfg.Authenticator, Authorizer: cfg.Authorizer, SuperuserSetupDelay: cfg.SuperuserSetupDelay,
		ServerEncryptionOptions: cfg.ServerEncryptionOptions, GossipEncryptionKeys: cfg.GossipEncryptionKeys,
		AdminAuthentication: cfg.AdminAuthentication, AdminPasswordFile: cfg.AdminPasswordFile})
}

// storagePorts are the storage ports of the test clusters, by their
// gossip port: chosen free at run time, so that the tests pass beside a
// cluster on the default ports.
var storagePorts = struct {
	sync.Mutex
	byGossip map[int]int
}{byGossip: map[int]int{}}

func storagePortOf(t *testing.T, gossipPort int) int {
	storagePorts.Lock()
	defer storagePorts.Unlock()
	p, ok := storagePorts.byGossip[gossipPort]
	if !ok {
		p = testutil.ClusterPort(t, 3)
		storagePorts.byGossip[gossipPort] = p
	}
	return p
}

func mustTable(t *testing.T, n *Node, ks, name string) *schema.Table {
	t.Helper()
	tb, err := n.Schema().Table(ks, name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// pagedCount reads a query through n in pages of 7 rows (so pages end
// inside every node's share) and counts the distinct keys.
func pagedCount(t *testing.T, n *Node, query string) int {
	t.Helper()
	seen := map[string]bool{}
	var state []byte
	for {
		page, err := exec.NewSession(n).QueryText(query, exec.QueryParams{PageSize: 7, PagingState: state, Consistency: request.Quorum})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			if seen[string(r[0])] {
				t.Errorf("%s: key %x twice", query, r[0])
			}
			seen[string(r[0])] = true
		}
		if state = page.PagingState; state == nil {
			return len(seen)
		}
	}
}

// clusterNameOf names a test cluster after its gossip port: clusters of
// other tests, on the same addresses, refuse its gossip.
func clusterNameOf(gossipPort int) string { return fmt.Sprintf("node test %d", gossipPort) }

// runAt runs one statement through n at a consistency level.
func runAt(t *testing.T, n *Node, cl request.Consistency, text string) (*exec.Result, error) {
	t.Helper()
	return exec.NewSession(n).QueryText(text, exec.QueryParams{Consistency: cl})
}

// startThree starts nodes 127.0.0.1 to .3 one after another, each on a
// directory of its own, closed when the test ends (whichever node then
// holds a place, after restarts).
func startThree(t *testing.T) (nodes []*Node, dirs []string, gossipPort int) {
	t.Helper()
	return startThreeWith(t, func(int) Config { return Config{} })
}

// startThreeWith is startThree with node k's transport, partitioned node
// settings and metadata snapshot interval from configure(k) (its data
// directory and native port are chosen here).
func startThreeWith(t *testing.T, configure func(k int) Config) (nodes []*Node, dirs []string, gossipPort int) {
	t.Helper()
	gossipPort = testutil.ClusterPort(t, 3)
	dirs = []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for k := 1; k <= 3; k++ {
		cfg := configure(k)
		cfg.DataDir, cfg.NativePort = dirs[k-1], freePort(t)
		nodes = append(nodes, clusterNodeWith(t, k, cfg, gossipPort))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Close()
		}
	})
	return nodes, dirs, gossipPort
}

// waitAllUp waits until every node sees every node up.
func waitAllUp(t *testing.T, nodes []*Node) {
	t.Helper()
	for _, n := range nodes {
		waitUntil(t, "every node up from "+n.cfg.ListenAddress, func() (bool, string) {
			ss := statuses(t, n)
			ok := len(ss) == len(nodes)
			for _, s := range ss {
				ok = ok && s.Status == "Up"
			}
			return ok, describe(ss)
		})
	}
}

// statuses are the admin API's view of the ring from n.
func statuses(t *testing.T, n *Node) []AdminStatus {
	t.Helper()
	out, err := n.adminStatuses(httptest.NewRequest("GET", "/status", nil))
	if err != nil {
		t.Fatal(err)
	}
	return out.([]AdminStatus)
}

func describe(ss []AdminStatus) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s %s/%s %.1f%% %d tokens; ", s.Address, s.Status, s.State, 100*s.Ownership, len(s.Tokens))
	}
	return b.String()
}

// TestThreeNodeRing starts three nodes one after another through one
// seed. Each sees all three up with a third of the ring, lists the other
// two in system.peers, sees a node that shut down as down (its tokens
// still in the ring), and sees it come back with the same host id and
// tokens.
func TestThreeNodeRing(t *testing.T) {
	nodes, dirs, gossipPort := startThree(t)
	for _, n := range nodes {
		waitUntil(t, "three nodes up from "+n.cfg.ListenAddress, func() (bool, string) {
			ss := statuses(t, n)
			ok := len(ss) == 3
			for _, s := range ss {
				ok = ok && s.Status == "Up" && s.State == "Normal" && len(s.Tokens) == 16 && s.Ownership >= 0.25 && s.Ownership <= 0.42
			}
			return ok, describe(ss)
		})
	}
	// Each node's ring is the same, and places a replica in each rack.
	m := nodes[0].ring.Load()
	if got := len(m.SortedTokens()); got != 48 {
		t.Fatalf("the ring has %d tokens, want 48", got)
	}
	for _, n := range nodes[1:] {
		if fmt.Sprint(n.ring.Load().SortedTokens()) != fmt.Sprint(m.SortedTokens()) {
			t.Errorf("%s has another ring", n.cfg.ListenAddress)
		}
	}
	if r := (ring.SimpleStrategy{Factor: 3}).Replicas(m, m.SortedTokens()[0]); len(r) != 3 {
		t.Errorf("RF 3 replicas: %v", r)
	}

	// system.peers holds the two others, as drivers read it.
	res, err := exec.NewSession(nodes[0]).Run("SELECT peer, host_id, tokens, rpc_address FROM system.peers")
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string]bool{}
	for _, row := range res[0].Rows {
		peer := cqltype.InetType.Format(row[0])
		peers[peer] = true
		tokens, _ := cqltype.DecodeCollection(row[2])
		if len(row[1]) != 16 || len(tokens) != 16 || cqltype.InetType.Format(row[3]) != peer {
			t.Errorf("system.peers row of %s: host id %x, %d tokens, rpc_address %s", peer, row[1], len(tokens), cqltype.InetType.Format(row[3]))
		}
	}
	if !peers["127.0.0.2"] || !peers["127.0.0.3"] || len(peers) != 2 {
		t.Errorf("system.peers on 127.0.0.1 lists %v", peers)
	}
	// The storage port the nodes were given, not Cassandra's default, is
	// what system.local, peers_v2 and DESCRIBE CLUSTER show.
	port := nodes[0].cfg.StoragePort
	asInt := func(b []byte) int {
		v, err := cqltype.DecodeInt(b)
		if err != nil {
			t.Fatal(err)
		}
		return int(v)
	}
	local, err := exec.NewSession(nodes[0]).QueryText("SELECT listen_port, broadcast_port FROM system.local", exec.QueryParams{})
	if err != nil || len(local.Rows) != 1 || asInt(local.Rows[0][0]) != port || asInt(local.Rows[0][1]) != port {
		t.Errorf("system.local's ports: %v, %v; want %d", local, err, port)
	}
	v2, err := exec.NewSession(nodes[0]).QueryText("SELECT peer_port FROM system.peers_v2", exec.QueryParams{})
	if err != nil || len(v2.Rows) != 2 {
		t.Fatalf("system.peers_v2: %v, %v", v2, err)
	}
	for _, row := range v2.Rows {
		if got := asInt(row[0]); got != port {
			t.Errorf("system.peers_v2 peer_port %d, want %d", got, port)
		}
	}
	for tok, owners := range nodes[0].ClusterInfo().Ownership("system_auth") {
		for _, o := range owners {
			if !strings.HasSuffix(o, fmt.Sprintf(":%d", port)) {
				t.Errorf("DESCRIBE CLUSTER: token %s owned by %s, want port %d", tok, o, port)
			}
		}
	}

	// DDL on one node is on every node when it returns.
	if _, err := exec.NewSession(nodes[1]).Run("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE shop.kv (k int PRIMARY KEY, v text); CREATE TABLE shop.kv2 (k int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if _, err := n.Schema().Table("shop", "kv"); err != nil {
			t.Errorf("%s after the DDL: %v", n.cfg.ListenAddress, err)
		}
	}
	agree := func() (bool, string) {
		var versions []string
		for _, n := range nodes {
			v := n.Schema().Version()
			versions = append(versions, fmt.Sprintf("%x", v[:4]))
		}
		return versions[0] == versions[1] && versions[1] == versions[2], fmt.Sprint(versions)
	}
	if ok, saw := agree(); !ok {
		t.Errorf("schema versions after the DDL: %s", saw)
	}

	// Writes through one node at QUORUM are read through every node, by
	// key and by a scan.
	for k := 0; k < 50; k++ {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO shop.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		res, err := runAt(t, n, request.Quorum, "SELECT v FROM shop.kv WHERE k = 7")
		if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "v7" {
			t.Errorf("reading k = 7 through %s: %v, %v", n.cfg.ListenAddress, res, err)
		}
		res, err = runAt(t, n, request.One, "SELECT k FROM shop.kv")
		if err != nil || len(res.Rows) != 50 {
			t.Errorf("scanning through %s: %d rows, %v", n.cfg.ListenAddress, len(res.Rows), err)
		}
		if seen := pagedCount(t, n, "SELECT k FROM shop.kv"); seen != 50 {
			t.Errorf("paging through %s: %d rows", n.cfg.ListenAddress, seen)
		}
	}

	// With RF 1 each row lives on one node: reads by key go to its
	// replica, and scans gather every node's share.
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE single WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE single.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 60; k++ {
		if _, err := runAt(t, nodes[k%3], request.One, fmt.Sprintf("INSERT INTO single.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, n := range nodes {
		parts, err := localEngine{n.engine}.Scan(mustTable(t, n, "single", "kv").ID, request.RangeRead{})
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) == 60 {
			t.Errorf("%s holds every row of an RF 1 table", n.cfg.ListenAddress)
		}
		held += len(parts)
		for k := 0; k < 60; k += 13 {
			res, err := runAt(t, n, request.One, fmt.Sprintf("SELECT v FROM single.kv WHERE k = %d", k))
			if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != fmt.Sprintf("v%d", k) {
				t.Errorf("reading k = %d through %s: %v, %v", k, n.cfg.ListenAddress, res, err)
			}
		}
		res, err := runAt(t, n, request.One, "SELECT k FROM single.kv")
		if err != nil || len(res.Rows) != 60 {
			t.Errorf("scanning an RF 1 table through %s: %d rows, %v", n.cfg.ListenAddress, len(res.Rows), err)
		}
		if seen := pagedCount(t, n, "SELECT k FROM single.kv"); seen != 60 {
			t.Errorf("paging an RF 1 table through %s: %d rows", n.cfg.ListenAddress, seen)
		}
		res, err = runAt(t, n, request.One, "SELECT k FROM single.kv LIMIT 25")
		if err != nil || len(res.Rows) != 25 {
			t.Errorf("LIMIT 25 through %s: %d rows, %v", n.cfg.ListenAddress, len(res.Rows), err)
		}
	}
	if held != 60 {
		t.Errorf("the nodes hold %d rows of an RF 1 table, want 60", held)
	}
	// TRUNCATE through one node empties every node's share.
	if _, err := runAt(t, nodes[1], request.One, "TRUNCATE single.kv"); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if parts, err := (localEngine{n.engine}).Scan(mustTable(t, n, "single", "kv").ID, request.RangeRead{}); err != nil || len(parts) != 0 {
			t.Errorf("%s after TRUNCATE holds %d partitions, %v", n.cfg.ListenAddress, len(parts), err)
		}
	}

	// A clean shutdown: the others see the node down at once, its tokens
	// still its own.
	hostID, tokens := fmt.Sprintf("%x", nodes[2].hostID), fmt.Sprint(slices.Sorted(slices.Values(nodes[2].tokens)))
	if err := nodes[2].Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "127.0.0.3 down", func() (bool, string) {
		ss := statuses(t, nodes[0])
		return len(ss) == 3 && ss[2].Status == "Down" && len(ss[2].Tokens) == 16, describe(ss)
	})
	if got := len(nodes[0].ring.Load().SortedTokens()); got != 48 {
		t.Errorf("with 127.0.0.3 down the ring has %d tokens", got)
	}
	// RF 3 with one node down: QUORUM works, ALL is unavailable.
	if _, err := runAt(t, nodes[0], request.Quorum, "INSERT INTO shop.kv (k, v) VALUES (100, 'q')"); err != nil {
		t.Errorf("a QUORUM write with one node down: %v", err)
	}
	if res, err := runAt(t, nodes[1], request.Quorum, "SELECT v FROM shop.kv WHERE k = 100"); err != nil || len(res.Rows) != 1 {
		t.Errorf("a QUORUM read with one node down: %v, %v", res, err)
	}
	for _, stmt := range []string{"INSERT INTO shop.kv (k, v) VALUES (101, 'a')", "SELECT v FROM shop.kv WHERE k = 100"} {
		_, err := runAt(t, nodes[0], request.All, stmt)
		var e *exec.Error
		if !errors.As(err, &e) || e.Code != exec.Unavailable || e.Replica.BlockFor != 3 || e.Replica.Received != 2 ||
			e.Message != "Cannot achieve consistency level ALL" {
			t.Errorf("%s at ALL with one node down: %v", stmt, err)
		}
	}

	// DDL while it is down reaches it when it is back: it pulls the
	// schema from a node whose version differs, drops included.
	if _, err := exec.NewSession(nodes[0]).Run("CREATE TABLE shop.late (k int PRIMARY KEY); DROP TABLE shop.kv2"); err != nil {
		t.Fatal(err)
	}

	// It comes back as itself.
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	if fmt.Sprintf("%x", nodes[2].hostID) != hostID || fmt.Sprint(slices.Sorted(slices.Values(nodes[2].tokens))) != tokens {
		t.Errorf("after a restart: host id %x, tokens %v; want %s, %s", nodes[2].hostID, nodes[2].tokens, hostID, tokens)
	}
	waitUntil(t, "127.0.0.3 back", func() (bool, string) {
		ss := statuses(t, nodes[0])
		return len(ss) == 3 && ss[2].Status == "Up", describe(ss)
	})
	// Its data came back with it: the rows it holds as a replica.
	if p, err := readLocal(nodes[2], mustTable(t, nodes[2], "shop", "kv"), cqltypeInt(7)); err != nil || p == nil || len(p.Rows) != 1 {
		t.Errorf("the restarted node's own copy of k = 7: %v, %v", p, err)
	}
	waitUntil(t, "the schema on the restarted node", func() (bool, string) {
		_, err := nodes[2].Schema().Table("shop", "late")
		_, dropped := nodes[2].Schema().Table("shop", "kv2")
		ok, saw := agree()
		return err == nil && dropped != nil && ok, fmt.Sprintf("%v, kv2 %v, versions %s", err, dropped, saw)
	})
}

// TestTokenAwareRouting: gocql's TokenAwareHostPolicy finds the replicas
// from system.local and system.peers, so with RF 1 every request reaches
// the node holding its key and no coordinator forwards one (the nodes'
// counters say so); round-robin routing makes coordinators forward.
func TestTokenAwareRouting(t *testing.T) {
	gossipPort, nativePort := freePort(t), freePort(t)
	var nodes []*Node
	for k := 1; k <= 3; k++ {
		n := clusterNodeOn(t, k, t.TempDir(), gossipPort, nativePort)
		defer n.Close()
		if _, err := n.StartNative(); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	waitAllUp(t, nodes)
	// DDL through gocql, which waits for the nodes' schema versions to
	// agree before it returns (and fails if they do not).
	ddl := gocql.NewCluster("127.0.0.2")
	ddl.Port, ddl.MaxWaitSchemaAgreement = nativePort, 10*time.Second
	ds, err := ddl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"CREATE KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE one.kv (k int PRIMARY KEY, v int)"} {
		if err := ds.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := ds.AwaitSchemaAgreement(context.Background()); err != nil {
		t.Fatalf("schema agreement: %v", err)
	}
	ds.Close()
	for _, n := range nodes {
		mustTable(t, n, "one", "kv")
	}
	forwarded := func() float64 {
		total := 0.0
		for _, n := range nodes {
			total += float64(n.coord.Stats.ForwardedMutations.Load() + n.coord.Stats.ForwardedReads.Load())
		}
		return total
	}
	run := func(policy gocql.HostSelectionPolicy, from int) {
		t.Helper()
		cluster := gocql.NewCluster("127.0.0.1")
		cluster.Port = nativePort
		cluster.PoolConfig.HostSelectionPolicy = policy
		cluster.Consistency = gocql.One
		s, err := cluster.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for k := from; k < from+200; k++ {
			if err := s.Query("INSERT INTO one.kv (k, v) VALUES (?, ?)", k, k).Exec(); err != nil {
				t.Fatal(err)
			}
			var v int
			if err := s.Query("SELECT v FROM one.kv WHERE k = ?", k).Scan(&v); err != nil || v != k {
				t.Fatalf("read %d: %d, %v", k, v, err)
			}
		}
	}
	run(gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()), 0)
	if f := forwarded(); f != 0 {
		t.Errorf("token-aware routing: coordinators forwarded %v requests", f)
	}
	for _, n := range nodes {
		if c := n.coord.Stats.Writes.Load(); c < 20 {
			t.Errorf("%s coordinated %v of 200 writes", n.cfg.ListenAddress, c)
		}
	}
	run(gocql.RoundRobinHostPolicy(), 1000)
	if f := forwarded(); f < 100 {
		t.Errorf("round-robin routing: coordinators forwarded only %v of 400 requests", f)
	}
}

// TestReadRepairAndTimeouts makes a replica miss writes (the messages to
// it dropped): a QUORUM read through it merges its stale answer with a
// current one (a newer value, a deletion), answers the current data and
// repairs it. Dropped acknowledgements make an ALL write time out, and
// two nodes down make QUORUM unavailable.
func TestReadRepairAndTimeouts(t *testing.T) {
	faults := messaging.NewFaultyTransport(nil)
	nodes, _, _ := startThreeWith(t, func(int) Config { return Config{Transport: faults} })
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE r WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE r.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	write := func(n *Node, cl request.Consistency, stmt string) {
		t.Helper()
		if _, err := runAt(t, n, cl, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	localValue := func(n *Node, k int) string {
		t.Helper()
		p, err := readLocal(n, mustTable(t, n, "r", "kv"), cqltypeInt(k))
		if err != nil {
			t.Fatal(err)
		}
		if p == nil || len(p.Rows) == 0 {
			return "<none>"
		}
		for _, c := range p.Rows[0].Row.Cells {
			if c.Column == "v" {
				return string(c.Value)
			}
		}
		return "<no v>"
	}
	write(nodes[0], request.All, "INSERT INTO r.kv (k, v) VALUES (1, 'old')")
	write(nodes[0], request.All, "INSERT INTO r.kv (k, v) VALUES (2, 'doomed')")
	stale := nodes[2]
	faults.Drop("127.0.0.1", "127.0.0.3")
	write(nodes[0], request.Quorum, "UPDATE r.kv SET v = 'new' WHERE k = 1")
	write(nodes[0], request.Quorum, "DELETE FROM r.kv WHERE k = 2")
	faults.HealAll()
	if v := localValue(stale, 1); v != "old" {
		t.Fatalf("the stale replica has %q for k = 1, want old", v)
	}
	if v := localValue(stale, 2); v != "doomed" {
		t.Fatalf("the stale replica has %q for k = 2, want doomed", v)
	}
	res, err := runAt(t, stale, request.Quorum, "SELECT v FROM r.kv WHERE k = 1")
	if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "new" {
		t.Fatalf("a QUORUM read through the stale replica: %v, %v", res, err)
	}
	if res, err := runAt(t, stale, request.Quorum, "SELECT v FROM r.kv WHERE k = 2"); err != nil || len(res.Rows) != 0 {
		t.Fatalf("a QUORUM read of a deleted row through the stale replica: %v, %v", res, err)
	}
	if v1, v2 := localValue(stale, 1), localValue(stale, 2); v1 != "new" || v2 != "<none>" {
		t.Errorf("after the reads the replica has %q and %q, want new and nothing", v1, v2)
	}
	// A scan through the stale replica merges the replicas' entries too:
	// the deletion it missed still hides the row. (k = 2's own read above
	// repaired the stale replica, so the deletion is made afresh.)
	write(nodes[0], request.All, "INSERT INTO r.kv (k, v) VALUES (5, 'doomed')")
	faults.Drop("127.0.0.1", "127.0.0.3")
	write(nodes[0], request.Quorum, "DELETE FROM r.kv WHERE k = 5")
	faults.HealAll()
	if v := localValue(stale, 5); v != "doomed" {
		t.Fatalf("the stale replica has %q for k = 5, want doomed", v)
	}
	if res, err := runAt(t, stale, request.All, "SELECT k, v FROM r.kv"); err != nil || len(res.Rows) != 1 || string(res.Rows[0][1]) != "new" {
		t.Errorf("a scan through the stale replica: %v, %v", res, err)
	}
	if r := stale.coord.Stats.ReadRepairs.Load(); r != 2 {
		t.Errorf("%v read repairs, want 2", r)
	}
	// Two reads found the digests different; once repaired, they agree.
	if m := stale.coord.Stats.DigestMismatches.Load(); m != 2 {
		t.Errorf("%v digest mismatches, want 2", m)
	}
	if _, err := runAt(t, stale, request.All, "SELECT v FROM r.kv WHERE k = 1"); err != nil {
		t.Fatal(err)
	}
	if m := stale.coord.Stats.DigestMismatches.Load(); m != 2 {
		t.Errorf("after the repair a read at ALL found the digests different (%v mismatches)", m)
	}

	// Acknowledgements that never come: an ALL write times out with the
	// one acknowledgement it had (this node's own).
	faults.Drop("127.0.0.2", "127.0.0.1")
	faults.Drop("127.0.0.3", "127.0.0.1")
	_, err = runAt(t, nodes[0], request.All, "INSERT INTO r.kv (k, v) VALUES (3, 'x')")
	var e *exec.Error
	if !errors.As(err, &e) || e.Code != exec.WriteTimeout || e.Replica.Received != 1 || e.Replica.BlockFor != 3 ||
		e.Replica.WriteType != "SIMPLE" || e.Message != "Operation timed out - received only 1 responses." {
		t.Errorf("an ALL write with no acknowledgements coming back: %v", err)
	}
	faults.HealAll()

	// Two of three down: QUORUM is unavailable, naming 2 and 1.
	for _, n := range nodes[1:] {
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "two nodes down", func() (bool, string) {
		ss := statuses(t, nodes[0])
		return ss[1].Status == "Down" && ss[2].Status == "Down", describe(ss)
	})
	for _, stmt := range []string{"INSERT INTO r.kv (k, v) VALUES (4, 'x')", "SELECT v FROM r.kv WHERE k = 1"} {
		_, err := runAt(t, nodes[0], request.Quorum, stmt)
		if !errors.As(err, &e) || e.Code != exec.Unavailable || e.Replica.BlockFor != 2 || e.Replica.Received != 1 {
			t.Errorf("%s at QUORUM with two nodes down: %v", stmt, err)
		}
	}
	if res, err := runAt(t, nodes[0], request.One, "SELECT v FROM r.kv WHERE k = 1"); err != nil || len(res.Rows) != 1 {
		t.Errorf("a ONE read with two nodes down: %v, %v", res, err)
	}
	// TRUNCATE needs every node.
	_, err = runAt(t, nodes[0], request.One, "TRUNCATE r.kv")
	if !errors.As(err, &e) || e.Code != exec.Unavailable || e.Replica.BlockFor != 3 || e.Replica.Received != 1 || e.Message != "Cannot achieve consistency level ALL" {
		t.Errorf("TRUNCATE with two nodes down: %v", err)
	}
}

// cqltypeInt is an int partition key's bytes.
func cqltypeInt(k int) []byte { return cqltype.EncodeInt(int32(k)) }

// TestHintedHandoff: writes made while a replica is down are kept as
// hints and reach it when it is back, without a read; a write at ANY whose
// only replica is down is taken as a hint, where ONE is unavailable.
func TestHintedHandoff(t *testing.T) {
	nodes, dirs, gossipPort := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE h WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE h.kv (k int PRIMARY KEY, v text);" +
		"CREATE KEYSPACE h1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE h1.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	stopThird(t, nodes)
	for k := 0; k < 20; k++ {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO h.kv (k, v) VALUES (%d, 'h%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	if got := nodes[0].coord.Stats.HintsStored.Load(); got != 20 {
		t.Errorf("%v hints kept for the node that was down, want 20", got)
	}
	// A key whose only replica (RF 1) is the node that is down.
	key := -1
	for k := 0; k < 1000 && key < 0; k++ {
		s, err := nodes[0].strategy(nodes[0].Schema().Keyspace("h1"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Replicas(nodes[0].ring.Load(), nodes[0].engine.Partitioner().Token(cqltypeInt(k)))[0] == "127.0.0.3" {
			key = k
		}
	}
	insert := fmt.Sprintf("INSERT INTO h1.kv (k, v) VALUES (%d, 'any')", key)
	var e *exec.Error
	if _, err := runAt(t, nodes[0], request.One, insert); !errors.As(err, &e) || e.Code != exec.Unavailable {
		t.Errorf("ONE with the only replica down: %v", err)
	}
	if _, err := runAt(t, nodes[0], request.Any, insert); err != nil {
		t.Errorf("ANY with the only replica down: %v", err)
	}
	if p := nodes[0].adminPendingHints(); len(p) != 1 || p[0].Address != net.JoinHostPort("127.0.0.3", strconv.Itoa(nodes[2].cfg.StoragePort)) || p[0].Status != "DOWN" || p[0].Files != 1 ||
		p[0].HostID != cqltype.UUIDType.Format(nodes[2].hostID) {
		t.Errorf("pending hints %+v, want one file for 127.0.0.3, down", p)
	}
	// system_views.pending_hints says the same, keyed by the host id.
	res, err := exec.NewSession(nodes[0]).Run("SELECT host_id, address, port, status, files, dc, rack FROM system_views.pending_hints")
	if err != nil {
		t.Fatal(err)
	}
	if rows := res[0].Rows; len(rows) != 1 || !bytes.Equal(rows[0][0], nodes[2].hostID) || net.IP(rows[0][1]).String() != "127.0.0.3" ||
		!bytes.Equal(rows[0][2], cqltype.EncodeInt(int32(nodes[2].cfg.StoragePort))) || string(rows[0][3]) != "DOWN" ||
		!bytes.Equal(rows[0][4], cqltype.EncodeInt(1)) || string(rows[0][5]) != "datacenter1" || string(rows[0][6]) != nodes[2].cfg.Rack {
		t.Errorf("system_views.pending_hints: %q", rows)
	}

	// Back up, it gets every hint, with no read to repair it.
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	h := mustTable(t, nodes[2], "h", "kv")
	waitUntil(t, "the hints on the node that was down", func() (bool, string) {
		held := 0
		for k := 0; k < 20; k++ {
			if p, _ := readLocal(nodes[2], h, cqltypeInt(k)); p != nil && len(p.Rows) == 1 {
				held++
			}
		}
		p, _ := readLocal(nodes[2], mustTable(t, nodes[2], "h1", "kv"), cqltypeInt(key))
		return held == 20 && p != nil, fmt.Sprintf("%d of 20 rows, the ANY row %v", held, p != nil)
	})
	if got := nodes[0].coord.Stats.HintsDelivered.Load(); got != 21 {
		t.Errorf("%v hints delivered, want 21", got)
	}
	if files, _ := filepath.Glob(filepath.Join(nodes[0].cfg.HintsDirectory, "*.hints")); len(files) != 0 || len(nodes[0].adminPendingHints()) != 0 {
		t.Errorf("the delivered hints are still kept: %v, pending %+v", files, nodes[0].adminPendingHints())
	}
}

// TestRebuild: a node that missed writes (down, with hinted handoff off)
// streams the ranges it replicates from the other replicas with
// nodetool rebuild and then holds every row alone; a keyspace whose only
// replica it is cannot be rebuilt, and says so.
func TestRebuild(t *testing.T) {
	nodes, dirs, gossipPort := startThreeWith(t, func(int) Config { return Config{HintedHandoffEnabled: new(false)} })
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE r WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE r.kv (k int PRIMARY KEY, v text);" +
		"CREATE TABLE r.other (k int PRIMARY KEY, v text);" +
		"CREATE KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"); err != nil {
		t.Fatal(err)
	}
	stopThird(t, nodes)
	const rows = 200
	for k := range rows {
		if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("INSERT INTO r.kv (k, v) VALUES (%d, 'v%d')", k, k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runAt(t, nodes[0], request.Quorum, "DELETE FROM r.kv WHERE k = 7"); err != nil {
		t.Fatal(err)
	}
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	waitAllUp(t, nodes)
	kv := mustTable(t, nodes[2], "r", "kv")
	held := func() int {
		n := 0
		for k := range rows {
			if p, err := readLocal(nodes[2], kv, cqltypeInt(k)); err == nil && p != nil && len(p.Rows) == 1 {
				n++
			}
		}
		return n
	}
	if got := held(); got != 0 {
		t.Fatalf("the node that was down holds %d rows before the rebuild", got)
	}
	ctx := context.Background()
	if err := nodes[2].Rebuild(ctx, RebuildRequest{}); !errors.Is(err, errNoSource) || !strings.Contains(err.Error(), "in keyspace one") {
		t.Fatalf("a rebuild of a keyspace the node alone replicates: %v", err)
	}
	if err := nodes[2].Rebuild(ctx, RebuildRequest{Keyspace: "r", SourceDC: "nowhere"}); err == nil ||
		err.Error() != "Provided datacenter 'nowhere' is not a valid datacenter, available datacenters are: [datacenter1]" {
		t.Fatalf("a rebuild from a data centre that is not: %v", err)
	}
	if err := nodes[2].Rebuild(ctx, RebuildRequest{Keyspace: "r", SourceDC: "datacenter1"}); err != nil {
		t.Fatal(err)
	}
	// Every row written while it was down but the one deleted then.
	if got := held(); got != rows-1 {
		t.Fatalf("after the rebuild the node holds %d of %d rows", got, rows-1)
	}
	for _, n := range nodes {
		if s := n.streaming.Sessions(); len(s) != 0 {
			t.Errorf("%s still lists sessions: %+v", n.endpoint(), s)
		}
	}
}

// stopThird stops nodes[2] cleanly and waits until node 1 sees it down.
func stopThird(t *testing.T, nodes []*Node) {
	t.Helper()
	if err := nodes[2].Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "127.0.0.3 down", func() (bool, string) {
		ss := statuses(t, nodes[0])
		return ss[2].Status == "Down", describe(ss)
	})
}

// readLocal reads a partition from node n's own engine alone.
func readLocal(n *Node, t *schema.Table, key []byte) (*request.Partition, error) {
	return localEngine{n.engine}.Read(t.ID, key, request.Slice{Now: time.Now().Unix()})
}

// TestDisableGossip: a node whose gossip is stopped (nodetool
// disablegossip) is seen down by the others, says so itself, and keeps
// serving its own reads; started again (enablegossip), it is up again
// everywhere, writes reach it, and it sees the others up.
func TestDisableGossip(t *testing.T) {
	nodes, _, _ := startThree(t)
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE g WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE g.kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	if err := nodes[2].disableGossip(); err != nil {
		t.Fatal(err)
	}
	if nodes[2].gossipRunning() {
		t.Error("gossip runs after disablegossip")
	}
	for _, n := range nodes[:2] {
		waitUntil(t, "127.0.0.3 down from "+n.cfg.ListenAddress, func() (bool, string) {
			return !n.gossip.Alive("127.0.0.3"), "127.0.0.3 still up"
		})
	}
	// A write at ALL cannot be met without it; its own reads still work.
	var e *exec.Error
	if _, err := runAt(t, nodes[0], request.All, "INSERT INTO g.kv (k, v) VALUES (1, 'one')"); !errors.As(err, &e) || e.Code != exec.Unavailable {
		t.Errorf("a write at ALL with a node's gossip stopped: %v", err)
	}
	if _, err := runAt(t, nodes[2], request.One, "SELECT * FROM system.local"); err != nil {
		t.Errorf("a local read on the node whose gossip stopped: %v", err)
	}

	if err := nodes[2].enableGossip(); err != nil {
		t.Fatal(err)
	}
	if !nodes[2].gossipRunning() {
		t.Error("gossip does not run after enablegossip")
	}
	waitAllUp(t, nodes)
	if _, err := runAt(t, nodes[0], request.All, "INSERT INTO g.kv (k, v) VALUES (2, 'two')"); err != nil {
		t.Errorf("a write at ALL after enablegossip: %v", err)
	}
	if p, _ := readLocal(nodes[2], mustTable(t, nodes[2], "g", "kv"), cqltypeInt(2)); p == nil || len(p.Rows) != 1 {
		t.Errorf("the write after enablegossip is not on the node: %+v", p)
	}
}
