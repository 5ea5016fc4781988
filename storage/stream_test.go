package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// streamKey is the partition key of the streaming tests' partition i.
func streamKey(i int) []byte { return []byte(fmt.Sprintf("k%03d", i)) }

// writeRow writes one row of partition i with value v at timestamp ts.
func writeRow(t *testing.T, e *Engine, i int, v string, ts int64) {
	t.Helper()
	m := mutation.NewMutation(modelTableID, streamKey(i))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, []byte(v))}
	m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	if err := e.Apply(m); err != nil {
		t.Fatal(err)
	}
}

// tokenOrder is the partitions 0..n-1 in token order, with their
// partition prefixes.
func tokenOrder(e *Engine, n int) ([]int, map[int][]byte) {
	prefix := map[int][]byte{}
	order := make([]int, n)
	for i := range n {
		order[i] = i
		prefix[i] = mutation.AppendPartitionPrefix(nil, e.Partitioner().Token(streamKey(i)), streamKey(i))
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(prefix[a], prefix[b]) })
	return order, prefix
}

// send moves out's sections into dst as a node receiving them would.
func send(t *testing.T, out *Outgoing, dst *Table, spans []KeySpan) (whole, partial int) {
	t.Helper()
	for _, sec := range out.Sections {
		if sec.Whole() {
			whole++
			data, err := sec.OpenData()
			if err != nil {
				t.Fatal(err)
			}
			filter, err := sec.Filter()
			if err != nil {
				t.Fatal(err)
			}
			err = dst.ImportWhole(spans, sec.Metadata(), data, filter)
			data.Close()
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		partial++
		imp, err := dst.NewImport(spans)
		if err != nil {
			t.Fatal(err)
		}
		if err := sec.Entries(imp.Add); err != nil {
			imp.Abort()
			t.Fatal(err)
		}
		if err := imp.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	return whole, partial
}

// TestStreamedSectionsCarryTheSpans streams two spans of a table whose
// partitions are spread over SSTables and a memtable (one SSTable inside
// a span, sent whole; the others cut) into an empty table: it then reads
// every partition of the spans as the source does, tombstones included,
// holds none outside them, and keeps them across a restart, with its own
// commit log's writes replayed beside them.
func TestStreamedSectionsCarryTheSpans(t *testing.T) {
	srcFS, dstFS := vfs.NewMem(), vfs.NewMem()
	// The receiver's commit log is the older: positions in the sender's
	// are past every one of its own, so an imported SSTable that kept the
	// sender's commit log bound would make its replay skip its own writes.
	dst, dt := testEngine(t, dstFS)
	src, st := testEngine(t, srcFS)
	defer src.Close()
	const n = 300
	order, prefix := tokenOrder(src, n)
	for batch := range 3 {
		for i := batch * 100; i < (batch+1)*100; i++ {
			writeRow(t, src, i, fmt.Sprintf("v%d", i), 10)
		}
		if err := st.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	spans := []KeySpan{{From: prefix[order[50]], To: prefix[order[120]]}, {From: prefix[order[200]]}}
	// Newer values of partitions 60 to 99 in token order, in an SSTable
	// of their own: inside the first span, so it goes whole.
	for _, i := range order[60:100] {
		writeRow(t, src, i, fmt.Sprintf("w%d", i), 20)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	// Deletions and writes still in the memtable: StreamOut flushes them.
	for _, i := range []int{order[55], order[210], order[10]} {
		m := mutation.NewMutation(modelTableID, streamKey(i))
		m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 30, LocalDeletionTime: 1_000_000}
		if err := src.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	writeRow(t, src, order[250], "x", 40)

	// A write of the receiver's own, in its commit log only.
	writeRow(t, dst, order[290], "local", 50)

	out, err := st.StreamOut(spans)
	if err != nil {
		t.Fatal(err)
	}
	whole, partial := send(t, out, dt, spans)
	out.Release()
	if whole != 1 || partial != 4 {
		t.Fatalf("%d sections whole and %d cut, want 1 and 4", whole, partial)
	}
	check := func(dt *Table, when string) {
		t.Helper()
		for pos, i := range order {
			inSpans := spanOf(spans, prefix[i]) >= 0
			got, err := dt.ReadPartitionEntries(streamKey(i), ReadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if i == order[290] {
				if len(got) != 1 || !strings.Contains(fmt.Sprint(got), "v=6c6f63616c@50") {
					t.Fatalf("%s: the receiver's own write of partition %d: %v", when, i, got)
				}
				continue
			}
			if !inSpans {
				if len(got) != 0 {
					t.Fatalf("%s: partition %d (%d in token order) is outside the spans and was received: %v", when, i, pos, got)
				}
				continue
			}
			want, err := st.ReadPartitionEntries(streamKey(i), ReadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: partition %d (%d in token order): received %v, the source holds %v", when, i, pos, got, want)
			}
		}
	}
	check(dt, "after streaming")
	// A crash: the receiver's memtable is gone, its commit log replays.
	dst.Close()
	dst, dt = testEngine(t, dstFS)
	defer dst.Close()
	check(dt, "after a restart")
}

func TestImportRefusesWhatWasNotAskedFor(t *testing.T) {
	src, st := testEngine(t, vfs.NewMem())
	defer src.Close()
	dst, dt := testEngine(t, vfs.NewMem())
	defer dst.Close()
	order, prefix := tokenOrder(src, 20)
	for _, i := range order {
		writeRow(t, src, i, "v", 1)
	}
	all := []KeySpan{{}}
	out, err := st.StreamOut(all)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if len(out.Sections) != 1 || !out.Sections[0].Whole() {
		t.Fatalf("one SSTable, all asked for: %d sections", len(out.Sections))
	}
	sec := out.Sections[0]
	narrow := []KeySpan{{From: prefix[order[5]], To: prefix[order[10]]}}

	// Entries outside the spans are refused.
	imp, err := dt.NewImport(narrow)
	if err != nil {
		t.Fatal(err)
	}
	if err := sec.Entries(imp.Add); err == nil || !strings.Contains(err.Error(), "outside the spans asked for") {
		t.Fatalf("entries outside the spans: %v", err)
	}
	imp.Abort()
	filter, err := sec.Filter()
	if err != nil {
		t.Fatal(err)
	}
	open := func() SectionData {
		f, err := sec.OpenData()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	// A whole SSTable reaching beyond them is refused.
	if err := dt.ImportWhole(narrow, sec.Metadata(), open(), filter); err == nil || !strings.Contains(err.Error(), "not inside one of the spans") {
		t.Fatalf("a whole SSTable outside the spans: %v", err)
	}
	// A Data file cut short, or damaged at its end, or a damaged filter.
	data, err := io.ReadAll(open())
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(data)
	damaged[len(damaged)-3] ^= 1
	badFilter := bytes.Clone(filter)
	badFilter[0] ^= 1
	for name, c := range map[string]struct {
		data, filter []byte
	}{
		"cut short":      {data[:len(data)-1], filter},
		"a byte more":    {append(bytes.Clone(data), 0), filter},
		"damaged footer": {damaged, filter},
		"damaged filter": {data, badFilter},
	} {
		err := dt.ImportWhole(all, sec.Metadata(), bytes.NewReader(c.data), c.filter)
		if !errors.Is(err, invariants.ErrCorruption) {
			t.Errorf("%s: %v, want a corruption error", name, err)
		}
	}
	if names, _ := dst.opts.FS.List(dt.dir); len(names) != 0 || dt.SSTableCount() != 0 {
		t.Fatalf("refused imports left %v, %d SSTables", names, dt.SSTableCount())
	}
	// Spans out of order are refused before anything is read.
	if _, err := dt.NewImport([]KeySpan{{From: prefix[order[10]]}, {From: prefix[order[5]], To: prefix[order[6]]}}); err == nil {
		t.Fatal("spans out of order were taken")
	}
}

// unfinishedImport is an import into tbl holding one row of another
// engine's, not yet finished.
func unfinishedImport(t *testing.T, tbl *Table) *Import {
	t.Helper()
	src, st := testEngine(t, vfs.NewMem())
	t.Cleanup(func() { src.Close() })
	writeRow(t, src, 1, "v", 1)
	out, err := st.StreamOut([]KeySpan{{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(out.Release)
	imp, err := tbl.NewImport([]KeySpan{{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Sections[0].Entries(imp.Add); err != nil {
		t.Fatal(err)
	}
	return imp
}

// TestTruncateOvertakesAnImport: an import that began before a truncation
// is dropped with it, not published after it.
func TestTruncateOvertakesAnImport(t *testing.T) {
	e, tbl := testEngine(t, vfs.NewMem())
	defer e.Close()
	imp := unfinishedImport(t, tbl)
	if err := tbl.Truncate(); err != nil {
		t.Fatal(err)
	}
	if err := imp.Finish(); !errors.Is(err, ErrTruncatedDuringImport) {
		t.Fatalf("an import overtaken by a truncation: %v", err)
	}
	if got, err := tbl.ReadPartitionEntries(streamKey(1), ReadQuery{}); err != nil || len(got) != 0 {
		t.Fatalf("the truncated table reads %v, %v", got, err)
	}
}

// TestImportFinishingAfterTheEngineClosed: an import still receiving
// when its engine closes (a node shutting down in the middle of a
// stream) is refused at its end and leaves no file: it would otherwise
// hold an SSTable, and the block cache, open past the close.
func TestImportFinishingAfterTheEngineClosed(t *testing.T) {
	fs := vfs.NewMem()
	e, tbl := testEngine(t, fs)
	imp := unfinishedImport(t, tbl)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := imp.Finish(); !errors.Is(err, ErrTableClosed) {
		t.Fatalf("an import finishing after the engine closed: %v", err)
	}
	if got := tbl.SSTableCount(); got != 0 {
		t.Fatalf("the closed table lists %d SSTables", got)
	}
	names, _ := fs.List(tbl.dir)
	for _, name := range names {
		if strings.HasSuffix(name, ".db") {
			t.Fatalf("the refused import left %s in %v", name, names)
		}
	}
}
