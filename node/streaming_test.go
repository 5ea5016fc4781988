package node

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/storage"
)

// inside counts the partitions of token tok (a few partition keys, low
// and high bytes: 3 in all) whose engine keys fall in span s.
func inside(s storage.KeySpan, tok partitioner.Token) int {
	n := 0
	for _, key := range [][]byte{{}, {0}, {0xFF, 0xFF, 0xFF}} {
		prefix := mutation.AppendPartitionPrefix(nil, tok, key)
		if (s.From == nil || bytes.Compare(prefix, s.From) >= 0) && (s.To == nil || bytes.Compare(prefix, s.To) < 0) {
			n++
		}
	}
	return n
}

// TestTokenSpanHoldsTheRangesTokens: a range's span holds the partitions
// of the tokens after its start through its end, and no other, at the
// edges of the ring too.
func TestTokenSpanHoldsTheRangesTokens(t *testing.T) {
	p := partitioner.Murmur3()
	tok := partitioner.Murmur3Token
	for _, c := range []struct {
		r       partitioner.Range
		in, out []int64
	}{
		{partitioner.Range{Start: tok(-10), End: tok(20)}, []int64{-9, 0, 20}, []int64{-10, 21, math.MinInt64 + 1, math.MaxInt64}},
		{partitioner.Range{Start: tok(-1), End: tok(0)}, []int64{0}, []int64{-1, 1}},
		{partitioner.Range{Start: tok(math.MinInt64), End: tok(5)}, []int64{math.MinInt64 + 1, 5}, []int64{6}},
		{partitioner.Range{Start: tok(100), End: tok(math.MaxInt64)}, []int64{101, math.MaxInt64}, []int64{100, -5}},
		{partitioner.Range{Start: tok(255), End: tok(256)}, []int64{256}, []int64{255, 257}}, // a carry
	} {
		pieces := c.r.Unwrap(p)
		if len(pieces) != 1 {
			t.Fatalf("%s unwraps into %d pieces", c.r, len(pieces))
		}
		s := tokenSpan(pieces[0], p)
		for _, v := range c.in {
			if inside(s, tok(v)) != 3 {
				t.Errorf("%s: token %d is outside its span", c.r, v)
			}
		}
		for _, v := range c.out {
			if inside(s, tok(v)) != 0 {
				t.Errorf("%s: token %d is inside its span", c.r, v)
			}
		}
	}
	// Adjacent spans merge; the others stay apart, in order.
	a := tokenSpan(partitioner.Range{Start: tok(0), End: tok(10)}, p)
	b := tokenSpan(partitioner.Range{Start: tok(10), End: tok(20)}, p)
	c := tokenSpan(partitioner.Range{Start: tok(30), End: tok(40)}, p)
	merged := mergeSpans([]storage.KeySpan{c, b, a})
	if len(merged) != 2 || !bytes.Equal(merged[0].From, a.From) || !bytes.Equal(merged[0].To, b.To) || !bytes.Equal(merged[1].From, c.From) {
		t.Fatalf("merged %v", merged)
	}
}

// TestRingOfMovingNodes: the ring holds the normal and leaving nodes;
// while one joins or leaves it carries the future ring of the normal and
// joining ones, where writes go as well.
func TestRingOfMovingNodes(t *testing.T) {
	part := partitioner.Murmur3()
	rec := func(id uint64, tok string, st metadata.NodeState) metadata.NodeRecord {
		return metadata.NodeRecord{ID: id, Endpoint: fmt.Sprintf("127.0.0.%d", id), DataCenter: "dc1", Rack: "r1", Tokens: []string{tok}, State: st}
	}
	nodes := map[uint64]metadata.NodeRecord{1: rec(1, "-100", metadata.Normal), 2: rec(2, "0", metadata.Normal), 3: rec(3, "100", metadata.Normal)}
	m, err := ringOf(part, nodes)
	if err != nil || m.Future() != nil || len(m.Endpoints()) != 3 {
		t.Fatalf("a settled ring: %v, future %v, %v", err, m.Future(), m.Endpoints())
	}
	nodes[4] = rec(4, "50", metadata.Joining)
	nodes[3] = rec(3, "100", metadata.Leaving)
	m, err = ringOf(part, nodes)
	if err != nil || m.Future() == nil {
		t.Fatalf("a moving ring: %v, future %v", err, m.Future())
	}
	if got, want := fmt.Sprint(m.Endpoints()), "[127.0.0.1 127.0.0.2 127.0.0.3]"; got != want {
		t.Fatalf("the ring now: %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(m.Future().Endpoints()), "[127.0.0.1 127.0.0.2 127.0.0.4]"; got != want {
		t.Fatalf("the future ring: %s, want %s", got, want)
	}
	tok, _ := part.ParseToken("40")
	if got := fmt.Sprint(m.Pending(ring.SimpleStrategy{Factor: 1}, tok)); got != "[127.0.0.4]" {
		t.Fatalf("pending replicas of token 40: %s", got)
	}
}
