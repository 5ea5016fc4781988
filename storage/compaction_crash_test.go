package storage

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
)

// crashAt is a filesystem that stops at the n-th change to the data
// directory (n counts from 1; 0 never stops): that change and everything
// after it fail, as if the process died there.
type crashAt struct {
	n, seen atomic.Int64
}

func (c *crashAt) MaybeError(op errorfs.Op, path string) error {
	if c.n.Load() == 0 {
		return nil
	}
	switch op {
	case errorfs.OpCreate, errorfs.OpRename, errorfs.OpRemove, errorfs.OpOpenDir, errorfs.OpFileSync, errorfs.OpFileWrite:
		if strings.HasPrefix(path, "data") && c.seen.Add(1) >= c.n.Load() {
			return errorfs.ErrInjected
		}
	}
	if c.seen.Load() >= c.n.Load() {
		return errorfs.ErrInjected
	}
	return nil
}

// TestCompactionCrashKeepsDeletions stops the process at every change a
// compaction makes to the data directory, and checks that a restart never
// brings back a row whose deletion the compaction purged. The deletion is
// in one input and the row in another: without the obsolete log, a crash
// between their removals could leave the row without its tombstone. Each
// crash point runs with either input flushed first, and twice: once as if
// every change reached the disk, once (strict) as if only what was synced
// did.
func TestCompactionCrashKeepsDeletions(t *testing.T) {
	for _, c := range []struct{ strict, deletionFirst bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		for n := int64(1); ; n++ {
			if !runCompactionCrash(t, n, c.strict, c.deletionFirst) {
				if n < 5 {
					t.Fatalf("the compaction made only %d changes; the test does not reach it", n-1)
				}
				break
			}
		}
	}
}

// runCompactionCrash runs the scenario with a crash at change n and reports
// whether the crash came before the compaction ended.
func runCompactionCrash(t *testing.T, n int64, strict, deletionFirst bool) (crashed bool) {
	t.Helper()
	mem := vfs.NewMem()
	if strict {
		mem = vfs.NewStrictMem()
	}
	injector := &crashAt{}
	clock := atomic.Int64{}
	clock.Store(1_000_000)
	opts := Options{FS: errorfs.Wrap(mem, injector), DataDir: "data",
		CommitLog:             commitlog.Options{Dir: "commitlog", SyncMode: commitlog.SyncBatch},
		DisableAutoCompaction: true,
		Now:                   func() time.Time { return time.Unix(clock.Load(), 0) }}
	tableOpts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t", GCGraceSeconds: NoGCGrace}
	open := func() (*Engine, *Table) { return openForCrash(t, n, opts, tableOpts) }
	e, tbl := open()
	del := mutation.NewMutation(modelTableID, []byte("p"))
	del.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 200, LocalDeletionTime: clock.Load()}
	row := mutation.NewRow()
	row.Liveness = mutation.LivenessInfo{Timestamp: 100, ExpiresAt: mutation.NoDeletionTime}
	ins := mutation.NewMutation(modelTableID, []byte("p"))
	ins.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	order := []*mutation.Mutation{ins, del}
	if deletionFirst {
		order = []*mutation.Mutation{del, ins}
	}
	for _, m := range order {
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(5)
	injector.n.Store(n)
	cerr := tbl.CompactMajor()
	crashed = injector.seen.Load() >= n
	if !crashed && cerr != nil {
		t.Fatalf("compaction failed without a crash: %v", cerr)
	}
	_ = e.Close() // what a dead process would not do; it only releases files
	injector.n.Store(0)
	if strict {
		mem.ResetToSyncedState()
	}
	e, tbl = open()
	defer e.Close()
	p, err := tbl.ReadPartition([]byte("p"), ReadQuery{Now: clock.Load()})
	if err != nil {
		t.Fatalf("crash at change %d (strict %v, deletion first %v): read: %v", n, strict, deletionFirst, err)
	}
	if !p.IsEmpty() {
		t.Fatalf("crash at change %d (strict %v, deletion first %v): the deleted row came back: %+v", n, strict, deletionFirst, p.Rows)
	}
	names, err := mem.List("data/ks")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range names {
		files, _ := mem.List(mem.PathJoin("data/ks", dir))
		for _, f := range files {
			if strings.HasSuffix(f, ".txn") || strings.HasSuffix(f, ".tmp") {
				t.Fatalf("crash at change %d (strict %v, deletion first %v): %s left after restart", n, strict, deletionFirst, f)
			}
		}
	}
	return crashed
}

// TestTruncateCrashIsWholeOrNothing stops the process at every change a
// truncation makes to the data directory: after a restart the table holds
// all its rows (the truncation had not taken) or none, never some.
func TestTruncateCrashIsWholeOrNothing(t *testing.T) {
	for _, strict := range []bool{false, true} {
		for n := int64(1); ; n++ {
			crashed, rows := runTruncateCrash(t, n, strict)
			if rows != 0 && rows != truncateCrashRows {
				t.Fatalf("crash at change %d (strict %v): %d of %d rows after restart", n, strict, rows, truncateCrashRows)
			}
			if !crashed {
				if n < 4 {
					t.Fatalf("the truncation made only %d changes; the test does not reach it", n-1)
				}
				if rows != 0 {
					t.Fatalf("a truncation that finished left %d rows", rows)
				}
				break
			}
		}
	}
}

const truncateCrashRows = 30

// runTruncateCrash writes rows into SSTables and the memtable, truncates
// with a crash at change n, restarts and counts the rows.
func runTruncateCrash(t *testing.T, n int64, strict bool) (crashed bool, rows int) {
	t.Helper()
	mem := vfs.NewMem()
	if strict {
		mem = vfs.NewStrictMem()
	}
	injector := &crashAt{}
	opts := Options{FS: errorfs.Wrap(mem, injector), DataDir: "data",
		// Small segments and large rows: the flushed rows' segments are gone
		// by the truncation, so a replay from scratch would bring back only
		// the newer rows.
		CommitLog:             commitlog.Options{Dir: "commitlog", SyncMode: commitlog.SyncBatch, SegmentSize: 64 << 10},
		DisableAutoCompaction: true}
	open := func() (*Engine, *Table) {
		return openForCrash(t, n, opts, TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	}
	e, tbl := open()
	for i := 0; i < truncateCrashRows; i++ {
		m := mutation.NewMutation(modelTableID, []byte(fmt.Sprintf("k%d", i)))
		row := mutation.NewRow()
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, make([]byte, 6<<10))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 && i < 20 {
			if err := tbl.Flush(); err != nil { // two SSTables, and ten rows left in the memtable
				t.Fatal(err)
			}
		}
	}
	injector.n.Store(n)
	terr := tbl.Truncate()
	crashed = injector.seen.Load() >= n
	if !crashed && terr != nil {
		t.Fatalf("truncate failed without a crash: %v", terr)
	}
	_ = e.Close()
	injector.n.Store(0)
	if strict {
		mem.ResetToSyncedState()
	}
	e, tbl = open()
	defer e.Close()
	for i := 0; i < truncateCrashRows; i++ {
		p, err := tbl.ReadPartition([]byte(fmt.Sprintf("k%d", i)), ReadQuery{})
		if err != nil {
			t.Fatalf("crash at change %d (strict %v): read: %v", n, strict, err)
		}
		if !p.IsEmpty() {
			rows++
		}
	}
	return crashed, rows
}

// openForCrash starts an engine with one table for a crash-at-change-n run.
func openForCrash(t *testing.T, n int64, opts Options, tableOpts TableOptions) (*Engine, *Table) {
	t.Helper()
	e, err := Open(opts)
	if err != nil {
		t.Fatalf("crash at change %d: open: %v", n, err)
	}
	tbl, err := e.OpenTable(tableOpts)
	if err != nil {
		t.Fatalf("crash at change %d: open table: %v", n, err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatalf("crash at change %d: recover: %v", n, err)
	}
	return e, tbl
}
