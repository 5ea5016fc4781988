package mutation

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomContext is a context of up to four of six nodes' shards.
func randomContext(r *rand.Rand) []byte {
	var shards []CounterShard
	for id := byte(1); id <= 6; id++ {
		if r.IntN(3) == 0 {
			shards = append(shards, CounterShard{ID: CounterID{id}, Clock: int64(r.IntN(4)), Count: int64(r.IntN(9)) - 4})
		}
	}
	return CounterContext(shards...)
}

func TestCounterContextMergeLaws(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a, b, c := randomContext(r), randomContext(r), randomContext(r)
		for _, x := range [][]byte{a, b, c} {
			if err := CheckCounterContext(x); err != nil {
				t.Fatal(err)
			}
		}
		ab, ba := MergeCounterContexts(a, b), MergeCounterContexts(b, a)
		if !bytes.Equal(ab, ba) {
			t.Fatalf("merge is not commutative: %x %x", ab, ba)
		}
		if l, rr := MergeCounterContexts(ab, c), MergeCounterContexts(a, MergeCounterContexts(b, c)); !bytes.Equal(l, rr) {
			t.Fatalf("merge is not associative: %x %x", l, rr)
		}
		if again := MergeCounterContexts(ab, a); !bytes.Equal(again, ab) {
			t.Fatalf("merge is not idempotent: %x %x", again, ab)
		}
		if err := CheckCounterContext(ab); err != nil {
			t.Fatalf("a merge %x: %v", ab, err)
		}
		// Every shard of the merge is the later-clocked of the inputs'.
		for _, s := range []CounterShard{{ID: CounterID{1}}, {ID: CounterID{2}}, {ID: CounterID{3}}} {
			sa, inA := CounterShardOf(a, s.ID)
			sb, inB := CounterShardOf(b, s.ID)
			sm, inM := CounterShardOf(ab, s.ID)
			if inM != (inA || inB) || inA && sm.Clock < sa.Clock || inB && sm.Clock < sb.Clock {
				t.Fatalf("shard %x: merge %+v of %+v and %+v", s.ID[0], sm, sa, sb)
			}
		}
	}
}

func TestCounterMergeKeepsEveryNodesLatest(t *testing.T) {
	// Three leaders each increment; replicas see the updates in any
	// order and all end with the sum.
	updates := [][]byte{
		CounterContext(CounterShard{ID: CounterID{1}, Clock: 1, Count: 5}),
		CounterContext(CounterShard{ID: CounterID{1}, Clock: 2, Count: 7}), // node 1 again: its count is now 7
		CounterContext(CounterShard{ID: CounterID{2}, Clock: 1, Count: -3}),
		CounterContext(CounterShard{ID: CounterID{3}, Clock: 4, Count: 10}),
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		order := slices.Clone(updates)
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		acc := order[0]
		for _, u := range order[1:] {
			acc = MergeCounterContexts(acc, u)
		}
		if got := CounterTotal(acc); got != 14 {
			t.Fatalf("total %d, want 14 (%x)", got, acc)
		}
	}
}

func TestCounterCellsReconcile(t *testing.T) {
	a := CounterCell("c", 10, CounterContext(CounterShard{ID: CounterID{1}, Clock: 1, Count: 5}))
	b := CounterCell("c", 20, CounterContext(CounterShard{ID: CounterID{2}, Clock: 1, Count: 2}))
	m := Reconcile(&a, &b)
	if !m.Counter || m.Timestamp != 20 || CounterTotal(m.Value) != 7 {
		t.Fatalf("two counter cells merged into %v", m)
	}
	if m2 := Reconcile(&b, &a); !bytes.Equal(m2.Value, m.Value) || m2.Timestamp != m.Timestamp {
		t.Fatalf("counter merge depends on order: %v %v", m, m2)
	}
	// A tombstone wins whatever the timestamps: a deleted counter stays
	// deleted.
	old := TombstoneCell("c", nil, 1, 100)
	if w := Reconcile(&a, &old); !w.Tombstone {
		t.Fatalf("an older tombstone lost to a counter cell: %v", w)
	}
	if w := Reconcile(&old, &b); !w.Tombstone {
		t.Fatalf("an older tombstone lost to a counter cell: %v", w)
	}
	// A superset is returned as it is.
	both := CounterCell("c", 30, MergeCounterContexts(a.Value, b.Value))
	if w := Reconcile(&both, &a); w != &both {
		t.Fatalf("a merge that adds nothing made a new cell: %v", w)
	}
}

func TestCounterCellsEncodeAndCheck(t *testing.T) {
	r := NewRow()
	r.Cells = []Cell{CounterCell("a", 5, CounterContext(CounterShard{ID: CounterID{9}, Clock: 3, Count: -2})), TombstoneCell("b", nil, 6, 7)}
	back, err := DecodeRow(AppendRow(nil, r))
	if err != nil || !back.Cells[0].Counter || CounterTotal(back.Cells[0].Value) != -2 || back.Cells[1].Counter {
		t.Fatalf("%v %v", back, err)
	}
	m := NewMutation(TableID{1}, []byte{1})
	bad := NewRow()
	bad.Cells = []Cell{CounterCell("a", 5, []byte{0, 0, 0, 0, 0, 0, 0, 5})} // an 8-byte delta is no context
	m.Rows = []RowUpdate{{Clustering: []byte{}, Row: bad}}
	if err := m.Check(); err == nil {
		t.Fatal("a counter cell holding a delta passed the check")
	}
	// A counter write travels to its leader with its updates, which only
	// DecodeCounterUpdate takes; it refuses contexts.
	update := AppendMutation(nil, m)
	if _, err := DecodeMutation(update); err == nil {
		t.Fatal("a mutation of counter updates decoded as one to apply")
	}
	if back, err := DecodeCounterUpdate(update); err != nil || len(back.Rows) != 1 {
		t.Fatalf("a counter update: %v", err)
	} else if d, ok := CounterDelta(&back.Rows[0].Row.Cells[0]); !ok || d != 5 {
		t.Fatalf("the update's delta came back as %d, %v", d, ok)
	}
	m.Rows[0].Row = r
	if _, err := DecodeCounterUpdate(AppendMutation(nil, m)); err == nil {
		t.Fatal("a counter context decoded as a counter update")
	}
	for _, ctx := range [][]byte{{0, 1}, append(CounterContext(CounterShard{ID: CounterID{2}}), CounterContext(CounterShard{ID: CounterID{1}})[2:]...)} {
		if CheckCounterContext(ctx) == nil {
			t.Fatalf("context %x passed", ctx)
		}
	}
}
