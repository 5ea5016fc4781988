package ring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/partitioner"
)

func tok(v int64) partitioner.Token { return partitioner.Murmur3Token(v) }

func toks(vs ...int64) []partitioner.Token {
	out := make([]partitioner.Token, len(vs))
	for i, v := range vs {
		out[i] = tok(v)
	}
	return out
}

func mustRing(t *testing.T, nodes ...Node) *Metadata {
	t.Helper()
	m, err := NewMetadata(partitioner.Murmur3(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewMetadataRefusesBadRings(t *testing.T) {
	for _, c := range []struct {
		nodes []Node
		want  string
	}{
		{[]Node{{Endpoint: "a", Tokens: toks(1)}, {Endpoint: "b", Tokens: toks(1)}}, "token 1 is held by both a and b"},
		{[]Node{{Endpoint: "a", Tokens: toks(1)}, {Endpoint: "a", Tokens: toks(2)}}, "node a is listed twice"},
		{[]Node{{Endpoint: "a", Tokens: []partitioner.Token{partitioner.Random().MinToken()}}}, "not a org.apache.cassandra.dht.Murmur3Partitioner token"},
	} {
		_, err := NewMetadata(partitioner.Murmur3(), c.nodes)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error with %q", c.nodes, err, c.want)
		}
	}
}

// threeNodes is a ring of a (tokens -100 and 200), b (0) and c (100).
func threeNodes(t *testing.T) *Metadata {
	return mustRing(t, Node{Endpoint: "a", Tokens: toks(-100, 200)}, Node{Endpoint: "b", Tokens: toks(0)}, Node{Endpoint: "c", Tokens: toks(100)})
}

// TestOwnerOfToken checks the walk's start: the first ring token at or
// after a key's token owns it, wrapping past the last.
func TestOwnerOfToken(t *testing.T) {
	m := threeNodes(t)
	for _, c := range []struct {
		key   int64
		owner Endpoint
		rng   string
	}{
		{-1000, "a", "(200,-100]"}, {-100, "a", "(200,-100]"}, {-99, "b", "(-100,0]"}, {0, "b", "(-100,0]"},
		{50, "c", "(0,100]"}, {150, "a", "(100,200]"}, {201, "a", "(200,-100]"}, {math.MaxInt64, "a", "(200,-100]"},
	} {
		i := m.FirstIndex(tok(c.key))
		if m.Owner(i) != c.owner || m.RangeOf(i).String() != c.rng {
			t.Errorf("token %d: owner %s of %s, want %s of %s", c.key, m.Owner(i), m.RangeOf(i), c.owner, c.rng)
		}
	}
}

func TestSimpleStrategy(t *testing.T) {
	m := threeNodes(t)
	for _, c := range []struct {
		key  int64
		rf   int
		want string
	}{
		{150, 2, "[a b]"}, // a at 200, a again at -100 (skipped), then b
		{50, 3, "[c a b]"},
		{-50, 1, "[b]"},
		{-50, 5, "[b c a]"}, // more than the nodes: every node once
		{-50, 0, "[]"},
	} {
		got := fmt.Sprint(SimpleStrategy{Factor: c.rf}.Replicas(m, tok(c.key)))
		if got != c.want {
			t.Errorf("token %d, RF %d: %s, want %s", c.key, c.rf, got, c.want)
		}
	}
}

// TestNetworkTopologyStrategy walks a ring of two data centres: replicas
// spread over racks first, a rack repeats only when there are fewer racks
// than replicas, and each data centre counts on its own.
func TestNetworkTopologyStrategy(t *testing.T) {
	dc1r1, dc1r2, dc2 := Location{"dc1", "r1"}, Location{"dc1", "r2"}, Location{"dc2", "r1"}
	m := mustRing(t,
		Node{Endpoint: "n1", Location: dc1r1, Tokens: toks(10)},
		Node{Endpoint: "n2", Location: dc1r1, Tokens: toks(20)},
		Node{Endpoint: "x1", Location: dc2, Tokens: toks(25)},
		Node{Endpoint: "n3", Location: dc1r1, Tokens: toks(30)},
		Node{Endpoint: "n4", Location: dc1r2, Tokens: toks(40)},
		Node{Endpoint: "x2", Location: dc2, Tokens: toks(45)},
	)
	for _, c := range []struct {
		factors map[string]int
		key     int64
		want    string
	}{
		// Two racks, two replicas: n2 and n3 share n1's rack, n4 does not.
		{map[string]int{"dc1": 2}, 5, "[n1 n4]"},
		// Three replicas over two racks: one repeat, the first met (n2).
		{map[string]int{"dc1": 3}, 5, "[n1 n2 n4]"},
		{map[string]int{"dc1": 2, "dc2": 1}, 5, "[n1 x1 n4]"},
		{map[string]int{"dc1": 1, "dc2": 5}, 26, "[n3 x2 x1]"}, // dc2 has only two nodes
		{map[string]int{"dc3": 3}, 5, "[]"},
	} {
		s := NetworkTopologyStrategy{Factors: c.factors}
		if got := fmt.Sprint(s.Replicas(m, tok(c.key))); got != c.want {
			t.Errorf("%v at %d: %s, want %s", c.factors, c.key, got, c.want)
		}
	}
	s := NetworkTopologyStrategy{Factors: map[string]int{"dc1": 3, "dc2": 2}}
	if s.ReplicationFactor() != 5 || s.DataCenterFactor("dc1") != 3 || s.DataCenterFactor("dc9") != 0 {
		t.Errorf("factors: total %d, dc1 %d, dc9 %d", s.ReplicationFactor(), s.DataCenterFactor("dc1"), s.DataCenterFactor("dc9"))
	}
}

// join adds nodes one after another, each choosing its tokens against the
// ring as it stands.
func join(t *testing.T, p partitioner.Partitioner, nodes, vnodes int, seed uint64) *Metadata {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var members []Node
	m, _ := NewMetadata(p, nil)
	for i := 1; i <= nodes; i++ {
		tokens := AllocateTokens(m, vnodes, r)
		if len(tokens) != vnodes {
			t.Fatalf("node %d got %d tokens, want %d", i, len(tokens), vnodes)
		}
		members = append(members, Node{Endpoint: Endpoint(fmt.Sprintf("127.0.0.%d", i)), Tokens: tokens})
		var err error
		if m, err = NewMetadata(p, members); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestAllocationBalancesOwnership: three nodes of 16 vnodes each own
// between 25% and 42% of the ring (the bound), whatever the seed
// and partitioner; the shares add up to the whole ring, and an RF 3
// keyspace puts all of it on every node.
func TestAllocationBalancesOwnership(t *testing.T) {
	for _, p := range []partitioner.Partitioner{partitioner.Murmur3(), partitioner.Random()} {
		for seed := uint64(1); seed <= 20; seed++ {
			m := join(t, p, 3, 16, seed)
			total := 0.0
			for e, o := range m.Ownership() {
				total += o
				if o < 0.25 || o > 0.42 {
					t.Errorf("%s seed %d: %s owns %.1f%%", p.Name(), seed, e, 100*o)
				}
			}
			if math.Abs(total-1) > 1e-9 {
				t.Errorf("%s seed %d: ownership adds up to %v", p.Name(), seed, total)
			}
			for e, o := range m.EffectiveOwnership(SimpleStrategy{Factor: 3}) {
				if math.Abs(o-1) > 1e-9 {
					t.Errorf("%s seed %d: %s holds %v of an RF 3 keyspace", p.Name(), seed, e, o)
				}
			}
		}
	}
	// More nodes stay close to even too.
	m := join(t, partitioner.Murmur3(), 6, 16, 7)
	for e, o := range m.Ownership() {
		if o < 0.8/6 || o > 1.2/6 {
			t.Errorf("6 nodes: %s owns %.1f%%", e, 100*o)
		}
	}
	// One node owns all of it.
	if o := join(t, partitioner.Murmur3(), 1, 16, 3).Ownership()["127.0.0.1"]; math.Abs(o-1) > 1e-9 {
		t.Errorf("one node owns %v", o)
	}
}

// TestPendingReplicas: while a node joins, the replicas a range gains in
// the future ring are its pending ones, located from that ring; with no
// future there are none.
func TestPendingReplicas(t *testing.T) {
	m := threeNodes(t)
	if p := m.Pending(SimpleStrategy{Factor: 2}, tok(150)); p != nil {
		t.Fatalf("pending replicas with no node moving: %v", p)
	}
	joining := Node{Endpoint: "d", Location: Location{DataCenter: "dc2", Rack: "r9"}, Tokens: toks(120)}
	future := mustRing(t, Node{Endpoint: "a", Tokens: toks(-100, 200)}, Node{Endpoint: "b", Tokens: toks(0)}, Node{Endpoint: "c", Tokens: toks(100)}, joining)
	moving := m.WithFuture(future).WithEpoch(7)
	if moving.Future() != future || moving.Epoch() != 7 {
		t.Fatal("WithEpoch lost the future ring")
	}
	for _, c := range []struct {
		key  int64
		rf   int
		want string
	}{
		{110, 1, "[d]"}, // d takes (100, 120] from a
		{110, 2, "[d]"}, // d then a: a already replicates it
		{150, 1, "[]"},  // (120, 200] stays a's
		{150, 3, "[]"},  // a, then b and c: d would be fourth
		{-50, 3, "[d]"}, // b, c, then d before a
		{50, 3, "[d]"},  // c's range: c, then d before a, then a; b is dropped
		{50, 2, "[d]"},
	} {
		if got := fmt.Sprint(moving.Pending(SimpleStrategy{Factor: c.rf}, tok(c.key))); got != c.want {
			t.Errorf("token %d, RF %d: pending %s, want %s", c.key, c.rf, got, c.want)
		}
	}
	if got := moving.Location("d"); got != joining.Location {
		t.Fatalf("the joining node's location: %+v", got)
	}
	if got := m.Location("d"); got != (Location{}) {
		t.Fatalf("a ring with no future places a node outside it: %+v", got)
	}
}
