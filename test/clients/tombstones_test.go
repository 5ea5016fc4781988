package clients

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/node"
)

// TestTombstoneThresholdsReachGocql: with tombstone_warn_threshold 10 and
// tombstone_failure_threshold 50, a read over 11 deleted rows brings
// gocql Cassandra 4.1's warning with its rows, and one over 51 a
// ReadFailure naming READ_TOO_MANY_TOMBSTONES, by key and by scan.
func TestTombstoneThresholdsReachGocql(t *testing.T) {
	_, port, adminPort := serveNode(t, node.Config{TombstoneWarnThreshold: 10, TombstoneFailureThreshold: 50})
	s := session(t, gocqlCluster(port))
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.q (k text, c int, v int, PRIMARY KEY (k, c))")
	fill := func(key string, deleted int) {
		for c := 0; c < deleted; c++ {
			mustExec(t, s, fmt.Sprintf("DELETE FROM ks.q WHERE k = '%s' AND c = %d", key, c))
		}
		mustExec(t, s, fmt.Sprintf("INSERT INTO ks.q (k, c, v) VALUES ('%s', 1000, 1)", key))
	}
	fill("few", 10)
	fill("some", 11)
	read := func(query string) (rows int, warnings []string, err error) {
		iter := s.Query(query).Iter()
		var v int
		for iter.Scan(&v) {
			rows++
		}
		warnings = iter.Warnings()
		return rows, warnings, iter.Close()
	}
	if rows, warnings, err := read("SELECT v FROM ks.q WHERE k = 'few'"); err != nil || rows != 1 || len(warnings) != 0 {
		t.Fatalf("10 tombstones: %d rows, warnings %q, %v; want 1 row and no warning", rows, warnings, err)
	}
	rows, warnings, err := read("SELECT v FROM ks.q WHERE k = 'some'")
	// The LIMIT is the rows the node reads for a page: one more than
	// Cassandra's, to know whether another page follows.
	prefix := "Read 1 live rows and 11 tombstone cells for query SELECT * FROM ks.q WHERE k = 'some' LIMIT "
	var token int64
	if err := s.Query("SELECT token(k) FROM ks.q WHERE k = 'some'").Scan(&token); err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf(" ALLOW FILTERING; token %d (see tombstone_warn_threshold)", token)
	if err != nil || rows != 1 || len(warnings) != 1 || !strings.HasPrefix(warnings[0], prefix) || !strings.HasSuffix(warnings[0], suffix) {
		t.Fatalf("11 tombstones: %d rows, warnings %q, %v; want 1 row and %q...%q", rows, warnings, err, prefix, suffix)
	}
	fill("many", 51)
	_, _, err = read("SELECT v FROM ks.q WHERE k = 'many'")
	var failure *gocql.RequestErrReadFailure
	if !errors.As(err, &failure) || failure.NumFailures != 1 ||
		!strings.HasSuffix(err.Error(), "received 0 responses and 1 failures: READ_TOO_MANY_TOMBSTONES from /127.0.0.1:7000") {
		t.Fatalf("51 tombstones: %v (%T), want a ReadFailure naming READ_TOO_MANY_TOMBSTONES", err, err)
	}
	if _, _, err = read("SELECT v FROM ks.q"); !errors.As(err, &failure) {
		t.Fatalf("a scan over 72 tombstones: %v (%T), want a ReadFailure", err, err)
	}
	// The token(k) read of 'some' warned a second time; the scan failed
	// a second time.
	const table = `{keyspace="ks",table="q"}`
	if warned, failed := metric(t, adminPort, "sibyl_table_tombstone_warnings_total"+table), metric(t, adminPort, "sibyl_table_tombstone_failures_total"+table); warned != 2 || failed != 2 {
		t.Fatalf("/metrics counts %v warnings and %v failures, want 2 and 2", warned, failed)
	}
}
