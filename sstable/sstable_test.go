package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

var p = partitioner.Murmur3()

// entries builds n rows over a few partitions, sorted by engine key.
func entries(n int) []mutation.Entry {
	var out []mutation.Entry
	for i := 0; i < n; i++ {
		pk := []byte(fmt.Sprintf("pk%d", i%7))
		m := mutation.NewMutation(mutation.TableID{1}, pk)
		row := mutation.NewRow()
		row.Liveness = mutation.LivenessInfo{Timestamp: int64(i), ExpiresAt: mutation.NoDeletionTime}
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, int64(i), []byte(strings.Repeat("x", i%50)))}
		m.Rows = []mutation.RowUpdate{{Clustering: []byte{0x02, byte(i >> 8), byte(i)}, Row: row}}
		if i%10 == 0 {
			m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: -1, LocalDeletionTime: 5}
		}
		out = m.AppendEntries(out, p.Token(pk))
	}
	sortEntries(out)
	// Partition deletions repeat per partition: keep one of each key.
	dedup := out[:0]
	for i := range out {
		if len(dedup) > 0 && bytes.Equal(dedup[len(dedup)-1].Key, out[i].Key) {
			continue
		}
		dedup = append(dedup, out[i])
	}
	return dedup
}

func sortEntries(es []mutation.Entry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && bytes.Compare(es[j-1].Key, es[j].Key) > 0; j-- {
			es[j-1], es[j] = es[j], es[j-1]
		}
	}
}

func build(t testing.TB, fs vfs.FS, gen uint64, es []mutation.Entry) *Metadata {
	t.Helper()
	fs.MkdirAll("t", 0o755)
	w, err := Create(fs, "t", gen, 0, WriterOptions{TokenLen: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		if err := w.Add(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.SetCommitLogBound(3, 77)
	meta, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

func TestWriteReadRoundTrip(t *testing.T) {
	fs := vfs.NewMem()
	es := entries(500)
	meta := build(t, fs, 1, es)
	if meta.Entries != int64(len(es)) || meta.Partitions != 7 || meta.Rows != 500 || meta.Tombstones != 7 {
		t.Fatalf("metadata %+v", meta)
	}
	if meta.MinTimestamp != -1 || meta.MaxTimestamp != 499 || meta.CommitLogSegment != 3 || meta.CommitLogOffset != 77 {
		t.Fatalf("metadata timestamps/bound %+v", meta)
	}
	cache := NewCache(1 << 20)
	defer cache.Close()
	r, err := Open(fs, "t", 1, cache, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Metadata(); got.Entries != meta.Entries || !bytes.Equal(got.MinKey, es[0].Key) || !bytes.Equal(got.MaxKey, es[len(es)-1].Key) {
		t.Fatalf("reopened metadata %+v", got)
	}
	// Seven partitions: three of 72 rows and four of 71, a cell a row;
	// their sizes are the bytes of the keys and values written.
	sizes := map[string]int64{}
	for i := range es {
		pk := string(es[i].Key[:8+3+2])
		sizes[pk] += int64(len(es[i].Key) + len(mutation.AppendEntryValue(nil, &es[i])))
	}
	wantSizes, wantCells := histogram.NewEstimated(histogram.PartitionSizeBuckets), histogram.NewEstimated(histogram.CellCountBuckets)
	for _, size := range sizes {
		wantSizes.Add(size)
	}
	for j := range 7 {
		wantCells.Add(int64(500/7 + min(1, max(0, 500%7-j))))
	}
	if got := r.Metadata(); !slices.Equal(got.PartitionSizes, wantSizes) || !slices.Equal(got.CellCounts, wantCells) || got.CellCounts.Count() != 7 {
		t.Fatalf("histograms: sizes %v cells %v\nwant %v %v", got.PartitionSizes, got.CellCounts, wantSizes, wantCells)
	}
	it, err := r.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for e := it.First(); e != nil; e = it.Next() {
		if !bytes.Equal(e.Key, es[i].Key) || fmt.Sprint(e.Row) != fmt.Sprint(es[i].Row) || e.Deletion != es[i].Deletion {
			t.Fatalf("entry %d: got %s, want %s", i, e, &es[i])
		}
		i++
	}
	if err := it.Close(); err != nil || i != len(es) {
		t.Fatalf("read %d of %d entries, err %v", i, len(es), err)
	}
	// Bloom filter and key range: present partitions may be there, absent ones mostly not.
	for j := 0; j < 7; j++ {
		pk := []byte(fmt.Sprintf("pk%d", j))
		ok, err := r.MayContainPartition(mutation.AppendPartitionPrefix(nil, p.Token(pk), pk))
		if err != nil || !ok {
			t.Fatalf("partition %s must be found: %v %v", pk, ok, err)
		}
	}
	falsePositives := 0
	for j := 0; j < 1000; j++ {
		pk := []byte(fmt.Sprintf("absent%d", j))
		if ok, _ := r.MayContainPartition(mutation.AppendPartitionPrefix(nil, p.Token(pk), pk)); ok {
			falsePositives++
		}
	}
	if falsePositives > 50 {
		t.Fatalf("%d of 1000 absent partitions reported present", falsePositives)
	}
}

// openBuilt writes es as generation 1 in memory and opens it.
func openBuilt(t *testing.T, es []mutation.Entry) *Reader {
	t.Helper()
	fs := vfs.NewMem()
	build(t, fs, 1, es)
	r, err := Open(fs, "t", 1, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestIteratorSuite(t *testing.T) {
	es := entries(300)
	r := openBuilt(t, es)
	defer r.Close()
	keys := make([][]byte, len(es))
	for i := range es {
		keys[i] = es[i].Key
	}
	testutil.CheckIterator(t, rand.New(rand.NewPCG(1, 2)), keys, 3000, func(lower, upper []byte) mutation.Iterator {
		it, err := r.NewIter(lower, upper)
		if err != nil {
			t.Fatal(err)
		}
		return it
	})
}

func TestKeysMustIncrease(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("t", 0o755)
	w, _ := Create(fs, "t", 1, 0, WriterOptions{TokenLen: 8})
	es := entries(3)
	if err := w.Add(&es[1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(&es[0]); err == nil || !strings.Contains(err.Error(), "keys must increase") {
		t.Fatalf("out-of-order Add returned %v", err)
	}
	w.Abort()
	if names, _ := fs.List("t"); len(names) != 0 {
		t.Fatalf("Abort left %v", names)
	}
}

func TestIncompleteFilesAreRemoved(t *testing.T) {
	fs := vfs.NewMem()
	build(t, fs, 1, entries(10))
	// An interrupted flush: temporary files, and a Data file whose Statistics never arrived.
	for _, name := range []string{"sb-2-Data.db.tmp", "sb-2-Statistics.db.tmp", "sb-3-Data.db"} {
		f, _ := fs.Create(fs.PathJoin("t", name))
		f.Write([]byte("partial"))
		f.Close()
	}
	removed, err := RemoveIncomplete(fs, "t")
	if err != nil || len(removed) != 3 {
		t.Fatalf("RemoveIncomplete removed %v, %v", removed, err)
	}
	gens, err := Generations(fs, "t")
	if err != nil || len(gens) != 1 || gens[0] != 1 {
		t.Fatalf("Generations = %v, %v", gens, err)
	}
	if err := Remove(fs, "t", 1); err != nil {
		t.Fatal(err)
	}
	if names, _ := fs.List("t"); len(names) != 0 {
		t.Fatalf("Remove left %v", names)
	}
}

func readAll(fs vfs.FS, name string) []byte {
	f, _ := fs.Open(name)
	defer f.Close()
	b, _ := io.ReadAll(f)
	return b
}

func writeAll(fs vfs.FS, name string, b []byte) {
	f, _ := fs.Create(name)
	f.Write(b)
	f.Close()
}

// readEverything opens and scans an SSTable, returning the first error.
func readEverything(fs vfs.FS) (n int, err error) {
	r, err := Open(fs, "t", 1, nil, 8)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	it, err := r.NewIter(nil, nil)
	if err != nil {
		return 0, err
	}
	for e := it.First(); e != nil; e = it.Next() {
		n++
	}
	return n, it.Close()
}

// TestFlippedBitIsCorruption flips one bit in every data block position
// class and checks the read fails with a corruption error naming the file,
// without a panic.
func TestFlippedBitIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	build(t, fs, 1, entries(400))
	name := fs.PathJoin("t", DataFileName(1))
	orig := readAll(fs, name)
	for _, off := range []int{0, 10, 100, len(orig) / 3, len(orig) / 2} {
		data := bytes.Clone(orig)
		data[off] ^= 0x10
		writeAll(fs, name, data)
		_, err := readEverything(fs)
		if err == nil {
			t.Fatalf("a flipped bit at offset %d went unnoticed", off)
		}
		if !errors.Is(err, invariants.ErrCorruption) || !strings.Contains(err.Error(), name) {
			t.Fatalf("flipped bit at %d: error %v; want a corruption error naming %s", off, err, name)
		}
	}
	writeAll(fs, name, orig)
	if n, err := readEverything(fs); err != nil || n == 0 {
		t.Fatalf("the restored file reads %d entries, %v", n, err)
	}
	stats := fs.PathJoin("t", StatisticsFileName(1))
	meta := readAll(fs, stats)
	writeAll(fs, stats, bytes.Replace(meta, []byte(`"rows": 400`), []byte(`"rows": 401`), 1))
	if _, err := Open(fs, "t", 1, nil, 8); !errors.Is(err, invariants.ErrCorruption) {
		t.Fatalf("edited metadata: %v, want corruption", err)
	}
}

// FuzzReadDamagedTable overwrites bytes of a valid SSTable and reads it:
// any damage is an error, never a panic.
func FuzzReadDamagedTable(f *testing.F) {
	f.Add(uint16(0), []byte{0xFF})
	f.Add(uint16(200), []byte{1, 2, 3, 4})
	f.Add(uint16(5000), []byte{0})
	fs0 := vfs.NewMem()
	build(f, fs0, 1, entries(200))
	name := fs0.PathJoin("t", DataFileName(1))
	orig := readAll(fs0, name)
	meta := readAll(fs0, fs0.PathJoin("t", StatisticsFileName(1)))
	f.Fuzz(func(t *testing.T, off uint16, patch []byte) {
		fs := vfs.NewMem()
		fs.MkdirAll("t", 0o755)
		data := bytes.Clone(orig)
		start := int(off) % len(data)
		copy(data[start:], patch)
		writeAll(fs, name, data)
		writeAll(fs, fs.PathJoin("t", StatisticsFileName(1)), meta)
		_, _ = readEverything(fs)
	})
}

func TestObsoleteLogIsCompletedAtStartUp(t *testing.T) {
	fs := vfs.NewMem()
	for g := uint64(1); g <= 3; g++ {
		build(t, fs, g, entries(5))
	}
	// A crash removed generation 2's Statistics but not its Data file.
	if err := fs.Remove(fs.PathJoin("t", StatisticsFileName(2))); err != nil {
		t.Fatal(err)
	}
	if err := WriteObsoleteLog(fs, "t", 9, ObsoleteLog{Generations: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	removed, pending, err := CompleteObsoleteLogs(fs, "t")
	if err != nil || len(removed) != 1 || removed[0] != 1 || len(pending) != 0 {
		t.Fatalf("CompleteObsoleteLogs = %v, %v, %v; want generation 1 removed", removed, pending, err)
	}
	names, _ := fs.List("t")
	sort.Strings(names)
	if want := []string{DataFileName(3), FilterFileName(3), StatisticsFileName(3)}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("left %v, want %v", names, want)
	}
}

func TestDamagedObsoleteLogIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("t", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteObsoleteLog(fs, "t", 4, ObsoleteLog{Generations: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	name := fs.PathJoin("t", ObsoleteLogFileName(4))
	b := readAll(fs, name)
	writeAll(fs, name, bytes.Replace(b, []byte("[1,2]"), []byte("[1,3]"), 1))
	_, _, err := CompleteObsoleteLogs(fs, "t")
	if !errors.Is(err, invariants.ErrCorruption) || !strings.Contains(err.Error(), ObsoleteLogFileName(4)) {
		t.Fatalf("CompleteObsoleteLogs = %v, want a corruption error naming the log", err)
	}
}

// TestPartitionIterMoves opens a partition iterator per partition and checks
// that whatever move comes first (the probe's primed entry serves First and
// a SeekGE at the partition start) the walk that follows is the partition.
func TestPartitionIterMoves(t *testing.T) {
	es := entries(300)
	r := openBuilt(t, es)
	defer r.Close()
	byPartition := map[string][]string{}
	var prefixes []string
	for i := range es {
		n, err := mutation.PartitionPrefixLen(es[i].Key, 8)
		if err != nil {
			t.Fatal(err)
		}
		p := string(es[i].Key[:n])
		if byPartition[p] == nil {
			prefixes = append(prefixes, p)
		}
		byPartition[p] = append(byPartition[p], string(es[i].Key))
	}
	walk := func(it *Iter, e *mutation.Entry, forward bool) []string {
		var got []string
		for ; e != nil; e = map[bool]func() *mutation.Entry{true: it.Next, false: it.Prev}[forward]() {
			got = append(got, string(e.Key))
		}
		return got
	}
	reversed := func(s []string) []string {
		out := append([]string(nil), s...)
		slices.Reverse(out)
		return out
	}
	for _, p := range prefixes {
		want := byPartition[p]
		mid := want[len(want)/2]
		cases := []struct {
			name    string
			start   func(it *Iter) *mutation.Entry
			forward bool
			want    []string
		}{
			{"First", (*Iter).First, true, want},
			{"Next from before the first", (*Iter).Next, true, want},
			{"SeekGE at the partition start", func(it *Iter) *mutation.Entry { return it.SeekGE([]byte(p)) }, true, want},
			{"SeekGE in the middle", func(it *Iter) *mutation.Entry { return it.SeekGE([]byte(mid)) }, true, want[len(want)/2:]},
			{"Last", (*Iter).Last, false, reversed(want)},
			{"SeekLT in the middle", func(it *Iter) *mutation.Entry { return it.SeekLT([]byte(mid)) }, false, reversed(want[:len(want)/2])},
			{"Last, then First", func(it *Iter) *mutation.Entry { it.Last(); return it.First() }, true, want},
		}
		for _, c := range cases {
			it, err := r.NewPartitionIter([]byte(p), nil)
			if err != nil || it == nil {
				t.Fatalf("partition %x: NewPartitionIter = %v, %v", p, it, err)
			}
			got := walk(it, c.start(it), c.forward)
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("partition %x, %s: got %d keys, want %d", p, c.name, len(got), len(c.want))
			}
		}
	}
}

// TestFilterSkipsAbsentPartitions checks the Filter component: every
// partition written passes, and nearly every other is refused before an
// iterator opens (10 bits per key: about 1% false positives).
func TestFilterSkipsAbsentPartitions(t *testing.T) {
	es := entries(300)
	r := openBuilt(t, es)
	defer r.Close()
	if r.filter == nil {
		t.Fatal("no filter loaded")
	}
	for i := range es {
		n, _ := mutation.PartitionPrefixLen(es[i].Key, 8)
		if !mayContain(r.filter, es[i].Key[:n]) {
			t.Fatalf("the filter refuses partition %x, which the SSTable holds", es[i].Key[:n])
		}
	}
	passed := 0
	const absent = 2000
	for i := 0; i < absent; i++ {
		pk := []byte(fmt.Sprintf("absent%d", i))
		if mayContain(r.filter, mutation.AppendPartitionPrefix(nil, p.Token(pk), pk)) {
			passed++
		}
	}
	if passed > absent/20 {
		t.Fatalf("%d of %d absent partitions pass the filter", passed, absent)
	}
}

func TestDamagedFilterIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	build(t, fs, 1, entries(50))
	name := fs.PathJoin("t", FilterFileName(1))
	b := readAll(fs, name)
	b[len(b)/2] ^= 0x10
	writeAll(fs, name, b)
	_, err := Open(fs, "t", 1, nil, 8)
	if !errors.Is(err, invariants.ErrCorruption) || !strings.Contains(err.Error(), FilterFileName(1)) {
		t.Fatalf("Open = %v, want a corruption error naming the filter", err)
	}
}

// TestTruncationLogIsLeftToTheCaller: a truncation's log removes its
// generations but stays, with its bound, until the caller records it.
func TestTruncationLogIsLeftToTheCaller(t *testing.T) {
	fs := vfs.NewMem()
	build(t, fs, 3, entries(5))
	bound := CommitLogBound{Segment: 7, Offset: 99}
	if err := WriteObsoleteLog(fs, "t", 4, ObsoleteLog{Generations: []uint64{3}, Truncation: &bound}); err != nil {
		t.Fatal(err)
	}
	removed, pending, err := CompleteObsoleteLogs(fs, "t")
	if err != nil || len(removed) != 1 || len(pending) != 1 || pending[0].Bound != bound || pending[0].LogID != 4 || pending[0].Highest != 4 {
		t.Fatalf("CompleteObsoleteLogs = %v, %+v, %v", removed, pending, err)
	}
	names, _ := fs.List("t")
	if len(names) != 1 || names[0] != ObsoleteLogFileName(4) {
		t.Fatalf("left %v, want only the truncation's log", names)
	}
	if err := FinishObsoleteLog(fs, "t", 4); err != nil {
		t.Fatal(err)
	}
}

// TestMissingFilterReadsWithoutOne: an SSTable written before the Filter
// component opens, reads, and is removed.
func TestMissingFilterReadsWithoutOne(t *testing.T) {
	fs := vfs.NewMem()
	es := entries(50)
	build(t, fs, 1, es)
	if err := fs.Remove(fs.PathJoin("t", FilterFileName(1))); err != nil {
		t.Fatal(err)
	}
	if n, err := readEverything(fs); err != nil || n != len(es) {
		t.Fatalf("read %d entries, %v; want %d", n, err, len(es))
	}
	if err := Remove(fs, "t", 1); err != nil {
		t.Fatal(err)
	}
}
