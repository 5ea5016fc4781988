package cql

import (
	"errors"
	"testing"

	"github.com/sibyldb/sibyl/cqltype"
)

func intConst(s string) *Constant { return &Constant{Kind: IntegerConstant, Text: s} }
func strConst(s string) *Constant { return &Constant{Kind: StringConstant, Text: s} }

func TestSelectTree(t *testing.T) {
	s := mustParse[*Select](t, `SELECT JSON DISTINCT k AS "K", count(*), WRITETIME(v), CAST(v AS int), ks.f(a, 1), u.f, token(k)
		FROM ks.t WHERE k = ? AND (c1, c2) > (1, :x) AND m['a'] = 2 AND token(k) <= 5 AND l CONTAINS KEY ? AND v IN (1, 2) AND w IN ? AND z IS NOT NULL
		GROUP BY k ORDER BY c1 DESC, c2 PER PARTITION LIMIT 2 LIMIT ? ALLOW FILTERING`)
	assertEqual(t, "flags", []bool{s.JSON, s.Distinct, s.AllowFiltering}, []bool{true, true, true})
	assertEqual(t, "table", s.Table, QualifiedName{Keyspace: "ks", Name: "t"})
	assertEqual(t, "selectors", s.Selectors, []Selector{
		{Expr: &ColumnRef{Name: "k"}, Alias: "K"},
		{Expr: &CountRows{}},
		{Expr: &WritetimeOrTTL{Kind: Writetime, Column: "v"}},
		{Expr: &Cast{Value: &ColumnRef{Name: "v"}, To: cqltype.Int}},
		{Expr: &FunctionCall{Name: QualifiedName{Keyspace: "ks", Name: "f"}, Args: []Expr{&ColumnRef{Name: "a"}, intConst("1")}}},
		{Expr: &FieldSelection{Value: &ColumnRef{Name: "u"}, Field: "f"}},
		{Expr: &FunctionCall{Name: QualifiedName{Name: "token"}, Args: []Expr{&ColumnRef{Name: "k"}}}},
	})
	assertEqual(t, "where", s.Where, []Relation{
		{Kind: ColumnRelation, Columns: []string{"k"}, Op: OpEq, Value: &BindMarker{Index: 0}},
		{Kind: MultiColumnRelation, Columns: []string{"c1", "c2"}, Op: OpGt,
			Value: &TupleLiteral{Elements: []Expr{intConst("1"), &BindMarker{Name: "x", Index: 1}}}},
		{Kind: ElementRelation, Columns: []string{"m"}, Key: strConst("a"), Op: OpEq, Value: intConst("2")},
		{Kind: TokenRelation, Columns: []string{"k"}, Op: OpLte, Value: intConst("5")},
		{Kind: ColumnRelation, Columns: []string{"l"}, Op: OpContainsKey, Value: &BindMarker{Index: 2}},
		{Kind: ColumnRelation, Columns: []string{"v"}, Op: OpIn, Values: []Expr{intConst("1"), intConst("2")}},
		{Kind: ColumnRelation, Columns: []string{"w"}, Op: OpIn, Value: &BindMarker{Index: 3}},
		{Kind: ColumnRelation, Columns: []string{"z"}, Op: OpIsNotNull},
	})
	assertEqual(t, "group by", s.GroupBy, []Expr{&ColumnRef{Name: "k"}})
	assertEqual(t, "order by", s.OrderBy, []Ordering{{Column: "c1", Descending: true}, {Column: "c2"}})
	assertEqual(t, "per partition limit", s.PerPartitionLimit, intConst("2"))
	assertEqual(t, "limit", s.Limit, &BindMarker{Index: 4})
}

func TestSelectStar(t *testing.T) {
	s := mustParse[*Select](t, "SELECT * FROM t")
	if s.Selectors != nil || s.Where != nil || s.Limit != nil || s.JSON || s.Distinct {
		t.Fatalf("SELECT * tree: %#v", s)
	}
}

func TestInsertTree(t *testing.T) {
	s := mustParse[*Insert](t, `INSERT INTO "Ks".t (k, "V", l, m, u, tup, h) VALUES (-1, 'x', [1.5, NaN], {'a': 0xff}, {f: true}, (1h, P1D), (int)?) IF NOT EXISTS USING TTL 3 AND TIMESTAMP :ts`)
	assertEqual(t, "table", s.Table, QualifiedName{Keyspace: "Ks", Name: "t"})
	assertEqual(t, "columns", s.Columns, []string{"k", "V", "l", "m", "u", "tup", "h"})
	assertEqual(t, "values", s.Values, []Expr{
		intConst("-1"),
		strConst("x"),
		&ListLiteral{Elements: []Expr{&Constant{Kind: FloatConstant, Text: "1.5"}, &Constant{Kind: FloatConstant, Text: "NaN"}}},
		&MapLiteral{Entries: []MapEntry{{Key: strConst("a"), Value: &Constant{Kind: HexConstant, Text: "0xff"}}}},
		&UDTLiteral{Fields: []UDTField{{Name: "f", Value: &Constant{Kind: BooleanConstant, Text: "true"}}}},
		&TupleLiteral{Elements: []Expr{&Constant{Kind: DurationConstant, Text: "1h"}, &Constant{Kind: DurationConstant, Text: "P1D"}}},
		&TypeHint{Type: &TypeRef{Kind: cqltype.Int}, Value: &BindMarker{Index: 0}},
	})
	if !s.IfNotExists || s.JSON != nil || s.DefaultUnset {
		t.Errorf("flags: %#v", s)
	}
	assertEqual(t, "using", s.Using, Using{TTL: intConst("3"), Timestamp: &BindMarker{Name: "ts", Index: 1}})

	j := mustParse[*Insert](t, "INSERT INTO t JSON ? DEFAULT UNSET")
	assertEqual(t, "json", j.JSON, &BindMarker{Index: 0})
	if !j.DefaultUnset || j.Columns != nil {
		t.Errorf("json insert: %#v", j)
	}
}

func TestUpdateTree(t *testing.T) {
	s := mustParse[*Update](t, "UPDATE t USING TIMESTAMP 7 SET a = 1, b = b + ?, c = c - {1}, d = [0] + d, e[2] = 'x', f.g = 3, h += 1, i -= 2, j = j -4 WHERE k = 0 IF a = 1 AND e[2] IN (1) AND f.g > 0")
	assertEqual(t, "using", s.Using, Using{Timestamp: intConst("7")})
	assertEqual(t, "assignments", s.Assignments, []Assignment{
		{Column: "a", Kind: AssignValue, Value: intConst("1")},
		{Column: "b", Kind: AssignAdd, Value: &BindMarker{Index: 0}},
		{Column: "c", Kind: AssignSubtract, Value: &SetLiteral{Elements: []Expr{intConst("1")}}},
		{Column: "d", Kind: AssignPrepend, Value: &ListLiteral{Elements: []Expr{intConst("0")}}},
		{Column: "e", Kind: AssignElement, Key: intConst("2"), Value: strConst("x")},
		{Column: "f", Kind: AssignField, Field: "g", Value: intConst("3")},
		{Column: "h", Kind: AssignAdd, Value: intConst("1")},
		{Column: "i", Kind: AssignSubtract, Value: intConst("2")},
		{Column: "j", Kind: AssignAdd, Value: intConst("-4")},
	})
	assertEqual(t, "conditions", s.Conditions, []Condition{
		{Column: "a", Op: OpEq, Value: intConst("1")},
		{Column: "e", Key: intConst("2"), Op: OpIn, Values: []Expr{intConst("1")}},
		{Column: "f", Field: "g", Op: OpGt, Value: intConst("0")},
	})
	if s.IfExists {
		t.Error("IfExists set")
	}
	if u := mustParse[*Update](t, "UPDATE t SET a = 1 WHERE k = 0 IF EXISTS"); !u.IfExists || u.Conditions != nil {
		t.Errorf("IF EXISTS: %#v", u)
	}
}

func TestDeleteTree(t *testing.T) {
	s := mustParse[*Delete](t, "DELETE a, b[?], c.d FROM t USING TIMESTAMP ? WHERE k = ? IF EXISTS")
	assertEqual(t, "columns", s.Columns, []DeleteSelector{
		{Column: "a"}, {Column: "b", Key: &BindMarker{Index: 0}}, {Column: "c", Field: "d"},
	})
	assertEqual(t, "using", s.Using, Using{Timestamp: &BindMarker{Index: 1}})
	assertEqual(t, "where", s.Where[0].Value, &BindMarker{Index: 2})
	if !s.IfExists {
		t.Error("IfExists not set")
	}
}

func TestBatchTree(t *testing.T) {
	s := mustParse[*Batch](t, "BEGIN UNLOGGED BATCH USING TIMESTAMP ? INSERT INTO t (k) VALUES (?); UPDATE t SET v = ? WHERE k = ?; DELETE FROM t WHERE k = ? APPLY BATCH")
	if s.Kind != UnloggedBatch || len(s.Statements) != 3 {
		t.Fatalf("batch: %#v", s)
	}
	// Markers count across the whole batch, in text order.
	assertEqual(t, "using", s.Using.Timestamp, &BindMarker{Index: 0})
	assertEqual(t, "insert", s.Statements[0].(*Insert).Values[0], &BindMarker{Index: 1})
	assertEqual(t, "update", s.Statements[1].(*Update).Where[0].Value, &BindMarker{Index: 3})
	assertEqual(t, "delete", s.Statements[2].(*Delete).Where[0].Value, &BindMarker{Index: 4})
	if b := mustParse[*Batch](t, "BEGIN COUNTER BATCH APPLY BATCH"); b.Kind != CounterBatch {
		t.Errorf("counter batch kind %d", b.Kind)
	}
}

func TestCreateTableTree(t *testing.T) {
	s := mustParse[*CreateTable](t, `CREATE TABLE IF NOT EXISTS ks.t (a int, b text, "C" frozen<map<text, frozen<list<int>>>> STATIC, d ks.addr, e tuple<int, blob>, PRIMARY KEY ((a, b), "C")) WITH CLUSTERING ORDER BY ("C" DESC) AND comment = 'c' AND compaction = {'class': 'X', 'n': 4}`)
	assertEqual(t, "name", s.Name, QualifiedName{Keyspace: "ks", Name: "t"})
	if !s.IfNotExists {
		t.Error("IfNotExists not set")
	}
	assertEqual(t, "columns", s.Columns, []ColumnDef{
		{Name: "a", Type: &TypeRef{Kind: cqltype.Int}},
		{Name: "b", Type: &TypeRef{Kind: cqltype.Text}},
		{Name: "C", Static: true, Type: &TypeRef{Kind: cqltype.Map, Frozen: true, Params: []*TypeRef{
			{Kind: cqltype.Text},
			{Kind: cqltype.List, Frozen: true, Params: []*TypeRef{{Kind: cqltype.Int}}},
		}}},
		{Name: "d", Type: &TypeRef{Kind: cqltype.UDT, Keyspace: "ks", Name: "addr"}},
		{Name: "e", Type: &TypeRef{Kind: cqltype.Tuple, Params: []*TypeRef{{Kind: cqltype.Int}, {Kind: cqltype.Blob}}}},
	})
	assertEqual(t, "primary key", s.PrimaryKey, PrimaryKey{PartitionKey: []string{"a", "b"}, Clustering: []string{"C"}})
	assertEqual(t, "clustering order", s.ClusteringOrder, []ClusteringOrder{{Column: "C", Descending: true}})
	assertEqual(t, "options", s.Options, []Option{
		{Name: "comment", Value: strConst("c")},
		{Name: "compaction", Value: &MapLiteral{Entries: []MapEntry{
			{Key: strConst("class"), Value: strConst("X")},
			{Key: strConst("n"), Value: intConst("4")},
		}}},
	})
	inline := mustParse[*CreateTable](t, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	assertEqual(t, "inline key", inline.PrimaryKey, PrimaryKey{PartitionKey: []string{"k"}})
	none := mustParse[*CreateTable](t, "CREATE TABLE t (k int)")
	if none.PrimaryKey.PartitionKey != nil {
		t.Errorf("no key: %#v", none.PrimaryKey)
	}
}

func TestAlterTableTree(t *testing.T) {
	add := mustParse[*AlterTable](t, "ALTER TABLE t ADD IF NOT EXISTS (a int static, b set<text>)")
	assertEqual(t, "add", *add, AlterTable{Name: QualifiedName{Name: "t"}, Action: AddColumns, IfColumnNotExists: true, Add: []ColumnDef{
		{Name: "a", Type: &TypeRef{Kind: cqltype.Int}, Static: true},
		{Name: "b", Type: &TypeRef{Kind: cqltype.Set, Params: []*TypeRef{{Kind: cqltype.Text}}}},
	}})
	drop := mustParse[*AlterTable](t, "ALTER TABLE IF EXISTS ks.t DROP IF EXISTS (a, b)")
	assertEqual(t, "drop", *drop, AlterTable{Name: QualifiedName{Keyspace: "ks", Name: "t"}, IfExists: true, Action: DropColumns, IfColumnExists: true, Drop: []string{"a", "b"}})
	ren := mustParse[*AlterTable](t, "ALTER TABLE t RENAME a TO b AND c TO d")
	assertEqual(t, "rename", ren.Rename, []ColumnRename{{From: "a", To: "b"}, {From: "c", To: "d"}})
	with := mustParse[*AlterTable](t, "ALTER TABLE t WITH default_time_to_live = 10")
	assertEqual(t, "with", *with, AlterTable{Name: QualifiedName{Name: "t"}, Action: SetOptions, Options: []Option{{Name: "default_time_to_live", Value: intConst("10")}}})
}

func TestKeyspaceAndTypeTrees(t *testing.T) {
	ks := mustParse[*CreateKeyspace](t, "CREATE KEYSPACE IF NOT EXISTS Ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3} AND durable_writes = false")
	assertEqual(t, "keyspace", *ks, CreateKeyspace{Name: "ks", IfNotExists: true, Options: []Option{
		{Name: "replication", Value: &MapLiteral{Entries: []MapEntry{
			{Key: strConst("class"), Value: strConst("SimpleStrategy")},
			{Key: strConst("replication_factor"), Value: intConst("3")},
		}}},
		{Name: "durable_writes", Value: &Constant{Kind: BooleanConstant, Text: "false"}},
	}})
	typ := mustParse[*CreateType](t, `CREATE TYPE ks."Addr" (street text, "Zip" int, tags frozen<set<text>>)`)
	assertEqual(t, "type", *typ, CreateType{Name: QualifiedName{Keyspace: "ks", Name: "Addr"}, Fields: []FieldDef{
		{Name: "street", Type: &TypeRef{Kind: cqltype.Text}},
		{Name: "Zip", Type: &TypeRef{Kind: cqltype.Int}},
		{Name: "tags", Type: &TypeRef{Kind: cqltype.Set, Frozen: true, Params: []*TypeRef{{Kind: cqltype.Text}}}},
	}})
	assertEqual(t, "drop type", *mustParse[*DropType](t, "DROP TYPE IF EXISTS addr"), DropType{Name: QualifiedName{Name: "addr"}, IfExists: true})
	assertEqual(t, "drop keyspace", *mustParse[*DropKeyspace](t, "DROP KEYSPACE ks"), DropKeyspace{Name: "ks"})
	assertEqual(t, "use", *mustParse[*Use](t, `USE "Ks"`), Use{Keyspace: "Ks"})
	assertEqual(t, "truncate", *mustParse[*Truncate](t, "TRUNCATE ks.t"), Truncate{Table: QualifiedName{Keyspace: "ks", Name: "t"}})
	assertEqual(t, "drop table", *mustParse[*DropTable](t, "DROP TABLE IF EXISTS t"), DropTable{Name: QualifiedName{Name: "t"}, IfExists: true})
	assertEqual(t, "alter keyspace", *mustParse[*AlterKeyspace](t, "ALTER KEYSPACE ks WITH durable_writes = true"),
		AlterKeyspace{Name: "ks", Options: []Option{{Name: "durable_writes", Value: &Constant{Kind: BooleanConstant, Text: "true"}}}})
}

func TestConstantKinds(t *testing.T) {
	s := mustParse[*Insert](t, "INSERT INTO t (a) VALUES ('s', 1, 1.0, true, 01234567-0123-0123-0123-0123456789ab, 0x01, 1d, -Infinity, $$x$$)")
	var kinds []ConstantKind
	for _, v := range s.Values {
		kinds = append(kinds, v.(*Constant).Kind)
	}
	assertEqual(t, "kinds", kinds, []ConstantKind{StringConstant, IntegerConstant, FloatConstant, BooleanConstant,
		UUIDConstant, HexConstant, DurationConstant, FloatConstant, StringConstant})
	if got := DurationConstant.String(); got != "duration" {
		t.Errorf("DurationConstant.String() = %q", got)
	}
}

func TestOperatorNames(t *testing.T) {
	var got []string
	for op := OpEq; op <= OpIsNotNull; op++ {
		got = append(got, op.String())
	}
	assertEqual(t, "operators", got, []string{"=", "<", "<=", ">", ">=", "!=", "IN", "CONTAINS", "CONTAINS KEY", "LIKE", "IS NOT NULL"})
}

func TestTypeRefResolve(t *testing.T) {
	addr := cqltype.UDTOf("ks", "addr", []string{"street"}, []*cqltype.Type{cqltype.TextType}, false)
	other := cqltype.UDTOf("other", "Point", []string{"x"}, []*cqltype.Type{cqltype.DoubleType}, false)
	errUnknown := errors.New("no such type")
	resolve := func(ks, name string) (*cqltype.Type, error) {
		switch {
		case ks == "ks" && name == "addr":
			return addr, nil
		case ks == "other" && name == "Point":
			return other, nil
		}
		return nil, errUnknown
	}
	typeOf := func(src string) *TypeRef {
		t.Helper()
		return mustParse[*CreateTable](t, "CREATE TABLE t (k int PRIMARY KEY, v "+src+")").Columns[1].Type
	}
	for _, c := range []struct{ src, want string }{
		{"int", "int"},
		{"varchar", "text"},
		{"list<frozen<map<int, text>>>", "list<frozen<map<int, text>>>"},
		{"tuple<int, list<int>>", "tuple<int, frozen<list<int>>>"},
		{"addr", "addr"},
		{"frozen<addr>", "frozen<addr>"},
		{`other."Point"`, `"Point"`},
		{`list<frozen<other."Point">>`, `list<frozen<"Point">>`},
		{"'org.apache.cassandra.db.marshal.Int32Type'", "int"},
	} {
		got, err := typeOf(c.src).Resolve("ks", resolve)
		if err != nil {
			t.Errorf("Resolve(%s): %v", c.src, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("Resolve(%s) = %s, want %s", c.src, got, c.want)
		}
	}
	if got, _ := typeOf(`other."Point"`).Resolve("ks", resolve); got.Keyspace != "other" {
		t.Errorf("qualified type resolved in keyspace %q", got.Keyspace)
	}
	for _, c := range []struct{ src, want string }{
		{"frozen<int>", `invalid type "frozen<int>": frozen<> is only allowed on collections, tuples, and user-defined types, not int`},
		{"list<list<int>>", `invalid type "list<list<int>>": non-frozen collections are not allowed inside collections: list<list<int>>`},
		{"set<addr>", `invalid type "set<addr>": non-frozen UDTs are not allowed inside collections: set<addr>`},
		{"map<duration, int>", `invalid type "map<duration, int>": durations are not allowed inside map keys: map<duration, int>`},
		{"nope", `invalid type "nope": no such type`},
	} {
		_, err := typeOf(c.src).Resolve("ks", resolve)
		if err == nil || err.Error() != c.want {
			t.Errorf("Resolve(%s) error:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
	if _, err := typeOf("nope").Resolve("ks", resolve); !errors.Is(err, errUnknown) {
		t.Errorf("resolver error not wrapped: %v", err)
	}
	if _, err := typeOf("addr").Resolve("ks", nil); err == nil || err.Error() != `invalid type "addr": unknown type ks.addr` {
		t.Errorf("nil resolver: %v", err)
	}
}

func TestBindMarkers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // names, "" for ?
	}{
		{"SELECT * FROM t", nil},
		{"SELECT f(?), {a: :x} FROM t WHERE k IN ? AND (a, b) IN ((?, 1), :y) AND m[:k] = ? GROUP BY g(?) PER PARTITION LIMIT ? LIMIT :lim",
			[]string{"", "x", "", "", "y", "k", "", "", "", "lim"}},
		{"INSERT INTO t (a, b) VALUES (?, [(int)?, {1: :m}]) USING TTL ? AND TIMESTAMP :ts", []string{"", "", "m", "", "ts"}},
		{"INSERT INTO t JSON :doc", []string{"doc"}},
		{"UPDATE t USING TTL ? SET l[?] = ?, u.f = CAST(? AS int) WHERE k = ? IF c[?] IN (?) AND d IN :d",
			[]string{"", "", "", "", "", "", "", "d"}},
		{"DELETE l[?] FROM t USING TIMESTAMP ? WHERE k = ? IF v = ?", []string{"", "", "", ""}},
		{"BEGIN BATCH USING TIMESTAMP ? INSERT INTO t (k) VALUES (:a); DELETE FROM t WHERE k = ? APPLY BATCH", []string{"", "a", ""}},
		{"CREATE TABLE t (k int PRIMARY KEY) WITH comment = 'x'", nil},
	} {
		st, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		var got []string
		for i, m := range BindMarkers(st) {
			if m.Index != i {
				t.Errorf("%q: marker %d has index %d", c.in, i, m.Index)
			}
			got = append(got, m.Name)
		}
		assertEqual(t, c.in, got, c.want)
	}
	var kinds []string
	WalkExprs(mustParse[*Select](t, "SELECT f([1, ?]) FROM t"), func(e Expr) { kinds = append(kinds, e.String()) })
	assertEqual(t, "walk order", kinds, []string{"f([1, ?])", "[1, ?]", "1", "?"})
}
