package clients

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestSecondaryIndexes runs queries that indexes serve through gocql, on
// every kind of target, and compares each with the rows a model of the
// data says match: with the data in the memtable, after a flush (the
// index files written with the SSTables) and after a restart (read back),
// with an index created over existing data, and paged.
func TestSecondaryIndexes(t *testing.T) {
	in := startIntegrityNode(t)
	s := in.session()
	mustExec(t, s, createKeyspace,
		"CREATE TABLE ks.ix (a int, b int, c int, v int, s int static, tag text, l list<int>, st set<text>, m map<text, int>, fl frozen<list<int>>, PRIMARY KEY ((a, b), c))",
		"CREATE CUSTOM INDEX ON ks.ix (tag) USING 'StorageAttachedIndex'",
		"CREATE INDEX ON ks.ix (s)",
		"CREATE INDEX ON ks.ix (c)",
		"CREATE INDEX ON ks.ix (b)",
		"CREATE INDEX ON ks.ix (l)",
		"CREATE INDEX ON ks.ix (st)",
		"CREATE INDEX ON ks.ix (keys(m))",
		"CREATE INDEX ON ks.ix (full(fl))")
	type row struct{ a, b, c, v, s int }
	var rows []row
	for a := 0; a < 60; a++ {
		for b := 0; b < 5; b++ {
			for c := 0; c < 3; c++ {
				r := row{a, b, c, (a*7 + b*3 + c) % 50, (a + b) % 20}
				rows = append(rows, r)
				err := s.Query("INSERT INTO ks.ix (a, b, c, v, s, tag, l, st, m, fl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
					a, b, c, r.v, r.s, fmt.Sprintf("tag%02d", r.v%25), []int{r.v % 10, 100 + c}, []string{fmt.Sprintf("x%d", a%7)},
					map[string]int{fmt.Sprintf("k%d", b): 1}, []int{c, b}).Exec()
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// An index made over data already written.
	mustExec(t, s, "CREATE INDEX ON ks.ix (v)")
	keyOf := func(r row) string { return fmt.Sprintf("%d/%d/%d", r.a, r.b, r.c) }
	want := func(match func(r row) bool) []string {
		var out []string
		for _, r := range rows {
			if match(r) {
				out = append(out, keyOf(r))
			}
		}
		slices.Sort(out)
		return out
	}
	queries := []struct {
		cql   string
		match func(r row) bool
	}{
		{"v = 17", func(r row) bool { return r.v == 17 }},
		{"tag >= 'tag10' AND tag < 'tag12'", func(r row) bool { return r.v%25 >= 10 && r.v%25 < 12 }},
		{"s = 3", func(r row) bool { return r.s == 3 }},
		{"c = 2", func(r row) bool { return r.c == 2 }},
		{"b = 4", func(r row) bool { return r.b == 4 }},
		{"l CONTAINS 7", func(r row) bool { return r.v%10 == 7 }},
		{"l CONTAINS 102", func(r row) bool { return r.c == 2 }},
		{"st CONTAINS 'x3'", func(r row) bool { return r.a%7 == 3 }},
		{"m CONTAINS KEY 'k1'", func(r row) bool { return r.b == 1 }},
		{"fl = [1, 2]", func(r row) bool { return r.c == 1 && r.b == 2 }},
		{"v = 17 AND tag = 'tag17'", func(r row) bool { return r.v == 17 }},
		{"v = 17 AND c = 1", func(r row) bool { return r.v == 17 && r.c == 1 }},
		{"a = 3 AND b = 1 AND v = 25", func(r row) bool { return r.a == 3 && r.b == 1 && r.v == 25 }},
		{"c = 0 AND v = 3 AND s = 1 ALLOW FILTERING", func(r row) bool { return r.c == 0 && r.v == 3 && r.s == 1 }},
	}
	check := func(when string) {
		t.Helper()
		for _, q := range queries {
			// At ONE replicas' indexes find the partitions; at QUORUM the
			// ranges are read whole and filtered.
			for _, read := range []struct {
				pageSize int
				level    gocql.Consistency
			}{{5000, gocql.One}, {7, gocql.One}, {7, gocql.Quorum}} {
				pageSize := read.pageSize
				iter := s.Query("SELECT a, b, c FROM ks.ix WHERE " + q.cql).PageSize(pageSize).Consistency(read.level).Iter()
				var got []string
				var a, b, c int
				for iter.Scan(&a, &b, &c) {
					got = append(got, fmt.Sprintf("%d/%d/%d", a, b, c))
				}
				if err := iter.Close(); err != nil {
					t.Fatalf("%s: %s: %v", when, q.cql, err)
				}
				slices.Sort(got)
				if w := want(q.match); !slices.Equal(got, w) || len(w) == 0 {
					t.Fatalf("%s: %s (pages of %d) finds %d rows %v, want %d %v", when, q.cql, pageSize, len(got), got, len(w), w)
				}
			}
		}
		// An unindexed column still needs ALLOW FILTERING.
		err := s.Query("SELECT a FROM ks.ix WHERE v = 17 AND m CONTAINS 1").Exec()
		if err == nil || !strings.Contains(err.Error(), "ALLOW FILTERING") {
			t.Fatalf("%s: a restriction no index serves: %v", when, err)
		}
	}
	in.checkAcrossFlushAndRestart(&s, check)
}
