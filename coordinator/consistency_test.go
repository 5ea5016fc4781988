package coordinator

import (
	"fmt"
	"testing"

	"github.com/sibyldb/sibyl/ring"
)

// TestBlockFor checks the counts against the reference's table and its
// example, NetworkTopologyStrategy {dc1: 3, dc2: 3}.
func TestBlockFor(t *testing.T) {
	simple3 := ring.SimpleStrategy{Factor: 3}
	nts := ring.NetworkTopologyStrategy{Factors: map[string]int{"dc1": 3, "dc2": 3}}
	for _, c := range []struct {
		l    Level
		s    ring.Strategy
		want int
	}{
		{Any, simple3, 1}, {One, simple3, 1}, {Two, simple3, 2}, {Three, simple3, 3},
		{Quorum, simple3, 2}, {All, simple3, 3}, {LocalQuorum, simple3, 2}, {EachQuorum, simple3, 2}, {LocalOne, simple3, 1},
		{Quorum, ring.SimpleStrategy{Factor: 1}, 1}, {Quorum, ring.SimpleStrategy{Factor: 4}, 3}, {Quorum, ring.SimpleStrategy{Factor: 5}, 3},
		{Quorum, nts, 4}, {LocalQuorum, nts, 2}, {EachQuorum, nts, 4}, {All, nts, 6},
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
	downs := func(down ...ring.Endpoint) func(ring.Endpoint) bool {
		return func(e ring.Endpoint) bool {
			for _, d := range down {
				if d == e {
					return false
				}
			}
			return true
		}
	}
	simple3 := ring.SimpleStrategy{Factor: 3}
	nts := ring.NetworkTopologyStrategy{Factors: map[string]int{"dc1": 3, "dc2": 3}}
	abc, all := []ring.Endpoint{"a", "b", "c"}, []ring.Endpoint{"a", "b", "c", "x", "y", "z"}
	for _, c := range []struct {
		l        Level
		s        ring.Strategy
		replicas []ring.Endpoint
		down     []ring.Endpoint
		want     string
	}{
		{Quorum, simple3, abc, []ring.Endpoint{"c"}, "<nil>"},
		{All, simple3, abc, []ring.Endpoint{"c"}, "Cannot achieve consistency level ALL (required 3, alive 2)"},
		{Quorum, simple3, abc, []ring.Endpoint{"b", "c"}, "Cannot achieve consistency level QUORUM (required 2, alive 1)"},
		{One, simple3, abc, []ring.Endpoint{"b", "c"}, "<nil>"},
		{Three, simple3, abc[:1], nil, "Cannot achieve consistency level THREE (required 3, alive 1)"}, // one node, RF 3
		{LocalQuorum, nts, all, []ring.Endpoint{"a", "b"}, "Cannot achieve consistency level LOCAL_QUORUM (required 2, alive 1)"},
		{LocalQuorum, nts, all, []ring.Endpoint{"x", "y", "z"}, "<nil>"},
		{EachQuorum, nts, all, []ring.Endpoint{"x", "y"}, "Cannot achieve consistency level EACH_QUORUM in DC dc2 (required 2, alive 1)"},
		{Quorum, nts, all, []ring.Endpoint{"x", "y", "z"}, "Cannot achieve consistency level QUORUM (required 4, alive 3)"},
		{Quorum, nts, all, []ring.Endpoint{"x", "y"}, "<nil>"},
		{Quorum, nts, all, []ring.Endpoint{"x", "y", "z", "a"}, "Cannot achieve consistency level QUORUM (required 4, alive 2)"},
	} {
		err := CheckAvailable(c.l, c.s, "dc1", c.replicas, downs(c.down...), locate)
		got := fmt.Sprint(err)
		if u, ok := err.(*Unavailable); ok {
			got = fmt.Sprintf("%v (required %d, alive %d)", u, u.Required, u.Alive)
		}
		if got != c.want {
			t.Errorf("%s with %v down: %s, want %s", c.l, c.down, got, c.want)
		}
	}
}

func TestAcks(t *testing.T) {
	a := NewAcks(2, 3)
	if a.Ack(true) || a.Hopeless() {
		t.Fatal("one of two acknowledgements completed the write, or gave up")
	}
	if to := a.Timeout(Quorum, "SIMPLE"); to.Received != 1 || to.BlockFor != 2 || to.Error() != "Operation timed out - received only 1 responses." {
		t.Errorf("timeout %+v: %v", to, to)
	}
	if a.Ack(false); a.Hopeless() {
		t.Error("one failure of three, two needed, is not hopeless")
	}
	if !a.Ack(true) {
		t.Error("two acknowledgements did not complete the write")
	}
	b := NewAcks(2, 3)
	b.Ack(false)
	if b.Ack(false); !b.Hopeless() {
		t.Error("two failures of three, two needed, is hopeless")
	}
	// Received is clamped below block-for (CASSANDRA-6491).
	c := NewAcks(1, 2)
	c.Ack(true)
	if to := c.Timeout(One, "SIMPLE"); to.Received != 0 {
		t.Errorf("clamped received %d", to.Received)
	}
}
