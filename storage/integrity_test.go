package storage

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
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

// TestReplayStopsAtARecordThatDoesNotDecode crashes an engine after a
// commit log record whose frame checks but whose mutation does not decode
// (what a bug in the encoder would leave): start-up stops naming the file,
// the offset, the table and the key; with IgnoreReplayErrors the record goes
// to a quarantine file, every other record replays, and the next start is
// clean.
func TestReplayStopsAtARecordThatDoesNotDecode(t *testing.T) {
	mem := vfs.NewStrictMem()
	e, _ := testEngine(t, mem)
	// The directories the engine made are there after the crash.
	for _, dir := range []string{"", "data", "data/ks"} {
		d, err := mem.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		d.Sync()
		d.Close()
	}
	if err := writeKey(e, "before"); err != nil {
		t.Fatal(err)
	}
	bad := twoCellsOneSetElement("bad")
	payload := mutation.AppendMutation(nil, bad)
	end, err := e.log().Append(modelTableID, payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeKey(e, "after"); err != nil {
		t.Fatal(err)
	}
	// A crash: nothing Close does reaches the disk.
	mem.SetIgnoreSyncs(true)
	e.Close()
	mem.ResetToSyncedState()
	mem.SetIgnoreSyncs(false)

	open := func(ignore bool) (*Engine, *Table, RecoveryStats, error) {
		e, err := Open(Options{FS: mem, DataDir: "data", CommitLog: commitlog.Options{Dir: "cl", SyncMode: commitlog.SyncBatch},
			DisableAutoCompaction: true, IgnoreReplayErrors: ignore})
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := e.OpenTable(TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
		if err != nil {
			t.Fatal(err)
		}
		stats, err := e.Recover()
		return e, tbl, stats, err
	}
	e, _, _, err = open(false)
	for _, want := range []string{commitlog.SegmentFileName(end.Segment), fmt.Sprintf("offset %d", end.Offset), "ks.t",
		fmt.Sprintf("key %x", bad.Key), "--commitlog-ignore-replay-errors"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Recover = %v, want an error naming %q", err, want)
		}
	}
	e.Close()

	e, tbl, stats, err := open(true)
	if err != nil || stats.Quarantined != 1 {
		t.Fatalf("Recover ignoring replay errors: %+v, %v", stats, err)
	}
	for _, k := range []string{"before", "after"} {
		if p, err := tbl.ReadPartition([]byte(k), ReadQuery{}); err != nil || len(p.Rows) != 1 {
			t.Fatalf("%s after replay: %v, %v", k, p, err)
		}
	}
	names, _ := mem.List("cl")
	var lines []string
	for _, name := range names {
		if strings.HasPrefix(name, "commitlog_quarantine-") {
			f, err := mem.Open(mem.PathJoin("cl", name))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(f)
			f.Close()
			lines = append(lines, strings.Split(strings.TrimSpace(string(data)), "\n")...)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("quarantine lines %q in %v, want one", lines, names)
	}
	var rec commitlog.QuarantinedRecord
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Segment != commitlog.SegmentFileName(end.Segment) || rec.EndOffset != end.Offset || rec.About["table"] != "ks.t" ||
		rec.About["key"] != hex.EncodeToString(bad.Key) || rec.Payload != hex.EncodeToString(payload) || rec.About["error"] == "" {
		t.Fatalf("quarantined record %+v", rec)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, _, stats, err = open(false)
	if err != nil || stats.Quarantined != 0 {
		t.Fatalf("the start after the quarantine: %+v, %v", stats, err)
	}
	e.Close()
}

// TestCompactionStopsAtACorruptSSTable corrupts one of two SSTables: the
// compaction fails naming the table and the file, reports corruption to
// the failure policies, and both inputs stay.
func TestCompactionStopsAtACorruptSSTable(t *testing.T) {
	mem := vfs.NewMem()
	var reported []FailureKind
	e, tbl := testEngine(t, mem, func(o *Options) { o.OnFailure = func(k FailureKind, _ error) { reported = append(reported, k) } })
	defer e.Close()
	for _, k := range []string{"a", "b"} {
		for i := 0; i < 200; i++ {
			if err := writeKey(e, fmt.Sprintf("%s%03d", k, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	dir := e.tableDir(&tbl.opts)
	names, _ := mem.List(dir)
	var data []string
	for _, n := range names {
		if strings.HasSuffix(n, "-Data.db") {
			data = append(data, n)
		}
	}
	if len(data) != 2 {
		t.Fatalf("data files %v", data)
	}
	corrupt := mem.PathJoin(dir, data[0])
	f, err := mem.OpenReadWrite(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := f.ReadAt(buf, 100); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] ^= 0xFF
	}
	if _, err := f.WriteAt(buf, 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = tbl.CompactMajor()
	if !errors.Is(err, invariants.ErrCorruption) || !strings.Contains(err.Error(), "ks.t") || !strings.Contains(err.Error(), data[0]) {
		t.Fatalf("CompactMajor = %v, want corruption naming ks.t and %s", err, data[0])
	}
	if n := tbl.SSTableCount(); n != 2 {
		t.Fatalf("%d SSTables after the failed compaction, want both inputs", n)
	}
	if len(reported) == 0 || reported[len(reported)-1] != CorruptionFailure {
		t.Fatalf("reported %v, want corruption", reported)
	}
	if _, err := mem.Stat(corrupt); err != nil {
		t.Fatalf("the corrupt input is gone: %v", err)
	}
}

// startSlowCompaction starts a major compaction of three SSTables that
// takes seconds (at 1 MiB/s) and returns once it is under way, with the
// files before it and where its result will come.
func startSlowCompaction(t *testing.T) (*Engine, *Table, vfs.FS, []string, chan error) {
	t.Helper()
	fs := vfs.NewMem()
	// At 1 MiB/s, merging the 3 MiB below takes about three seconds.
	e, tbl := testEngine(t, fs, func(o *Options) { o.CompactionThroughput = 1 })
	r := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, 4<<10)
	for flush := range 3 {
		for i := range 256 {
			m := mutation.NewMutation(modelTableID, []byte(fmt.Sprintf("k%d-%d", flush, i)))
			row := mutation.NewRow()
			for j := range value {
				value[j] = byte(r.Uint32())
			}
			row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, slices.Clone(value))}
			m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
			if err := e.Apply(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	before := filesUnder(t, fs, "data")
	done := make(chan error, 1)
	go func() { done <- tbl.CompactMajor() }()
	// Once the compaction has an output file open, it is under way.
	for len(filesUnder(t, fs, "data")) <= len(before) {
		select {
		case err := <-done:
			t.Fatalf("the compaction ended before it was stopped: %v", err)
		default:
			runtime.Gosched()
		}
	}
	return e, tbl, fs, before, done
}

// TestTruncateInterruptsCompaction: a truncation (and so a drop) does not
// wait for the table's running compaction, which gives up, its partial
// output removed; the table is empty after it, and compacts again.
func TestTruncateInterruptsCompaction(t *testing.T) {
	e, tbl, _, _, done := startSlowCompaction(t)
	if err := tbl.Truncate(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrCompactionInterrupted) {
		t.Fatalf("the compaction under the truncation returned %v", err)
	}
	parts, err := tbl.Scan(ScanQuery{})
	if err != nil || len(parts) != 0 {
		t.Errorf("scan after the truncation: %d partitions, %v", len(parts), err)
	}
	writeRow(t, e, 1, "after", 2)
	if err := tbl.CompactMajor(); err != nil {
		t.Fatalf("a compaction after the truncation: %v", err)
	}
	if parts, err := tbl.Scan(ScanQuery{}); err != nil || len(parts) != 1 {
		t.Errorf("scan after the write and compaction: %d partitions, %v", len(parts), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStopCompactionsGivesUp: a drain or a shutdown does not wait for a
// long compaction. StopCompactions makes a running one give up, its
// partial output removed and its inputs kept whole, and refuses new ones.
func TestStopCompactionsGivesUp(t *testing.T) {
	e, tbl, fs, before, done := startSlowCompaction(t)
	e.StopCompactions()
	if err := <-done; !errors.Is(err, ErrCompactionStopped) {
		t.Fatalf("the stopped compaction returned %v", err)
	}
	if got := filesUnder(t, fs, "data"); !slices.Equal(got, before) {
		t.Errorf("after the stopped compaction the files are %v, were %v", got, before)
	}
	if n := tbl.SSTableCount(); n != 3 {
		t.Errorf("%d SSTables after the stopped compaction, want the 3 inputs", n)
	}
	parts, err := tbl.Scan(ScanQuery{})
	if err != nil || len(parts) != 3*256 {
		t.Errorf("scan after the stopped compaction: %d partitions, %v", len(parts), err)
	}
	if err := tbl.CompactMajor(); !errors.Is(err, ErrCompactionStopped) {
		t.Errorf("a compaction after StopCompactions: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// filesUnder lists the files below dir, sorted.
func filesUnder(t *testing.T, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range names {
		p := fs.PathJoin(dir, name)
		st, err := fs.Stat(p)
		if err != nil {
			continue // removed while listed
		}
		if st.IsDir() {
			out = append(out, filesUnder(t, fs, p)...)
		} else {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
