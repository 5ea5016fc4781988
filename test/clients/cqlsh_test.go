package clients

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestCqlshCopy exports a table with COPY TO and imports the file into
// another table with COPY FROM: the rows come back identical.
func TestCqlshCopy(t *testing.T) {
	var out, errs bytes.Buffer
	sh := newShell(t, &out, &errs)
	file := filepath.Join(t.TempDir(), "rows.csv")
	script := `CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE demo;
CREATE TYPE addr (street text, zip int);
CREATE TABLE src (k int, c text, b blob, bo boolean, d double, l list<text>, m map<text, int>, ts timestamp, u uuid, tup frozen<tuple<int, text>>, ad frozen<addr>, du duration, PRIMARY KEY (k, c));
CREATE TABLE dst (k int, c text, b blob, bo boolean, d double, l list<text>, m map<text, int>, ts timestamp, u uuid, tup frozen<tuple<int, text>>, ad frozen<addr>, du duration, PRIMARY KEY (k, c));
`
	for k := 0; k < 50; k++ {
		script += fmt.Sprintf("INSERT INTO src (k, c, b, bo, d, l, m, ts, u, tup, ad, du) VALUES (%d, 'row, \"%d\" it''s', 0x%02x, %v, %d.25, ['x', 'y''s'], {'a': %d}, '2024-01-02 03:04:05.678+0000', 550e8400-e29b-41d4-a716-4466554400%02d, (%d, 'z'), {street: 'S', zip: %d}, 1h%dm);\n",
			k, k, k, k%2 == 0, k, k, k, k, k, k+1)
	}
	script += "INSERT INTO src (k, c) VALUES (99, 'nulls');\n"
	script += fmt.Sprintf("COPY src TO '%s' WITH HEADER = true\nCOPY dst FROM '%s' WITH HEADER = true\n", file, file)
	sh.RunInput(strings.NewReader(script), "copy.cql")
	if errs.Len() > 0 {
		t.Fatalf("errors: %s", errs.String())
	}
	if !strings.Contains(out.String(), "51 rows exported to 1 files in") || !strings.Contains(out.String(), "51 rows imported from 1 files in") {
		t.Fatalf("COPY printed %q", out.String())
	}
	sh.RunInput(strings.NewReader("PAGING OFF\n"), "paging.cql")
	read := func(table string) string {
		out.Reset()
		sh.RunInput(strings.NewReader("SELECT * FROM "+table+";\n"), "read.cql")
		return out.String()
	}
	if src, dst := read("src"), read("dst"); src != dst || !strings.Contains(src, "(51 rows)") {
		t.Fatalf("src and dst differ:\n%s\n%s", src, dst)
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
