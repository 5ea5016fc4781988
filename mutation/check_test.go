package mutation

import (
	"errors"
	"testing"
)

func TestNormalizeReconcilesRepeatedCells(t *testing.T) {
	r := NewRow()
	r.Cells = []Cell{
		LiveCell("s", []byte{5}, 10, nil),
		LiveCell("m", []byte("a"), 10, []byte("1")),
		LiveCell("s", []byte{3}, 10, nil),
		LiveCell("m", []byte("a"), 10, []byte("2")),
		TombstoneCell("s", []byte{5}, 10, 100),
		LiveCell("s", []byte{3}, 10, nil),
	}
	r.Columns = []ColumnDeletion{
		{Column: "s", Deletion: DeletionTime{MarkedForDeleteAt: 9, LocalDeletionTime: 100}},
		{Column: "m", Deletion: DeletionTime{MarkedForDeleteAt: 9, LocalDeletionTime: 100}},
		{Column: "s", Deletion: DeletionTime{MarkedForDeleteAt: 10, LocalDeletionTime: 100}},
	}
	r.Normalize()
	if err := r.check(false); err != nil {
		t.Fatalf("normalized row: %v", err)
	}
	want := []Cell{
		LiveCell("m", []byte("a"), 10, []byte("2")), // the greater value at one timestamp
		LiveCell("s", []byte{3}, 10, nil),
		TombstoneCell("s", []byte{5}, 10, 100), // a tombstone wins a tie
	}
	if len(r.Cells) != len(want) {
		t.Fatalf("cells %v, want %v", r.Cells, want)
	}
	for i := range want {
		if r.Cells[i].String() != want[i].String() {
			t.Errorf("cell %d: %v, want %v", i, r.Cells[i], want[i])
		}
	}
	if len(r.Columns) != 2 || r.Columns[0].Column != "m" || r.Columns[1].Deletion.MarkedForDeleteAt != 10 {
		t.Errorf("column deletions %v, want m@9 and s@10", r.Columns)
	}
}

func TestCheckRefusesWhatCannotBeEncoded(t *testing.T) {
	row := func(cells ...Cell) *Mutation {
		m := NewMutation(TableID{1}, []byte("k"))
		r := NewRow()
		r.Cells = cells
		m.Rows = []RowUpdate{{Clustering: []byte{1}, Row: r}}
		return m
	}
	expiringTombstone := TombstoneCell("v", nil, 1, 5)
	expiringTombstone.TTL = 3
	negativeTTL := ExpiringCell("v", nil, 1, 3, 5, []byte("x"))
	negativeTTL.TTL = -3
	liveRT := NewMutation(TableID{1}, []byte("k"))
	liveRT.RangeTombstones = []RangeTombstone{{Start: []byte{1}, End: []byte{2}, Deletion: Live}}
	nilRow := NewMutation(TableID{1}, []byte("k"))
	nilRow.Rows = []RowUpdate{{Clustering: []byte{1}}}
	markerTTL := row()
	markerTTL.Rows[0].Row.Liveness = LivenessInfo{Timestamp: 1, TTL: -1}
	unsortedDeletions := row()
	unsortedDeletions.Rows[0].Row.Columns = []ColumnDeletion{{Column: "b", Deletion: DeletionTime{1, 1}}, {Column: "a", Deletion: DeletionTime{1, 1}}}
	for name, m := range map[string]*Mutation{
		"repeated cell":         row(LiveCell("v", nil, 1, []byte("a")), LiveCell("v", nil, 1, []byte("b"))),
		"unsorted cells":        row(LiveCell("w", nil, 1, nil), LiveCell("v", nil, 1, nil)),
		"unsorted paths":        row(LiveCell("s", []byte{2}, 1, nil), LiveCell("s", []byte{1}, 1, nil)),
		"tombstone with TTL":    row(expiringTombstone),
		"negative TTL":          row(negativeTTL),
		"live range tombstone":  liveRT,
		"nil row":               nilRow,
		"marker TTL":            markerTTL,
		"unsorted col deletion": unsortedDeletions,
	} {
		if err := m.Check(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Check = %v, want ErrMalformed", name, err)
		}
	}
	if err := row(LiveCell("s", []byte{1}, 1, nil), LiveCell("s", []byte{2}, 1, nil), LiveCell("v", nil, 1, nil)).Check(); err != nil {
		t.Errorf("a well-formed mutation: %v", err)
	}
}
