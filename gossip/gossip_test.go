package gossip

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// start runs a gossiper on 127.0.0.n with short timings, stopped when the
// test ends.
func start(t *testing.T, n, port int, generation int64, seeds ...string) *Gossiper {
	t.Helper()
	return startIn(t, "", n, port, generation, seeds...)
}

// startIn is start for a node of the named cluster.
func startIn(t *testing.T, cluster string, n, port int, generation int64, seeds ...string) *Gossiper {
	t.Helper()
	name := fmt.Sprintf("127.0.0.%d", n)
	g, err := Start(Options{
		Name: name, Port: port, Seeds: seeds, Generation: generation, ClusterName: cluster, ReconnectInterval: 100 * time.Millisecond,
		States:        map[ApplicationState]string{HostID: "host-" + strconv.Itoa(n), Status: StatusNormal + ",0"},
		ProbeInterval: 100 * time.Millisecond, PushPullInterval: 300 * time.Millisecond, GossipInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// eventually waits up to ten seconds for cond, which describes what it
// saw when it fails.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s after 10s", what, saw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sees reports whether g knows endpoint e as alive (or not) with fact k at
// value v.
func sees(g *Gossiper, e string, alive bool, k ApplicationState, v string) (bool, string) {
	s := g.Endpoints()[e]
	if s == nil {
		return false, fmt.Sprintf("%s unknown to %s", e, g.Name())
	}
	return s.Alive == alive && s.Get(k) == v, fmt.Sprintf("%s sees %s alive=%v %s=%q", g.Name(), e, s.Alive, k, s.Get(k))
}

// TestThreeNodes forms a cluster through one seed and follows a node's
// facts, a crash, a clean shutdown and a restart as the others see them.
func TestThreeNodes(t *testing.T) {
	g1 := start(t, 1, 0, 100)
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	g2 := start(t, 2, 0, 100, seed)
	g3 := start(t, 3, 0, 100, seed, "127.0.0.2:1") // a dead seed is only a contact point that fails
	all := []*Gossiper{g1, g2, g3}
	for _, g := range all {
		for n := 1; n <= 3; n++ {
			e := fmt.Sprintf("127.0.0.%d", n)
			eventually(t, "membership", func() (bool, string) { return sees(g, e, true, HostID, "host-"+strconv.Itoa(n)) })
		}
	}

	// A fact set on one node reaches the others.
	g2.Set(Schema, "schema-2")
	for _, g := range all {
		eventually(t, "a schema change", func() (bool, string) { return sees(g, "127.0.0.2", true, Schema, "schema-2") })
	}
	// A large fact (too big for a broadcast) arrives by push-pull.
	var tokens string
	for i := 0; i < 256; i++ {
		tokens += fmt.Sprintf("%d,", int64(i)*36028797018963968-9223372036854775807)
	}
	g3.Set(Tokens, tokens)
	eventually(t, "256 tokens", func() (bool, string) { return sees(g1, "127.0.0.3", true, Tokens, tokens) })

	// A crash: the others find the node dead by probing it.
	port3 := g3.Port()
	if err := g3.Close(); err != nil {
		t.Fatal(err)
	}
	for _, g := range all[:2] {
		eventually(t, "a crashed node", func() (bool, string) { return sees(g, "127.0.0.3", false, Status, StatusNormal+",0") })
	}

	// The node comes back, a later generation: what it says now replaces
	// what was known of it.
	g3 = start(t, 3, port3, 200, seed)
	g3.Set(Schema, "schema-3")
	for _, g := range []*Gossiper{g1, g2} {
		eventually(t, "a restarted node", func() (bool, string) { return sees(g, "127.0.0.3", true, Schema, "schema-3") })
		if s := g.Endpoints()["127.0.0.3"]; s.Generation != 200 || s.Get(Tokens) != "" {
			t.Errorf("%s sees the restarted node at generation %d with tokens %q", g.Name(), s.Generation, s.Get(Tokens))
		}
	}

	// A clean shutdown is seen as one, and as down.
	if err := g2.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Gossiper{g1, g3} {
		eventually(t, "a clean shutdown", func() (bool, string) { return sees(g, "127.0.0.2", false, Status, StatusShutdown+",true") })
	}
}

// TestOnChange: each change of a peer's state or liveness reaches
// OnChange.
func TestOnChange(t *testing.T) {
	seen := make(chan string, 100)
	g1, err := Start(Options{Name: "127.0.0.1", Generation: 1, OnChange: func(e string) { seen <- e },
		ProbeInterval: 100 * time.Millisecond, PushPullInterval: 300 * time.Millisecond, GossipInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	g2 := start(t, 2, 0, 1, fmt.Sprintf("127.0.0.1:%d", g1.Port()))
	waitFor := func(want string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case e := <-seen:
				if e == want {
					return
				}
			case <-timeout:
				t.Fatalf("no change of %s reached OnChange", want)
			}
		}
	}
	waitFor("127.0.0.2")
	g2.Set(Load, "12345")
	waitFor("127.0.0.2")
	eventually(t, "the load", func() (bool, string) { return sees(g1, "127.0.0.2", true, Load, "12345") })
}

// TestOtherClusterRefused: a node of another cluster that reaches a
// node's gossip port (a seed of the wrong cluster, a port reused) gets
// nothing from it and gives it nothing, while a node of the same cluster
// joins.
func TestOtherClusterRefused(t *testing.T) {
	g1 := startIn(t, "alpha", 1, 0, 100)
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	g2 := startIn(t, "beta", 2, 0, 100, seed)
	g3 := startIn(t, "alpha", 3, 0, 100, seed)
	eventually(t, "a node of the same cluster", func() (bool, string) { return sees(g1, "127.0.0.3", true, Status, StatusNormal+",0") })
	// Ten of beta's reconnect rounds, each a join through the seed.
	time.Sleep(time.Second)
	for _, g := range []*Gossiper{g1, g3} {
		if s := g.Endpoint("127.0.0.2"); s != nil {
			t.Errorf("%s knows the node of another cluster: %+v", g.Name(), s)
		}
	}
	if es := g2.Endpoints(); len(es) != 1 {
		t.Errorf("the node of another cluster knows %d nodes", len(es))
	}
	select {
	case <-g2.Joined():
		t.Error("the node of another cluster joined through alpha's seed")
	default:
	}
}

// A cluster name past memberlist's label limit is hashed: a label that
// fits, and one of its own.
func TestClusterLabel(t *testing.T) {
	long := strings.Repeat("n", 300)
	a, b := clusterLabel(long), clusterLabel(long+"2")
	if len(a) > memberlist.LabelMaxSize || a == b || clusterLabel("Test Cluster") != "Test Cluster" {
		t.Errorf("labels: %q, %q", a, b)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, o := range []Options{{Name: "localhost"}, {Name: "127.0.0.1", Port: 70000}} {
		if _, err := Start(o); err == nil {
			t.Errorf("%+v started", o)
		}
	}
}

func TestMerge(t *testing.T) {
	s := &EndpointState{Generation: 5, Heartbeat: 3, Alive: true, States: map[ApplicationState]VersionedValue{
		Status: {StatusNormal, 4}, Load: {"10", 7}}}
	// Same generation: the higher version of each fact wins.
	if !s.merge(&EndpointState{Generation: 5, Heartbeat: 9, States: map[ApplicationState]VersionedValue{Load: {"20", 8}, Status: {StatusLeaving, 2}}}) {
		t.Error("a newer fact changed nothing")
	}
	if s.Get(Load) != "20" || s.Get(Status) != StatusNormal || s.Heartbeat != 9 {
		t.Errorf("after the merge: %+v", s)
	}
	// A new activity sample is taken, but is not a change of the ring's.
	if s.merge(&EndpointState{Generation: 5, States: map[ApplicationState]VersionedValue{Activity: {`{"t":1}`, 9}}}) || s.Get(Activity) != `{"t":1}` {
		t.Errorf("an activity sample: %+v", s)
	}
	// An older generation is ignored; a newer one replaces everything
	// but liveness.
	if s.merge(&EndpointState{Generation: 4, States: map[ApplicationState]VersionedValue{Load: {"99", 100}}}) || s.Get(Load) != "20" {
		t.Errorf("an older generation changed the state: %+v", s)
	}
	if !s.merge(&EndpointState{Generation: 6, States: map[ApplicationState]VersionedValue{HostID: {"h", 1}}}) ||
		s.Get(Load) != "" || s.Get(HostID) != "h" || !s.Alive || s.Generation != 6 {
		t.Errorf("a newer generation: %+v", s)
	}
}

// TestStreamsFromOwnAddress: gossip's TCP streams come from the node's
// own address, so that a rule on that address cuts them.
func TestStreamsFromOwnAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.9:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tr := boundTransport{local: net.ParseIP("127.0.0.7")}
	c, err := tr.DialTimeout(l.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if got := in.RemoteAddr().(*net.TCPAddr).IP.String(); got != "127.0.0.7" {
		t.Errorf("the stream came from %s, want 127.0.0.7", got)
	}
}

// TestWholeClusterLeavesAtOnce: when every node stops at the same moment,
// each leave finds its peers going too; none reports a failure for having
// nobody left to tell.
func TestWholeClusterLeavesAtOnce(t *testing.T) {
	g1 := start(t, 1, 0, 100)
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	gs := []*Gossiper{g1, start(t, 2, 0, 100, seed), start(t, 3, 0, 100, seed)}
	for _, g := range gs {
		eventually(t, "a cluster of three", func() (bool, string) {
			alive := 0
			for _, s := range g.Endpoints() {
				if s.Alive {
					alive++
				}
			}
			return alive == 3, fmt.Sprintf("%s sees %d alive", g.Name(), alive)
		})
	}
	errs := make(chan error, len(gs))
	for _, g := range gs {
		go func() { errs <- g.Leave(2 * time.Second) }()
	}
	for range gs {
		if err := <-errs; err != nil {
			t.Errorf("leaving with the whole cluster: %v", err)
		}
	}
}

// startKeyed is startIn for a node of cluster "alpha" with gossip
// encryption keys.
func startKeyed(t *testing.T, n int, keys [][]byte, seeds ...string) *Gossiper {
	t.Helper()
	g, err := Start(Options{
		Name: fmt.Sprintf("127.0.0.%d", n), Seeds: seeds, Generation: 100, ClusterName: "alpha", ReconnectInterval: 100 * time.Millisecond,
		States:        map[ApplicationState]string{HostID: "host-" + strconv.Itoa(n), Status: StatusNormal + ",0"},
		ProbeInterval: 100 * time.Millisecond, PushPullInterval: 300 * time.Millisecond, GossipInterval: 50 * time.Millisecond,
		EncryptionKeys: keys,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// TestEncryptedGossip: with a cluster key, nodes holding it gossip; a
// node with another key, or none, cannot join through a seed nor be
// heard, and what it sends is dropped and counted. A key is rotated by a
// node that encrypts with the new one while the others still hold both.
func TestEncryptedGossip(t *testing.T) {
	keyA, keyB := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 16))
	g1 := startKeyed(t, 1, [][]byte{keyA, keyB})
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	g2 := startKeyed(t, 2, [][]byte{keyA}, seed)
	eventually(t, "a node with the key", func() (bool, string) { return sees(g1, "127.0.0.2", true, Status, StatusNormal+",0") })
	intruders := []*Gossiper{startKeyed(t, 3, [][]byte{[]byte(strings.Repeat("x", 32))}, seed), startKeyed(t, 4, nil, seed)}
	// The rotation's middle step: encrypting with B, opening A too.
	g5 := startKeyed(t, 5, [][]byte{keyB, keyA}, seed)
	eventually(t, "a node encrypting with the second key", func() (bool, string) { return sees(g1, "127.0.0.5", true, Status, StatusNormal+",0") })
	eventually(t, "the intruders' gossip refused", func() (bool, string) {
		return g1.Refused() >= 2, fmt.Sprintf("%d refused", g1.Refused())
	})
	time.Sleep(500 * time.Millisecond) // several of the intruders' join rounds
	for _, g := range []*Gossiper{g1, g2, g5} {
		for _, e := range []string{"127.0.0.3", "127.0.0.4"} {
			if s := g.Endpoint(e); s != nil {
				t.Errorf("%s knows the intruder %s: %+v", g.Name(), e, s)
			}
		}
	}
	for _, g := range intruders {
		if es := g.Endpoints(); len(es) != 1 {
			t.Errorf("the intruder %s knows %d nodes", g.Name(), len(es))
		}
	}
	if err := (&Options{Name: "127.0.0.1", EncryptionKeys: [][]byte{[]byte("short")}}).Validate(); err == nil ||
		err.Error() != "gossip: encryption key 1 is 5 bytes: AES takes 16, 24 or 32" {
		t.Errorf("a 5-byte key: %v", err)
	}
}

// TestKeyRotationAtRunTime: a cluster sealed with key A moves to key B
// without a restart (install B everywhere, use it everywhere, remove A):
// a node holding only B then joins, and one holding only A is kept out.
func TestKeyRotationAtRunTime(t *testing.T) {
	keyA, keyB := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	g1 := startKeyed(t, 1, [][]byte{keyA})
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	g2 := startKeyed(t, 2, [][]byte{keyA}, seed)
	eventually(t, "node 2", func() (bool, string) { return sees(g1, "127.0.0.2", true, Status, StatusNormal+",0") })
	for _, step := range []func(*Gossiper) error{
		func(g *Gossiper) error { return g.InstallKey(keyB) },
		func(g *Gossiper) error { return g.UseKey(keyB) },
		func(g *Gossiper) error { return g.RemoveKey(keyA) },
	} {
		for _, g := range []*Gossiper{g1, g2} {
			if err := step(g); err != nil {
				t.Fatal(err)
			}
		}
	}
	if keys, err := g1.Keys(); err != nil || len(keys) != 1 || string(keys[0]) != string(keyB) {
		t.Fatalf("keys after the rotation: %q, %v", keys, err)
	}
	startKeyed(t, 3, [][]byte{keyB}, seed)
	eventually(t, "a node with the new key alone", func() (bool, string) { return sees(g1, "127.0.0.3", true, Status, StatusNormal+",0") })
	startKeyed(t, 4, [][]byte{keyA}, seed)
	time.Sleep(500 * time.Millisecond)
	if g1.Endpoint("127.0.0.4") != nil {
		t.Fatal("a node with the retired key alone joined")
	}
	if err := startIn(t, "alpha", 5, 0, 100).InstallKey(keyA); err != ErrNotEncrypted {
		t.Fatalf("a key installed on unsealed gossip: %v", err)
	}
}

// TestSuspendAndResume: a node that stops gossiping (nodetool
// disablegossip) is seen down, shut down, by the others; started again,
// it is seen up with the status it had, as a newer generation.
func TestSuspendAndResume(t *testing.T) {
	g1 := start(t, 1, 0, 100)
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	g2 := start(t, 2, 0, 100, seed)
	g3 := start(t, 3, 0, 100, seed)
	for _, g := range []*Gossiper{g1, g2, g3} {
		for n := 1; n <= 3; n++ {
			e := fmt.Sprintf("127.0.0.%d", n)
			eventually(t, "membership", func() (bool, string) { return sees(g, e, true, HostID, "host-"+strconv.Itoa(n)) })
		}
	}
	port := g2.Port()
	if err := g2.Suspend(time.Second); err != nil {
		t.Fatal(err)
	}
	if !g2.Suspended() {
		t.Fatal("not suspended after Suspend")
	}
	for _, g := range []*Gossiper{g1, g3} {
		eventually(t, "a node that stopped gossiping", func() (bool, string) { return sees(g, "127.0.0.2", false, Status, StatusShutdown+",true") })
	}
	// Facts set meanwhile stay with the node until it gossips again.
	g2.Set(Schema, "schema-while-suspended")
	if err := g2.Resume(); err != nil {
		t.Fatal(err)
	}
	if g2.Suspended() || g2.Port() != port {
		t.Fatalf("after Resume: suspended %v, port %d (was %d)", g2.Suspended(), g2.Port(), port)
	}
	for _, g := range []*Gossiper{g1, g3} {
		eventually(t, "a node gossiping again", func() (bool, string) { return sees(g, "127.0.0.2", true, Status, StatusNormal+",0") })
		eventually(t, "its facts", func() (bool, string) { return sees(g, "127.0.0.2", true, Schema, "schema-while-suspended") })
		if gen := g.Endpoints()["127.0.0.2"].Generation; gen <= 100 {
			t.Errorf("%s sees generation %d after the resume", g.Name(), gen)
		}
	}
	// Its own view came back too: it sees the others up.
	for _, e := range []string{"127.0.0.1", "127.0.0.3"} {
		eventually(t, "the others, from the resumed node", func() (bool, string) { return sees(g2, e, true, Status, StatusNormal+",0") })
	}
	// Suspend twice, Resume twice, and Close while suspended are harmless.
	if err := errors.Join(g2.Suspend(time.Second), g2.Suspend(time.Second), g2.Close()); err != nil {
		t.Fatal(err)
	}
	if err := g2.Resume(); err != nil || g2.Suspended() != true {
		t.Errorf("Resume after Close: %v, suspended %v", err, g2.Suspended())
	}
}
