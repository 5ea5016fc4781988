package storage

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// testEngine opens an engine with one table ("ks"."t") on fs and recovers it.
func testEngine(t *testing.T, fs vfs.FS, adjust ...func(*Options)) (*Engine, *Table) {
	t.Helper()
	opts := Options{FS: fs, DataDir: "data", CommitLog: commitlog.Options{Dir: "cl", SyncMode: commitlog.SyncBatch},
		DisableAutoCompaction: true}
	for _, f := range adjust {
		f(&opts)
	}
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := e.OpenTable(TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatalf("recover: %v", err)
	}
	return e, tbl
}

// twoCellsOneSetElement is the mutation a set bound with a repeated
// element used to build: two cells under one column and path.
func twoCellsOneSetElement(key string) *mutation.Mutation {
	m := mutation.NewMutation(modelTableID, []byte(key))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{
		mutation.LiveCell("s", []byte{3}, 10, nil),
		mutation.LiveCell("s", []byte{3}, 10, nil),
	}
	m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	return m
}

// TestMalformedMutationIsRefused checks that a mutation breaking the data
// model's rules never reaches the commit log or the memtable: the writer
// gets an error, the table reads and flushes as before, and a restart
// replays every acknowledged write.
func TestMalformedMutationIsRefused(t *testing.T) {
	fs := vfs.NewMem()
	e, tbl := testEngine(t, fs)
	if err := writeKey(e, "good"); err != nil {
		t.Fatal(err)
	}
	live := mutation.NewMutation(modelTableID, []byte("rt"))
	live.RangeTombstones = []mutation.RangeTombstone{{Start: clusteringOf(1), End: clusteringOf(2), Deletion: mutation.Live}}
	tombstoneWithValue := mutation.NewMutation(modelTableID, []byte("tv"))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{{Column: "v", Timestamp: 1, LocalDeletionTime: 5, Tombstone: true, Value: []byte("x")}}
	tombstoneWithValue.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	for _, m := range []*mutation.Mutation{twoCellsOneSetElement("dup"), live, tombstoneWithValue} {
		err := e.Apply(m)
		if !errors.Is(err, mutation.ErrMalformed) || !strings.Contains(err.Error(), "ks.t") {
			t.Fatalf("Apply of a malformed mutation of %q = %v, want ErrMalformed naming the table", m.Key, err)
		}
	}
	if p, err := tbl.Scan(ScanQuery{}); err != nil || len(p) != 1 || string(p[0].Key) != "good" {
		t.Fatalf("scan after refused writes: %v, %v", p, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, tbl = testEngine(t, fs)
	defer e.Close()
	if p, err := tbl.ReadPartition([]byte("good"), ReadQuery{}); err != nil || len(p.Rows) != 1 {
		t.Fatalf("after a restart: %v, %v", p, err)
	}
}

// TestFlushStopsAtAnEntryThatDoesNotDecode puts an entry that does not
// decode into a memtable behind the engine's checks: the flush fails
// naming the table and the key, no SSTable is published, and the memtable
// stays (its other rows read as before).
func TestFlushStopsAtAnEntryThatDoesNotDecode(t *testing.T) {
	e, tbl := testEngine(t, vfs.NewMem())
	defer e.Close()
	if err := writeKey(e, "good"); err != nil {
		t.Fatal(err)
	}
	bad := twoCellsOneSetElement("bad")
	entries := bad.AppendEntries(nil, e.Partitioner().Token(bad.Key))
	tbl.active.Load().Apply(entries)
	err := tbl.Flush()
	if !errors.Is(err, invariants.ErrCorruption) || !strings.Contains(err.Error(), "ks.t") ||
		!strings.Contains(err.Error(), string(hexOf(entries[0].Key))) {
		t.Fatalf("Flush = %v, want corruption naming ks.t and key %x", err, entries[0].Key)
	}
	if n := tbl.SSTableCount(); n != 0 {
		t.Fatalf("%d SSTables published by a failed flush", n)
	}
	if p, err := tbl.ReadPartition([]byte("good"), ReadQuery{}); err != nil || len(p.Rows) != 1 {
		t.Fatalf("the memtable's other rows after the failed flush: %v, %v", p, err)
	}
	if err := tbl.Flush(); err == nil {
		t.Fatal("a retried flush of the same memtable succeeded")
	}
}

func hexOf(b []byte) []byte { return []byte(hex.EncodeToString(b)) }
