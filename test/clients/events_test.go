// The race run leaves this file out: its nodes gossip, and memberlist
// v0.7.0 has a data race of its own (hashicorp/memberlist#134); make test
// runs it without the race detector.

//go:build !race

package clients

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
)

// nodeEvent reads an EVENT body: its kind, change and inet.
func nodeEvent(t *testing.T, body []byte) string {
	t.Helper()
	str := func() string {
		n := int(binary.BigEndian.Uint16(body))
		s := string(body[2 : 2+n])
		body = body[2+n:]
		return s
	}
	kind, change := str(), str()
	ip := net.IP(body[1 : 1+body[0]])
	port := binary.BigEndian.Uint32(body[1+body[0]:])
	return fmt.Sprintf("%s %s %s", kind, change, net.JoinHostPort(ip.String(), strconv.Itoa(int(port))))
}

// localCluster returns what opens node k of a local cluster (on
// 127.0.0.k, seeded by 127.0.0.1, on ports chosen for the test) and the
// native port its nodes share.
func localCluster(t *testing.T) (open func(k int) *node.Node, nativePort int) {
	gossipPort, storagePort, nativePort := testutil.ClusterPort(t, 3), testutil.ClusterPort(t, 3), testutil.ClusterPort(t, 3)
	return func(k int) *node.Node {
		t.Helper()
		n, err := node.Open(node.Config{DataDir: t.TempDir(), ListenAddress: fmt.Sprintf("127.0.0.%d", k), NativePort: nativePort,
			GossipPort: gossipPort, StoragePort: storagePort, Seeds: []string{"127.0.0.1"}, ClusterName: fmt.Sprintf("events test %d", gossipPort)})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}, nativePort
}

// TestClusterEvents: a client registered for TOPOLOGY_CHANGE and
// STATUS_CHANGE on one node hears of a new node joining once it serves
// clients (NEW_NODE then UP, never before: a driver told of it connects
// at once) and of nodes going down, with their native protocol addresses,
// as drivers expect.
func TestClusterEvents(t *testing.T) {
	open, nativePort := localCluster(t)
	n1, n2 := open(1), open(2)
	defer n1.Close()
	defer n2.Close()
	for _, n := range []*node.Node{n1, n2} {
		if _, err := n.StartNative(); err != nil {
			t.Fatal(err)
		}
	}
	c := dialRaw(t, nativePort)
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	c.send(4, 1, 1, startupBody())
	c.recv()
	reg := []byte{0, 2}
	for _, e := range []string{"TOPOLOGY_CHANGE", "STATUS_CHANGE"} {
		reg = binary.BigEndian.AppendUint16(reg, uint16(len(e)))
		reg = append(reg, e...)
	}
	c.send(4, 2, 0x0B, reg)
	if r := c.recv(); r.op != 2 {
		t.Fatalf("REGISTER answered op %d", r.op)
	}
	node3 := fmt.Sprintf("127.0.0.3:%d", nativePort)
	// Node 2's events may still come (it began serving just now); any
	// of node 3's before it serves is a failure.
	noEventOfNode3 := func(ev rawResponse) {
		t.Helper()
		if got := nodeEvent(t, ev.body); strings.HasSuffix(got, " "+node3) {
			t.Fatalf("%s before 127.0.0.3 served clients", got)
		}
	}
	// peersHoldNode3 asks node 1's system.peers, reading the events that
	// come before the answer.
	peersHoldNode3 := func() bool {
		t.Helper()
		c.send(4, 3, 7, queryBody("SELECT peer FROM system.peers"))
		for {
			r := c.recv()
			if r.op == 0x0C {
				noEventOfNode3(r)
				continue
			}
			if r.op != 8 || r.stream != 3 {
				t.Fatalf("op %d on stream %d, want a RESULT", r.op, r.stream)
			}
			return bytes.Contains(r.body, []byte{127, 0, 0, 3})
		}
	}
	n3 := open(3)
	for !peersHoldNode3() {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // room for an event that should not come
	peersHoldNode3()

	expect := func(want string) {
		t.Helper()
		for {
			ev := c.recv()
			if ev.op != 0x0C || ev.stream != -1 {
				t.Fatalf("op %d on stream %d, want an EVENT", ev.op, ev.stream)
			}
			if got := nodeEvent(t, ev.body); got == want {
				return
			} else {
				t.Logf("event %s (waiting for %s)", got, want)
			}
		}
	}
	if _, err := n3.StartNative(); err != nil {
		t.Fatal(err)
	}
	expect("TOPOLOGY_CHANGE NEW_NODE " + node3)
	expect("STATUS_CHANGE UP " + node3)
	if err := n2.Close(); err != nil {
		t.Fatal(err)
	}
	expect(fmt.Sprintf("STATUS_CHANGE DOWN 127.0.0.2:%d", nativePort))
	n3.Close()
	expect("STATUS_CHANGE DOWN " + node3)
}

// schemaEvent reads a SCHEMA_CHANGE EVENT body: change, target, keyspace
// and, for a table or type, its name.
func schemaEvent(t *testing.T, body []byte) string {
	t.Helper()
	var parts []string
	for len(body) >= 2 {
		n := int(binary.BigEndian.Uint16(body))
		parts = append(parts, string(body[2:2+n]))
		body = body[2+n:]
	}
	return strings.Join(parts, " ")
}

// TestSchemaEventsFromEveryNode: a client registered for SCHEMA_CHANGE on
// one node hears of DDL run through another, as a driver whose control
// connection is elsewhere needs to.
func TestSchemaEventsFromEveryNode(t *testing.T) {
	open, nativePort := localCluster(t)
	n1, n2 := open(1), open(2)
	defer n1.Close()
	defer n2.Close()
	if _, err := n2.StartNative(); err != nil {
		t.Fatal(err)
	}
	c := dialRawAt(t, "127.0.0.2", nativePort)
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	c.send(4, 1, 1, startupBody())
	c.recv()
	c.send(4, 2, 0x0B, append([]byte{0, 1, 0, 13}, "SCHEMA_CHANGE"...))
	if r := c.recv(); r.op != 2 {
		t.Fatalf("REGISTER answered op %d", r.op)
	}
	if _, err := exec.NewSession(n1).Run("CREATE KEYSPACE ev WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2};" +
		"CREATE TABLE ev.t (k int PRIMARY KEY, v int); ALTER TABLE ev.t ADD w int; DROP TABLE ev.t"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SCHEMA_CHANGE CREATED KEYSPACE ev", "SCHEMA_CHANGE CREATED TABLE ev t",
		"SCHEMA_CHANGE UPDATED TABLE ev t", "SCHEMA_CHANGE DROPPED TABLE ev t"} {
		ev := c.recv()
		if ev.op != 0x0C || ev.stream != -1 {
			t.Fatalf("op %d on stream %d, want an EVENT", ev.op, ev.stream)
		}
		if got := schemaEvent(t, ev.body); got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	}
}

// TestDriverSeesNewNode: gocql, connected to a running cluster through
// one node, learns of a node that joins it (its TOPOLOGY_CHANGE event,
// then system.peers) and sends it requests.
func TestDriverSeesNewNode(t *testing.T) {
	open, nativePort := localCluster(t)
	n1, n2 := open(1), open(2)
	defer n1.Close()
	defer n2.Close()
	for _, n := range []*node.Node{n1, n2} {
		if _, err := n.StartNative(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = nativePort
	cluster.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool {
		mu.Lock()
		defer mu.Unlock()
		seen[h.ConnectAddress().String()] = true
		return true
	})
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n3 := open(3)
	defer n3.Close()
	if _, err := n3.StartNative(); err != nil {
		t.Fatal(err)
	}
	served := time.Now()
	// gocql debounces the event a second, then its ring refresh another:
	// about two seconds is its own.
	deadline := served.Add(30 * time.Second)
	for {
		mu.Lock()
		ok := seen["127.0.0.3"]
		mu.Unlock()
		if ok {
			t.Logf("gocql learned of 127.0.0.3 %v after it served CQL", time.Since(served).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gocql never learned of 127.0.0.3; it knows %v", seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
