package cqlsh

import (
	"fmt"
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
		{"BATCH; SELECT 1", "[-- load\nbegin unlogged batch insert into t (k) values (1);\nINSERT INTO t (k) VALUES (';'); apply\nBATCH]", true},
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
