package cql

import (
	"errors"
	"testing"
)

// errorCase is input Parse must reject, with the whole expected error text.
type errorCase struct {
	in   string
	want string
}

var errorCases = []errorCase{
	// Statement starts.
	{"", "line 1:0 no viable alternative at input '<EOF>'"},
	{"   ", "line 1:3 no viable alternative at input '<EOF>'"},
	{"SELEC * FROM t", "line 1:0 no viable alternative at input 'SELEC'"},
	{"FROM t", "line 1:0 no viable alternative at input 'FROM'"},
	{"42", "line 1:0 no viable alternative at input '42'"},
	{"CREATE INDEXX i ON t (v)", "line 1:7 no viable alternative at input 'INDEXX'"},
	{"CREATE FUNCTION f (a int) RETURNS int LANGUAGE java AS 'x'", "line 1:34 mismatched input 'int' expecting K_NULL"},
	{"CREATE FUNCTION f () CALLED ON NULL INPUT RETURNS int LANGUAGE java AS x", "line 1:71 mismatched input 'x' expecting STRING_LITERAL"},
	{"CREATE AGGREGATE a (int) STYPE int", "line 1:25 mismatched input 'STYPE' expecting K_SFUNC"},
	{"CREATE MATERIALIZED VIEW v AS SELECT * FROM t", "line 1:45 mismatched input '<EOF>' expecting K_PRIMARY"},
	{"CREATE INDEX i t (v)", "line 1:15 mismatched input 't' expecting K_ON"},
	{"CREATE INDEX ON t (v) USING x", "line 1:28 mismatched input 'x' expecting STRING_LITERAL"},
	{"DROP t", "line 1:5 no viable alternative at input 't'"},
	{"ALTER TYPE t ADD f", "line 1:18 no viable alternative at input '<EOF>'"},
	{"ALTER TYPE t DROP f", "line 1:13 no viable alternative at input 'DROP'"},
	{"ALTER TYPE t RENAME f g", "line 1:22 mismatched input 'g' expecting K_TO"},

	// SELECT.
	{"SELECT m[] FROM t", "line 1:9 no viable alternative at input ']'"},
	{"SELECT m[..] FROM t", "line 1:11 no viable alternative at input ']'"},
	{"SELECT m['a' FROM t", "line 1:13 mismatched input 'FROM' expecting ']'"},
	{"SELECT * FRO t", "line 1:9 mismatched input 'FRO' expecting K_FROM"},
	{"SELECT FRO", "line 1:10 mismatched input '<EOF>' expecting K_FROM"},
	{"SELECT a b FROM t", "line 1:9 mismatched input 'b' expecting K_FROM"},
	{"SELECT * FROM", "line 1:13 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t foo", "line 1:16 missing EOF at 'foo'"},
	{"SELECT * FROM t WHERE", "line 1:21 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k", "line 1:23 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k = ", "line 1:26 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k == 1", "line 1:25 no viable alternative at input '='"},
	{"SELECT * FROM t WHERE k = 1 AND", "line 1:31 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k = 1 OR k = 2", "line 1:28 missing EOF at 'OR'"},
	{"SELECT * FROM t WHERE k = x", "line 1:26 no viable alternative at input 'x'"},
	{"SELECT * FROM t WHERE k IN 1", "line 1:27 no viable alternative at input '1'"},
	{"SELECT * FROM t WHERE k IN (1, 2", "line 1:32 mismatched input '<EOF>' expecting ')'"},
	{"SELECT * FROM t WHERE token(k) IN (1)", "line 1:31 no viable alternative at input 'IN'"},
	{"SELECT * FROM t WHERE (a, b) > 1", "line 1:31 no viable alternative at input '1'"},
	{"SELECT * FROM t WHERE (a, b) IN (1)", "line 1:33 no viable alternative at input '1'"},
	{"SELECT * FROM t WHERE v IS NULL", "line 1:27 mismatched input 'NULL' expecting K_NOT"},
	{"SELECT * FROM t LIMIT x", "line 1:22 no viable alternative at input 'x'"},
	{"SELECT * FROM t LIMIT 1.5", "line 1:22 no viable alternative at input '1.5'"},
	{"SELECT * FROM t PER LIMIT 1", "line 1:20 mismatched input 'LIMIT' expecting K_PARTITION"},
	{"SELECT * FROM t ORDER c", "line 1:22 mismatched input 'c' expecting K_BY"},
	{"SELECT * FROM t ALLOW", "line 1:21 mismatched input '<EOF>' expecting K_FILTERING"},
	{"SELECT * FROM t LIMIT 1 WHERE k = 1", "line 1:24 missing EOF at 'WHERE'"},
	{"SELECT count(*) AS FROM t", "line 1:19 no viable alternative at input 'FROM'"},
	{"SELECT CAST(a AS mytype) FROM t", "line 1:17 no viable alternative at input 'mytype'"},
	{"SELECT WRITETIME(f(a)) FROM t", "line 1:18 mismatched input '(' expecting ')'"},
	{"SELECT f(a FROM t", "line 1:11 mismatched input 'FROM' expecting ')'"},
	{"SELECT * FROM ?", "line 1:14 Bind variables cannot be used for table names"},
	{"SELECT * FROM ks.", "line 1:17 no viable alternative at input '<EOF>'"},
	{"SELECT select FROM t", "line 1:7 no viable alternative at input 'select'"},
	{"SELECT () FROM t", "line 1:8 no viable alternative at input ')'"},
	{"SELECT * FROM t WHERE k = 1\nAND c = \n  ORDER BY c", "line 3:2 no viable alternative at input 'ORDER'"},
	{"SELECT *\nFROM t\nWHERE k = 1 LIMIT 2 3", "line 3:20 missing EOF at '3'"},
	{"SELECT * FROM t; SELECT * FROM u", "line 1:17 missing EOF at 'SELECT'"},

	// Lexical errors.
	{"SELECT * FROM t WHERE k = 'abc", "line 1:30 mismatched character '<EOF>' expecting '''"},
	{`SELECT "abc FROM t`, "line 1:18 mismatched character '<EOF>' expecting '\"'"},
	{"SELECT * FROM t WHERE k = $$abc", "line 1:31 mismatched character '<EOF>' expecting '$'"},
	{"SELECT * /* unclosed", "line 1:20 mismatched character '<EOF>' expecting '*'"},
	{"SELECT * FROM t WHERE k = 1 @", "line 1:28 no viable alternative at character '@'"},
	{"SELECT * FROM t WHERE k ! 1", "line 1:25 mismatched character ' ' expecting '='"},
	{"SELECT * FROM t\nWHERE k = #", "line 2:10 no viable alternative at character '#'"},
	{"SELECT * FROM tëst", "line 1:15 no viable alternative at character 'ë'"},
	{"SELECT 'é' * FROM ë", "line 1:18 no viable alternative at character 'ë'"},
	{"SELECT * FROM t WHERE k = $a$", "line 1:26 no viable alternative at character '$'"},
	{"SELECT * FROM _t", "line 1:14 no viable alternative at character '_'"},
	{"SELECT * FROM t WHERE k = 1 \\", "line 1:28 no viable alternative at character '\\'"},

	// INSERT.
	{"INSERT INTO t VALUES (1)", "line 1:14 no viable alternative at input 'VALUES'"},
	{"INSERT t (k) VALUES (1)", "line 1:7 mismatched input 't' expecting K_INTO"},
	{"INSERT INTO t (k) VALUE (1)", "line 1:18 mismatched input 'VALUE' expecting K_VALUES"},
	{"INSERT INTO t (k) VALUES (1", "line 1:27 mismatched input '<EOF>' expecting ')'"},
	{"INSERT INTO t (k) VALUES ()", "line 1:26 no viable alternative at input ')'"},
	{"INSERT INTO t (k,) VALUES (1)", "line 1:17 no viable alternative at input ')'"},
	{"INSERT INTO t (k) VALUES (1) IF EXISTS", "line 1:32 mismatched input 'EXISTS' expecting K_NOT"},
	{"INSERT INTO t (k) VALUES (1) USING TTL", "line 1:38 no viable alternative at input '<EOF>'"},
	{"INSERT INTO t (k) VALUES (1) USING TTL 1 AND TTL 2", "line 1:45 Multiple definition for TTL in USING"},
	{"INSERT INTO t (k) VALUES (1) USING TTL 1 TIMESTAMP 2", "line 1:41 missing EOF at 'TIMESTAMP'"},
	{"INSERT INTO t (k) VALUES (1) USING FOO 1", "line 1:35 no viable alternative at input 'FOO'"},
	{"INSERT INTO t (k) VALUES ({a: 1, 'b': 2})", "line 1:33 no viable alternative at input 'b'"},
	{"INSERT INTO t (k) VALUES ({1: 2, 3})", "line 1:34 mismatched input '}' expecting ':'"},
	{"INSERT INTO t (k) VALUES ([1, 2)", "line 1:31 mismatched input ')' expecting ']'"},
	{"INSERT INTO t JSON 1", "line 1:19 no viable alternative at input '1'"},
	{"INSERT INTO t JSON '{}' DEFAULT 1", "line 1:32 no viable alternative at input '1'"},
	{"INSERT INTO t (k) VALUES ((int))", "line 1:27 no viable alternative at input 'int'"},

	// UPDATE.
	{"UPDATE t SET WHERE k = 1", "line 1:13 no viable alternative at input 'WHERE'"},
	{"UPDATE t SET v = 1", "line 1:18 mismatched input '<EOF>' expecting K_WHERE"},
	{"UPDATE t SET v = 1 WHERE", "line 1:24 no viable alternative at input '<EOF>'"},
	{"UPDATE t SET v = w + 1 WHERE k = 1", "line 1:17 Only expressions of the form X = X + <value> are supported."},
	{"UPDATE t SET v = w - 1 WHERE k = 1", "line 1:17 Only expressions of the form X = X - <value> are supported."},
	{"UPDATE t SET v = [1] + w WHERE k = 1", "line 1:23 Only expressions of the form X = <value> + X are supported."},
	{"UPDATE t SET v = v WHERE k = 1", "line 1:19 no viable alternative at input 'WHERE'"},
	{"UPDATE t SET v = v * 2 WHERE k = 1", "line 1:19 no viable alternative at input '*'"},
	{"UPDATE t SET v[1] 2 WHERE k = 1", "line 1:18 mismatched input '2' expecting '='"},
	{"UPDATE t SET v = 1 WHERE k = 1 IF", "line 1:33 no viable alternative at input '<EOF>'"},
	{"UPDATE t SET v = 1 WHERE k = 1 IF v LIKE 'a'", "line 1:36 no viable alternative at input 'LIKE'"},
	{"UPDATE t USING TTL 1 USING TTL 2 SET v = 1 WHERE k = 1", "line 1:21 mismatched input 'USING' expecting K_SET"},

	// DELETE.
	{"DELETE FROM t", "line 1:13 mismatched input '<EOF>' expecting K_WHERE"},
	{"DELETE FROM t USING TTL 5 WHERE k = 1", "line 1:20 mismatched input 'TTL' expecting K_TIMESTAMP"},
	{"DELETE a b FROM t WHERE k = 1", "line 1:9 mismatched input 'b' expecting K_FROM"},
	{"DELETE a[1 FROM t WHERE k = 1", "line 1:11 mismatched input 'FROM' expecting ']'"},

	// BATCH.
	{"BEGIN BATCH SELECT * FROM t; APPLY BATCH", "line 1:12 mismatched input 'SELECT' expecting K_APPLY"},
	{"BEGIN BATCH INSERT INTO t (k) VALUES (1);", "line 1:41 mismatched input '<EOF>' expecting K_APPLY"},
	{"BEGIN LOGGED BATCH APPLY BATCH", "line 1:6 mismatched input 'LOGGED' expecting K_BATCH"},
	{"BEGIN BATCH APPLY", "line 1:17 mismatched input '<EOF>' expecting K_BATCH"},
	{"BEGIN BATCH BEGIN BATCH APPLY BATCH APPLY BATCH", "line 1:12 mismatched input 'BEGIN' expecting K_APPLY"},

	// DDL.
	{"CREATE KEYSPACE ks", "line 1:18 mismatched input '<EOF>' expecting K_WITH"},
	{"CREATE KEYSPACE ks WITH", "line 1:23 no viable alternative at input '<EOF>'"},
	{"CREATE KEYSPACE ks WITH replication = {'class': 'S'} AND replication = {}", "line 1:57 Multiple definition for property 'replication'"},
	{"CREATE KEYSPACE ks WITH replication = {'class': f()}", "line 1:48 no viable alternative at input 'f'"},
	{"CREATE KEYSPACE ks WITH durable_writes = ?", "line 1:41 no viable alternative at input '?'"},
	{"CREATE KEYSPACE IF EXISTS ks WITH a = 1", "line 1:19 mismatched input 'EXISTS' expecting K_NOT"},
	{"CREATE KEYSPACE keyspace WITH a = 1", "line 1:16 no viable alternative at input 'keyspace'"},
	{"CREATE TABLE t k int PRIMARY KEY", "line 1:15 mismatched input 'k' expecting '('"},
	{"CREATE TABLE t (k int PRIMARY KEY, v int PRIMARY KEY)", "line 1:41 Multiple PRIMARY KEYs specified (exactly one required)"},
	{"CREATE TABLE t (k int PRIMARY KEY, PRIMARY KEY (k))", "line 1:35 Multiple PRIMARY KEYs specified (exactly one required)"},
	{"CREATE TABLE t (k int, PRIMARY KEY ())", "line 1:36 no viable alternative at input ')'"},
	{"CREATE TABLE t (k int, PRIMARY (k))", "line 1:31 mismatched input '(' expecting K_KEY"},
	{"CREATE TABLE t (k PRIMARY KEY)", "line 1:18 no viable alternative at input 'PRIMARY'"},
	{"CREATE TABLE t (k int PRIMARY KEY) WITH COMPACT STORAGE", "line 1:40 Compact tables are not allowed in Cassandra starting with 4.0 version."},
	{"CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c)", "line 1:77 no viable alternative at input ')'"},
	{"CREATE TABLE t (k int PRIMARY KEY) WITH", "line 1:39 no viable alternative at input '<EOF>'"},
	{"CREATE TABLE t (k list<int PRIMARY KEY)", "line 1:27 mismatched input 'PRIMARY' expecting '>'"},
	{"CREATE TABLE t (k map<int> PRIMARY KEY)", "line 1:25 mismatched input '>' expecting ','"},
	{"CREATE TABLE t (k set PRIMARY KEY)", "line 1:18 no viable alternative at input 'set'"},
	{"CREATE TABLE t (k frozen<> PRIMARY KEY)", "line 1:25 no viable alternative at input '>'"},
	{"CREATE TABLE t (k int PRIMARY KEY) WITH a = 1 AND a = 2", "line 1:50 Multiple definition for property 'a'"},
	{"CREATE TABLE t (k int PRIMARY KEY,,)", "line 1:34 no viable alternative at input ','"},
	{"ALTER TABLE t ALTER v TYPE int", "line 1:14 no viable alternative at input 'ALTER'"},
	{"ALTER TABLE t ADD", "line 1:17 no viable alternative at input '<EOF>'"},
	{"ALTER TABLE t ADD (a int, b)", "line 1:27 no viable alternative at input ')'"},
	{"ALTER TABLE t DROP (a b)", "line 1:22 mismatched input 'b' expecting ')'"},
	{"ALTER TABLE t RENAME a b", "line 1:23 mismatched input 'b' expecting K_TO"},
	{"DROP TABLE IF t", "line 1:14 mismatched input 't' expecting K_EXISTS"},
	{"DROP KEYSPACE", "line 1:13 no viable alternative at input '<EOF>'"},
	{"CREATE TYPE int (a int)", "line 1:12 Invalid (reserved) user type name int"},
	{"CREATE TYPE t ()", "line 1:15 no viable alternative at input ')'"},
	{"CREATE TYPE t (a)", "line 1:16 no viable alternative at input ')'"},
	{"DROP TYPE ks.text", "line 1:13 Invalid (reserved) user type name text"},
	{"USE", "line 1:3 no viable alternative at input '<EOF>'"},
	{"USE ks ks", "line 1:7 missing EOF at 'ks'"},
	{"USE :ks", "line 1:4 Bind variables cannot be used for names"},
	{"TRUNCATE", "line 1:8 no viable alternative at input '<EOF>'"},
	{"CREATE ROLE ?", "line 1:12 Bind variables cannot be used for role names"},
	{`CREATE USER "bob"`, "line 1:12 Quoted strings are are not supported for user names and USER is deprecated, please use ROLE"},
	{"CREATE ROLE r WITH LOGIN = true AND LOGIN = false", "line 1:36 Multiple definition for property 'LOGIN'"},
	{"CREATE ROLE r WITH PASSWORD = 'a' AND HASHED PASSWORD = 'b'", "line 1:59 Options 'password' and 'hashed password' are mutually exclusive"},
	{"ALTER ROLE r", "line 1:12 no viable alternative at input '<EOF>'"},
	{"GRANT SELECT ON KEYSPACE ks", "line 1:27 mismatched input '<EOF>' expecting K_TO"},
	{"LIST SELECT, ON ks.t", "line 1:13 no viable alternative at input 'ON'"},
}

func TestParseErrors(t *testing.T) {
	for _, c := range errorCases {
		st, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want error %s", c.in, st, c.want)
			continue
		}
		checkSyntaxError(t, c.in, err)
		if err.Error() != c.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", c.in, err, c.want)
		}
	}
}

func TestSyntaxErrorFields(t *testing.T) {
	_, err := Parse("SELECT *\n  FROM t\n  WHERE k = = 1")
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SyntaxError", err)
	}
	want := SyntaxError{Line: 3, Column: 12, Message: "no viable alternative at input '='"}
	if *se != want {
		t.Fatalf("got %#v, want %#v", *se, want)
	}
	if se.Error() != "line 3:12 no viable alternative at input '='" {
		t.Fatalf("Error() = %q", se.Error())
	}
}

// scriptCase is a script for ParseAll and the renderings of its statements.
type scriptCase struct {
	in   string
	want []string
}

var scriptCases = []scriptCase{
	{"", nil},
	{" ; ;; -- nothing\n", nil},
	{"USE ks; SELECT * FROM t", []string{"USE ks", "SELECT * FROM t"}},
	{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n" +
		"USE ks;\n" +
		"CREATE TABLE t (k int PRIMARY KEY, v text);\n" +
		"-- a comment between statements\n" +
		"INSERT INTO t (k, v) VALUES (?, ?);\n" +
		"BEGIN BATCH INSERT INTO t (k) VALUES (?); DELETE FROM t WHERE k = ?; APPLY BATCH;\n" +
		"SELECT v FROM t WHERE k = ?;", []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"USE ks",
		"CREATE TABLE t (k int, v text, PRIMARY KEY (k))",
		"INSERT INTO t (k, v) VALUES (?, ?)",
		"BEGIN BATCH INSERT INTO t (k) VALUES (?); DELETE FROM t WHERE k = ?; APPLY BATCH",
		"SELECT v FROM t WHERE k = ?",
	}},
	{"INSERT INTO t (a) VALUES ('x;y'); /* ; */ DROP TABLE t", []string{"INSERT INTO t (a) VALUES ('x;y')", "DROP TABLE t"}},
}

func TestParseAll(t *testing.T) {
	for _, c := range scriptCases {
		sts, err := ParseAll(c.in)
		if err != nil {
			t.Errorf("ParseAll(%q): %v", c.in, err)
			continue
		}
		var got []string
		for _, st := range sts {
			got = append(got, st.String())
			checkRoundTrip(t, c.in, st)
		}
		assertEqual(t, "ParseAll("+c.in+")", got, c.want)
	}
}

func TestParseAllErrors(t *testing.T) {
	for _, c := range []errorCase{
		{"SELECT * FROM t SELECT * FROM u", "line 1:16 missing ';' at 'SELECT'"},
		{"USE ks;\nSELECT * FORM t;", "line 2:9 mismatched input 'FORM' expecting K_FROM"},
		{"USE ks; USE 'ks'", "line 1:12 no viable alternative at input 'ks'"},
		{"USE ks; 'unterminated", "line 1:21 mismatched character '<EOF>' expecting '''"},
	} {
		_, err := ParseAll(c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseAll(%q) error:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
}

// Markers in a script are numbered per statement.
func TestParseAllMarkerIndexes(t *testing.T) {
	sts, err := ParseAll("SELECT * FROM t WHERE k = ?; SELECT * FROM t WHERE k = ? AND c = ?")
	if err != nil {
		t.Fatal(err)
	}
	first := sts[0].(*Select).Where[0].Value.(*BindMarker)
	second := sts[1].(*Select).Where[1].Value.(*BindMarker)
	if first.Index != 0 || second.Index != 1 {
		t.Fatalf("marker indexes %d and %d, want 0 and 1", first.Index, second.Index)
	}
}

func TestNestingLimit(t *testing.T) {
	deep := "SELECT * FROM t WHERE k = "
	for i := 0; i < 200; i++ {
		deep += "["
	}
	_, err := Parse(deep)
	want := "line 1:126 statement nested more than 100 levels deep"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	// Each frozen<list< is two levels: 49 of them and int make 99, fine;
	// the 51st frozen is level 101.
	nested := func(n int) string {
		return "CREATE TABLE t (k int PRIMARY KEY, v " + repeat("frozen<list<", n) + "int" + repeat(">>", n) + ")"
	}
	if _, err := Parse(nested(49)); err != nil {
		t.Fatalf("49 levels: %v", err)
	}
	_, err = Parse(nested(60))
	if err == nil || err.Error() != "line 1:637 statement nested more than 100 levels deep" {
		t.Fatalf("60 levels: %v", err)
	}
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}
