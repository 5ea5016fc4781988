package storage

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/mutation"
)

// TestCleanupKeepsOnlyTheSpans: a cleanup leaves every partition inside
// the spans as it read before (deletions included), holds none outside
// them after a restart, leaves alone an SSTable wholly inside a span, and
// with no span left drops everything.
func TestCleanupKeepsOnlyTheSpans(t *testing.T) {
	fs := vfs.NewMem()
	e, tbl := testEngine(t, fs)
	const n = 300
	order, prefix := tokenOrder(e, n)
	for batch := range 3 {
		for i := batch * 100; i < (batch+1)*100; i++ {
			writeRow(t, e, i, fmt.Sprintf("v%d", i), 10)
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range order[60:100] {
		writeRow(t, e, i, fmt.Sprintf("w%d", i), 20)
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	// Deletions still in the memtable, one inside the spans, one outside.
	for _, i := range []int{order[55], order[150]} {
		m := mutation.NewMutation(modelTableID, streamKey(i))
		m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 30, LocalDeletionTime: time.Now().Unix()}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	keep := []KeySpan{{From: prefix[order[50]], To: prefix[order[120]]}, {From: prefix[order[200]]}}
	before := map[int][]mutation.Entry{}
	for i := range n {
		got, err := tbl.ReadPartitionEntries(streamKey(i), ReadQuery{})
		if err != nil {
			t.Fatal(err)
		}
		before[i] = got
	}
	inside := tbl.acquireView()
	var untouched uint64
	for _, s := range inside.sstables {
		if whole, _ := coverage(s.meta(), keep); whole {
			untouched = s.gen
		}
	}
	inside.release()
	if untouched == 0 {
		t.Fatal("no SSTable lies wholly inside a span")
	}

	if err := tbl.Cleanup(keep); err != nil {
		t.Fatal(err)
	}
	check := func(tbl *Table, when string) {
		t.Helper()
		for pos, i := range order {
			got, err := tbl.ReadPartitionEntries(streamKey(i), ReadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if spanOf(keep, prefix[i]) < 0 {
				if len(got) != 0 {
					t.Fatalf("%s: partition %d (%d in token order) is outside the spans and stayed: %v", when, i, pos, got)
				}
				continue
			}
			if len(got) == 0 || !reflect.DeepEqual(got, before[i]) {
				t.Fatalf("%s: partition %d (%d in token order) reads %v, before the cleanup %v", when, i, pos, got, before[i])
			}
		}
	}
	check(tbl, "after the cleanup")
	v := tbl.acquireView()
	found := false
	for _, s := range v.sstables {
		found = found || s.gen == untouched
	}
	v.release()
	if !found {
		t.Fatalf("the cleanup rewrote SSTable %d, wholly inside a span", untouched)
	}
	e.Close()
	e, tbl = testEngine(t, fs)
	defer e.Close()
	check(tbl, "after a restart")

	if err := tbl.Cleanup(nil); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, err := tbl.ReadPartitionEntries(streamKey(i), ReadQuery{}); err != nil || len(got) != 0 {
			t.Fatalf("partition %d after a cleanup keeping nothing: %v, %v", i, got, err)
		}
	}
	if err := tbl.Cleanup([]KeySpan{{From: prefix[order[10]], To: prefix[order[5]]}}); err == nil {
		t.Fatal("a cleanup took an empty span")
	}
}
