package mutation

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// randomRow builds a row with a few columns, collection elements, markers
// and deletions drawn from small ranges so that ties happen often.
func randomRow(r *rand.Rand) *Row {
	row := NewRow()
	ts := func() int64 { return int64(r.IntN(6)) }
	if r.IntN(2) == 0 {
		row.Liveness = LivenessInfo{Timestamp: ts(), ExpiresAt: NoDeletionTime}
		if r.IntN(3) == 0 {
			row.Liveness.TTL = int32(1 + r.IntN(3))
			row.Liveness.ExpiresAt = 100 + int64(row.Liveness.TTL)
		}
	}
	if r.IntN(4) == 0 {
		row.Deletion = DeletionTime{MarkedForDeleteAt: ts(), LocalDeletionTime: 100 + int64(r.IntN(3))}
	}
	if r.IntN(4) == 0 {
		row.Columns = []ColumnDeletion{{Column: "m", Deletion: DeletionTime{MarkedForDeleteAt: ts(), LocalDeletionTime: 100}}}
	}
	seen := map[string]bool{}
	for n := r.IntN(5); n > 0; n-- {
		col := []string{"a", "b", "m"}[r.IntN(3)]
		var path []byte
		if col == "m" {
			path = []byte{byte(r.IntN(3))}
		}
		pos := col + string(path)
		if seen[pos] {
			continue
		}
		seen[pos] = true
		value := []byte{byte(r.IntN(3))}
		var c Cell
		switch r.IntN(3) {
		case 0:
			c = LiveCell(col, path, ts(), value)
		case 1:
			c = ExpiringCell(col, path, ts(), int32(1+r.IntN(3)), 100, value)
		default:
			c = TombstoneCell(col, path, ts(), 100+int64(r.IntN(3)))
		}
		row.Cells = append(row.Cells, c)
	}
	sort.Slice(row.Cells, func(i, j int) bool { return compareCellPosition(&row.Cells[i], &row.Cells[j]) < 0 })
	row.removeShadowed()
	return row
}

// TestMergeRowsLaws checks invariant M2 (commutative, associative) and
// idempotence on random rows.
func TestMergeRowsLaws(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		a, b, c := randomRow(r), randomRow(r), randomRow(r)
		ab, ba := MergeRows(a, b), MergeRows(b, a)
		if ab.String() != ba.String() {
			t.Fatalf("not commutative:\n a=%s\n b=%s\n ab=%s\n ba=%s", a, b, ab, ba)
		}
		left, right := MergeRows(MergeRows(a, b), c), MergeRows(a, MergeRows(b, c))
		if left.String() != right.String() {
			t.Fatalf("not associative:\n a=%s\n b=%s\n c=%s\n (ab)c=%s\n a(bc)=%s", a, b, c, left, right)
		}
		if aa := MergeRows(a, a); aa.String() != a.String() {
			t.Fatalf("not idempotent: a=%s aa=%s", a, aa)
		}
	}
}

func TestMergeRowsShadowing(t *testing.T) {
	a := NewRow()
	a.Liveness = LivenessInfo{Timestamp: 5, ExpiresAt: NoDeletionTime}
	a.Cells = []Cell{LiveCell("a", nil, 5, []byte("x")), LiveCell("b", nil, 7, []byte("y")),
		LiveCell("m", []byte("k1"), 3, []byte("1")), LiveCell("m", []byte("k2"), 6, []byte("2"))}
	b := NewRow()
	b.Deletion = DeletionTime{MarkedForDeleteAt: 5, LocalDeletionTime: 100}
	b.Columns = []ColumnDeletion{{Column: "m", Deletion: DeletionTime{MarkedForDeleteAt: 6, LocalDeletionTime: 100}}}
	got := MergeRows(a, b).String()
	want := "{rowdel=del@5/100 m=coldel:del@6/100 b=79@7}"
	if got != want {
		t.Errorf("merge = %s, want %s", got, want)
	}
	// A column deletion older than the row deletion is dropped.
	c := NewRow()
	c.Columns = []ColumnDeletion{{Column: "m", Deletion: DeletionTime{MarkedForDeleteAt: 4, LocalDeletionTime: 100}}}
	if got := MergeRows(b, c).String(); got != "{rowdel=del@5/100 m=coldel:del@6/100}" {
		t.Errorf("merge = %s", got)
	}
	d := NewRow()
	d.Deletion = DeletionTime{MarkedForDeleteAt: 9, LocalDeletionTime: 100}
	if got := MergeRows(b, d).String(); got != "{rowdel=del@9/100}" {
		t.Errorf("a later row deletion must absorb column deletions: %s", got)
	}
}

func TestRowLiveAndShadowedBy(t *testing.T) {
	r := NewRow()
	r.Liveness = LivenessInfo{Timestamp: 5, ExpiresAt: NoDeletionTime}
	r.Cells = []Cell{LiveCell("a", nil, 4, []byte("x")), ExpiringCell("b", nil, 6, 10, 100, []byte("y")),
		TombstoneCell("c", nil, 6, 100)}
	if got := r.Live(105).String(); got != "{marker@5 a=78@4 b=79@6 ttl=10 exp=110}" {
		t.Errorf("Live(105) = %s", got)
	}
	if got := r.Live(110).String(); got != "{marker@5 a=78@4}" {
		t.Errorf("Live(110) drops the expired cell: %s", got)
	}
	shadowed := r.ShadowedBy(DeletionTime{MarkedForDeleteAt: 5, LocalDeletionTime: 100})
	if got := shadowed.String(); got != "{b=79@6 ttl=10 exp=110 c=del@6/100}" {
		t.Errorf("ShadowedBy(5) = %s", got)
	}
	if got := shadowed.Live(200); got != nil {
		t.Errorf("after expiry nothing is live, got %s", got)
	}
	if got := r.ShadowedBy(DeletionTime{MarkedForDeleteAt: 6, LocalDeletionTime: 100}); got != nil {
		t.Errorf("ShadowedBy(6) = %s, want nil", got)
	}
}

// A row that a read sees whole comes back as it is; any part a read would
// drop makes a copy without it.
func TestRowLiveWithoutCopy(t *testing.T) {
	marker := LivenessInfo{Timestamp: 5, ExpiresAt: NoDeletionTime}
	expiring := LivenessInfo{Timestamp: 5, TTL: 10, ExpiresAt: 110}
	row := func(l LivenessInfo, cells ...Cell) *Row {
		r := NewRow()
		r.Liveness, r.Cells = l, cells
		return r
	}
	for _, r := range []*Row{
		row(marker, LiveCell("a", nil, 4, []byte("x"))),
		row(marker),
		row(NoLiveness, LiveCell("a", nil, 4, []byte("x")), ExpiringCell("b", nil, 6, 10, 100, []byte("y"))),
	} {
		if got := r.Live(105); got != r {
			t.Errorf("Live(105) of %s copied it to %s", r, got)
		}
	}
	for _, c := range []struct {
		r    *Row
		want string
	}{
		{row(expiring, LiveCell("a", nil, 4, []byte("x"))), "{a=78@4}"},
		{row(marker, LiveCell("a", nil, 4, []byte("x")), TombstoneCell("c", nil, 6, 100)), "{marker@5 a=78@4}"},
		{row(NoLiveness, ExpiringCell("b", nil, 6, 10, 100, []byte("y")), LiveCell("d", nil, 4, []byte("x"))), "{d=78@4}"},
	} {
		got := c.r.Live(110)
		if got == c.r || got.String() != c.want {
			t.Errorf("Live(110) of %s = %s, want a copy %s", c.r, got, c.want)
		}
	}
	withDeletion := row(marker, LiveCell("a", nil, 4, []byte("x")))
	withDeletion.Deletion = DeletionTime{MarkedForDeleteAt: 2, LocalDeletionTime: 100}
	if got := withDeletion.Live(105); got == withDeletion || got.String() != "{marker@5 a=78@4}" {
		t.Errorf("Live drops the row deletion: %s", got)
	}
	if got := row(NoLiveness).Live(105); got != nil {
		t.Errorf("an empty row reads as nil, got %s", got)
	}
}

func TestRowPurge(t *testing.T) {
	always := func(int64) bool { return true }
	never := func(int64) bool { return false }
	r := NewRow()
	r.Cells = []Cell{
		ExpiringCell("a", nil, 10, 5, 1000, []byte("x")), // expires at 1005, written at 1000
		TombstoneCell("b", nil, 10, 900),
		LiveCell("c", nil, 10, []byte("z")),
	}
	// Before expiry and gc grace nothing changes.
	if got := r.Purge(1001, 800, always).String(); got != r.String() {
		t.Errorf("Purge before expiry = %s", got)
	}
	// Expired: a becomes a tombstone dated at its write time (1000); b is purgeable once gcBefore > 900.
	if got := r.Purge(1010, 950, always).String(); got != "{a=del@10/1000 c=7a@10}" {
		t.Errorf("Purge(1010, 950) = %s", got)
	}
	if got := r.Purge(1010, 1001, always).String(); got != "{c=7a@10}" {
		t.Errorf("Purge(1010, 1001) = %s", got)
	}
	// The overlap rule can keep tombstones.
	if got := r.Purge(1010, 1001, never).String(); got != "{a=del@10/1000 b=del@10/900 c=7a@10}" {
		t.Errorf("Purge with overlapping data = %s", got)
	}
	dead := NewRow()
	dead.Deletion = DeletionTime{MarkedForDeleteAt: 3, LocalDeletionTime: 10}
	if got := dead.Purge(100, 50, always); got != nil {
		t.Errorf("a purgeable row deletion leaves nothing, got %s", got)
	}
}

func TestRowEncodingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		row := randomRow(r)
		enc := AppendRow(nil, row)
		got, err := DecodeRow(enc)
		if err != nil {
			t.Fatalf("DecodeRow(%x) of %s: %v", enc, row, err)
		}
		if got.String() != row.String() {
			t.Fatalf("round trip: %s -> %s", row, got)
		}
		if !bytes.Equal(AppendRow(nil, got), enc) {
			t.Fatalf("re-encoding differs for %s", row)
		}
	}
}

func TestMutationEncodingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 500; i++ {
		m := randomMutation(r)
		enc := AppendMutation(nil, m)
		got, err := DecodeMutation(enc)
		if err != nil {
			t.Fatalf("DecodeMutation: %v", err)
		}
		if fmt.Sprint(got) != fmt.Sprint(m) {
			t.Fatalf("round trip:\n%v\n%v", m, got)
		}
	}
	if _, err := DecodeMutation([]byte{9}); err == nil {
		t.Errorf("an unknown version must be refused")
	}
}

func randomMutation(r *rand.Rand) *Mutation {
	m := NewMutation(TableID{1, 2, 3}, []byte(fmt.Sprintf("key%d", r.IntN(10))))
	if r.IntN(5) == 0 {
		m.Deletion = DeletionTime{MarkedForDeleteAt: int64(r.IntN(10)), LocalDeletionTime: 100}
	}
	if r.IntN(4) == 0 {
		m.RangeTombstones = []RangeTombstone{{Start: []byte{2, 1}, End: []byte{2, 5}, Deletion: DeletionTime{MarkedForDeleteAt: 4, LocalDeletionTime: 100}}}
	}
	if r.IntN(3) == 0 {
		m.Static = randomRow(r)
	}
	for n := r.IntN(4); n > 0; n-- {
		m.Rows = append(m.Rows, RowUpdate{Clustering: []byte{2, byte(n)}, Row: randomRow(r)})
	}
	return m
}

func FuzzDecodeMutation(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 20; i++ {
		f.Add(AppendMutation(nil, randomMutation(r)))
	}
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMutation(b)
		if err != nil {
			return
		}
		again, err := DecodeMutation(AppendMutation(nil, m))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(m) {
			t.Fatalf("a decoded mutation must survive re-encoding: %v\n%v\n%v", err, m, again)
		}
	})
}

func FuzzDecodeRow(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 20; i++ {
		f.Add(AppendRow(nil, randomRow(r)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeRow(b)
		_, _ = DecodeEntry([]byte{0}, RowEntry, b)
		_, _ = DecodeEntry([]byte{0}, RangeTombstoneEntry, b)
	})
}

func TestColumnNamesDecodeWithoutAllocating(t *testing.T) {
	name := []byte("value")
	if got := columnName(name); got != "value" {
		t.Fatalf("columnName = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = columnName(name) }); n != 0 {
		t.Fatalf("a repeated column name allocates %v times per decode, want 0", n)
	}
	// More names than slots: each still decodes to itself.
	for i := 0; i < 3*len(columnNames); i++ {
		want := fmt.Sprintf("c%d", i)
		if got := columnName([]byte(want)); got != want {
			t.Fatalf("columnName(%q) = %q", want, got)
		}
	}
}
