package coordinator

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// ringOf is a ring of the nodes, each at a location, one token each.
func ringOf(t *testing.T, at map[ring.Endpoint]ring.Location) *ring.Metadata {
	t.Helper()
	var nodes []ring.Node
	i := int64(0)
	for _, e := range slices.Sorted(func(yield func(ring.Endpoint) bool) {
		for e := range at {
			if !yield(e) {
				return
			}
		}
	}) {
		nodes = append(nodes, ring.Node{Endpoint: e, Location: at[e], Tokens: []partitioner.Token{partitioner.Murmur3Token(i * 1e15)}})
		i++
	}
	m, err := ring.NewMetadata(partitioner.Murmur3(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBatchlogEndpoints(t *testing.T) {
	loc := func(dc, rack string) ring.Location { return ring.Location{DataCenter: dc, Rack: rack} }
	all := func(ring.Endpoint) bool { return true }
	first := func(int) int { return 0 }
	for _, c := range []struct {
		name  string
		nodes map[ring.Endpoint]ring.Location
		dead  []ring.Endpoint
		want  []ring.Endpoint // for pick always 0
	}{
		{name: "a data centre of one node keeps its own batches",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "x": loc("dc2", "r1")}, want: []ring.Endpoint{"a"}},
		{name: "two nodes: the other one",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc1", "r1")}, want: []ring.Endpoint{"b"}},
		{name: "two nodes, the other down: none",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc1", "r1")}, dead: []ring.Endpoint{"b"}, want: nil},
		{name: "three nodes of one rack: the two others",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc1", "r1"), "c": loc("dc1", "r1")}, want: []ring.Endpoint{"b", "c"}},
		{name: "other racks first",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc1", "r1"), "c": loc("dc1", "r2"), "d": loc("dc1", "r3"), "e": loc("dc1", "r3")},
			want:  []ring.Endpoint{"d", "c"}},
		{name: "one other rack of two live nodes",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc1", "r1"), "c": loc("dc1", "r2"), "d": loc("dc1", "r2")},
			want:  []ring.Endpoint{"c", "d"}},
		{name: "only this data centre",
			nodes: map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc2", "r1"), "c": loc("dc2", "r1"), "d": loc("dc1", "r1")},
			want:  []ring.Endpoint{"d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := ringOf(t, c.nodes)
			alive := all
			if len(c.dead) > 0 {
				alive = func(e ring.Endpoint) bool { return !slices.Contains(c.dead, e) }
			}
			got := batchlogEndpoints(m, "a", "dc1", alive, first)
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			if len(got) == 2 && got[0] == got[1] {
				t.Fatalf("one node twice: %v", got)
			}
		})
	}
	// With random picks, two holders are always two nodes, never this one,
	// of two racks other than its own when there are two.
	m := ringOf(t, map[ring.Endpoint]ring.Location{"a": loc("dc1", "r1"), "b": loc("dc1", "r1"), "c": loc("dc1", "r2"),
		"d": loc("dc1", "r2"), "e": loc("dc1", "r3"), "f": loc("dc1", "r3")})
	n := 0
	for range 200 {
		n++
		got := batchlogEndpoints(m, "a", "dc1", all, func(k int) int { n = n*1103515245 + 12345; return int(uint(n)>>8) % k })
		if len(got) != 2 || got[0] == got[1] || slices.Contains(got, "a") || m.Location(got[0]).Rack == m.Location(got[1]).Rack ||
			m.Location(got[0]).Rack == "r1" || m.Location(got[1]).Rack == "r1" {
			t.Fatalf("holders %v", got)
		}
	}
}

func TestBatchRecordRoundTrip(t *testing.T) {
	id := batchID(1_700_000_000_000_123, 99)
	if micros, err := batchMicros(id); err != nil || micros != 1_700_000_000_000_123 {
		t.Fatalf("%d %v", micros, err)
	}
	ms := []*mutation.Mutation{update(1), update(2)}
	ms[1].Key = []byte{0, 0, 0, 2}
	gotID, got, err := decodeBatch(appendBatch(nil, id, ms))
	if err != nil || !bytes.Equal(gotID, id) || len(got) != 2 || !bytes.Equal(got[1].Key, []byte{0, 0, 0, 2}) {
		t.Fatalf("%x %v %v", gotID, got, err)
	}
	record, err := batchRecord(id, ms, 1_700_000_000_000_123, 1_700_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if err := record.Check(); err != nil {
		t.Fatal(err)
	}
	cells, err := schema.BatchesTable.RowCells(record.Key, record.Rows[0].Clustering, record.Rows[0].Row, nil, 1_700_000_000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readBatch(id, cells)
	if err != nil || len(b.ms) != 2 || !bytes.Equal(b.ms[0].Key, ms[0].Key) || !bytes.Equal(b.ms[1].Key, ms[1].Key) || b.micros != 1_700_000_000_000_123 {
		t.Fatalf("%+v %v", b, err)
	}
	if _, _, err := decodeBatch(appendBatch(nil, []byte("not a timeuuid"), ms)); err == nil {
		t.Fatal("a batch with a bad id was taken")
	}
	if _, _, err := decodeBatch(appendBatch(nil, id, nil)); err == nil {
		t.Fatal("a batch of no mutations was taken")
	}
}

func TestSpansPartitions(t *testing.T) {
	ks := func(id mutation.TableID) string { return map[mutation.TableID]string{{1}: "a", {2}: "a", {3}: "b"}[id] }
	m := func(table byte, key byte) *mutation.Mutation {
		return mutation.NewMutation(mutation.TableID{table}, []byte{key})
	}
	for _, c := range []struct {
		ms   []*mutation.Mutation
		want bool
	}{
		{[]*mutation.Mutation{m(1, 1)}, false},
		{[]*mutation.Mutation{m(1, 1), m(2, 1)}, false}, // two tables of one keyspace, one key
		{[]*mutation.Mutation{m(1, 1), m(1, 2)}, true},
		{[]*mutation.Mutation{m(1, 1), m(3, 1)}, true}, // another keyspace
	} {
		if got := spansPartitions(c.ms, ks); got != c.want {
			t.Errorf("%d mutations: %v, want %v", len(c.ms), got, c.want)
		}
	}
}
