package mutation

import "testing"

func TestShiftTimestampsMovesEveryTimestamp(t *testing.T) {
	m := NewMutation(TableID{1}, []byte("k"))
	m.Deletion = DeletionTime{MarkedForDeleteAt: 10, LocalDeletionTime: 1}
	m.RangeTombstones = []RangeTombstone{{Start: []byte("a"), End: []byte("b"), Deletion: DeletionTime{MarkedForDeleteAt: 11, LocalDeletionTime: 1}}}
	static := NewRow()
	static.Cells = []Cell{{Column: "s", Timestamp: 12, LocalDeletionTime: NoDeletionTime}}
	m.Static = static
	row := NewRow()
	row.Liveness = LivenessInfo{Timestamp: 13, ExpiresAt: NoDeletionTime}
	row.Columns = []ColumnDeletion{{Column: "c", Deletion: DeletionTime{MarkedForDeleteAt: 9, LocalDeletionTime: 1}}}
	row.Cells = []Cell{{Column: "v", Timestamp: 14, LocalDeletionTime: NoDeletionTime}}
	m.Rows = []RowUpdate{{Clustering: []byte{1}, Row: row}}
	if lo, hi := m.TimestampBounds(); lo != 9 || hi != 14 {
		t.Fatalf("bounds %d..%d, want 9..14", lo, hi)
	}
	m.ShiftTimestamps(100)
	if lo, hi := m.TimestampBounds(); lo != 109 || hi != 114 {
		t.Fatalf("bounds after a shift of 100: %d..%d, want 109..114", lo, hi)
	}
	if m.Deletion.MarkedForDeleteAt != 110 || m.RangeTombstones[0].Deletion.MarkedForDeleteAt != 111 || m.Static.Cells[0].Timestamp != 112 ||
		row.Liveness.Timestamp != 113 || row.Columns[0].Deletion.MarkedForDeleteAt != 109 || row.Cells[0].Timestamp != 114 {
		t.Fatalf("after a shift of 100: %+v %+v", m, row)
	}
	// What is absent stays absent.
	if !row.Deletion.IsLive() {
		t.Fatalf("a live row's deletion became %v", row.Deletion)
	}
	empty := NewMutation(TableID{1}, []byte("k"))
	empty.ShiftTimestamps(5)
	if lo, hi := empty.TimestampBounds(); lo <= hi || !empty.Deletion.IsLive() {
		t.Fatalf("an empty mutation after a shift: bounds %d..%d, deletion %v", lo, hi, empty.Deletion)
	}
}
