package storage

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/mutation"
)

// TestSamplingCountsPartitions checks a sampling counts each partition's
// local reads and writes exactly (its summaries are larger than the
// partitions touched), keeps each one's largest write and slowest read,
// takes the contentions reported, stops counting once stopped, and lets
// one sampling run at a time.
func TestSamplingCountsPartitions(t *testing.T) {
	e, tbl := testEngine(t, vfs.NewMem())
	defer e.Close()
	s, err := tbl.StartSampling(64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.StartSampling(64); err == nil {
		t.Error("a second sampling started beside the first")
	}
	for i := range 10 {
		for range i + 1 {
			if err := writeKey(e, fmt.Sprint("k", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	big := mutation.NewMutation(modelTableID, []byte("big"))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, make([]byte, 5000))}
	big.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	if err := e.Apply(big); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := tbl.ReadPartition([]byte("k4"), ReadQuery{}); err != nil {
			t.Fatal(err)
		}
	}
	tbl.SampleContention([]byte("k7"))
	tbl.StopSampling(s)
	if err := writeKey(e, "k0"); err != nil { // after the stop: not counted
		t.Fatal(err)
	}
	writes := s.Writes.Top(3)
	if fmt.Sprint(writes) != "[{k9 10 0} {k8 9 0} {k7 8 0}]" {
		t.Errorf("top writes %v", writes)
	}
	if all := s.Writes.Top(64); len(all) != 11 || all[len(all)-1].Item != "k0" || all[len(all)-1].Count != 1 {
		t.Errorf("every write: %v", all)
	}
	if size := s.WriteSize.Top(1); size[0].Item != "big" || size[0].Count < 5000 {
		t.Errorf("largest write %v", size)
	}
	if reads := s.Reads.Top(5); fmt.Sprint(reads) != "[{k4 3 0}]" {
		t.Errorf("reads %v", reads)
	}
	if slow := s.ReadTime.Top(5); len(slow) != 1 || slow[0].Item != "k4" {
		t.Errorf("slowest reads %v", slow)
	}
	if c := s.CASContentions.Top(5); fmt.Sprint(c) != "[{k7 1 0}]" {
		t.Errorf("contentions %v", c)
	}
	if _, err := tbl.StartSampling(8); err != nil {
		t.Errorf("a sampling after the first stopped: %v", err)
	}
}
