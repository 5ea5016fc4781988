package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
)

// sibyl is the binary the test's nodes run, built once.
var sibyl string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sibyl-cluster-test")
	if err != nil {
		panic(err)
	}
	sibyl = filepath.Join(dir, "sibyl")
	build := exec.Command("go", "build", "-o", sibyl, "../../cmd/sibyl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building sibyl: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestUpStopStartDown runs a three-node cluster of real processes: up
// returns once every node lists every other in its system.peers, a
// second up refuses, a stopped node shows down, a fourth node added while
// it is stopped is in every running node's system.peers when add
// returns, the stopped node comes back, the fourth is decommissioned,
// the second replaced, and down stops every process.
func TestUpStopStartDown(t *testing.T) {
	var out bytes.Buffer
	gossipPort := testutil.ClusterPort(t, 4)
	c := &Cluster{Dir: t.TempDir(), Out: &out, UpTimeout: time.Minute, Config: Config{Name: fmt.Sprintf("cluster test %d", gossipPort), Nodes: 3, Binary: sibyl,
		NativePort: testutil.ClusterPort(t, 4), AdminPort: testutil.ClusterPort(t, 4), GossipPort: gossipPort, StoragePort: testutil.ClusterPort(t, 4)}}
	defer Down(c) // whatever happens, no node outlives the test
	if err := Up(c); err != nil {
		t.Fatalf("up: %v\n%s", err, out.String())
	}
	status := func() string {
		t.Helper()
		out.Reset()
		if err := Status(c, &out); err != nil {
			t.Fatalf("status: %v\n%s", err, out.String())
		}
		return out.String()
	}
	// A client that connects the moment up returns finds every peer in
	// the system.peers of whichever node it reaches.
	checkPeers(t, c, "up")
	un := regexp.MustCompile(`(?m)^UN  127\.0\.0\.[123] `)
	if s := status(); len(un.FindAllString(s, -1)) != 3 || !strings.Contains(s, "node3: running") {
		t.Fatalf("status after up:\n%s", s)
	}
	if err := Up(&Cluster{Dir: c.Dir, Out: &out, Config: Config{Nodes: 3, Binary: sibyl}}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second up: %v", err)
	}

	if err := c.Stop(3); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s := status(); !strings.Contains(s, "DN  127.0.0.3 ") || !strings.Contains(s, "node3: stopped"); s = status() {
		if time.Now().After(deadline) {
			t.Fatalf("status with node3 stopped:\n%s", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A fourth node joins while node3 is stopped; once add returns, every
	// running node lists it (and node3), and it lists every other.
	if err := Add(c, Place{DataCenter: "dc2", Rack: "r7"}); err != nil {
		t.Fatalf("add: %v\n%s", err, out.String())
	}
	checkPeers(t, c, "add")
	// The new node is in a data centre of its own: status prints it
	// under a heading of its own, with its rack.
	if s := status(); len(regexp.MustCompile(`(?m)^UN  127\.0\.0\.[124] `).FindAllString(s, -1)) != 3 ||
		!strings.Contains(s, "DN  127.0.0.3 ") || !strings.Contains(s, "node4: running") ||
		!regexp.MustCompile(`(?s)Datacenter: dc2\n.*UN  127\.0\.0\.4 [^\n]* r7\s*\n`).MatchString(s) {
		t.Fatalf("status after add:\n%s", s)
	}
	if c, err := Open(c.Dir, &out); err != nil || c.Nodes != 4 || !strings.HasPrefix(c.Name, "cluster test ") || c.Places[4] != (Place{"dc2", "r7"}) {
		t.Fatalf("the cluster as cluster.json keeps it after add: %+v, %v", c, err)
	}
	if err := c.Start(3); err != nil {
		t.Fatal(err)
	}
	if err := c.waitAllUp(); err != nil {
		t.Fatal(err)
	}
	checkPeers(t, c, "node3's start")
	// node4 leaves: once decommission returns, no running node lists it,
	// status does not show it, and it does not start again.
	if err := Decommission(c, 4, false); err != nil {
		t.Fatalf("decommission: %v\n%s", err, out.String())
	}
	checkPeers(t, c, "decommission")
	if s := status(); strings.Contains(s, "127.0.0.4 ") || len(un.FindAllString(s, -1)) != 3 || !strings.Contains(s, "node4: stopped") {
		t.Fatalf("status after node4's decommission:\n%s", s)
	}
	if err := c.Start(4); err == nil || !strings.Contains(err.Error(), "was decommissioned") {
		t.Fatalf("starting the decommissioned node: %v", err)
	}
	if log, err := os.ReadFile(c.LogFile(4)); err != nil || !strings.Contains(string(log), "decommissioned: left the ring") {
		t.Errorf("node4's log does not say it left: %v\n%s", err, tail(c.LogFile(4), 5))
	}

	// node2's disk is lost: replaced, it is back at its address with a
	// new host id and its old tokens.
	before := status()
	if err := c.Stop(2); err != nil {
		t.Fatal(err)
	}
	if err := Replace(c, 2); err != nil {
		t.Fatalf("replace: %v\n%s", err, out.String())
	}
	checkPeers(t, c, "replace")
	hostOf := regexp.MustCompile(`(?m)^UN  127\.0\.0\.2 .* ([0-9a-f-]{36}) `)
	if s := status(); len(un.FindAllString(s, -1)) != 3 || hostOf.FindStringSubmatch(s) == nil || hostOf.FindStringSubmatch(s)[1] == hostOf.FindStringSubmatch(before)[1] {
		t.Fatalf("status before node2's replacement:\n%s\nafter:\n%s", before, s)
	}
	if log, err := os.ReadFile(c.LogFile(2)); err != nil || !strings.Contains(string(log), "replacing a dead node") {
		t.Errorf("node2's log does not say it replaced: %v\n%s", err, tail(c.LogFile(2), 5))
	}
	pids := c.running()
	if err := Down(c); err != nil {
		t.Fatal(err)
	}
	if left := c.running(); len(pids) != 3 || len(left) != 0 {
		t.Fatalf("before down %v ran, after it %v", pids, left)
	}
	if log, err := os.ReadFile(c.LogFile(1)); err != nil || !strings.Contains(string(log), "stopped") {
		t.Errorf("node1's log does not end with a clean stop: %v\n%s", err, tail(c.LogFile(1), 5))
	}
}

// checkPeers checks that every running node's system.peers, read by a
// client connecting to it alone, lists every other node.
func checkPeers(t *testing.T, c *Cluster, after string) {
	t.Helper()
	for _, k := range c.running() {
		cluster := gocql.NewCluster(Address(k))
		cluster.Port = c.NativePort
		cluster.DisableInitialHostLookup = true
		s, err := cluster.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		var peers []string
		iter := s.Query("SELECT peer FROM system.peers").Iter()
		var peer string
		for iter.Scan(&peer) {
			peers = append(peers, peer)
		}
		err = iter.Close()
		s.Close()
		slices.Sort(peers)
		var want []string
		for j := 1; j <= c.Nodes; j++ {
			if j != k && c.member(j) {
				want = append(want, Address(j))
			}
		}
		if err != nil || !slices.Equal(peers, want) {
			t.Errorf("node%d's system.peers right after %s: %v, %v; want %v", k, after, peers, err, want)
		}
	}
}
