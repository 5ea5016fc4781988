package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
)

// TestSnapshotsAndStats snapshots a table on a real filesystem: the
// snapshot's files are hard links of the live ones (same inode), listed
// with their sizes; once compaction replaces the SSTables the snapshot
// alone keeps them (its true size); clearing removes it; and the table
// reopens with a snapshot directory beside its files.
func TestSnapshotsAndStats(t *testing.T) {
	dir := t.TempDir()
	open := func() (*Engine, *Table) {
		return testEngine(t, vfs.Default, func(o *Options) {
			o.DataDir, o.CommitLog = filepath.Join(dir, "data"), commitlog.Options{Dir: filepath.Join(dir, "cl")}
		})
	}
	e, tbl := open()
	for i := 0; i < 3; i++ {
		m := mutation.NewMutation(modelTableID, []byte{byte('a' + i)})
		r := mutation.NewRow()
		r.Liveness = mutation.LivenessInfo{Timestamp: int64(i + 1), ExpiresAt: mutation.NoDeletionTime}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(i), Row: r}}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	st := tbl.Stats()
	if st.SSTables != 3 || st.Writes != 3 || st.Partitions != 3 || st.LiveBytes <= 0 || e.Load() != st.LiveBytes {
		t.Fatalf("stats %+v, load %d", st, e.Load())
	}
	if err := tbl.Snapshot("before", "CREATE TABLE ks.t (...);"); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Snapshot("before", ""); err == nil {
		t.Fatal("a second snapshot with the same tag was taken")
	}
	snapDir := tbl.snapshotDir("before")
	var manifest snapshotManifest
	raw, err := os.ReadFile(filepath.Join(snapDir, "manifest.json"))
	if err != nil || json.Unmarshal(raw, &manifest) != nil || len(manifest.Files) != 3 {
		t.Fatalf("manifest %s, %v", raw, err)
	}
	files, _ := os.ReadDir(snapDir)
	if len(files) != 11 { // 3 SSTables of 3 files, the manifest and the schema
		t.Fatalf("%d files in the snapshot", len(files))
	}
	for _, name := range manifest.Files {
		a, errA := os.Stat(filepath.Join(tbl.dir, name))
		b, errB := os.Stat(filepath.Join(snapDir, name))
		if errA != nil || errB != nil || a.Sys().(*syscall.Stat_t).Ino != b.Sys().(*syscall.Stat_t).Ino {
			t.Fatalf("%s is not a hard link of the live file: %v %v", name, errA, errB)
		}
	}
	snaps, err := tbl.Snapshots()
	if err != nil || len(snaps) != 1 || snaps[0].Tag != "before" || snaps[0].TrueBytes != int64(len(raw))+int64(len("CREATE TABLE ks.t (...);\n")) {
		t.Fatalf("snapshots %+v, %v", snaps, err)
	}
	if err := tbl.CompactMajor(); err != nil {
		t.Fatal(err)
	}
	snaps, _ = tbl.Snapshots()
	if snaps[0].TrueBytes < st.LiveBytes {
		t.Fatalf("after compaction the snapshot alone holds %d bytes, want at least the %d it linked", snaps[0].TrueBytes, st.LiveBytes)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, tbl = open()
	defer e.Close()
	if snaps, err := tbl.Snapshots(); err != nil || len(snaps) != 1 {
		t.Fatalf("after a restart: %+v, %v", snaps, err)
	}
	if err := tbl.ClearSnapshot(""); err != nil {
		t.Fatal(err)
	}
	if snaps, err := tbl.Snapshots(); err != nil || len(snaps) != 0 {
		t.Fatalf("after clearing: %+v, %v", snaps, err)
	}
	if err := e.SetCompactionThroughput(16); err != nil || e.CompactionThroughput() != 16 {
		t.Fatalf("throughput %d, %v", e.CompactionThroughput(), err)
	}
}

// TestSnapshotTagsArePlainNames refuses every tag that is not a plain
// file name, for taking and for clearing a snapshot, before anything on
// disk is touched.
func TestSnapshotTagsArePlainNames(t *testing.T) {
	e, tbl := testEngine(t, vfs.NewMem())
	defer e.Close()
	if err := writeKey(e, "k"); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"..", ".", "../x", "a/b", `a\b`, "/abs", "a\x00b", strings.Repeat("t", 256)} {
		if err := tbl.Snapshot(tag, ""); !errors.Is(err, ErrBadSnapshotTag) {
			t.Errorf("Snapshot(%q) = %v", tag, err)
		}
		if err := tbl.ClearSnapshot(tag); !errors.Is(err, ErrBadSnapshotTag) {
			t.Errorf("ClearSnapshot(%q) = %v", tag, err)
		}
	}
	if n := tbl.SSTableCount(); n != 1 {
		t.Fatalf("%d SSTables", n)
	}
	if p, err := tbl.ReadPartition([]byte("k"), ReadQuery{}); err != nil || len(p.Rows) != 1 {
		t.Fatalf("read after refused tags: %v %v", p, err)
	}
	if err := tbl.Snapshot(strings.Repeat("t", 255), ""); err != nil {
		t.Fatalf("a 255-byte tag: %v", err)
	}
}

// TestPendingCompactions: four SSTables of one size are a compaction the
// size-tiered strategy wants, counted as pending until it has run.
func TestPendingCompactions(t *testing.T) {
	e, tbl := testEngine(t, vfs.NewMem())
	defer e.Close()
	if n := tbl.PendingCompactions(); n != 0 {
		t.Fatalf("an empty table has %d compactions pending", n)
	}
	for i := range 4 {
		if err := writeKey(e, fmt.Sprintf("k%d", i)); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
		if want := i / 3; tbl.PendingCompactions() != want {
			t.Fatalf("with %d SSTables, %d compactions pending, want %d", i+1, tbl.PendingCompactions(), want)
		}
	}
	if err := tbl.CompactMajor(); err != nil {
		t.Fatal(err)
	}
	if n := tbl.PendingCompactions(); n != 0 {
		t.Fatalf("after compacting, %d compactions pending", n)
	}
}
