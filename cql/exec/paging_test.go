package exec

import (
	"fmt"
	"testing"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

func pagingSession(t *testing.T) *Session {
	t.Helper()
	s := NewSession(newMemCoordinator())
	script := `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		USE ks;
		CREATE TABLE t (k int, c int, s text static, v text, PRIMARY KEY (k, c));
		UPDATE t SET s = 'lonely' WHERE k = 99;`
	for k := 0; k < 4; k++ {
		for c := 0; c < 3; c++ {
			script += fmt.Sprintf("INSERT INTO t (k, c, v) VALUES (%d, %d, 'v%d%d');", k, c, k, c)
		}
	}
	if _, err := s.Run(script); err != nil {
		t.Fatal(err)
	}
	return s
}

// pages runs a SELECT page by page and returns its rows, rendered, and the
// page sizes seen.
func pages(t *testing.T, s *Session, query string, size int) ([]string, []int) {
	t.Helper()
	st, err := cql.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	var sizes []int
	var state []byte
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatalf("%s: paging does not end", query)
		}
		r, err := s.Query(st, QueryParams{PageSize: size, PagingState: state})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(r.Rows))
		for _, row := range r.Rows {
			rows = append(rows, fmt.Sprintf("%x", row))
		}
		if r.PagingState == nil {
			return rows, sizes
		}
		if len(r.Rows) == 0 {
			t.Fatalf("%s: an empty page with a paging state", query)
		}
		state = r.PagingState
	}
}

// TestPagingResumesAfterTheLastRow pages every query at every page size and
// checks the pages put together are the unpaged result, and that a page
// comes with a state exactly when rows remain.
func TestPagingResumesAfterTheLastRow(t *testing.T) {
	s := pagingSession(t)
	for _, q := range []string{
		"SELECT * FROM t",
		"SELECT k, c, v FROM t WHERE k = 2",
		"SELECT v FROM t WHERE k = 1 AND c >= 1",
		"SELECT * FROM t LIMIT 5",
		"SELECT * FROM t WHERE k = 99",
		"SELECT k, c FROM t WHERE k IN (1, 2, 3) AND c IN (0, 2)",
		"SELECT * FROM t WHERE k = 1 ORDER BY c DESC",
		"SELECT k, c FROM t WHERE k = 1 AND (c) > (0)",
		"SELECT k, c FROM t PER PARTITION LIMIT 2",
		"SELECT k, c FROM t PER PARTITION LIMIT 2 LIMIT 5",
		"SELECT DISTINCT k, s FROM t",
		"SELECT k, c FROM t WHERE v > 'v11' ALLOW FILTERING",
		"SELECT k, c FROM t WHERE token(k) > -4069959284402364209",
	} {
		whole, _ := pages(t, s, q, 0)
		if len(whole) == 0 {
			t.Fatalf("%s: no rows", q)
		}
		for size := 1; size <= len(whole)+1; size++ {
			got, sizes := pages(t, s, q, size)
			if fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Fatalf("%s in pages of %d: %v, want %v", q, size, got, whole)
			}
			for i, n := range sizes[:len(sizes)-1] {
				if n != size {
					t.Fatalf("%s in pages of %d: page %d has %d rows", q, size, i, n)
				}
			}
		}
	}
	if whole, _ := pages(t, s, "SELECT * FROM t LIMIT 5", 0); len(whole) != 5 {
		t.Fatalf("LIMIT 5 gave %d rows", len(whole))
	}
	if whole, _ := pages(t, s, "SELECT * FROM t", 0); len(whole) != 13 {
		t.Fatalf("the table reads %d rows, want 12 and the static-only partition's", len(whole))
	}
}

func TestBadPagingStateIsRefused(t *testing.T) {
	s := pagingSession(t)
	st, err := cql.Parse("SELECT * FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range [][]byte{{0x09}, {1, 200}, {1, 1, 'x', 5}} {
		_, err := s.Query(st, QueryParams{PageSize: 2, PagingState: state})
		if e, ok := err.(*Error); !ok || e.Code != Invalid || e.Message != "Invalid value for the paging state" {
			t.Errorf("state %x: %v", state, err)
		}
	}
	// An aggregate answers in one page whatever the page size.
	r, err := s.Run("SELECT count(*) FROM t")
	if err != nil || len(r[0].Rows) != 1 || r[0].PagingState != nil {
		t.Fatalf("count: %+v, %v", r, err)
	}
}

// TestPagingSurvivesTheLastRowGoing deletes the row a page ended on before
// asking for the next page: the next page starts after where that row was.
func TestPagingSurvivesTheLastRowGoing(t *testing.T) {
	for _, q := range []string{"SELECT k, c FROM t WHERE k = 1", "SELECT k, c FROM t WHERE k = 1 ORDER BY c DESC", "SELECT k, c FROM t"} {
		s := pagingSession(t)
		st, err := cql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		first, err := s.Query(st, QueryParams{PageSize: 2})
		if err != nil || len(first.Rows) != 2 || first.PagingState == nil {
			t.Fatalf("%s: first page %+v, %v", q, first, err)
		}
		last := first.Rows[1]
		del := fmt.Sprintf("DELETE FROM t WHERE k = %x AND c = %x", last[0], last[1])
		stmt, err := cql.Parse("DELETE FROM t WHERE k = ? AND c = ?")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Execute(stmt, last[0], last[1]); err != nil {
			t.Fatalf("%s: %v", del, err)
		}
		rest, _ := pages(t, s, q, 0)
		next, err := s.Query(st, QueryParams{PageSize: 100, PagingState: first.PagingState})
		if err != nil {
			t.Fatal(err)
		}
		// The rest of the query is what an unpaged read now returns after
		// the first page's rows.
		var want []string
		for _, r := range rest {
			if r != fmt.Sprintf("%x", first.Rows[0]) {
				want = append(want, r)
			}
		}
		var got []string
		for _, row := range next.Rows {
			got = append(got, fmt.Sprintf("%x", row))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: after the deletion the next page is %v, want %v", q, got, want)
		}
	}
}

// countingCoordinator counts the rows reads return.
type countingCoordinator struct {
	*memCoordinator
	rows int
}

func (c *countingCoordinator) ReadPartition(t *schema.Table, q request.PartitionRead) (*request.Partition, error) {
	p, err := c.memCoordinator.ReadPartition(t, q)
	if p != nil {
		c.rows += len(p.Rows)
	}
	return p, err
}

func (c *countingCoordinator) Scan(t *schema.Table, q request.RangeRead) ([]*request.Partition, error) {
	parts, err := c.memCoordinator.Scan(t, q)
	for _, p := range parts {
		c.rows += len(p.Rows)
	}
	return parts, err
}

// TestPagesReadOnlyWhatTheyReturn pages through a scan and a wide
// partition and checks that each page starts reading where the last one
// ended: the rows read stay proportional to the rows returned, where
// reading again from the start would read about rows × pages / 2.
func TestPagesReadOnlyWhatTheyReturn(t *testing.T) {
	c := &countingCoordinator{memCoordinator: newMemCoordinator()}
	s := NewSession(c)
	script := `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		USE ks;
		CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c));`
	const partitions, perPartition = 20, 30
	for k := 0; k < partitions; k++ {
		for i := 0; i < perPartition; i++ {
			script += fmt.Sprintf("INSERT INTO t (k, c, v) VALUES (%d, %d, %d);", k, i, i)
		}
	}
	if _, err := s.Run(script); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT k, c FROM t", "SELECT k, c FROM t WHERE k = 3", "SELECT k, c FROM t WHERE k = 3 ORDER BY c DESC"} {
		c.rows = 0
		got, sizes := pages(t, s, q, 7)
		if len(got) == 0 {
			t.Fatalf("%s: no rows", q)
		}
		// Each page reads at most a page and one row more, twice (the rest
		// of a partition, then the scan on).
		if bound := 2 * len(sizes) * 8; c.rows > bound {
			t.Errorf("%s: %d rows in %d pages read %d rows, more than %d", q, len(got), len(sizes), c.rows, bound)
		}
	}
}

// TestFilteredPartitionReadsEveryRow filters a partition wider than a read
// chunk: the rows that match near its end are found, paged or not.
func TestFilteredPartitionReadsEveryRow(t *testing.T) {
	s := NewSession(newMemCoordinator())
	script := `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		USE ks;
		CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c));`
	for c := 0; c < 700; c++ {
		v := "no"
		if c >= 600 && c%10 == 0 {
			v = "yes"
		}
		script += fmt.Sprintf("INSERT INTO t (k, c, v) VALUES (1, %d, '%s');", c, v)
	}
	if _, err := s.Run(script); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT c FROM t WHERE k = 1 AND v = 'yes' ALLOW FILTERING",
		"SELECT c FROM t WHERE k = 1 AND v = 'yes' ORDER BY c DESC ALLOW FILTERING",
	} {
		for _, size := range []int{0, 3, 100} {
			got, _ := pages(t, s, q, size)
			if len(got) != 10 {
				t.Errorf("%s in pages of %d: %d rows, want 10", q, size, len(got))
			}
		}
	}
}
