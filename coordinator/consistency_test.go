package coordinator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

// TestBlockFor checks the counts against the reference's table and its
// example, NetworkTopologyStrategy {dc1: 3, dc2: 3}.
func TestBlockFor(t *testing.T) {
	simple3 := ring.SimpleStrategy{Factor: 3}
	nts := ring.NetworkTopologyStrategy{Factors: map[string]int{"dc1": 3, "dc2": 3}}
	for _, c := range []struct {
		l    request.Consistency
		s    ring.Strategy
		want int
	}{
		{request.Any, simple3, 1}, {request.One, simple3, 1}, {request.Two, simple3, 2}, {request.Three, simple3, 3},
		{request.Quorum, simple3, 2}, {request.All, simple3, 3}, {request.LocalQuorum, simple3, 2}, {request.EachQuorum, simple3, 2}, {request.LocalOne, simple3, 1},
		{request.Quorum, ring.SimpleStrategy{Factor: 1}, 1}, {request.Quorum, ring.SimpleStrategy{Factor: 4}, 3}, {request.Quorum, ring.SimpleStrategy{Factor: 5}, 3},
		{request.Quorum, nts, 4}, {request.LocalQuorum, nts, 2}, {request.EachQuorum, nts, 4}, {request.All, nts, 6},
	} {
		if got := BlockFor(c.l, c.s, "dc1"); got != c.want {
			t.Errorf("%s over %#v: %d, want %d", c.l, c.s, got, c.want)
		}
	}
}

func TestCheckAvailable(t *testing.T) {
	locations := map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1", Rack: "r1"}, "b": {DataCenter: "dc1", Rack: "r1"}, "c": {DataCenter: "dc1", Rack: "r1"},
		"x": {DataCenter: "dc2", Rack: "r1"}, "y": {DataCenter: "dc2", Rack: "r1"}, "z": {DataCenter: "dc2", Rack: "r1"}}
	locate := func(e ring.Endpoint) ring.Location { return locations[e] }
	simple3 := ring.SimpleStrategy{Factor: 3}
	nts := ring.NetworkTopologyStrategy{Factors: map[string]int{"dc1": 3, "dc2": 3}}
	abc, all := []ring.Endpoint{"a", "b", "c"}, []ring.Endpoint{"a", "b", "c", "x", "y", "z"}
	for _, c := range []struct {
		l        request.Consistency
		s        ring.Strategy
		replicas []ring.Endpoint
		down     []ring.Endpoint
		want     string
	}{
		{request.Quorum, simple3, abc, []ring.Endpoint{"c"}, "<nil>"},
		{request.All, simple3, abc, []ring.Endpoint{"c"}, "Cannot achieve consistency level ALL (required 3, alive 2)"},
		{request.Quorum, simple3, abc, []ring.Endpoint{"b", "c"}, "Cannot achieve consistency level QUORUM (required 2, alive 1)"},
		{request.One, simple3, abc, []ring.Endpoint{"b", "c"}, "<nil>"},
		{request.Three, simple3, abc[:1], nil, "Cannot achieve consistency level THREE (required 3, alive 1)"}, // one node, RF 3
		{request.LocalQuorum, nts, all, []ring.Endpoint{"a", "b"}, "Cannot achieve consistency level LOCAL_QUORUM (required 2, alive 1)"},
		{request.LocalQuorum, nts, all, []ring.Endpoint{"x", "y", "z"}, "<nil>"},
		{request.EachQuorum, nts, all, []ring.Endpoint{"x", "y"}, "Cannot achieve consistency level EACH_QUORUM in DC dc2 (required 2, alive 1)"},
		{request.Quorum, nts, all, []ring.Endpoint{"x", "y", "z"}, "Cannot achieve consistency level QUORUM (required 4, alive 3)"},
		{request.Quorum, nts, all, []ring.Endpoint{"x", "y"}, "<nil>"},
		{request.Quorum, nts, all, []ring.Endpoint{"x", "y", "z", "a"}, "Cannot achieve consistency level QUORUM (required 4, alive 2)"},
	} {
		err := CheckAvailable(c.l, c.s, "dc1", c.replicas, nil, aliveExcept(c.down...), locate)
		got := fmt.Sprint(err)
		if u, ok := err.(*request.Unavailable); ok {
			got = fmt.Sprintf("%v (required %d, alive %d)", u, u.Required, u.Alive)
		}
		if got != c.want {
			t.Errorf("%s with %v down: %s, want %s", c.l, c.down, got, c.want)
		}
	}
}

var (
	twoDCs = map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1"}, "b": {DataCenter: "dc1"}, "c": {DataCenter: "dc1"},
		"x": {DataCenter: "dc2"}, "y": {DataCenter: "dc2"}, "z": {DataCenter: "dc2"}}
	locateTwoDCs = func(e ring.Endpoint) ring.Location { return twoDCs[e] }
	nts33        = ring.NetworkTopologyStrategy{Factors: map[string]int{"dc1": 3, "dc2": 3}}
	sixReplicas  = []ring.Endpoint{"a", "x", "b", "y", "c", "z"}
)

func TestAcks(t *testing.T) {
	simple3 := ring.SimpleStrategy{Factor: 3}
	abc := []ring.Endpoint{"a", "b", "c"}
	a := NewAcks(request.Quorum, simple3, "dc1", abc, nil, locateTwoDCs)
	if a.Ack("a", true) || a.Hopeless() {
		t.Fatal("one of two acknowledgements completed the write, or gave up")
	}
	if a.Ack("a", true) {
		t.Fatal("a second answer from one replica counted")
	}
	if to := a.Timeout(request.WriteSimple); to.Received != 1 || to.BlockFor != 2 || to.Error() != "Operation timed out - received only 1 responses." {
		t.Errorf("timeout %+v: %v", to, to)
	}
	if a.Ack("b", false); a.Hopeless() {
		t.Error("one failure of three, two needed, is not hopeless")
	}
	if !a.Ack("c", true) {
		t.Error("two acknowledgements did not complete the write")
	}
	b := NewAcks(request.Quorum, simple3, "dc1", abc, nil, locateTwoDCs)
	b.Ack("a", false)
	if b.Ack("b", false); !b.Hopeless() {
		t.Error("two failures of three, two needed, is hopeless")
	}
	// Received is clamped below block-for (CASSANDRA-6491).
	c := NewAcks(request.One, simple3, "dc1", abc[:2], nil, locateTwoDCs)
	if to := c.Timeout(request.WriteSimple); to.Received != 0 {
		t.Errorf("clamped received %d", to.Received)
	}
}

// Acknowledgements from the other data centre never meet LOCAL_QUORUM or
// LOCAL_ONE, and EACH_QUORUM needs a quorum in each data centre, not their
// sum.
func TestAcksByDataCentre(t *testing.T) {
	for _, c := range []struct {
		l     request.Consistency
		acks  []ring.Endpoint
		fails []ring.Endpoint
		done  bool
		// hopeless: the level can no longer be met.
		hopeless bool
	}{
		{l: request.LocalQuorum, acks: []ring.Endpoint{"x", "y", "z"}},
		{l: request.LocalQuorum, acks: []ring.Endpoint{"x", "y", "a"}},
		{l: request.LocalQuorum, acks: []ring.Endpoint{"x", "a", "c"}, done: true},
		{l: request.LocalQuorum, acks: []ring.Endpoint{"x", "y", "z"}, fails: []ring.Endpoint{"a", "b"}, hopeless: true},
		{l: request.LocalOne, acks: []ring.Endpoint{"x", "y", "z"}},
		{l: request.LocalOne, acks: []ring.Endpoint{"b"}, done: true},
		{l: request.EachQuorum, acks: []ring.Endpoint{"a", "b", "c", "x"}},
		{l: request.EachQuorum, acks: []ring.Endpoint{"a", "b", "x", "y"}, done: true},
		{l: request.EachQuorum, acks: []ring.Endpoint{"a", "b", "c"}, fails: []ring.Endpoint{"x", "y"}, hopeless: true},
		{l: request.Quorum, acks: []ring.Endpoint{"x", "y", "z"}},
		{l: request.Quorum, acks: []ring.Endpoint{"x", "y", "z", "a"}, done: true},
	} {
		a := NewAcks(c.l, nts33, "dc1", sixReplicas, nil, locateTwoDCs)
		for _, r := range c.fails {
			a.Ack(r, false)
		}
		for _, r := range c.acks {
			a.Ack(r, true)
		}
		if a.Done() != c.done || a.Hopeless() != c.hopeless {
			t.Errorf("%s, acknowledged by %v, failed by %v: done %v, hopeless %v; want %v, %v", c.l, c.acks, c.fails, a.Done(), a.Hopeless(), c.done, c.hopeless)
		}
	}
}

// A read asks only replicas whose answers count, this node first, then
// its data centre's, and keeps the rest as spares.
func TestReadContacts(t *testing.T) {
	for _, c := range []struct {
		l        request.Consistency
		self     ring.Endpoint
		down     []ring.Endpoint
		contacts string
		spares   string
	}{
		{request.LocalQuorum, "x", nil, "[a b]", "[c]"},
		{request.LocalQuorum, "b", nil, "[b a]", "[c]"},
		{request.LocalQuorum, "b", []ring.Endpoint{"a"}, "[b c]", "[]"},
		{request.LocalOne, "x", nil, "[a]", "[b c]"},
		{request.One, "x", nil, "[x]", "[a b c y z]"},
		{request.One, "q", nil, "[a]", "[b c x y z]"},
		{request.Quorum, "a", nil, "[a b c x]", "[y z]"},
		{request.EachQuorum, "a", nil, "[a b x y]", "[c z]"},
		{request.EachQuorum, "a", []ring.Endpoint{"x"}, "[a b y z]", "[c]"},
	} {
		contacts, spares := ReadContacts(c.l, nts33, "dc1", c.self, sixReplicas, aliveExcept(c.down...), locateTwoDCs, nil)
		if got, gotSpares := fmt.Sprint(contacts), fmt.Sprint(spares); got != c.contacts || gotSpares != c.spares {
			t.Errorf("%s from %s with %v down: contacts %s, spares %s; want %s, %s", c.l, c.self, c.down, got, gotSpares, c.contacts, c.spares)
		}
	}
	// A spare for EACH_QUORUM comes from the failed replica's data centre.
	if r, rest, ok := spareFor(request.EachQuorum, nts33, "x", []ring.Endpoint{"c", "z"}, locateTwoDCs); !ok || r != "z" || fmt.Sprint(rest) != "[c]" {
		t.Errorf("spare for x: %s, %v, %v", r, rest, ok)
	}
	if _, _, ok := spareFor(request.EachQuorum, nts33, "x", []ring.Endpoint{"c"}, locateTwoDCs); ok {
		t.Error("a dc1 spare replaced a dc2 replica at EACH_QUORUM")
	}
}

// aliveExcept is a failure detector that sees every node up but down.
func aliveExcept(down ...ring.Endpoint) func(ring.Endpoint) bool {
	return func(e ring.Endpoint) bool { return !slices.Contains(down, e) }
}

// TestPendingReplicasCountOnTopOfTheLevel: a write's pending replica (a
// node being given the range) must answer beside the level's replicas:
// it raises what availability and the acknowledgements need by one, in
// its own data centre only for the LOCAL_ levels and EACH_QUORUM.
func TestPendingReplicasCountOnTopOfTheLevel(t *testing.T) {
	locations := map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1"}, "b": {DataCenter: "dc1"}, "c": {DataCenter: "dc1"}, "p": {DataCenter: "dc1"},
		"x": {DataCenter: "dc2"}, "y": {DataCenter: "dc2"}, "z": {DataCenter: "dc2"}, "q": {DataCenter: "dc2"}}
	locate := func(e ring.Endpoint) ring.Location { return locations[e] }
	simple3 := ring.SimpleStrategy{Factor: 3}
	abc := []ring.Endpoint{"a", "b", "c"}
	for _, c := range []struct {
		l        request.Consistency
		s        ring.Strategy
		replicas []ring.Endpoint
		pending  []ring.Endpoint
		down     []ring.Endpoint
		want     string
		blockFor int
	}{
		{request.Quorum, simple3, abc, []ring.Endpoint{"p"}, []ring.Endpoint{"c"}, "<nil>", 3},
		{request.Quorum, simple3, abc, []ring.Endpoint{"p"}, []ring.Endpoint{"b", "c"}, "Cannot achieve consistency level QUORUM (required 3, alive 2)", 3},
		{request.Quorum, simple3, abc, []ring.Endpoint{"p"}, []ring.Endpoint{"p", "c"}, "Cannot achieve consistency level QUORUM (required 3, alive 2)", 3},
		{request.One, simple3, abc, []ring.Endpoint{"p"}, []ring.Endpoint{"p", "b", "c"}, "Cannot achieve consistency level ONE (required 2, alive 1)", 2},
		{request.All, simple3, abc, []ring.Endpoint{"p"}, nil, "<nil>", 4},
		{request.LocalQuorum, nts33, sixReplicas, []ring.Endpoint{"q"}, []ring.Endpoint{"a"}, "<nil>", 2},
		{request.LocalQuorum, nts33, sixReplicas, []ring.Endpoint{"p"}, []ring.Endpoint{"a", "b"}, "Cannot achieve consistency level LOCAL_QUORUM (required 3, alive 2)", 3},
		{request.EachQuorum, nts33, sixReplicas, []ring.Endpoint{"q"}, []ring.Endpoint{"a", "x"}, "<nil>", 5},
		{request.EachQuorum, nts33, sixReplicas, []ring.Endpoint{"q"}, []ring.Endpoint{"x", "y"}, "Cannot achieve consistency level EACH_QUORUM in DC dc2 (required 3, alive 2)", 5},
	} {
		err := CheckAvailable(c.l, c.s, "dc1", c.replicas, c.pending, aliveExcept(c.down...), locate)
		got := fmt.Sprint(err)
		if u, ok := err.(*request.Unavailable); ok {
			got = fmt.Sprintf("%v (required %d, alive %d)", u, u.Required, u.Alive)
		}
		if got != c.want {
			t.Errorf("%s with %v pending and %v down: %s, want %s", c.l, c.pending, c.down, got, c.want)
		}
		var targets []ring.Endpoint
		for _, r := range slices.Concat(c.replicas, c.pending) {
			if !slices.Contains(c.down, r) {
				targets = append(targets, r)
			}
		}
		a := NewAcks(c.l, c.s, "dc1", targets, c.pending, locate)
		if a.BlockFor() != c.blockFor {
			t.Errorf("%s with %v pending: blocks for %d, want %d", c.l, c.pending, a.BlockFor(), c.blockFor)
		}
	}
	// The old replicas' answers alone do not complete a QUORUM write whose
	// pending replica has not answered; its answer does.
	a := NewAcks(request.Quorum, simple3, "dc1", []ring.Endpoint{"a", "b", "c", "p"}, []ring.Endpoint{"p"}, locate)
	if a.Ack("a", true) || a.Ack("b", true) {
		t.Fatal("two of three old replicas completed a write with a pending replica")
	}
	if !a.Ack("p", true) {
		t.Fatal("the pending replica's answer did not complete it")
	}
	// EACH_QUORUM needs the pending replica's data centre's extra answer.
	e := NewAcks(request.EachQuorum, nts33, "dc1", slices.Concat(sixReplicas, []ring.Endpoint{"q"}), []ring.Endpoint{"q"}, locate)
	for _, r := range []ring.Endpoint{"a", "b", "x", "y"} {
		if e.Ack(r, true) {
			t.Fatalf("done after %s, with dc2's pending replica's share missing", r)
		}
	}
	if !e.Ack("z", true) {
		t.Fatal("three answers of dc2 and two of dc1 did not complete EACH_QUORUM")
	}
}
