package repair

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/storage"
)

var tableID = mutation.TableID{7}

func tok(t *testing.T, v string) partitioner.Token {
	t.Helper()
	tk, err := partitioner.Murmur3().ParseToken(v)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestLeavesCoverTheRange: a range's leaves follow one another clockwise
// from its start to its end, for a range that wraps, the whole ring and
// a range too small to halve.
func TestLeavesCoverTheRange(t *testing.T) {
	p := partitioner.Murmur3()
	for _, c := range []struct {
		r      partitioner.Range
		leaves int
	}{
		{partitioner.Range{Start: tok(t, "-100"), End: tok(t, "1000")}, 32},
		{partitioner.Range{Start: tok(t, "9000000000000000000"), End: tok(t, "-9000000000000000000")}, 32},
		{partitioner.Range{Start: tok(t, "5"), End: tok(t, "5")}, 32},
		{partitioner.Range{Start: tok(t, "5"), End: tok(t, "6")}, 1},
		{partitioner.Range{Start: tok(t, "5"), End: tok(t, "8")}, 3},
	} {
		leaves := Leaves(p, c.r, Depth)
		if len(leaves) != c.leaves || partitioner.Compare(leaves[0].Start, c.r.Start) != 0 || partitioner.Compare(leaves[len(leaves)-1].End, c.r.End) != 0 {
			t.Fatalf("the leaves of %s: %v, want %d", c.r, leaves, c.leaves)
		}
		for i := 1; i < len(leaves); i++ {
			if partitioner.Compare(leaves[i].Start, leaves[i-1].End) != 0 {
				t.Fatalf("the leaves of %s do not follow one another: %v", c.r, leaves)
			}
		}
	}
}

type node struct {
	engine *storage.Engine
	table  *storage.Table
	svc    *Service
}

// loopback answers a request with the handler of the Service named.
type loopback map[string]*Service

func (l loopback) Request(_ context.Context, to string, _ messaging.Verb, payload []byte) ([]byte, error) {
	return l[to].handleTree(context.Background(), "", payload)
}

func newNode(t *testing.T, net loopback, name string) *node {
	e, err := storage.Open(storage.Options{FS: vfs.NewMem(), DataDir: "data",
		CommitLog: commitlog.Options{Dir: "cl", SyncMode: commitlog.SyncBatch}, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := e.OpenTable(storage.TableOptions{ID: tableID, Keyspace: "ks", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	p := partitioner.Murmur3()
	svc := &Service{Tables: e, Network: net, Partitioner: p, Spans: func(r partitioner.Range) []storage.KeySpan {
		var out []storage.KeySpan
		for _, piece := range r.Unwrap(p) {
			var s storage.KeySpan
			if !piece.Start.IsMinimum() {
				s.From = mutation.PartitionUpperBound(piece.Start.AppendBytes(nil))
			}
			if partitioner.Compare(piece.End, p.MaxToken()) < 0 {
				s.To = mutation.PartitionUpperBound(piece.End.AppendBytes(nil))
			}
			out = append(out, s)
		}
		return out
	}}
	net[name] = svc
	return &node{engine: e, table: tbl, svc: svc}
}

func (n *node) write(t *testing.T, k int, ts int64) {
	t.Helper()
	m := mutation.NewMutation(tableID, []byte(fmt.Sprintf("key-%d", k)))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, []byte("value"))}
	m.Rows = []mutation.RowUpdate{{Row: row}}
	if err := n.engine.Apply(m); err != nil {
		t.Fatal(err)
	}
}

// TestTreesAgreeOnTheSameDataOnly: two replicas holding the same writes,
// one in SSTables and the other in its memtable, hash every leaf alike
// (asked over the network or here); a write one lacks, or holds with
// another timestamp, changes only the leaf of its token.
func TestTreesAgreeOnTheSameDataOnly(t *testing.T) {
	net := loopback{}
	a, b := newNode(t, net, "a"), newNode(t, net, "b")
	for k := range 200 {
		a.write(t, k, 10)
		b.write(t, k, 10)
		if k%50 == 49 {
			if err := a.table.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	whole := partitioner.Range{Start: tok(t, "0"), End: tok(t, "0")}
	ta, err := a.svc.Tree(tableID, whole, Depth)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := a.svc.TreeOf(context.Background(), "b", tableID, whole, Depth)
	if err != nil {
		t.Fatal(err)
	}
	if len(ta) != 32 || !slices.EqualFunc(ta, tb, bytes.Equal) {
		t.Fatalf("the same data hashes differently: %d leaves", len(ta))
	}
	distinct := map[string]bool{}
	for _, l := range ta {
		distinct[string(l)] = true
	}
	if len(distinct) < 24 { // 200 keys fill nearly every one of 32 leaves
		t.Fatalf("only %d distinct leaf hashes: the keys are not spread over the leaves", len(distinct))
	}
	b.write(t, 500, 10) // a lacks it
	b.write(t, 3, 11)   // a newer write b alone has
	tb, err = b.svc.Tree(tableID, whole, Depth)
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i := range ta {
		if !bytes.Equal(ta[i], tb[i]) {
			differ++
		}
	}
	if differ == 0 || differ > 2 {
		t.Fatalf("two writes changed %d leaves", differ)
	}
}

// FuzzDecoders: no input panics a decoder, and what one accepts encodes
// back to what it decoded.
func FuzzDecoders(f *testing.F) {
	p := partitioner.Murmur3()
	f.Add(treeRequest{table: tableID, r: partitioner.Range{Start: p.MinToken(), End: p.MaxToken()}, depth: 5}.encode())
	f.Add(encodeList([][]byte{{1, 2}, {3}}))
	f.Add(recordRequest{table: tableID, ranges: []partitioner.Range{{Start: p.MinToken(), End: partitioner.Murmur3Token(7)}}, at: 1700000000}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := decodeRecordRequest(b, p); err == nil {
			again, err := decodeRecordRequest(q.encode(), p)
			if err != nil || again.table != q.table || again.at != q.at || !slices.EqualFunc(again.ranges, q.ranges, func(a, b partitioner.Range) bool {
				return partitioner.Compare(a.Start, b.Start) == 0 && partitioner.Compare(a.End, b.End) == 0
			}) {
				t.Fatalf("a record request does not round-trip: %v", err)
			}
		}
		if q, err := decodeTreeRequest(b, p); err == nil {
			if again, err := decodeTreeRequest(q.encode(), p); err != nil || again.table != q.table || again.depth != q.depth ||
				partitioner.Compare(again.r.Start, q.r.Start) != 0 || partitioner.Compare(again.r.End, q.r.End) != 0 {
				t.Fatalf("a tree request does not round-trip: %v", err)
			}
		}
		if tr, err := decodeList(b); err == nil {
			if again, err := decodeList(encodeList(tr)); err != nil || !slices.EqualFunc(again, tr, bytes.Equal) {
				t.Fatalf("a tree does not round-trip: %v", err)
			}
		}
	})
}

// TestRecordRequestBound: a REPAIR_RECORD of more ranges than any node
// replicates is refused before any is merged.
func TestRecordRequestBound(t *testing.T) {
	p := partitioner.Murmur3()
	ranges := make([]partitioner.Range, MaxRecordRanges+1)
	for i := range ranges {
		ranges[i] = partitioner.Range{Start: partitioner.Murmur3Token(int64(i)), End: partitioner.Murmur3Token(int64(i + 1))}
	}
	if _, err := decodeRecordRequest(recordRequest{table: tableID, ranges: ranges, at: 1}.encode(), p); err == nil {
		t.Fatalf("a record of %d ranges decoded", len(ranges))
	}
	q, err := decodeRecordRequest(recordRequest{table: tableID, ranges: ranges[:MaxRecordRanges], at: 1}.encode(), p)
	if err != nil || len(q.ranges) != MaxRecordRanges {
		t.Fatalf("a record of %d ranges: %d decoded, %v", MaxRecordRanges, len(q.ranges), err)
	}
}
