package coordinator

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

func TestCounterLeader(t *testing.T) {
	loc := map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1"}, "b": {DataCenter: "dc1"}, "c": {DataCenter: "dc1"},
		"x": {DataCenter: "dc2"}, "y": {DataCenter: "dc2"}}
	locate := func(e ring.Endpoint) ring.Location { return loc[e] }
	for _, c := range []struct {
		name     string
		replicas []ring.Endpoint
		dead     []ring.Endpoint
		pick     int // what the random pick answers
		want     ring.Endpoint
		ok       bool
	}{
		{name: "this node, a replica, leads", replicas: []ring.Endpoint{"b", "a", "x"}, pick: 1, want: "a", ok: true},
		{name: "a live local replica at random", replicas: []ring.Endpoint{"b", "c", "x"}, pick: 1, want: "c", ok: true},
		{name: "a dead local replica is passed over", replicas: []ring.Endpoint{"b", "c", "x"}, dead: []ring.Endpoint{"b"}, want: "c", ok: true},
		{name: "another data centre's first live replica", replicas: []ring.Endpoint{"x", "y"}, dead: []ring.Endpoint{"x"}, want: "y", ok: true},
		{name: "local replicas before remote ones", replicas: []ring.Endpoint{"x", "c"}, want: "c", ok: true},
		{name: "none alive", replicas: []ring.Endpoint{"b", "x"}, dead: []ring.Endpoint{"b", "x"}, ok: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			alive := func(e ring.Endpoint) bool { return !slices.Contains(c.dead, e) }
			got, ok := counterLeader(c.replicas, "a", "dc1", alive, locate, func(n int) int { return min(c.pick, n-1) })
			if got != c.want || ok != c.ok {
				t.Fatalf("leader %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// TestCounterOutcomesRoundTrip: what a leader met reaches the coordinator
// as the same failure, with the write type COUNTER.
func TestCounterOutcomesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		met, want error
	}{
		{nil, nil},
		{&request.Unavailable{Consistency: request.Quorum, Required: 2, Alive: 1, DataCenter: "dc1"},
			&request.Unavailable{Consistency: request.Quorum, Required: 2, Alive: 1, DataCenter: "dc1"}},
		{&request.WriteTimeout{Consistency: request.All, Received: 2, BlockFor: 3, WriteType: request.WriteCounter},
			&request.WriteTimeout{Consistency: request.All, Received: 2, BlockFor: 3, WriteType: request.WriteCounter}},
		{&request.Failure{Write: true, Consistency: request.Quorum, Received: 1, BlockFor: 2, WriteType: request.WriteCounter,
			Failures: []request.ReplicaFailed{{Replica: "127.0.0.2", Reason: request.ReasonUnknown}}},
			&request.Failure{Write: true, Consistency: request.Quorum, Received: 1, BlockFor: 2, WriteType: request.WriteCounter, Port: 7000,
				Failures: []request.ReplicaFailed{{Replica: "127.0.0.2", Reason: request.ReasonUnknown}}}},
	} {
		b, err := encodeOutcome(c.met)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeOutcome(b, 7000)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v came back as %#v", c.met, got)
		}
	}
	// An error of the leader's own is no outcome: it fails the request.
	if _, err := encodeOutcome(errors.New("disk full")); err == nil || err.Error() != "disk full" {
		t.Errorf("the leader's own error: %v", err)
	}
	for _, b := range [][]byte{nil, {0x09}, append(mustOutcome(t, nil), 0)} {
		if _, err := decodeOutcome(b, 7000); err == nil {
			t.Errorf("outcome %x decoded", b)
		}
	}
}

func mustOutcome(t *testing.T, err error) []byte {
	b, e := encodeOutcome(err)
	if e != nil {
		t.Fatal(e)
	}
	return b
}

func TestCounterWriteCodec(t *testing.T) {
	m := &mutation.Mutation{Key: []byte("k"), Static: &mutation.Row{Cells: []mutation.Cell{mutation.CounterUpdate("n", 10, -3)}}}
	l, got, err := decodeCounterWrite(appendCounterWrite(nil, request.LocalQuorum, m))
	if err != nil || l != request.LocalQuorum || string(got.Key) != "k" || got.Static == nil || len(got.Static.Cells) != 1 {
		t.Fatalf("decoded %v %+v, %v", l, got, err)
	}
	if d, ok := mutation.CounterDelta(&got.Static.Cells[0]); !ok || d != -3 {
		t.Fatalf("the delta came back as %d, %v", d, ok)
	}
	if _, _, err := decodeCounterWrite(appendCounterWrite(nil, request.Consistency(0x77), m)); err == nil {
		t.Fatal("a write at an unknown level decoded")
	}
}

// TestCounterCacheRemembersOwnShards: the cache keeps the shards of this
// node's id only, per table, key, clustering and column; a truncation
// forgets the table's.
func TestCounterCacheRemembersOwnShards(t *testing.T) {
	me, other := mutation.CounterID{1}, mutation.CounterID{2}
	cc := newCounterCache()
	m := &mutation.Mutation{Table: mutation.TableID{1}, Key: []byte("k"), Rows: []mutation.RowUpdate{{Clustering: []byte("c"),
		Row: &mutation.Row{Cells: []mutation.Cell{
			mutation.CounterCell("n", 5, mutation.CounterContext(mutation.CounterShard{ID: me, Clock: 3, Count: 7})),
			mutation.CounterCell("o", 5, mutation.CounterContext(mutation.CounterShard{ID: other, Clock: 3, Count: 7})),
		}}}}}
	unlock := cc.lock(m.Table, m.Key)
	cc.remember(m, me)
	s, ok := cc.get(m.Table, m.Key, []byte("c"), "n")
	_, otherCached := cc.get(m.Table, m.Key, []byte("c"), "o")
	_, elsewhere := cc.get(mutation.TableID{2}, m.Key, []byte("c"), "n")
	unlock()
	if !ok || s != (mutation.CounterShard{ID: me, Clock: 3, Count: 7}) || otherCached || elsewhere {
		t.Fatalf("cached %+v %v; another node's shard cached %v, another table's %v", s, ok, otherCached, elsewhere)
	}
	truncated := false
	if err := cc.truncate(m.Table, func() error {
		// No stripe is free while the table is truncated.
		for i := range cc.stripes {
			if cc.stripes[i].mu.TryLock() {
				t.Errorf("stripe %d was free during the truncation", i)
				cc.stripes[i].mu.Unlock()
			}
		}
		truncated = true
		return nil
	}); err != nil || !truncated {
		t.Fatalf("the truncation: %v, ran %v", err, truncated)
	}
	unlock = cc.lock(m.Table, m.Key)
	_, ok = cc.get(m.Table, m.Key, []byte("c"), "n")
	unlock()
	if ok {
		t.Fatal("a truncated table's shard is still cached")
	}
}

// TestCounterLeaderNeverAnswersStaleRing: a leader behind its replicas'
// ring that cannot catch up has applied its shard already, so it answers
// a timeout of type COUNTER, never the StaleRing refusal a coordinator
// would route again (counting the increment twice).
func TestCounterLeaderNeverAnswersStaleRing(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	counts, err := schema.NewTable("ks", "t", mutation.TableID{7}, []*schema.Column{
		{Name: "k", Type: cqltype.IntType, Kind: schema.PartitionKey, Position: 0},
		{Name: "n", Type: cqltype.CounterType, Kind: schema.Regular, Position: -1},
	}, schema.DefaultTableParams())
	if err != nil {
		t.Fatal(err)
	}
	ks := schema.NewKeyspace("ks", schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, true)
	ks.Tables["t"] = counts
	c.schema = schema.New(map[string]*schema.Keyspace{"ks": ks})
	for e := range threeNodes {
		epoch := uint64(5)
		if e == "a" {
			epoch = 3 // the leader has not applied the last two changes, and cannot
		}
		c.replicas[e] = New(Config{Self: e, DataCenter: "dc1", Engine: c.engines[e], Network: c,
			Alive: func(ring.Endpoint) bool { return true }, Ring: func() *ring.Metadata { return c.ring.WithEpoch(epoch) },
			CatchUp:   func(context.Context, uint64) error { return errors.New("the metadata log is out of reach") },
			CounterID: func() mutation.CounterID { return mutation.CounterID{byte(e[0])} },
			Schema:    func() *schema.Schema { return c.schema }, StoragePort: 7000, Logger: zerolog.Nop(),
			Timeouts: Timeouts{Write: time.Second, Read: time.Second, Range: time.Second, Truncate: time.Second, Counter: time.Second}, Now: c.clock})
		t.Cleanup(c.replicas[e].Settle)
	}
	m := &mutation.Mutation{Table: counts.ID, Key: cqltype.EncodeInt(1), Rows: []mutation.RowUpdate{{Clustering: []byte{},
		Row: &mutation.Row{Cells: []mutation.Cell{mutation.CounterUpdate("n", 5, 1)}}}}}
	err = c.replicas["a"].ApplyCounters([]*mutation.Mutation{m}, request.Quorum, nil)
	var wt *request.WriteTimeout
	if _, stale := staleRingOf(err); stale || !errors.As(err, &wt) || wt.WriteType != request.WriteCounter {
		t.Fatalf("the leader behind its replicas answered %v", err)
	}
	if n := c.engines["a"].writes(); n != 1 {
		t.Fatalf("the leader applied its shard %d times", n)
	}
}
