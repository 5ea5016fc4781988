package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
)

// The model test's tables carry storage-attached indexes on the regular
// column b, the static column s and the values of the map m; check
// compares every index read with a full scan filtered the same way, through
// flushes, compactions, restarts, indexes added to a table with data (built
// in the background, read without meanwhile) and indexes dropped.

// modelIndexColumns are the model's indexed columns, by index name.
var modelIndexColumns = map[string]string{"ib": "b", "is": "s", "im": "m"}

func modelIndex(name string) IndexSpec {
	col := modelIndexColumns[name]
	return IndexSpec{Name: name, Terms: func(_, _ []byte, e *mutation.Entry, emit func([]byte)) {
		if e.Row == nil {
			return
		}
		for _, c := range e.Row.Cells {
			if c.Column == col && !c.Tombstone {
				emit(c.Value)
			}
		}
	}}
}

// modelIndexes draws the indexes a table has.
func modelIndexes(r *rand.Rand) []IndexSpec {
	var out []IndexSpec
	for _, name := range []string{"ib", "im", "is"} {
		if r.IntN(3) > 0 {
			out = append(out, modelIndex(name))
		}
	}
	return out
}

// reconfigureIndexes changes the table's indexes, as CREATE and DROP
// INDEX do.
func (mr *modelRun) reconfigureIndexes() {
	mr.opts.Indexes = modelIndexes(mr.r)
	var names []string
	for _, s := range mr.opts.Indexes {
		names = append(names, s.Name)
	}
	mr.trace = append(mr.trace, fmt.Sprintf("indexes %v", names))
	if err := mr.tbl.Reconfigure(mr.opts); err != nil {
		mr.fail("reconfigure indexes: %v", err)
	}
}

// checkIndexes reads each index for a random range of terms and compares
// the matching rows with those of a full scan.
func (mr *modelRun) checkIndexes() {
	all, err := mr.tbl.Scan(ScanQuery{Now: mr.now})
	if err != nil {
		mr.fail("scan: %v", err)
	}
	for _, spec := range mr.opts.Indexes {
		col := modelIndexColumns[spec.Name]
		values := []string{"", "a0", "b0", "b2", "b4", "e0", "e2", "e4", "s0", "s2", "s4", "u0", "u3", "z"}
		lo, hi := values[mr.r.IntN(len(values))], values[mr.r.IntN(len(values))]
		q := IndexQuery{Index: spec.Name, Lo: []byte(lo), Hi: []byte(hi), LoInclusive: mr.r.IntN(2) == 0, HiInclusive: mr.r.IntN(2) == 0}
		if mr.r.IntN(4) == 0 {
			q.Lo = nil
		}
		if mr.r.IntN(4) == 0 {
			q.Hi = nil
		}
		in := func(v []byte) bool {
			if q.Lo != nil {
				if c := bytes.Compare(v, q.Lo); c < 0 || c == 0 && !q.LoInclusive {
					return false
				}
			}
			if q.Hi != nil {
				if c := bytes.Compare(v, q.Hi); c > 0 || c == 0 && !q.HiInclusive {
					return false
				}
			}
			return true
		}
		matches := func(parts []*Partition) string {
			var out []string
			for _, p := range parts {
				if col == "s" {
					if p.Static != nil && slices.ContainsFunc(p.Static.Cells, func(c mutation.Cell) bool { return c.Column == col && in(c.Value) }) {
						out = append(out, string(p.Key))
					}
					continue
				}
				for _, r := range p.Rows {
					if slices.ContainsFunc(r.Row.Cells, func(c mutation.Cell) bool { return c.Column == col && in(c.Value) }) {
						out = append(out, fmt.Sprintf("%s/%x", p.Key, r.Clustering))
					}
				}
			}
			return strings.Join(out, " ")
		}
		got, err := mr.tbl.IndexScan(q, ScanQuery{Now: mr.now})
		if err != nil {
			mr.fail("index scan %s: %v", spec.Name, err)
		}
		if g, w := matches(got), matches(all); g != w {
			mr.fail("index %s for [%q, %q] (%v, %v) finds\n%s\nthe scan finds\n%s", spec.Name, q.Lo, q.Hi, q.LoInclusive, q.HiInclusive, g, w)
		}
		raw, err := mr.tbl.IndexScanEntries(q, ScanQuery{Now: mr.now})
		if err != nil {
			mr.fail("raw index scan %s: %v", spec.Name, err)
		}
		var resolved []*Partition
		for _, rp := range raw {
			p, err := ResolvePartition(mr.tbl.e.opts.Partitioner, mr.tbl.e.opts.SSTable.TokenLen, rp.Key, rp.Entries, ReadQuery{Now: mr.now})
			if err != nil {
				mr.fail("resolving the raw index scan of %q: %v", rp.Key, err)
			}
			resolved = append(resolved, p)
		}
		if g, w := matches(resolved), matches(all); g != w {
			mr.fail("raw index %s finds\n%s\nthe scan finds\n%s", spec.Name, g, w)
		}
	}
}

// openIndexTest opens an engine on fs (without background compactions)
// and its table of opts.
func openIndexTest(t *testing.T, fs vfs.FS, opts TableOptions) (*Engine, *Table) {
	t.Helper()
	e, err := Open(Options{FS: fs, DataDir: "data", CommitLog: commitlog.Options{Dir: "cl"}, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := e.OpenTable(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
	return e, tbl
}

// TestIndexReadsOnlyTheMatchingPartitions checks that the index, not the
// fallback, finds the partitions: an index scan returns whole the
// partitions it reads, so it returns one of a hundred, from the memtable,
// from an SSTable, and after a restart; an index created over existing
// SSTables reads them all until the background build indexed them, and one
// after.
func TestIndexReadsOnlyTheMatchingPartitions(t *testing.T) {
	fs := vfs.NewMem()
	opts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t", Indexes: []IndexSpec{modelIndex("ib")}}
	e, tbl := openIndexTest(t, fs, opts)
	for pk := 0; pk < 100; pk++ {
		m := mutation.NewMutation(modelTableID, pkOf(pk))
		r := mutation.NewRow()
		r.Cells = []mutation.Cell{mutation.LiveCell("a", nil, 1, []byte(fmt.Sprintf("a%03d", pk))),
			mutation.LiveCell("b", nil, 1, []byte(fmt.Sprintf("b%03d", pk)))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: r}}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	read := func(tbl *Table, index, term string) []*Partition {
		t.Helper()
		parts, err := tbl.IndexScan(IndexQuery{Index: index, Lo: []byte(term), Hi: []byte(term), LoInclusive: true, HiInclusive: true}, ScanQuery{Now: 1})
		if err != nil {
			t.Fatal(err)
		}
		return parts
	}
	want := func(parts []*Partition, n int, pk string, when string) {
		t.Helper()
		if len(parts) != n || n == 1 && string(parts[0].Key) != pk {
			var keys []string
			for _, p := range parts {
				keys = append(keys, string(p.Key))
			}
			t.Fatalf("%s: the index read %d partitions %v, want %d", when, len(parts), keys, n)
		}
	}
	want(read(tbl, "ib", "b042"), 1, "p42", "in the memtable")
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	want(read(tbl, "ib", "b042"), 1, "p42", "in an SSTable")
	want(read(tbl, "ib", "b999"), 0, "", "a term nothing holds")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, tbl = openIndexTest(t, fs, opts)
	want(read(tbl, "ib", "b042"), 1, "p42", "after a restart")
	// A new index over the SSTable: read without it until it is built.
	opts.Indexes = append(opts.Indexes, IndexSpec{Name: "ia", Terms: func(_, _ []byte, e *mutation.Entry, emit func([]byte)) {
		if e.Row != nil {
			for _, c := range e.Row.Cells {
				if c.Column == "a" {
					emit(c.Value)
				}
			}
		}
	}})
	// Holding every compaction slot holds the build back.
	for i := 0; i < cap(e.compactionSlots); i++ {
		e.compactionSlots <- struct{}{}
	}
	if err := tbl.Reconfigure(opts); err != nil {
		t.Fatal(err)
	}
	want(read(tbl, "ia", "a007"), 100, "", "before the build")
	want(read(tbl, "ib", "b042"), 1, "p42", "an index built before, meanwhile")
	for i := 0; i < cap(e.compactionSlots); i++ {
		<-e.compactionSlots
	}
	e.bg.Wait()
	want(read(tbl, "ia", "a007"), 1, "p7", "after the build")
	if n := tbl.indexesBuilt.Load(); n != 1 {
		t.Errorf("the build indexed %d SSTables, want 1", n)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIndexAddedOverAMemtable: an index created while the memtable holds
// data indexes the memtable at once.
func TestIndexAddedOverAMemtable(t *testing.T) {
	opts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"}
	e, tbl := openIndexTest(t, vfs.NewMem(), opts)
	defer e.Close()
	for pk := 0; pk < 50; pk++ {
		m := mutation.NewMutation(modelTableID, pkOf(pk))
		r := mutation.NewRow()
		r.Cells = []mutation.Cell{mutation.LiveCell("b", nil, 1, []byte(fmt.Sprintf("b%03d", pk)))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: r}}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	opts.Indexes = []IndexSpec{modelIndex("ib")}
	if err := tbl.Reconfigure(opts); err != nil {
		t.Fatal(err)
	}
	parts, err := tbl.IndexScan(IndexQuery{Index: "ib", Lo: []byte("b007"), Hi: []byte("b007"), LoInclusive: true, HiInclusive: true}, ScanQuery{Now: 1})
	if err != nil || len(parts) != 1 || string(parts[0].Key) != "p7" {
		t.Fatalf("the index read %d partitions, %v; want p7 alone", len(parts), err)
	}
}

// TestIndexBuildIsATask: an index build shows among the engine's tasks
// (nodetool compactionstats, system_views.sstable_tasks) while it runs.
func TestIndexBuildIsATask(t *testing.T) {
	e, tbl := openIndexTest(t, vfs.NewMem(), TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	defer e.Close()
	m := mutation.NewMutation(modelTableID, pkOf(1))
	r := mutation.NewRow()
	r.Cells = []mutation.Cell{mutation.LiveCell("b", nil, 1, []byte("b1"))}
	m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: r}}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	spec := IndexSpec{Name: "slow", Terms: func(_, _ []byte, _ *mutation.Entry, emit func([]byte)) {
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
	}}
	v := tbl.acquireView()
	done := make(chan error)
	go func() { done <- tbl.buildIndexesOf(v.sstables[0], []IndexSpec{spec}) }()
	<-entered
	tasks := e.Tasks()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	v.release()
	if len(tasks) != 1 || tasks[0].Kind != "secondary index build" || tasks[0].Table != "t" || tasks[0].Total == 0 {
		t.Fatalf("tasks during the build: %+v", tasks)
	}
	if after := e.Tasks(); len(after) != 0 {
		t.Fatalf("tasks after the build: %+v", after)
	}
}
