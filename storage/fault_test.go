package storage

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
)

// faultyEngine opens an engine whose filesystem fails the chosen operation
// on paths containing match while armed.
func faultyEngine(t *testing.T, op errorfs.Op, match string) (*Engine, *Table, *atomic.Bool) {
	t.Helper()
	var armed atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(o errorfs.Op, path string) error {
		if armed.Load() && o == op && strings.Contains(path, match) {
			return errorfs.ErrInjected
		}
		return nil
	}))
	e, err := Open(Options{FS: fs, DataDir: "data", CommitLog: commitlog.Options{Dir: "cl", SyncMode: commitlog.SyncBatch},
		DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := e.OpenTable(TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
	return e, tbl, &armed
}

func writeKey(e *Engine, key string) error {
	m := mutation.NewMutation(modelTableID, []byte(key))
	row := mutation.NewRow()
	row.Liveness = mutation.LivenessInfo{Timestamp: 1, ExpiresAt: mutation.NoDeletionTime}
	m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	return e.Apply(m)
}

func TestFlushFailureSurfacesAndKeepsData(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpFileWrite, errorfs.OpFileSync, errorfs.OpRename, errorfs.OpCreate} {
		e, tbl, armed := faultyEngine(t, op, "sb-")
		if err := writeKey(e, "k"); err != nil {
			t.Fatal(err)
		}
		armed.Store(true)
		if err := tbl.Flush(); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("op %v: Flush = %v, want the injected error", op, err)
		}
		armed.Store(false)
		p, err := tbl.ReadPartition([]byte("k"), ReadQuery{})
		if err != nil || len(p.Rows) != 1 {
			t.Fatalf("op %v: after a failed flush the row must still read: %v %v", op, p, err)
		}
		if err := writeKey(e, "k2"); err != nil {
			t.Fatalf("op %v: the engine must stay usable: %v", op, err)
		}
		// The next flush retries the failed one, then flushes the new write.
		if err := tbl.Flush(); err != nil {
			t.Fatalf("op %v: flush after the fault cleared: %v", op, err)
		}
		if n := tbl.SSTableCount(); n != 2 {
			t.Fatalf("op %v: %d SSTables after the retry, want 2 (the retried memtable and the new one)", op, n)
		}
		for _, k := range []string{"k", "k2"} {
			if p, err := tbl.ReadPartition([]byte(k), ReadQuery{}); err != nil || len(p.Rows) != 1 {
				t.Fatalf("op %v: %s after the retry: %v %v", op, k, p, err)
			}
		}
		e.Close()
	}
}

func TestCommitLogFailureRefusesWrites(t *testing.T) {
	e, tbl, armed := faultyEngine(t, errorfs.OpFileWrite, "CommitLog")
	defer e.Close()
	armed.Store(true)
	if err := writeKey(e, "k"); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Apply with a failing commit log = %v", err)
	}
	armed.Store(false)
	if err := writeKey(e, "k"); err == nil {
		t.Fatalf("after a commit log failure writes must be refused")
	}
	p, err := tbl.ReadPartition([]byte("k"), ReadQuery{})
	if err != nil || !p.IsEmpty() {
		t.Fatalf("a refused write must not be visible: %v %v", p, err)
	}
}
