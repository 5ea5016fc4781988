package storage

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/sstable"
)

// openInMemory opens an engine on in-memory files with the given options
// (no background compaction) and the tables, recovered; it closes with
// the test.
func openInMemory(t testing.TB, o Options, tables ...TableOptions) (*Engine, []*Table) {
	t.Helper()
	o.FS, o.DataDir, o.CommitLog.Dir, o.DisableAutoCompaction = vfs.NewMem(), "data", "cl", true
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var out []*Table
	for _, to := range tables {
		tbl, err := e.OpenTable(to)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tbl)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
	return e, out
}

// TestReadSkipsSSTablesOlderThanAPartitionDeletion: of three SSTables
// holding a partition, the one whose newest write is older than the
// partition deletion in another is not read, and the read still returns
// exactly the rows written after the deletion.
func TestReadSkipsSSTablesOlderThanAPartitionDeletion(t *testing.T) {
	e, tables := openInMemory(t, Options{}, TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	tbl := tables[0]
	row := func(ck int, ts int64) *mutation.Mutation {
		m := mutation.NewMutation(modelTableID, []byte("p"))
		r := mutation.NewRow()
		r.Liveness = mutation.LivenessInfo{Timestamp: ts, ExpiresAt: mutation.NoDeletionTime}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: r}}
		return m
	}
	del := mutation.NewMutation(modelTableID, []byte("p"))
	del.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 50, LocalDeletionTime: 1}
	for _, m := range []*mutation.Mutation{row(1, 10), del, row(2, 60)} {
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	reads, sstables := tbl.ReadStats()
	p, err := tbl.ReadPartition([]byte("p"), ReadQuery{Now: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 1 || string(p.Rows[0].Clustering) != string(clusteringOf(2)) {
		t.Fatalf("read %d rows, want only the row written after the deletion", len(p.Rows))
	}
	reads2, sstables2 := tbl.ReadStats()
	if reads2-reads != 1 || sstables2-sstables != 2 {
		t.Fatalf("the read counted %d reads over %d SSTables; want 1 over 2 (the oldest skipped)", reads2-reads, sstables2-sstables)
	}
}

// TestTombstoneThresholds: tombstones are counted as Cassandra counts
// them (each dead cell, a dead row's deletion, a range tombstone's two
// bounds, nothing for rows a partition deletion shadows); past the
// warning threshold a read warns with Cassandra's message, past the
// failure threshold it fails with request.TombstoneOverwhelming, in
// partition reads and scans alike; the system keyspace has neither.
func TestTombstoneThresholds(t *testing.T) {
	systemID := mutation.TableID{9}
	e, tables := openInMemory(t, Options{TombstoneWarnThreshold: 5, TombstoneFailureThreshold: 9},
		TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"}, TableOptions{ID: systemID, Keyspace: "system", Name: "t"})
	user, system := tables[0], tables[1]
	apply := func(m *mutation.Mutation) {
		t.Helper()
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	live := func(id mutation.TableID, key string, ck int) {
		m := mutation.NewMutation(id, []byte(key))
		r := mutation.NewRow()
		r.Liveness = mutation.LivenessInfo{Timestamp: 10, ExpiresAt: mutation.NoDeletionTime}
		r.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 10, []byte("x"))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: r}}
		apply(m)
	}
	deadCells := func(id mutation.TableID, key string, ck, cells int) {
		m := mutation.NewMutation(id, []byte(key))
		r := mutation.NewRow()
		for i := 0; i < cells; i++ {
			r.Cells = append(r.Cells, mutation.Cell{Column: string(rune('a' + i)), Timestamp: 20, LocalDeletionTime: 1, Tombstone: true})
		}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: r}}
		apply(m)
	}
	deletedRow := func(id mutation.TableID, key string, ck int) {
		m := mutation.NewMutation(id, []byte(key))
		r := mutation.NewRow()
		r.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 20, LocalDeletionTime: 1}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: r}}
		apply(m)
	}
	read := func(tbl *Table, key string) (int, []string, error) {
		var warnings []string
		p, err := tbl.ReadPartition([]byte(key), ReadQuery{Now: 2, Warnings: &warnings})
		if err != nil {
			return 0, warnings, err
		}
		return len(p.Rows), warnings, nil
	}

	// Two dead cells, one deleted row, a range tombstone: 2+1+2 = 5, at
	// the threshold, not past it.
	live(modelTableID, "p", 1)
	deadCells(modelTableID, "p", 2, 2)
	deletedRow(modelTableID, "p", 3)
	rt := mutation.NewMutation(modelTableID, []byte("p"))
	rt.RangeTombstones = []mutation.RangeTombstone{{Start: mutation.StartBound(clusteringOf(10), true), End: mutation.EndBound(clusteringOf(12), true),
		Deletion: mutation.DeletionTime{MarkedForDeleteAt: 20, LocalDeletionTime: 1}}}
	apply(rt)
	if rows, warnings, err := read(user, "p"); err != nil || rows != 1 || len(warnings) != 0 {
		t.Fatalf("5 tombstones: %d rows, warnings %q, %v; want 1 row and no warning", rows, warnings, err)
	}
	deletedRow(modelTableID, "p", 4)
	rows, warnings, err := read(user, "p")
	token := e.opts.Partitioner.Token([]byte("p"))
	want := fmt.Sprintf("Read 1 live rows and 6 tombstone cells for query SELECT * FROM ks.t WHERE key = 0x70 ALLOW FILTERING; token %s (see tombstone_warn_threshold)", token)
	if err != nil || rows != 1 || len(warnings) != 1 || warnings[0] != want {
		t.Fatalf("6 tombstones: %d rows, warnings %q, %v; want 1 row and %q", rows, warnings, err, want)
	}
	if got := user.Metrics().TombstoneWarnings.Load(); got != 1 {
		t.Fatalf("%d warnings counted, want 1", got)
	}
	deadCells(modelTableID, "p", 5, 4) // 10 in all
	_, _, err = read(user, "p")
	var tooMany *request.TombstoneOverwhelming
	if !errors.As(err, &tooMany) || tooMany.Tombstones != 10 || !strings.HasPrefix(err.Error(), request.TombstoneOverwhelmingPrefix+"10 tombstones during query 'SELECT * FROM ks.t") {
		t.Fatalf("10 tombstones: %v, want a TombstoneOverwhelming at 10", err)
	}
	if _, err := user.Scan(ScanQuery{Now: 2}); !errors.As(err, &tooMany) {
		t.Fatalf("a scan over 10 tombstones: %v, want a TombstoneOverwhelming", err)
	}

	// A partition deletion counts nothing and takes the rows it shadows
	// out of the count.
	del := mutation.NewMutation(modelTableID, []byte("p"))
	del.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 30, LocalDeletionTime: 1}
	apply(del)
	live2 := mutation.NewMutation(modelTableID, []byte("p"))
	r := mutation.NewRow()
	r.Liveness = mutation.LivenessInfo{Timestamp: 40, ExpiresAt: mutation.NoDeletionTime}
	live2.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(7), Row: r}}
	apply(live2)
	if rows, warnings, err := read(user, "p"); err != nil || rows != 1 || len(warnings) != 0 {
		t.Fatalf("after the partition deletion: %d rows, warnings %q, %v; want 1 row and no warning", rows, warnings, err)
	}

	// The system keyspace's reads have no thresholds.
	for ck := 0; ck < 20; ck++ {
		deletedRow(systemID, "s", ck)
	}
	if rows, warnings, err := read(system, "s"); err != nil || rows != 0 || len(warnings) != 0 {
		t.Fatalf("system: %d rows, warnings %q, %v; want none and no error", rows, warnings, err)
	}
}

// TestLargePartitionWarning: a flush logs each partition it writes larger
// than the threshold, with Cassandra's words, and no other.
func TestLargePartitionWarning(t *testing.T) {
	var log bytes.Buffer
	logger := zerolog.New(&log)
	e, tables := openInMemory(t, Options{SSTable: sstable.WriterOptions{LargePartitionBytes: 4 << 10}, Logger: &logger},
		TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	tbl := tables[0]
	write := func(key string, rows int) {
		m := mutation.NewMutation(modelTableID, []byte(key))
		for ck := 0; ck < rows; ck++ {
			r := mutation.NewRow()
			r.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 10, bytes.Repeat([]byte("x"), 100))}
			m.Rows = append(m.Rows, mutation.RowUpdate{Clustering: clusteringOf(ck), Row: r})
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	write("big", 60)  // about 7 KiB
	write("small", 3) // a few hundred bytes
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(log.String(), "Writing large partition")
	if lines != 1 || !strings.Contains(log.String(), "Writing large partition ks/t:0x626967 (") || !strings.Contains(log.String(), "KiB) to sstable data/") {
		t.Fatalf("the flush logged %d large partitions:\n%s\nwant one, ks/t:0x626967", lines, log.String())
	}
}
