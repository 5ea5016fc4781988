package mutation

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/sibyldb/sibyl/partitioner"
)

func TestEscapedRoundTrip(t *testing.T) {
	for _, in := range [][]byte{{}, {0}, {0, 0}, {1, 0, 2}, []byte("plain"), {0xFF, 0}, {0, 1}} {
		enc := appendEscaped(nil, in)
		got, rest, err := readEscaped(append(enc, 0x42))
		if err != nil || !bytes.Equal(got, in) || !bytes.Equal(rest, []byte{0x42}) {
			t.Errorf("readEscaped(appendEscaped(%x)) = %x, %x, %v", in, got, rest, err)
		}
	}
	for _, bad := range [][]byte{{}, {0}, {1, 2}, {0, 2}} {
		if _, _, err := readEscaped(bad); err == nil {
			t.Errorf("readEscaped(%x) must fail", bad)
		}
	}
}

// TestEngineKeyOrder checks invariant M3: engine keys sort by token, then by
// partition key bytes unsigned (a proper prefix first), then entry kind,
// then clustering.
func TestEngineKeyOrder(t *testing.T) {
	p := partitioner.Murmur3()
	r := rand.New(rand.NewPCG(11, 12))
	type item struct {
		tok        partitioner.Token
		pk         []byte
		kind       EntryKind
		clustering []byte
		key        []byte
	}
	var items []item
	for i := 0; i < 3000; i++ {
		pk := make([]byte, r.IntN(4))
		for j := range pk {
			pk[j] = []byte{0, 1, 0xFF}[r.IntN(3)]
		}
		tok := p.Token(pk)
		if r.IntN(4) == 0 { // force equal tokens with different keys
			tok = p.Token([]byte("same"))
		}
		kind := []EntryKind{PartitionDeletionEntry, StaticRowEntry, RowEntry}[r.IntN(3)]
		var clustering []byte
		if kind == RowEntry {
			clustering = []byte{componentMarker, byte(r.IntN(3)), byte(r.IntN(3))}
		}
		prefix := AppendPartitionPrefix(nil, tok, pk)
		items = append(items, item{tok, pk, kind, clustering, AppendEntryKey(nil, prefix, kind, clustering)})
	}
	want := append([]item(nil), items...)
	sort.SliceStable(want, func(i, j int) bool {
		a, b := want[i], want[j]
		if c := partitioner.Compare(a.tok, b.tok); c != 0 {
			return c < 0
		}
		if c := bytes.Compare(a.pk, b.pk); c != 0 {
			return c < 0
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return bytes.Compare(a.clustering, b.clustering) < 0
	})
	got := append([]item(nil), items...)
	sort.SliceStable(got, func(i, j int) bool { return bytes.Compare(got[i].key, got[j].key) < 0 })
	for i := range got {
		if !bytes.Equal(got[i].key, want[i].key) {
			t.Fatalf("position %d: byte order gives %x, Cassandra's order gives %x", i, got[i].key, want[i].key)
		}
	}
	for _, it := range items {
		parts, err := ParseKey(it.key, p.TokenBytesLen())
		if err != nil {
			t.Fatalf("ParseKey(%x): %v", it.key, err)
		}
		if !bytes.Equal(parts.PartitionKey, it.pk) || parts.Kind != it.kind || !bytes.Equal(parts.Clustering, it.clustering) {
			t.Fatalf("ParseKey(%x) = %+v", it.key, parts)
		}
		n, err := PartitionPrefixLen(it.key, p.TokenBytesLen())
		if err != nil || !bytes.Equal(it.key[:n], parts.Prefix) {
			t.Fatalf("PartitionPrefixLen(%x) = %d, %v; prefix %x", it.key, n, err, parts.Prefix)
		}
		if bytes.Compare(it.key, PartitionUpperBound(parts.Prefix)) >= 0 {
			t.Fatalf("key %x is not below its partition's upper bound", it.key)
		}
	}
}

func TestRangeTombstoneKey(t *testing.T) {
	p := partitioner.Murmur3()
	prefix := AppendPartitionPrefix(nil, p.Token([]byte("k")), []byte("k"))
	start := StartBound([]byte{componentMarker, 0, 5}, true)
	end := EndBound([]byte{componentMarker, 0, 9}, true)
	key := AppendRangeTombstoneKey(nil, prefix, start, end)
	parts, err := ParseKey(key, p.TokenBytesLen())
	if err != nil || parts.Kind != RangeTombstoneEntry || !bytes.Equal(parts.Clustering, start) || !bytes.Equal(parts.End, end) {
		t.Fatalf("ParseKey = %+v, %v", parts, err)
	}
	for _, bad := range [][]byte{nil, key[:5], append(append([]byte{}, prefix...), 0x77)} {
		if _, err := ParseKey(bad, p.TokenBytesLen()); err == nil {
			t.Errorf("ParseKey(%x) must fail", bad)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	p := partitioner.Murmur3()
	prefix := AppendPartitionPrefix(nil, p.Token([]byte("k\x00")), []byte("k\x00"))
	f.Add(AppendEntryKey(nil, prefix, RowEntry, []byte{2, 1}))
	f.Add(AppendEntryKey(nil, prefix, StaticRowEntry, nil))
	f.Add(AppendRangeTombstoneKey(nil, prefix, []byte{2, 0}, []byte{3}))
	f.Fuzz(func(t *testing.T, key []byte) {
		parts, err := ParseKey(key, 8)
		if err != nil {
			return
		}
		n, err := PartitionPrefixLen(key, 8)
		if err != nil || n != len(parts.Prefix) {
			t.Fatalf("PartitionPrefixLen = %d, %v; ParseKey prefix has %d bytes", n, err, len(parts.Prefix))
		}
	})
}

// TestAppendEntriesKeys checks the keys a mutation's entries get: each
// parses back to its kind and clustering, keys do not share capacity, and
// all of them take one allocation besides the partition prefix.
func TestAppendEntriesKeys(t *testing.T) {
	p := partitioner.Murmur3()
	m := NewMutation(TableID{1}, []byte("k\x00ey"))
	m.Deletion = DeletionTime{MarkedForDeleteAt: 1, LocalDeletionTime: 1}
	m.RangeTombstones = []RangeTombstone{{Start: []byte{componentMarker, 0, 1}, End: TopBound, Deletion: m.Deletion}}
	m.Static = NewRow()
	m.Rows = []RowUpdate{{Clustering: []byte{componentMarker, 5}, Row: NewRow()}, {Clustering: []byte{componentMarker, 6}, Row: NewRow()}}
	entries := m.AppendEntries(nil, p.Token(m.Key))
	wantKinds := []EntryKind{PartitionDeletionEntry, RangeTombstoneEntry, StaticRowEntry, RowEntry, RowEntry}
	if len(entries) != len(wantKinds) {
		t.Fatalf("%d entries, want %d", len(entries), len(wantKinds))
	}
	for i, e := range entries {
		parts, err := ParseKey(e.Key, p.TokenBytesLen())
		if err != nil || parts.Kind != wantKinds[i] || e.Kind != wantKinds[i] || !bytes.Equal(parts.PartitionKey, m.Key) {
			t.Fatalf("entry %d: key %x parses as %+v, %v", i, e.Key, parts, err)
		}
		if cap(e.Key) != len(e.Key) {
			t.Fatalf("entry %d: key capacity %d runs past its length %d", i, cap(e.Key), len(e.Key))
		}
	}
	if !bytes.Equal(entries[3].Key[len(entries[3].Key)-2:], m.Rows[0].Clustering) {
		t.Fatalf("row key %x does not end with its clustering", entries[3].Key)
	}
	dst := make([]Entry, 0, 8)
	if allocs := testing.AllocsPerRun(100, func() { m.AppendEntries(dst[:0], p.Token(m.Key)) }); allocs > 2 {
		t.Fatalf("AppendEntries made %v allocations, want at most 2 (the prefix and the shared key buffer)", allocs)
	}
}

// TestFromEntries: a mutation's entries make the same mutation back.
func TestFromEntries(t *testing.T) {
	p := partitioner.Murmur3()
	row := NewRow()
	row.Cells = []Cell{LiveCell("v", nil, 5, []byte("x"))}
	static := NewRow()
	static.Cells = []Cell{LiveCell("s", nil, 6, []byte("y"))}
	m := NewMutation(TableID{1}, []byte("key"))
	m.Deletion = DeletionTime{MarkedForDeleteAt: 3, LocalDeletionTime: 100}
	m.RangeTombstones = []RangeTombstone{{Start: StartBound([]byte{1}, true), End: EndBound([]byte{2}, true), Deletion: DeletionTime{MarkedForDeleteAt: 4, LocalDeletionTime: 101}}}
	m.Static = static
	m.Rows = []RowUpdate{{Clustering: []byte{7}, Row: row}}
	back, err := FromEntries(m.Table, m.Key, m.AppendEntries(nil, p.Token(m.Key)), 8)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := AppendMutation(nil, m), AppendMutation(nil, back); !bytes.Equal(a, b) {
		t.Errorf("round trip:\n%x\n%x", a, b)
	}
}
