package schema

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation"
)

type store struct{ *testutil.MemStore }

func newStore() *store { return &store{testutil.NewMemStore()} }

func (s *store) apply(t *testing.T, ms ...*mutation.Mutation) { s.Apply(ms...) }

// rows reads every live row of def at now.
func (s *store) rows(def *Table, now int64) ([]map[string]Cell, error) {
	parts, err := s.Partitions(def.ID, now)
	if err != nil {
		return nil, err
	}
	var out []map[string]Cell
	for _, p := range parts {
		for _, r := range p.Rows {
			cells, err := def.RowCells(p.Key, r.Clustering, r.Row, p.Static, now)
			if err != nil {
				return nil, err
			}
			out = append(out, cells)
		}
	}
	return out, nil
}

func writer(ts int64) *CellWriter {
	n := uint64(0)
	return &CellWriter{Timestamp: ts, Now: 1000, NextListPath: func() []byte {
		n++
		u := make([]byte, 16)
		binary.BigEndian.PutUint64(u, uint64(ts)<<4|n) // time-ordered enough for one write
		u[6] = u[6]&0x0f | 0x10
		u[8] = u[8]&0x3f | 0x80
		return u
	}}
}

func mustType(t *testing.T, s string, ks *Keyspace) *cqltype.Type {
	t.Helper()
	typ, err := cqltype.Parse(s, ks.Name, ks.ResolveType)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

// sample builds a keyspace with a user type and two tables covering key
// shapes, clustering order, static and multi-cell columns.
func sample(t *testing.T) *Keyspace {
	t.Helper()
	ks := NewKeyspace("shop", Replication{Class: SimpleStrategy, Factor: 3}, true)
	addr := cqltype.UDTOf("shop", "address", []string{"street", "zip"}, []*cqltype.Type{cqltype.TextType, cqltype.IntType}, false)
	ks.Types["address"] = addr
	col := func(name, typ string, kind ColumnKind, pos int, desc bool) *Column {
		return &Column{Name: name, Type: mustType(t, typ, ks), Kind: kind, Position: pos, Descending: desc}
	}
	orders, err := NewTable("shop", "orders", mutation.TableID{1}, []*Column{
		col("customer", "text", PartitionKey, 0, false),
		col("region", "int", PartitionKey, 1, false),
		col("day", "date", Clustering, 0, true),
		col("id", "uuid", Clustering, 1, false),
		col("note", "text", Static, -1, false),
		col("total", "decimal", Regular, -1, false),
		col("tags", "set<text>", Regular, -1, false),
		col("items", "map<text, int>", Regular, -1, false),
		col("history", "list<int>", Regular, -1, false),
		col("ship_to", "address", Regular, -1, false),
		col("frozen_to", "frozen<address>", Regular, -1, false),
	}, options(func(o *TableParams) {
		o.Comment, o.GCGraceSeconds = "orders", 0
		o.Compaction = map[string]string{"class": LeveledClass, "sstable_size_in_mb": "160"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := NewTable("shop", "kv", mutation.TableID{2}, []*Column{
		col("k", "bigint", PartitionKey, 0, false), col("v", "blob", Regular, -1, false),
	}, options(func(o *TableParams) { o.DefaultTimeToLive = 60 }))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*Table{orders, kv} {
		ks.Tables[tb.Name] = tb
	}
	return ks
}

// options are the default table options as set changes them.
func options(set func(*TableParams)) TableParams {
	o := DefaultTableParams()
	set(&o)
	return o
}

func writeKeyspace(t *testing.T, s *store, ks *Keyspace, w *CellWriter) {
	t.Helper()
	m, err := KeyspaceMutation(ks, w)
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, m)
	for _, typ := range ks.Types {
		m, err := TypeMutation(typ, w)
		if err != nil {
			t.Fatal(err)
		}
		s.apply(t, m)
	}
	for _, tb := range ks.Tables {
		ms, err := TableMutations(tb, w)
		if err != nil {
			t.Fatal(err)
		}
		s.apply(t, ms...)
	}
}

func load(t *testing.T, s *store) *Schema {
	t.Helper()
	user, err := Load(func(def *Table) ([]map[string]Cell, error) { return s.rows(def, 1000) },
		func(what, option string, err error) { t.Errorf("%s %s: %v", what, option, err) })
	if err != nil {
		t.Fatal(err)
	}
	return New(user)
}

func describe(ks *Keyspace) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %v %s\n", ks.Name, ks.DurableWrites, sortedMap(ks.Replication.Map()))
	names := make([]string, 0, len(ks.Tables))
	for n := range ks.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tb := ks.Tables[n]
		fmt.Fprintf(&b, "%s %x %+v\n", n, tb.ID, tb.Options)
		for _, c := range tb.Columns {
			fmt.Fprintf(&b, "  %s %s %s %d %v\n", c.Name, c.Type.SchemaString(), c.Kind, c.Position, c.Descending)
		}
	}
	for n, typ := range ks.Types {
		fmt.Fprintf(&b, "type %s %s %v\n", n, typ.SchemaString(), typ.FieldNames)
	}
	return b.String()
}

// TestSchemaSurvivesItsRows writes a keyspace's definition as system_schema
// rows, loads it back from them, and gets the same keyspace and version.
func TestSchemaSurvivesItsRows(t *testing.T) {
	ks := sample(t)
	s := newStore()
	writeKeyspace(t, s, ks, writer(10))
	got := load(t, s)
	want := New(map[string]*Keyspace{"shop": ks})
	if g, w := describe(got.Keyspace("shop")), describe(ks); g != w {
		t.Fatalf("loaded keyspace differs:\n%s\nwant:\n%s", g, w)
	}
	if got.Version() != want.Version() {
		t.Fatalf("version %x after the round trip, want %x", got.Version(), want.Version())
	}
	if New(nil).Version() == want.Version() {
		t.Fatalf("the version does not change with the schema")
	}
	// The system keyspaces are always there, for drivers.
	if _, err := got.Table("system_schema", "columns"); err != nil {
		t.Fatal(err)
	}
	if _, err := got.Table("system", "local"); err != nil {
		t.Fatal(err)
	}
}

// TestDropsRemoveRows drops a table, then the keyspace, through their
// mutations, and loads what is left.
func TestDropsRemoveRows(t *testing.T) {
	ks := sample(t)
	s := newStore()
	writeKeyspace(t, s, ks, writer(10))
	ms, err := DropTableMutations(ks.Tables["kv"], writer(20))
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, ms...)
	got := load(t, s)
	if _, err := got.Table("shop", "kv"); err == nil || err.Error() != "table kv does not exist" {
		t.Fatalf("dropped table: %v", err)
	}
	if _, err := got.Table("shop", "orders"); err != nil {
		t.Fatalf("the other table went too: %v", err)
	}
	s.apply(t, DropKeyspaceMutations("shop", writer(30))...)
	if got := load(t, s); got.Keyspace("shop") != nil {
		t.Fatalf("dropped keyspace still loads")
	}
	if _, err := load(t, s).Table("shop", "orders"); err == nil || err.Error() != "keyspace shop does not exist" {
		t.Fatalf("table of a dropped keyspace: %v", err)
	}
}

func TestSystemTableIDsAreCassandras(t *testing.T) {
	// Cassandra's id for system.local, from UUID.nameUUIDFromBytes("systemlocal").
	want := "7ad54392-bcdd-35a6-8417-4e047860b377"
	id := SystemTableID("system", "local")
	got := fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])
	if got != want {
		t.Fatalf("system.local id %s, want %s", got, want)
	}
}

func set(elems ...string) []byte {
	b := make([][]byte, len(elems))
	for i, e := range elems {
		b[i] = []byte(e)
	}
	return cqltype.EncodeCollection(b)
}

func ints(vals ...int32) []byte {
	b := make([][]byte, len(vals))
	for i, v := range vals {
		b[i] = cqltype.EncodeInt(v)
	}
	return cqltype.EncodeCollection(b)
}

// TestRowsRoundTrip writes rows through InsertMutation and reads them back
// through RowCells: key columns, a static column, every multi-cell kind,
// a replaced collection, a null that deletes, and a TTL.
func TestRowsRoundTrip(t *testing.T) {
	ks := sample(t)
	orders := ks.Tables["orders"]
	s := newStore()
	day := cqltype.EncodeDate(19000)
	id := bytes.Repeat([]byte{7}, 16)
	key := map[string][]byte{"customer": []byte("ann"), "region": cqltype.EncodeInt(3), "day": day, "id": id}
	row := func(extra map[string][]byte) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range key {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	addr := cqltype.EncodeTuple([][]byte{[]byte("main st"), cqltype.EncodeInt(12345)})
	first, err := orders.InsertMutation(row(map[string][]byte{
		"note":    []byte("vip"),
		"total":   cqltype.EncodeDecimal(bigInt(1999), 2),
		"tags":    set("b", "a"),
		"items":   cqltype.EncodeMap([][]byte{[]byte("pen")}, [][]byte{cqltype.EncodeInt(2)}),
		"history": ints(5, 6),
		"ship_to": addr,
	}), writer(100))
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, first)
	// A later insert replaces the set and deletes the total with a null.
	second, err := orders.InsertMutation(row(map[string][]byte{"tags": set("c"), "total": nil}), writer(200))
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, second)
	rows, err := s.rows(orders, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	want := map[string][]byte{
		"customer": []byte("ann"), "region": cqltype.EncodeInt(3), "day": day, "id": id,
		"note": []byte("vip"), "tags": set("c"),
		"items":   cqltype.EncodeMap([][]byte{[]byte("pen")}, [][]byte{cqltype.EncodeInt(2)}),
		"history": ints(5, 6), "ship_to": addr,
	}
	for name, v := range want {
		if !bytes.Equal(r[name].Value, v) {
			t.Errorf("%s = %x, want %x", name, r[name].Value, v)
		}
	}
	if _, ok := r["total"]; ok {
		t.Errorf("total should be deleted by the null, got %x", r["total"].Value)
	}
	if r["note"].Timestamp != 100 {
		t.Errorf("note's write time %d, want 100", r["note"].Timestamp)
	}

	kv := ks.Tables["kv"]
	w := writer(300)
	w.TTL = 5
	m, err := kv.InsertMutation(map[string][]byte{"k": cqltype.EncodeBigint(1), "v": []byte{0xca, 0xfe}}, w)
	if err != nil {
		t.Fatal(err)
	}
	s.apply(t, m)
	if rows, _ := s.rows(kv, 1004); len(rows) != 1 || rows[0]["v"].TTL != 5 || rows[0]["v"].ExpiresAt != 1005 {
		t.Fatalf("before expiry: %+v", rows)
	}
	if rows, _ := s.rows(kv, 1005); len(rows) != 0 {
		t.Fatalf("after expiry the row (marker and cell) must be gone: %+v", rows)
	}
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }

func TestInsertNeedsTheKey(t *testing.T) {
	orders := sample(t).Tables["orders"]
	for _, c := range []struct {
		values map[string][]byte
		want   string
	}{
		{map[string][]byte{"region": cqltype.EncodeInt(1)}, "Some partition key parts are missing: customer"},
		{map[string][]byte{"customer": []byte("a"), "region": cqltype.EncodeInt(1)}, "Some clustering keys are missing: day, id"},
		{map[string][]byte{"customer": []byte("a"), "region": cqltype.EncodeInt(1), "day": cqltype.EncodeDate(1), "id": make([]byte, 16), "nope": {1}},
			"Undefined column name nope in table shop.orders"},
	} {
		if _, err := orders.InsertMutation(c.values, writer(1)); err == nil || err.Error() != c.want {
			t.Errorf("InsertMutation(%v) = %v, want %q", c.values, err, c.want)
		}
	}
}

func TestDefinitionsAreChecked(t *testing.T) {
	text := func(name string, kind ColumnKind, pos int) *Column {
		return &Column{Name: name, Type: cqltype.TextType, Kind: kind, Position: pos}
	}
	for _, c := range []struct {
		cols []*Column
		want string
	}{
		{[]*Column{text("v", Regular, -1)}, "No PRIMARY KEY specifed (exactly one required)"},
		{[]*Column{text("k", PartitionKey, 0), text("k", Regular, -1)}, "Multiple definition of identifier k"},
		{[]*Column{text("k", PartitionKey, 0), text("s", Static, -1)},
			"Static columns are only useful (and thus allowed) if the table has at least one clustering column"},
		{[]*Column{{Name: "k", Type: cqltype.SetOf(cqltype.IntType, false), Kind: PartitionKey}},
			"Invalid non-frozen collection type for PRIMARY KEY component k"},
	} {
		if _, err := NewTable("ks", "t", mutation.TableID{}, c.cols, DefaultTableParams()); err == nil || err.Error() != c.want {
			t.Errorf("NewTable = %v, want %q", err, c.want)
		}
	}
}

// TestChanges lists what a schema change changed, in the order clients
// hear of it: a new keyspace before its types and tables, a dropped one
// after them; an altered table or keyspace as UPDATED; nothing for an
// unchanged schema or for the system keyspaces.
func TestChanges(t *testing.T) {
	shop := sample(t)
	empty, full := New(nil), New(map[string]*Keyspace{"shop": shop})
	show := func(cs []Change) string {
		var parts []string
		for _, c := range cs {
			parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", c.Change, c.Target, c.Keyspace, c.Name)))
		}
		return strings.Join(parts, "; ")
	}
	for _, c := range []struct {
		what     string
		old, cur *Schema
		want     string
	}{
		{"a keyspace created", empty, full, "CREATED KEYSPACE shop; CREATED TYPE shop address; CREATED TABLE shop kv; CREATED TABLE shop orders"},
		{"a keyspace dropped", full, empty, "DROPPED TYPE shop address; DROPPED TABLE shop kv; DROPPED TABLE shop orders; DROPPED KEYSPACE shop"},
		{"nothing", full, New(map[string]*Keyspace{"shop": sample(t)}), ""},
	} {
		if got := show(Changes(c.old, c.cur)); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
	altered := sample(t)
	altered.Replication = Replication{Class: SimpleStrategy, Factor: 1}
	kv := *altered.Tables["kv"]
	kv.Options.Comment = "changed"
	altered.Tables["kv"] = &kv
	delete(altered.Tables, "orders")
	if got, want := show(Changes(full, New(map[string]*Keyspace{"shop": altered}))), "UPDATED KEYSPACE shop; UPDATED TABLE shop kv; DROPPED TABLE shop orders"; got != want {
		t.Errorf("altered: %q, want %q", got, want)
	}
}
