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
	// As a Cassandra node answered (reported in apache/beam#24829, names
	// changed): the snippet from ten tokens before, whitespace counted.
	{"SELECT partition_col, other_col FROM ks.tbl AND token(partition_col) >= ?",
		"line 1:44 mismatched input 'AND' expecting EOF (..., other_col FROM ks.tbl [AND]...)"},
	// Statement starts.
	{"", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"   ", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELEC * FROM t", "line 1:0 no viable alternative at input 'SELEC' ([SELEC]...)"},
	{"FROM t", "line 1:0 no viable alternative at input 'FROM' ([FROM]...)"},
	{"42", "line 1:0 no viable alternative at input '42' ([42])"},
	{"CREATE INDEXX i ON t (v)", "line 1:7 no viable alternative at input 'INDEXX' (CREATE [INDEXX]...)"},
	{"CREATE FUNCTION f (a int) RETURNS int LANGUAGE java AS 'x'", "line 1:34 mismatched input 'int' expecting K_NULL (...f (a int) RETURNS [int]...)"},
	{"CREATE FUNCTION f () CALLED ON NULL INPUT RETURNS int LANGUAGE java AS x", "line 1:71 mismatched input 'x' expecting STRING_LITERAL (...RETURNS int LANGUAGE java AS [x])"},
	{"CREATE AGGREGATE a (int) STYPE int", "line 1:25 mismatched input 'STYPE' expecting K_SFUNC (CREATE AGGREGATE a (int) [STYPE]...)"},
	{"CREATE MATERIALIZED VIEW v AS SELECT * FROM t", "line 0:-1 mismatched input '<EOF>' expecting K_PRIMARY"},
	{"CREATE INDEX i t (v)", "line 1:15 mismatched input 't' expecting K_ON (CREATE INDEX i [t]...)"},
	{"CREATE INDEX ON t (v) USING x", "line 1:28 mismatched input 'x' expecting STRING_LITERAL (...ON t (v) USING [x])"},
	{"DROP t", "line 1:5 no viable alternative at input 't' (DROP [t])"},
	{"ALTER TYPE t ADD f", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"ALTER TYPE t DROP f", "line 1:13 no viable alternative at input 'DROP' (ALTER TYPE t [DROP]...)"},
	{"ALTER TYPE t RENAME f g", "line 1:22 mismatched input 'g' expecting K_TO (ALTER TYPE t RENAME f [g])"},

	// SELECT.
	{"SELECT m[] FROM t", "line 1:9 no viable alternative at input ']' (SELECT m[[]]...)"},
	{"SELECT m[..] FROM t", "line 1:11 no viable alternative at input ']' (SELECT m[..[]]...)"},
	{"SELECT m['a' FROM t", "line 1:13 mismatched input 'FROM' expecting ']' (SELECT m['a' [FROM]...)"},
	{"SELECT * FRO t", "line 1:9 mismatched input 'FRO' expecting K_FROM (SELECT * [FRO]...)"},
	{"SELECT FRO", "line 0:-1 mismatched input '<EOF>' expecting K_FROM"},
	{"SELECT a b FROM t", "line 1:9 mismatched input 'b' expecting K_FROM (SELECT a [b]...)"},
	{"SELECT * FROM", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t foo", "line 1:16 mismatched input 'foo' expecting EOF (SELECT * FROM t [foo])"},
	{"SELECT * FROM t WHERE", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k = ", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k == 1", "line 1:25 no viable alternative at input '=' (... FROM t WHERE k =[=]...)"},
	{"SELECT * FROM t WHERE k = 1 AND", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELECT * FROM t WHERE k = 1 OR k = 2", "line 1:28 mismatched input 'OR' expecting EOF (...t WHERE k = 1 [OR]...)"},
	{"SELECT * FROM t WHERE k = x", "line 1:26 no viable alternative at input 'x' (...FROM t WHERE k = [x])"},
	{"SELECT * FROM t WHERE k IN 1", "line 1:27 no viable alternative at input '1' (...FROM t WHERE k IN [1])"},
	{"SELECT * FROM t WHERE k IN (1, 2", "line 0:-1 mismatched input '<EOF>' expecting ')'"},
	{"SELECT * FROM t WHERE token(k) IN (1)", "line 1:31 no viable alternative at input 'IN' (... t WHERE token(k) [IN]...)"},
	{"SELECT * FROM t WHERE (a, b) > 1", "line 1:31 no viable alternative at input '1' (... (a, b) > [1])"},
	{"SELECT * FROM t WHERE (a, b) IN (1)", "line 1:33 no viable alternative at input '1' (...(a, b) IN ([1]...)"},
	{"SELECT * FROM t WHERE v IS NULL", "line 1:27 mismatched input 'NULL' expecting K_NOT (...FROM t WHERE v IS [NULL])"},
	{"SELECT * FROM t LIMIT x", "line 1:22 no viable alternative at input 'x' (SELECT * FROM t LIMIT [x])"},
	{"SELECT * FROM t LIMIT 1.5", "line 1:22 no viable alternative at input '1.5' (SELECT * FROM t LIMIT [1.5])"},
	{"SELECT * FROM t PER LIMIT 1", "line 1:20 mismatched input 'LIMIT' expecting K_PARTITION (SELECT * FROM t PER [LIMIT]...)"},
	{"SELECT * FROM t ORDER c", "line 1:22 mismatched input 'c' expecting K_BY (SELECT * FROM t ORDER [c])"},
	{"SELECT * FROM t ALLOW", "line 0:-1 mismatched input '<EOF>' expecting K_FILTERING"},
	{"SELECT * FROM t LIMIT 1 WHERE k = 1", "line 1:24 mismatched input 'WHERE' expecting EOF (...* FROM t LIMIT 1 [WHERE]...)"},
	{"SELECT count(*) AS FROM t", "line 1:19 no viable alternative at input 'FROM' (SELECT count(*) AS [FROM]...)"},
	{"SELECT CAST(a AS mytype) FROM t", "line 1:17 no viable alternative at input 'mytype' (SELECT CAST(a AS [mytype]...)"},
	{"SELECT WRITETIME(f(a)) FROM t", "line 1:18 mismatched input '(' expecting ')' (SELECT WRITETIME(f[(]...)"},
	{"SELECT f(a FROM t", "line 1:11 mismatched input 'FROM' expecting ')' (SELECT f(a [FROM]...)"},
	{"SELECT * FROM ?", "Bind variables cannot be used for table names"},
	{"SELECT * FROM ks.", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"SELECT select FROM t", "line 1:7 no viable alternative at input 'select' (SELECT [select]...)"},
	{"SELECT () FROM t", "line 1:8 no viable alternative at input ')' (SELECT ([)]...)"},
	{"SELECT * FROM t WHERE k = 1\nAND c = \n  ORDER BY c", "line 3:2 no viable alternative at input 'ORDER' (...= 1AND c =   [ORDER]...)"},
	{"SELECT *\nFROM t\nWHERE k = 1 LIMIT 2 3", "line 3:20 mismatched input '3' expecting EOF (...k = 1 LIMIT 2 [3])"},
	{"SELECT * FROM t; SELECT * FROM u", "line 1:17 mismatched input 'SELECT' expecting EOF (SELECT * FROM t; [SELECT]...)"},

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
	{"INSERT INTO t VALUES (1)", "line 1:14 no viable alternative at input 'VALUES' (INSERT INTO t [VALUES]...)"},
	{"INSERT t (k) VALUES (1)", "line 1:7 mismatched input 't' expecting K_INTO (INSERT [t]...)"},
	{"INSERT INTO t (k) VALUE (1)", "line 1:18 mismatched input 'VALUE' expecting K_VALUES (INSERT INTO t (k) [VALUE]...)"},
	{"INSERT INTO t (k) VALUES (1", "line 0:-1 mismatched input '<EOF>' expecting ')'"},
	{"INSERT INTO t (k) VALUES ()", "line 1:26 no viable alternative at input ')' (... t (k) VALUES ([)])"},
	{"INSERT INTO t (k,) VALUES (1)", "line 1:17 no viable alternative at input ')' (INSERT INTO t (k,[)]...)"},
	{"INSERT INTO t (k) VALUES (1) IF EXISTS", "line 1:32 mismatched input 'EXISTS' expecting K_NOT (...) VALUES (1) IF [EXISTS])"},
	{"INSERT INTO t (k) VALUES (1) USING TTL", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"INSERT INTO t (k) VALUES (1) USING TTL 1 AND TTL 2", "Multiple definition for TTL in USING"},
	{"INSERT INTO t (k) VALUES (1) USING TTL 1 TIMESTAMP 2", "line 1:41 mismatched input 'TIMESTAMP' expecting EOF (...(1) USING TTL 1 [TIMESTAMP]...)"},
	{"INSERT INTO t (k) VALUES (1) USING FOO 1", "line 1:35 no viable alternative at input 'FOO' (...) VALUES (1) USING [FOO]...)"},
	{"INSERT INTO t (k) VALUES ({a: 1, 'b': 2})", "line 1:33 no viable alternative at input 'b' (...VALUES ({a: 1, [']...)"},
	{"INSERT INTO t (k) VALUES ({1: 2, 3})", "line 1:34 mismatched input '}' expecting ':' (... ({1: 2, 3[}]...)"},
	{"INSERT INTO t (k) VALUES ([1, 2)", "line 1:31 mismatched input ')' expecting ']' (...) VALUES ([1, 2[)])"},
	{"INSERT INTO t JSON 1", "line 1:19 no viable alternative at input '1' (INSERT INTO t JSON [1])"},
	{"INSERT INTO t JSON '{}' DEFAULT 1", "line 1:32 no viable alternative at input '1' (...INTO t JSON '{}' DEFAULT [1])"},
	{"INSERT INTO t (k) VALUES ((int))", "line 1:27 no viable alternative at input 'int' (...t (k) VALUES (([int]...)"},

	// UPDATE.
	{"UPDATE t SET WHERE k = 1", "line 1:13 no viable alternative at input 'WHERE' (UPDATE t SET [WHERE]...)"},
	{"UPDATE t SET v = 1", "line 0:-1 mismatched input '<EOF>' expecting K_WHERE"},
	{"UPDATE t SET v = 1 WHERE", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"UPDATE t SET v = w + 1 WHERE k = 1", "Only expressions of the form X = X + <value> are supported."},
	{"UPDATE t SET v = w - 1 WHERE k = 1", "Only expressions of the form X = X - <value> are supported."},
	{"UPDATE t SET v = [1] + w WHERE k = 1", "Only expressions of the form X = <value> + X are supported."},
	{"UPDATE t SET v = v WHERE k = 1", "line 1:19 no viable alternative at input 'WHERE' (...t SET v = v [WHERE]...)"},
	{"UPDATE t SET v = v * 2 WHERE k = 1", "line 1:19 no viable alternative at input '*' (...t SET v = v [*]...)"},
	{"UPDATE t SET v[1] 2 WHERE k = 1", "line 1:18 mismatched input '2' expecting '=' (... t SET v[1] [2]...)"},
	{"UPDATE t SET v = 1 WHERE k = 1 IF", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"UPDATE t SET v = 1 WHERE k = 1 IF v LIKE 'a'", "line 1:36 no viable alternative at input 'LIKE' (...k = 1 IF v [LIKE]...)"},
	{"UPDATE t USING TTL 1 USING TTL 2 SET v = 1 WHERE k = 1", "line 1:21 mismatched input 'USING' expecting K_SET (UPDATE t USING TTL 1 [USING]...)"},

	// DELETE.
	{"DELETE FROM t", "line 0:-1 mismatched input '<EOF>' expecting K_WHERE"},
	{"DELETE FROM t USING TTL 5 WHERE k = 1", "line 1:20 mismatched input 'TTL' expecting K_TIMESTAMP (DELETE FROM t USING [TTL]...)"},
	{"DELETE a b FROM t WHERE k = 1", "line 1:9 mismatched input 'b' expecting K_FROM (DELETE a [b]...)"},
	{"DELETE a[1 FROM t WHERE k = 1", "line 1:11 mismatched input 'FROM' expecting ']' (DELETE a[1 [FROM]...)"},

	// BATCH.
	{"BEGIN BATCH SELECT * FROM t; APPLY BATCH", "line 1:12 mismatched input 'SELECT' expecting K_APPLY (BEGIN BATCH [SELECT]...)"},
	{"BEGIN BATCH INSERT INTO t (k) VALUES (1);", "line 0:-1 mismatched input '<EOF>' expecting K_APPLY"},
	{"BEGIN LOGGED BATCH APPLY BATCH", "line 1:6 mismatched input 'LOGGED' expecting K_BATCH (BEGIN [LOGGED]...)"},
	{"BEGIN BATCH APPLY", "line 0:-1 mismatched input '<EOF>' expecting K_BATCH"},
	{"BEGIN BATCH BEGIN BATCH APPLY BATCH APPLY BATCH", "line 1:12 mismatched input 'BEGIN' expecting K_APPLY (BEGIN BATCH [BEGIN]...)"},

	// DDL.
	{"CREATE KEYSPACE ks", "line 0:-1 mismatched input '<EOF>' expecting K_WITH"},
	{"CREATE KEYSPACE ks WITH", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"CREATE KEYSPACE ks WITH replication = {'class': 'S'} AND replication = {}", "Multiple definition for property 'replication'"},
	{"CREATE KEYSPACE ks WITH replication = {'class': f()}", "line 1:48 no viable alternative at input 'f' (...WITH replication = {'class': [f]...)"},
	{"CREATE KEYSPACE ks WITH durable_writes = ?", "line 1:41 no viable alternative at input '?' (...KEYSPACE ks WITH durable_writes = [?])"},
	{"CREATE KEYSPACE IF EXISTS ks WITH a = 1", "line 1:19 mismatched input 'EXISTS' expecting K_NOT (CREATE KEYSPACE IF [EXISTS]...)"},
	{"CREATE KEYSPACE keyspace WITH a = 1", "line 1:16 no viable alternative at input 'keyspace' (CREATE KEYSPACE [keyspace]...)"},
	{"CREATE TABLE t k int PRIMARY KEY", "line 1:15 mismatched input 'k' expecting '(' (CREATE TABLE t [k]...)"},
	{"CREATE TABLE t (k int PRIMARY KEY, v int PRIMARY KEY)", "Multiple PRIMARY KEYs specified (exactly one required)"},
	{"CREATE TABLE t (k int PRIMARY KEY, PRIMARY KEY (k))", "Multiple PRIMARY KEYs specified (exactly one required)"},
	{"CREATE TABLE t (k int, PRIMARY KEY ())", "line 1:36 no viable alternative at input ')' (...k int, PRIMARY KEY ([)]...)"},
	{"CREATE TABLE t (k int, PRIMARY (k))", "line 1:31 mismatched input '(' expecting K_KEY (...t (k int, PRIMARY [(]...)"},
	{"CREATE TABLE t (k PRIMARY KEY)", "line 1:18 no viable alternative at input 'PRIMARY' (CREATE TABLE t (k [PRIMARY]...)"},
	{"CREATE TABLE t (k int PRIMARY KEY) WITH COMPACT STORAGE", "Compact tables are not allowed in Cassandra starting with 4.0 version."},
	{"CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c)", "line 1:77 no viable alternative at input ')' (...WITH CLUSTERING ORDER BY (c[)])"},
	{"CREATE TABLE t (k int PRIMARY KEY) WITH", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"CREATE TABLE t (k list<int PRIMARY KEY)", "line 1:27 mismatched input 'PRIMARY' expecting '>' (... t (k list<int [PRIMARY]...)"},
	{"CREATE TABLE t (k map<int> PRIMARY KEY)", "line 1:25 mismatched input '>' expecting ',' (...TABLE t (k map<int[>]...)"},
	{"CREATE TABLE t (k set PRIMARY KEY)", "line 1:18 no viable alternative at input 'set' (CREATE TABLE t (k [set]...)"},
	{"CREATE TABLE t (k frozen<> PRIMARY KEY)", "line 1:25 no viable alternative at input '>' (... TABLE t (k frozen<[>]...)"},
	{"CREATE TABLE t (k int PRIMARY KEY) WITH a = 1 AND a = 2", "Multiple definition for property 'a'"},
	{"CREATE TABLE t (k int PRIMARY KEY,,)", "line 1:34 no viable alternative at input ',' (... (k int PRIMARY KEY,[,]...)"},
	{"ALTER TABLE t ALTER v TYPE int", "line 1:14 no viable alternative at input 'ALTER' (ALTER TABLE t [ALTER]...)"},
	{"ALTER TABLE t ADD", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"ALTER TABLE t ADD (a int, b)", "line 1:27 no viable alternative at input ')' (... ADD (a int, b[)])"},
	{"ALTER TABLE t DROP (a b)", "line 1:22 mismatched input 'b' expecting ')' (... TABLE t DROP (a [b]...)"},
	{"ALTER TABLE t RENAME a b", "line 1:23 mismatched input 'b' expecting K_TO (ALTER TABLE t RENAME a [b])"},
	{"DROP TABLE IF t", "line 1:14 mismatched input 't' expecting K_EXISTS (DROP TABLE IF [t])"},
	{"DROP KEYSPACE", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"CREATE TYPE int (a int)", "Invalid (reserved) user type name int"},
	{"CREATE TYPE t ()", "line 1:15 no viable alternative at input ')' (CREATE TYPE t ([)])"},
	{"CREATE TYPE t (a)", "line 1:16 no viable alternative at input ')' (CREATE TYPE t (a[)])"},
	{"DROP TYPE ks.text", "Invalid (reserved) user type name text"},
	{"USE", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"USE ks ks", "line 1:7 mismatched input 'ks' expecting EOF (USE ks [ks])"},
	{"USE :ks", "Bind variables cannot be used for names"},
	{"TRUNCATE", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"CREATE ROLE ?", "Bind variables cannot be used for role names"},
	{`CREATE USER "bob"`, "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE"},
	{"CREATE ROLE r WITH LOGIN = true AND LOGIN = false", "Multiple definition for property 'LOGIN'"},
	{"CREATE ROLE r WITH PASSWORD = 'a' AND HASHED PASSWORD = 'b'", "Options 'password' and 'hashed password' are mutually exclusive"},
	{"ALTER ROLE r", "line 0:-1 no viable alternative at input '<EOF>'"},
	{"GRANT SELECT ON KEYSPACE ks", "line 0:-1 mismatched input '<EOF>' expecting K_TO"},
	{"LIST SELECT, ON ks.t", "line 1:13 no viable alternative at input 'ON' (LIST SELECT, [ON]...)"},
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
	// The lines join without their ends, as Cassandra joins them.
	want := SyntaxError{Line: 3, Column: 12, Message: "no viable alternative at input '='", Snippet: " (...FROM t  WHERE k = [=]...)"}
	if *se != want {
		t.Fatalf("got %#v, want %#v", *se, want)
	}
	if se.Error() != "line 3:12 no viable alternative at input '=' (...FROM t  WHERE k = [=]...)" {
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
		{"SELECT * FROM t SELECT * FROM u", "line 1:16 missing ';' at 'SELECT' (SELECT * FROM t [SELECT]...)"},
		{"USE ks;\nSELECT * FORM t;", "line 2:9 mismatched input 'FORM' expecting K_FROM (USE ks;SELECT * [FORM]...)"},
		// A string's token is its content, shorter than the quoted
		// text: Cassandra's brackets land inside the quotes.
		{"USE ks; USE 'ks'", "line 1:12 no viable alternative at input 'ks' (USE ks; USE ['k]...)"},
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
