package cqlsh

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSplitter(t *testing.T) {
	var s splitter
	for _, c := range []struct {
		line    string
		want    string
		pending bool
	}{
		{"SELECT * FROM t", "[]", true},
		{"WHERE k = 'a;b'; INSERT", "[SELECT * FROM t\nWHERE k = 'a;b']", true},
		{"INTO t (k) VALUES ('it''s;');", "[INSERT\nINTO t (k) VALUES ('it''s;')]", false},
		{"-- a comment; still a comment", "[]", false},
		{"SELECT $$a;b$$ /* ; */ FROM \"x;y\"; ;;", "[SELECT $$a;b$$ /* ; */ FROM \"x;y\"]", false},
		{"SELECT 'unterminated;", "[]", true},
		{"still';", "[SELECT 'unterminated;\nstill']", false},
		{"/* comment */;", "[]", false},
		// A batch's statements end with semicolons; the batch ends with
		// APPLY BATCH.
		{"-- load\nbegin unlogged batch insert into t (k) values (1);", "[]", true},
		{"INSERT INTO t (k) VALUES (';'); apply", "[]", true},
		{"BATCH; SELECT 1", "[begin unlogged batch insert into t (k) values (1);\nINSERT INTO t (k) VALUES (';'); apply\nBATCH]", true},
		{";", "[SELECT 1]", false},
	} {
		got := s.add(c.line)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", parseWant(c.want)) || s.pending() != c.pending {
			t.Errorf("after %q: %q pending %v, want %s pending %v", c.line, got, s.pending(), c.want, c.pending)
		}
	}
}

// parseWant reads the test's "[a]" form: one statement or none.
func parseWant(w string) []string {
	if w == "[]" {
		return nil
	}
	return []string{w[1 : len(w)-1]}
}

// TestSplitLikeCqlsh feeds inputs line by line and compares the statements
// with those cqlsh 4.1's own splitter (cqlhandling's cql_split_statements,
// with the shell's commands that end at the end of their line) makes of
// the same inputs, comments before a statement left out.
func TestSplitLikeCqlsh(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []string
		pending bool
	}{
		{"SHOW VERSION; DESCRIBE KEYSPACES; CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};",
			[]string{"SHOW VERSION", "DESCRIBE KEYSPACES", "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}, false},
		{"PAGING OFF\nSELECT * FROM t;", []string{"PAGING OFF", "SELECT * FROM t"}, false},
		{"COPY t TO 'f.csv'\nWITH HEADER = true;", []string{"COPY t TO 'f.csv'\nWITH HEADER = true"}, false},
		{"TRACING ON\nSELECT 1 FROM t\nWHERE k = 1;", []string{"TRACING ON", "SELECT 1 FROM t\nWHERE k = 1"}, false},
		{"DESCRIBE TABLE t\nSELECT * FROM t;", []string{"DESCRIBE TABLE t", "SELECT * FROM t"}, false},
		{"SELECT 1 FROM t; SHOW HOST", []string{"SELECT 1 FROM t", "SHOW HOST"}, false},
		{"-- comment\nEXPAND ON", []string{"EXPAND ON"}, false},
		{"BEGIN BATCH INSERT INTO t (k) VALUES (1); INSERT INTO t (k) VALUES (2); APPLY BATCH; SHOW VERSION",
			[]string{"BEGIN BATCH INSERT INTO t (k) VALUES (1); INSERT INTO t (k) VALUES (2); APPLY BATCH", "SHOW VERSION"}, false},
		{"SELECT 'a;b' FROM t; HELP CONSISTENCY", []string{"SELECT 'a;b' FROM t", "HELP CONSISTENCY"}, false},
		{"consistency quorum; select * from t", []string{"consistency quorum"}, true},
	} {
		var s splitter
		var got []string
		for _, line := range strings.Split(c.in, "\n") {
			got = append(got, s.add(line)...)
		}
		if !slices.Equal(got, c.want) || s.pending() != c.pending {
			t.Errorf("%q splits into %q pending %v, want %q pending %v", c.in, got, s.pending(), c.want, c.pending)
		}
	}
}
