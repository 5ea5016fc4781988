package clients

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"
)

func mustExec(t *testing.T, s *gocql.Session, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

const createKeyspace = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

// TestEveryTypeRoundTrips writes a value of every CQL type through a
// prepared INSERT and reads it back through a prepared SELECT.
func TestEveryTypeRoundTrips(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace,
		"CREATE TYPE ks.address (street text, zip int)",
		`CREATE TABLE ks.types (k int PRIMARY KEY, a ascii, bi bigint, bl blob, bo boolean, d date, de decimal,
			do double, du duration, f float, i inet, s smallint, te text, ti time, ts timestamp, tu timeuuid,
			ty tinyint, u uuid, vc varchar, vi varint, l list<int>, st set<text>, m map<text, int>,
			fl frozen<list<bigint>>, tup tuple<int, text>, ad frozen<address>)`)
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	want := []any{
		"ascii", int64(-1 << 40), []byte{0, 1, 2}, true, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		inf.NewDec(31415, 4), 2.5, gocql.Duration{Months: 1, Days: 2, Nanoseconds: 3000}, float32(1.5),
		net.ParseIP("192.168.1.2").To4(), int16(-300), "text é", 13*time.Hour + 14*time.Minute, ts,
		gocql.TimeUUID(), int8(-7), gocql.MustRandomUUID(), "varchar", big.NewInt(0).Lsh(big.NewInt(1), 70),
		[]int{3, 1, 2}, []string{"a", "b"}, map[string]int{"x": 1, "y": 2}, []int64{9, 8},
		7, "seven", map[string]any{"street": "Main", "zip": 12345},
	}
	insert := `INSERT INTO ks.types (k, a, bi, bl, bo, d, de, do, du, f, i, s, te, ti, ts, tu, ty, u, vc, vi, l, st, m, fl, tup, ad)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (?, ?), ?)`
	if err := s.Query(insert, want...).Exec(); err != nil {
		t.Fatal(err)
	}
	got := []any{
		new(string), new(int64), new([]byte), new(bool), new(time.Time), new(*inf.Dec), new(float64),
		new(gocql.Duration), new(float32), new(net.IP), new(int16), new(string), new(time.Duration),
		new(time.Time), new(gocql.UUID), new(int8), new(gocql.UUID), new(string), new(*big.Int),
		new([]int), new([]string), new(map[string]int), new([]int64), new(int), new(string), new(map[string]any),
	}
	q := `SELECT a, bi, bl, bo, d, de, do, du, f, i, s, te, ti, ts, tu, ty, u, vc, vi, l, st, m, fl, tup, ad FROM ks.types WHERE k = ?`
	if err := s.Query(q, 1).Scan(got...); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		g := reflect.ValueOf(got[i]).Elem().Interface()
		w := want[i]
		switch w := w.(type) {
		case *inf.Dec:
			if g.(*inf.Dec).Cmp(w) != 0 {
				t.Errorf("decimal: %v, want %v", g, w)
			}
			continue
		case *big.Int:
			if g.(*big.Int).Cmp(w) != 0 {
				t.Errorf("varint: %v, want %v", g, w)
			}
			continue
		case time.Time:
			if !g.(time.Time).Equal(w) {
				t.Errorf("value %d: %v, want %v", i, g, w)
			}
			continue
		case []int:
			if fmt.Sprint(g) != "[3 1 2]" {
				t.Errorf("list: %v", g)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("value %d: %#v, want %#v", i, g, w)
		}
	}
}

// TestPagingThroughTenThousandRows reads a partition of 10,000 rows and a
// scan of the table in pages of 1,000 through gocql's iterator.
func TestPagingThroughTenThousandRows(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.wide (k int, c int, v text, PRIMARY KEY (k, c))")
	b := s.NewBatch(gocql.UnloggedBatch)
	for c := 0; c < 10_000; c++ {
		b.Query("INSERT INTO ks.wide (k, c, v) VALUES (?, ?, ?)", c%2, c, fmt.Sprint(c))
		if b.Size() == 500 {
			if err := s.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			b = s.NewBatch(gocql.UnloggedBatch)
		}
	}
	for _, q := range []struct {
		text string
		args []any
		rows int
	}{
		{"SELECT c, v FROM ks.wide WHERE k = ?", []any{1}, 5_000},
		{"SELECT c, v FROM ks.wide", nil, 10_000},
	} {
		it := s.Query(q.text, q.args...).PageSize(1000).Iter()
		seen := map[int]bool{}
		var c int
		var v string
		for it.Scan(&c, &v) {
			if seen[c] || v != fmt.Sprint(c) {
				t.Fatalf("%s: row %d %q seen twice or wrong", q.text, c, v)
			}
			seen[c] = true
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if len(seen) != q.rows {
			t.Errorf("%s: %d rows, want %d", q.text, len(seen), q.rows)
		}
	}
}

// TestWritesTimestampsAndTTL checks USING TTL and TIMESTAMP, gocql's
// client-side timestamps, and batches.
func TestWritesTimestampsAndTTL(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.kv (k int PRIMARY KEY, v text)")
	if err := s.Query("INSERT INTO ks.kv (k, v) VALUES (?, ?) USING TTL 1000 AND TIMESTAMP 12345", 1, "a").Exec(); err != nil {
		t.Fatal(err)
	}
	var ttl int
	var wt int64
	if err := s.Query("SELECT TTL(v), WRITETIME(v) FROM ks.kv WHERE k = ?", 1).Scan(&ttl, &wt); err != nil {
		t.Fatal(err)
	}
	if ttl < 990 || ttl > 1000 || wt != 12345 {
		t.Errorf("ttl %d writetime %d", ttl, wt)
	}
	// An older write loses to the newer one whatever the order.
	if err := s.Query("INSERT INTO ks.kv (k, v) VALUES (?, ?) USING TIMESTAMP 100", 1, "old").Exec(); err != nil {
		t.Fatal(err)
	}
	// gocql stamps writes with the client's clock.
	before := time.Now().UnixMicro()
	if err := s.Query("INSERT INTO ks.kv (k, v) VALUES (?, ?)", 2, "b").Exec(); err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("INSERT INTO ks.kv (k, v) VALUES (?, ?)", 3, "c")
	b.Query("UPDATE ks.kv SET v = ? WHERE k = ?", "b2", 2)
	b.Query("DELETE FROM ks.kv WHERE k = 9")
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	rows := map[int]string{}
	it := s.Query("SELECT k, v FROM ks.kv").Iter()
	var k int
	var v string
	for it.Scan(&k, &v) {
		rows[k] = v
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows) != "map[1:a 2:b2 3:c]" {
		t.Errorf("rows %v", rows)
	}
	if err := s.Query("SELECT WRITETIME(v) FROM ks.kv WHERE k = ?", 3).Scan(&wt); err != nil {
		t.Fatal(err)
	}
	if wt < before || wt > time.Now().UnixMicro() {
		t.Errorf("writetime %d is not the client's clock (%d..now)", wt, before)
	}
}

// TestErrorsReachGocqlTyped checks the error codes gocql maps to its
// types, and schema agreement after DDL.
func TestErrorsReachGocqlTyped(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.kv (k int PRIMARY KEY, v text)")
	if err := s.AwaitSchemaAgreement(context.Background()); err != nil {
		t.Fatalf("schema agreement: %v", err)
	}
	err := s.Query("CREATE TABLE ks.kv (k int PRIMARY KEY)").Exec()
	var exists *gocql.RequestErrAlreadyExists
	if !errors.As(err, &exists) || exists.Keyspace != "ks" || exists.Table != "kv" {
		t.Errorf("CREATE of an existing table: %#v", err)
	}
	for _, c := range []struct {
		q    string
		code int
	}{
		{"SELEC * FROM ks.kv", gocql.ErrCodeSyntax},
		{"SELECT * FROM ks.nope", gocql.ErrCodeInvalid},
		{"INSERT INTO ks.kv (k, v) VALUES ('x', 'y')", gocql.ErrCodeInvalid},
		{"CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 'x'}", gocql.ErrCodeConfig},
	} {
		err := s.Query(c.q).Exec()
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != c.code {
			t.Errorf("%s: %v, want code 0x%04x", c.q, err, c.code)
		}
	}
}

// TestProtocolVersion3 runs statements with gocql pinned to protocol
// version 3 (one-byte query flags, no unset values, collections as in v4).
func TestProtocolVersion3(t *testing.T) {
	_, cluster := startNode(t)
	cluster.ProtoVersion = 3
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.v3 (k int PRIMARY KEY, t text, l list<int>, m map<text, bigint>)")
	if err := s.Query("INSERT INTO ks.v3 (k, t, l, m) VALUES (?, ?, ?, ?)", 1, "three", []int{3, 2}, map[string]int64{"a": 1}).Exec(); err != nil {
		t.Fatal(err)
	}
	var text string
	var l []int
	var m map[string]int64
	if err := s.Query("SELECT t, l, m FROM ks.v3 WHERE k = ?", 1).Scan(&text, &l, &m); err != nil {
		t.Fatal(err)
	}
	if text != "three" || fmt.Sprint(l) != "[3 2]" || m["a"] != 1 {
		t.Fatalf("read %q %v %v", text, l, m)
	}
	// Version 3 has no warnings: an aggregation over the table is
	// answered without one.
	iter := s.Query("SELECT count(*) FROM ks.v3").Iter()
	var count int
	if !iter.Scan(&count) || count != 1 {
		t.Fatalf("count(*) read %d", count)
	}
	if w := iter.Warnings(); w != nil {
		t.Errorf("version 3 answered with warnings %q", w)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWarningsReachGocql checks that the server's warnings reach gocql
// with the rows, for simple and prepared statements alike.
func TestWarningsReachGocql(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.w (k int PRIMARY KEY, v int)",
		"INSERT INTO ks.w (k, v) VALUES (1, 10)", "INSERT INTO ks.w (k, v) VALUES (2, 20)")
	for _, c := range []struct {
		query string
		args  []any
		want  string
	}{
		{"SELECT sum(v) FROM ks.w", nil, "[Aggregation query used without partition key]"},
		{"SELECT sum(v) FROM ks.w WHERE k IN ?", []any{[]int{1, 2}}, "[Aggregation query used on multiple partition keys (IN restriction)]"},
		{"SELECT sum(v) FROM ks.w WHERE k = ?", []any{1}, "[]"},
		{"SELECT v FROM ks.w", nil, "[]"},
	} {
		iter := s.Query(c.query, c.args...).Iter()
		var sum int
		iter.Scan(&sum)
		got := fmt.Sprint(iter.Warnings())
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got != c.want {
			t.Errorf("%s warned %s, want %s", c.query, got, c.want)
		}
	}
}

// TestPreparedAfterSchemaChange prepares SELECT *, adds a column, and
// reads again: gocql, which decodes rows with the columns it prepared,
// is told to prepare again and sees the new column.
func TestPreparedAfterSchemaChange(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)",
		"INSERT INTO ks.t (k, v) VALUES (1, 'one')")
	read := func() map[string]any {
		row := map[string]any{}
		if err := s.Query("SELECT * FROM ks.t WHERE k = ?", 1).MapScan(row); err != nil {
			t.Fatal(err)
		}
		return row
	}
	if row := read(); len(row) != 2 || row["v"] != "one" {
		t.Fatalf("before: %v", row)
	}
	mustExec(t, s, "ALTER TABLE ks.t ADD w int", "UPDATE ks.t SET w = 7 WHERE k = 1")
	if row := read(); len(row) != 3 || row["v"] != "one" || row["w"] != 7 {
		t.Fatalf("after ADD: %v", row)
	}
}

// TestConsistencyLevels: one node is one replica, so a level needing more
// of an RF 3 keyspace is Unavailable, as Cassandra answers it, with the
// counts gocql reads; levels a statement cannot take are refused.
func TestConsistencyLevels(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, "CREATE KEYSPACE rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE rf3.t (k int PRIMARY KEY, v int)")
	if err := s.Query("INSERT INTO rf3.t (k, v) VALUES (1, 1)").Consistency(gocql.One).Exec(); err != nil {
		t.Fatalf("ONE: %v", err)
	}
	for _, c := range []struct {
		query string
		cl    gocql.Consistency
	}{{"INSERT INTO rf3.t (k, v) VALUES (2, 2)", gocql.Quorum}, {"SELECT v FROM rf3.t WHERE k = 1", gocql.All}, {"SELECT v FROM rf3.t", gocql.Two}} {
		err := s.Query(c.query).Consistency(c.cl).Exec()
		var u *gocql.RequestErrUnavailable
		if !errors.As(err, &u) || u.Consistency != c.cl || u.Alive != 1 || u.Required != map[gocql.Consistency]int{gocql.Quorum: 2, gocql.All: 3, gocql.Two: 2}[c.cl] ||
			u.Message() != "Cannot achieve consistency level "+c.cl.String() {
			t.Errorf("%s at %s: %v (%#v)", c.query, c.cl, err, u)
		}
	}
	var v int
	if err := s.Query("SELECT v FROM rf3.t WHERE k = 1").Consistency(gocql.LocalOne).Scan(&v); err != nil || v != 1 {
		t.Errorf("LOCAL_ONE read: %d, %v", v, err)
	}
	for _, c := range []struct {
		query, want string
		cl          gocql.Consistency
	}{
		{"SELECT v FROM rf3.t WHERE k = 1", "ANY ConsistencyLevel is only supported for writes", gocql.Any},
		{"INSERT INTO rf3.t (k, v) VALUES (3, 3)", "You must use conditional updates for serializable writes", gocql.Consistency(gocql.Serial)},
	} {
		err := s.Query(c.query).Consistency(c.cl).Exec()
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid || re.Message() != c.want {
			t.Errorf("%s at %s: %v", c.query, c.cl, err)
		}
	}
	// ANY writes are taken (this node is the replica that acknowledges).
	if err := s.Query("INSERT INTO rf3.t (k, v) VALUES (4, 4)").Consistency(gocql.Any).Exec(); err != nil {
		t.Errorf("ANY write: %v", err)
	}
}
