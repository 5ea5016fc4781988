package clients

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/tools/cqlsh"
)

// newShell starts a node and a (non-interactive) shell on it, closed when
// the test ends.
func newShell(t *testing.T, out, errs *bytes.Buffer) *cqlsh.Shell {
	t.Helper()
	_, cluster := startNode(t)
	sh, err := cqlsh.New(cqlsh.Options{Host: "127.0.0.1", Port: cluster.Port, Cluster: cluster, Out: out, Err: errs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return sh
}

// TestCqlshOutput drives the shell against a node and compares its
// output, byte for byte, with what cqlsh 6.1.0 prints.
func TestCqlshOutput(t *testing.T) {
	var out, errs bytes.Buffer
	sh := newShell(t, &out, &errs)
	run := func(script string) (string, string) {
		out.Reset()
		errs.Reset()
		sh.RunInput(strings.NewReader(script), "test.cql")
		return out.String(), errs.String()
	}
	run(`CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE demo;
CREATE TYPE addr (street text, zip int);
CREATE TABLE t (k int, c text, b blob, bo boolean, d double, de decimal, du duration, f float, i inet, l list<text>,
  m map<text, int>, s set<int>, ti time, ts timestamp, tup tuple<int, text>, u uuid, ad frozen<addr>, dt date, PRIMARY KEY (k, c));
INSERT INTO t (k, c, b, bo, d, de, du, f, i, l, m, s, ti, ts, tup, u, ad, dt) VALUES (1, 'it''s', 0x0102, true,
  3.14159265358979, 1.50, 1mo2d3ns, 100000, '127.0.0.1', ['a', 'it''s'], {'x': 1}, {3, 1}, '12:34:56.123456789',
  '2012-05-14 12:53:20+0000', (1, 'x'), 550e8400-e29b-41d4-a716-446655440000, {street: 'Main', zip: 1}, '2020-01-01');
INSERT INTO t (k, c) VALUES (22, 'tab	and\back');`)
	got, errText := run("SELECT * FROM t;\nSELECT k FROM t WHERE k = 99;\n")
	want := `
 k  | c              | ad                       | b      | bo   | d       | de   | dt         | du       | f     | i         | l              | m        | s      | ti                 | ts                              | tup      | u
----+----------------+--------------------------+--------+------+---------+------+------------+----------+-------+-----------+----------------+----------+--------+--------------------+---------------------------------+----------+--------------------------------------
  1 |           it's | {street: 'Main', zip: 1} | 0x0102 | True | 3.14159 | 1.50 | 2020-01-01 | 1mo2d3ns | 1e+05 | 127.0.0.1 | ['a', 'it''s'] | {'x': 1} | {1, 3} | 12:34:56.123456789 | 2012-05-14 12:53:20.000000+0000 | (1, 'x') | 550e8400-e29b-41d4-a716-446655440000
 22 | tab\tand\\back |                     null |   null | null |    null | null |       null |     null |  null |      null |           null |     null |   null |               null |                            null |     null |                                 null

(2 rows)

 k
---


(0 rows)
`
	if got != want || errText != "" {
		t.Errorf("SELECT printed\n%s\nwant\n%s\nerrors %q", got, want, errText)
	}
	got, errText = run("SELECT * FROM nope;\nCONSISTENCY\nCONSISTENCY quorum\nEXPAND ON\nSELECT k, c FROM t WHERE k = 1;\nEXPAND OFF\nPAGING 1\n")
	want = `Current consistency level is ONE.
Consistency level set to QUORUM.
Now Expanded output is enabled

@ Row 1
---+------
 k | 1
 c | it's


(1 rows)
Disabled Expanded output.
Page size: 1
`
	wantErr := "test.cql:2:InvalidRequest: Error from server: code=2200 [Invalid query] message=\"table nope does not exist\"\n"
	if got != want || errText != wantErr {
		t.Errorf("commands printed\n%s\nwant\n%s\nerrors %q, want %q", got, want, errText, wantErr)
	}
	// Not a tty: later pages follow the first with no header of their
	// own, each padded to its own widths, as cqlsh prints them.
	got, _ = run("SELECT k, c FROM t;\n")
	if want := "\n k | c\n---+------\n 1 | it's\n 22 | tab\\tand\\\\back\n\n(2 rows)\n"; got != want {
		t.Errorf("paged SELECT printed %q, want %q", got, want)
	}
	got, _ = run("PAGING OFF\nDESCRIBE KEYSPACES;\nDESC TABLES;\nDESCRIBE TYPE addr;\n")
	want = "Disabled Query paging.\n\ndemo    system_auth         system_schema  system_views         \nsystem  system_distributed  system_traces  system_virtual_schema\n\n\nt\n\n\nCREATE TYPE demo.addr (\n    street text,\n    zip int\n);\n"
	if got != want {
		t.Errorf("DESCRIBE printed %q, want %q", got, want)
	}
	// The server's warnings follow the result.
	got, _ = run("SELECT count(*) FROM t;\nSELECT count(*) FROM t WHERE k = 1;\n")
	want = "\n count\n-------\n     2\n\n(1 rows)\n\nWarnings :\nAggregation query used without partition key\n\n" +
		"\n count\n-------\n     1\n\n(1 rows)\n"
	if got != want {
		t.Errorf("aggregations printed %q, want %q", got, want)
	}
	got, _ = run("BEGIN UNLOGGED BATCH INSERT INTO t (k, c) VALUES (100, 'w'); INSERT INTO t (k, c) VALUES (101, 'w'); INSERT INTO t (k, c) VALUES (102, 'w'); INSERT INTO t (k, c) VALUES (103, 'w'); INSERT INTO t (k, c) VALUES (104, 'w'); INSERT INTO t (k, c) VALUES (105, 'w'); INSERT INTO t (k, c) VALUES (106, 'w'); INSERT INTO t (k, c) VALUES (107, 'w'); INSERT INTO t (k, c) VALUES (108, 'w'); INSERT INTO t (k, c) VALUES (109, 'w'); INSERT INTO t (k, c) VALUES (110, 'w'); APPLY BATCH;\n")
	want = "\nWarnings :\nUnlogged batch covering 11 partitions detected against table [demo.t]. " +
		"You should use a logged batch for atomicity, or asynchronous writes for performance.\n\n"
	if got != want {
		t.Errorf("an unlogged batch over 11 partitions printed %q, want %q", got, want)
	}
	if !sh.Failed() {
		t.Error("the failed SELECT did not mark the shell failed")
	}
}

// TestCqlshColor checks the colours cqlsh paints on a terminal: column
// names by their role, values by type (text yellow, other scalars green,
// blobs dark magenta, collection punctuation blue, nulls red), single
// backslashes in coloured text with the widths to match, and errors red.
func TestCqlshColor(t *testing.T) {
	var out, errs bytes.Buffer
	_, cluster := startNode(t)
	sh, err := cqlsh.New(cqlsh.Options{Host: "127.0.0.1", Port: cluster.Port, Cluster: cluster, Out: &out, Err: &errs, Color: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	sh.RunInput(strings.NewReader(`CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE demo.t (k int, c text, s int static, b blob, l list<text>, n int, PRIMARY KEY (k, c));
INSERT INTO demo.t (k, c, s, b, l) VALUES (1, 'a\b', 7, 0x01, ['x']);
`), "setup.cql")
	out.Reset()
	sh.RunInput(strings.NewReader("SELECT * FROM demo.t;\nSELECT * FROM demo.nope;\n"), "test.cql")
	paint := func(color string) func(string) string {
		return func(s string) string { return "\x1b[" + color + "m" + s + "\x1b[0m" }
	}
	red, green, yellow, blue, magenta, cyan, white, darkMagenta := paint("0;1;31"), paint("0;1;32"), paint("0;1;33"),
		paint("0;1;34"), paint("0;1;35"), paint("0;1;36"), paint("0;1;37"), paint("0;35")
	want := "\n " + red("k") + " | " + cyan("c") + "   | " + white("s") + " | " + magenta("b") + "    | " + magenta("l") + "     | " + magenta("n") + "\n" +
		"---+-----+---+------+-------+------\n" +
		" " + green("1") + " | " + yellow(`a\b`) + " | " + green("7") + " | " + darkMagenta("0x01") + " | " +
		blue("[") + yellow("'") + yellow("x") + yellow("'") + blue("]") + " | " + red("null") + "\n\n(1 rows)\n"
	if out.String() != want {
		t.Errorf("coloured SELECT printed\n%q\nwant\n%q", out.String(), want)
	}
	wantErr := red(`test.cql:3:InvalidRequest: Error from server: code=2200 [Invalid query] message="table nope does not exist"`) + "\n"
	if errs.String() != wantErr {
		t.Errorf("coloured error %q, want %q", errs.String(), wantErr)
	}
}

// copyTable has every CQL type, static columns, collections of the types
// cqlsh quotes, user types frozen and not, and text cqlsh must escape.
const copyTable = `(k int, c text, s text static, s2 frozen<list<int>> static, a ascii, b blob, bo boolean, bi bigint,
  d double, de decimal, du duration, f float, i inet, i6 inet, l list<text>, lt list<timestamp>, m map<text, double>,
  md map<date, frozen<set<time>>>, st set<inet>, si smallint, ti tinyint, tm time, ts timestamp, tup frozen<tuple<int, text, boolean>>,
  u uuid, tu timeuuid, vi varint, ad frozen<addr>, an addr, dt date, PRIMARY KEY (k, c))`

// TestCqlshCopy exports a table of every type with COPY TO and imports the
// file into another table with COPY FROM, in the default dialect and in
// one with every CSV option changed: the rows come back identical,
// doubles to the last bit, text with quotes, commas, backslashes and line
// breaks included.
func TestCqlshCopy(t *testing.T) {
	var out, errs bytes.Buffer
	sh := newShell(t, &out, &errs)
	dir := t.TempDir()
	script := "CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nUSE demo;\n" +
		"CREATE TYPE addr (street text, zip int);\n"
	for _, table := range []string{"src", "dst", "dst2"} {
		script += "CREATE TABLE " + table + " " + copyTable + ";\n"
	}
	for k := 0; k < 40; k++ {
		script += fmt.Sprintf("INSERT INTO src (k, c, s, s2, a, b, bo, bi, d, de, du, f, i, i6, l, lt, m, md, st, si, ti, tm, ts, tup, u, tu, vi, ad, an, dt) VALUES "+
			"(%d, 'row, \"%d\" it''s\\n', 'static %d', [%d, 2], 'ascii', 0x%02x, %v, %d, %d.%d, 1.%d0, 1mo%dd3ns, %d.25, '10.0.0.%d', '::%x', "+
			"['x, y', 'y''s', 'back\\slash'], ['2024-01-02 03:04:05.678+0000'], {'a': 0.1, 'b': 12345.678901, 'c': 1e300, 'n': NaN}, "+
			"{'2020-02-29': {'12:34:56.123456789'}}, {'127.0.0.1', '::1'}, %d, %d, '23:59:59.999999999', '2024-01-02 03:04:05.678+0000', "+
			"(%d, 'z''s', true), 550e8400-e29b-41d4-a716-4466554400%02d, now(), %d00000000000000000000, {street: 'S, %d', zip: %d}, "+
			"{street: 'multi\nline', zip: null}, '2020-01-%02d');\n",
			k, k, k%3, k, k, k%2 == 0, int64(k)<<40, k, k, k, k, k, k+1, k, k, -k, k, k, k, k, k, k%28+1)
	}
	script += "INSERT INTO src (k, c) VALUES (99, 'nulls');\nINSERT INTO src (k, c, d, f) VALUES (98, 'exact', 0.30000000000000004, 1.1);\n"
	script += "INSERT INTO src (k, c, d, f, a) VALUES (97, 'specials', -Infinity, NaN, '');\n"
	plain, custom := filepath.Join(dir, "rows.csv"), filepath.Join(dir, "custom.csv")
	script += fmt.Sprintf("COPY src TO '%s' WITH HEADER = true;\nCOPY dst FROM '%s' WITH HEADER = true AND CHUNKSIZE = 7 AND NUMPROCESSES = 3;\n", plain, plain)
	options := "DELIMITER = '|' AND QUOTE = '''' AND ESCAPE = '#' AND NULL = '<null>' AND BOOLSTYLE = 'yes, no' AND DATETIMEFORMAT = '%d/%m/%Y %H:%M:%S.%f %z'"
	script += fmt.Sprintf("COPY src TO '%s' WITH %s;\nCOPY dst2 FROM '%s' WITH %s AND MAXBATCHSIZE = 3 AND INGESTRATE = 100000;\n", custom, options, custom, options)
	sh.RunInput(strings.NewReader(script), "copy.cql")
	if errs.Len() > 0 {
		t.Fatalf("errors: %s", errs.String())
	}
	for _, want := range []string{"Using 1 child processes\n\nStarting copy of demo.src with columns [k, c, a, ad, an, b, bi, bo, d, de, dt, du, f, i, i6, l, lt, m, md, s, s2, si, st, ti, tm, ts, tu, tup, u, vi].",
		"43 rows exported to 1 files in", "Using 3 child processes", "43 rows imported from 1 files in", "(0 skipped)."} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("COPY printed %q, which lacks %q", out.String(), want)
		}
	}
	csv, _ := os.ReadFile(plain)
	for _, want := range []string{"\r\n", `"row, \"3\" it's\\\\n"`, "0.30000000000000004", `'back\\\\slash'`, ",True,", "2024-01-02 03:04:05.678+0000"} {
		if !strings.Contains(string(csv), want) {
			t.Errorf("COPY TO wrote no %q:\n%s", want, csv)
		}
	}
	sh.RunInput(strings.NewReader("PAGING OFF\n"), "paging.cql")
	read := func(table, where string) string {
		out.Reset()
		sh.RunInput(strings.NewReader("SELECT * FROM "+table+where+";\n"), "read.cql")
		return out.String()
	}
	// With the default NULL (''), an empty string reads back as null, as
	// with cqlsh: row 97's empty ascii is compared in dst2 alone.
	keys := []string{"98", "99"}
	for k := 0; k < 40; k++ {
		keys = append(keys, strconv.Itoa(k))
	}
	notEmpty := " WHERE k IN (" + strings.Join(keys, ", ") + ")"
	if src, dst := read("src", notEmpty), read("dst", notEmpty); src != dst || !strings.Contains(src, "(42 rows)") {
		t.Errorf("dst differs from src:\n%s\n%s", src, dst)
	}
	if src, dst2 := read("src", ""), read("dst2", ""); src != dst2 || !strings.Contains(src, "(43 rows)") {
		t.Errorf("dst2 differs from src:\n%s\n%s", src, dst2)
	}
	out.Reset()
	sh.RunInput(strings.NewReader("SELECT d, f FROM src WHERE k = 98 AND c = 'exact';\nSELECT d, f FROM dst WHERE k = 98 AND c = 'exact';\n"), "exact.cql")
	if strings.Count(out.String(), "0.3") != 2 {
		t.Errorf("exact doubles: %s", out.String())
	}
}

// TestCqlshCopyRowsAndErrors checks the options that choose rows (SKIPROWS,
// MAXROWS, SKIPCOLS) and the handling of bad rows: reported, written to
// ERRFILE, counted, the others imported.
func TestCqlshCopyRowsAndErrors(t *testing.T) {
	var out, errs bytes.Buffer
	sh := newShell(t, &out, &errs)
	dir := t.TempDir()
	in, errFile := filepath.Join(dir, "in.csv"), filepath.Join(dir, "bad.err")
	rows := "k,v,extra\n1,one,x\n2,two,x\nnot a number,three,x\n4,four,x\n5,five\n6,six,x\n7,seven,x\n"
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	sh.RunInput(strings.NewReader(fmt.Sprintf(`CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE demo.t (k int PRIMARY KEY, v text);
COPY demo.t (k, v, extra) FROM '%s' WITH HEADER = true AND SKIPCOLS = 'extra' AND SKIPROWS = 1 AND MAXROWS = 5 AND ERRFILE = '%s';
COPY demo.t (v) FROM '%s';
COPY demo.t FROM '%s' WITH BOGUS = 1 AND HEADER = true;
SELECT k, v FROM demo.t;
`, in, errFile, in, in)), "rows.cql")
	for _, want := range []string{
		"Failed to import 1 rows: ParseError - Invalid row length 2 should be 3,  given up without retries",
		"Failed to import 1 rows: ParseError - invalid literal for int() with base 10: 'not a number',  given up without retries",
		"Failed to process 2 rows; failed rows written to " + errFile,
		"Primary key column 'k' missing or skipped",
		"Unrecognized COPY FROM options: bogus",
	} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("errors lack %q:\n%s", want, errs.String())
		}
	}
	if !strings.Contains(out.String(), "3 rows imported from 1 files in") || !strings.Contains(out.String(), "(1 skipped).") {
		t.Errorf("COPY printed %q", out.String())
	}
	if !strings.Contains(out.String(), " 4 | four\n") || !strings.Contains(out.String(), " 6 |  six\n") ||
		strings.Contains(out.String(), "seven") || strings.Contains(out.String(), " one") {
		t.Errorf("the rows imported: %s", out.String())
	}
	bad, _ := os.ReadFile(errFile)
	if string(bad) != "not a number,three,x\r\n5,five\r\n" && string(bad) != "5,five\r\nnot a number,three,x\r\n" {
		t.Errorf("ERRFILE holds %q", bad)
	}
}

// TestCqlshSourceAndCapture runs a file with SOURCE and captures query
// output to a file with CAPTURE.
func TestCqlshSourceAndCapture(t *testing.T) {
	var out, errs bytes.Buffer
	sh := newShell(t, &out, &errs)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.cql")
	if err := os.WriteFile(script, []byte("CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nCREATE TABLE demo.t (k int PRIMARY KEY);\nINSERT INTO demo.t (k) VALUES (7);\nSELECT * FROM demo.nope;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(dir, "out.txt")
	sh.RunInput(strings.NewReader(fmt.Sprintf("SOURCE '%s'\nCAPTURE '%s'\nSELECT k FROM demo.t;\nCAPTURE\nCAPTURE OFF\nCAPTURE OFF\n", script, capture)), "main.cql")
	wantOut := fmt.Sprintf("Now capturing query output to '%s'.\nCurrently capturing query output to '%s'.\n", capture, capture)
	wantErr := script + ":5:InvalidRequest: Error from server: code=2200 [Invalid query] message=\"table nope does not exist\"\nmain.cql:7:Not currently capturing output.\n"
	if out.String() != wantOut || errs.String() != wantErr {
		t.Errorf("printed %q, errors %q; want %q, %q", out.String(), errs.String(), wantOut, wantErr)
	}
	if got, _ := os.ReadFile(capture); string(got) != "\n k\n---\n 7\n\n(1 rows)\n" {
		t.Errorf("captured %q", got)
	}
}

// TestCqlshHelpAndLogin: HELP lists the shell's commands and CQL's topics
// as cqlsh 4.1 does and answers each topic; LOGIN connects again as
// another role, keeping the keyspace, and keeps the session it had when
// the new one is refused.
func TestCqlshHelpAndLogin(t *testing.T) {
	_, port, _ := startAuthNode(t)
	cluster := gocqlCluster(port)
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
	var out, errs bytes.Buffer
	sh, err := cqlsh.New(cqlsh.Options{Host: "127.0.0.1", Port: port, Cluster: cluster, Out: &out, Err: &errs})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	sh.RunExecute("HELP;")
	wantHelp := "\nDocumented shell commands:\n===========================\n" +
		"CAPTURE  CLS          COPY  DESCRIBE  EXPAND  LOGIN   SERIAL  SOURCE   UNICODE\n" +
		"CLEAR    CONSISTENCY  DESC  EXIT      HELP    PAGING  SHOW    TRACING\n\n" +
		"CQL help topics:\n================\n"
	if !strings.HasPrefix(out.String(), wantHelp) || !strings.Contains(out.String(), "BLOB                     DROP_COLUMNFAMILY         LIST_PERMISSIONS\n") {
		t.Fatalf("HELP printed %q", out.String())
	}
	out.Reset()
	sh.RunExecute("HELP SELECT; HELP NOSUCH; HELP CONSISTENCY; UNICODE;")
	wantErr := "<stdin>:1:*** No browser to display CQL help. URL for help topic SELECT : https://cassandra.apache.org/doc/latest/cassandra/cql/cql_singlefile.html#selectStmt\n" +
		"<stdin>:1:*** No help on NOSUCH\n<stdin>:1:Improper UNICODE command.\n"
	if errs.String() != wantErr || !strings.HasPrefix(out.String(), "CONSISTENCY shows") {
		t.Fatalf("HELP topics printed %q, errors %q", out.String(), errs.String())
	}
	errs.Reset()
	out.Reset()
	sh.RunExecute(`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE ks;
CREATE ROLE reader WITH PASSWORD = 'it''s' AND LOGIN = true;
LOGIN reader 'it''s';
SELECT cluster_name FROM system.local;
LOGIN reader 'wrong';
LOGIN reader;
CREATE TABLE t (k int PRIMARY KEY);`)
	for _, want := range []string{"<stdin>:1:Connection error: ", "<stdin>:1:LOGIN without a password needs a terminal to ask it on.\n",
		"User reader has no CREATE permission on <all tables in ks> or any of its parents"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("errors lack %q:\n%s", want, errs.String())
		}
	}
	if strings.Count(errs.String(), "\n") != 3 || !strings.Contains(out.String(), "(1 rows)") {
		t.Errorf("printed %q, errors %q", out.String(), errs.String())
	}
}

// TestCqlshCopyCounters copies a counter table out and in twice, as cqlsh
// does it: each value is added, in counter batches or one at a time, and
// a null count adds nothing.
func TestCqlshCopyCounters(t *testing.T) {
	var out, errs bytes.Buffer
	sh := newShell(t, &out, &errs)
	file := filepath.Join(t.TempDir(), "counts.csv")
	sh.RunInput(strings.NewReader(fmt.Sprintf(`CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE demo.c (k int, c int, n counter, m counter, PRIMARY KEY (k, c));
UPDATE demo.c SET n = n + 5, m = m - 2 WHERE k = 1 AND c = 1;
UPDATE demo.c SET n = n + 7 WHERE k = 2 AND c = 0;
COPY demo.c TO '%s';
CREATE TABLE demo.d (k int, c int, n counter, m counter, PRIMARY KEY (k, c));
COPY demo.d FROM '%s' WITH MAXBATCHSIZE = 1;
COPY demo.d FROM '%s';
SELECT k, c, n, m FROM demo.d;
`, file, file, file)), "counters.cql")
	if errs.Len() > 0 {
		t.Fatalf("errors: %s", errs.String())
	}
	if !strings.Contains(out.String(), " 1 | 1 | 10 |   -4\n") || !strings.Contains(out.String(), " 2 | 0 | 14 | null\n") {
		t.Errorf("the counts copied twice: %s", out.String())
	}
}
