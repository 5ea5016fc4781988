package storage

import (
	"errors"
	"fmt"
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
func faultyEngine(t *testing.T, op errorfs.Op, match string, adjust ...func(*Options)) (*Engine, *Table, *atomic.Bool) {
	t.Helper()
	var armed atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(o errorfs.Op, path string) error {
		if armed.Load() && o == op && strings.Contains(path, match) {
			return errorfs.ErrInjected
		}
		return nil
	}))
	e, tbl := testEngine(t, fs, adjust...)
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

// TestFullMemtableSpaceRefusesWritesWhileFlushesFail fills the memtable
// space while every flush fails: writes are refused with an error naming the
// space and the flush's failure, acknowledged writes stay readable, and once
// flushes succeed again writes go on.
func TestFullMemtableSpaceRefusesWritesWhileFlushesFail(t *testing.T) {
	const space = 64 << 10
	e, tbl, armed := faultyEngine(t, errorfs.OpCreate, "sb-", func(o *Options) {
		o.MemtableSize = 1 << 30 // only the total space triggers flushes
		o.MemtableTotalSpace = space
		o.CommitLog.SyncMode = commitlog.SyncPeriodic
	})
	defer e.Close()
	armed.Store(true)
	var acked []string
	var refusal error
	for i := 0; i < 10000 && refusal == nil; i++ {
		key := fmt.Sprintf("key-%05d", i)
		if refusal = writeKey(e, key); refusal == nil {
			acked = append(acked, key)
		}
	}
	if refusal == nil {
		t.Fatalf("%d writes into a %d-byte memtable space with every flush failing were all accepted", len(acked), space)
	}
	if !errors.Is(refusal, errorfs.ErrInjected) || !strings.Contains(refusal.Error(), "memtable_heap_space") {
		t.Fatalf("refusal %q should name the memtable space and wrap the flush's error", refusal)
	}
	if held := e.memtableBytes.Load(); held <= space || held > 2*space {
		t.Fatalf("memtables hold %d bytes at the refusal; want just past the %d-byte space", held, space)
	}
	armed.Store(false)
	if err := writeKey(e, "after"); err != nil {
		t.Fatalf("with flushes working again, a write must go through: %v", err)
	}
	if e.memtableBytes.Load() > space {
		t.Fatalf("the write went through without the flush freeing the space")
	}
	for _, k := range append(acked, "after") {
		if p, err := tbl.ReadPartition([]byte(k), ReadQuery{}); err != nil || len(p.Rows) != 1 {
			t.Fatalf("acknowledged %s: %v %v", k, p, err)
		}
	}
}
