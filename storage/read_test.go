package storage

import (
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
)

// TestReadSkipsSSTablesOlderThanAPartitionDeletion: of three SSTables
// holding a partition, the one whose newest write is older than the
// partition deletion in another is not read, and the read still returns
// exactly the rows written after the deletion.
func TestReadSkipsSSTablesOlderThanAPartitionDeletion(t *testing.T) {
	e, err := Open(Options{FS: vfs.NewMem(), DataDir: "data", CommitLog: commitlog.Options{Dir: "cl"}, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tbl, err := e.OpenTable(TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
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
