package clients

import (
	"errors"
	"sync"
	"testing"

	"github.com/gocql/gocql"
)

// TestCountersExactUnderConcurrency has sixteen gocql clients add to two
// counters of one partition and one of another, each through its own
// prepared statement, all at once: every addition is acknowledged and
// counted once (a leader's read of its shard and its write are one step
// under its lock), so the totals are exact.
func TestCountersExactUnderConcurrency(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.counts (k int, c int, n counter, m counter, PRIMARY KEY (k, c))")
	const clients, ops = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for client := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ops {
				k := (client + i) % 2
				if err := s.Query("UPDATE ks.counts SET n = n + ?, m = m - 1 WHERE k = ? AND c = 1", int64(client+1), k).Exec(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var n0, n1, m0, m1 int64
	if err := s.Query("SELECT n, m FROM ks.counts WHERE k = 0 AND c = 1").Scan(&n0, &m0); err != nil {
		t.Fatal(err)
	}
	if err := s.Query("SELECT n, m FROM ks.counts WHERE k = 1 AND c = 1").Scan(&n1, &m1); err != nil {
		t.Fatal(err)
	}
	// Client c adds c+1 ops times; the decrements add up to one per op.
	want := int64(0)
	for client := range clients {
		want += int64(client+1) * ops
	}
	if n0+n1 != want || m0+m1 != -clients*ops || m0 != -clients*ops/2 {
		t.Fatalf("the counters hold n = %d + %d and m = %d + %d; the additions sum to %d and -%d", n0, n1, m0, m1, want, clients*ops)
	}
}

// TestCounterRefusals: what gocql sees of the counter writes Cassandra
// refuses, by level and by statement, with its messages; and the batches
// at SERIAL it takes.
func TestCounterRefusals(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.hits (k int PRIMARY KEY, n counter)")
	for _, c := range []struct {
		query, want string
		cl          gocql.Consistency
	}{
		{"UPDATE ks.hits SET n = n + 1 WHERE k = 1", "Consistency level ANY is not yet supported for counter table hits", gocql.Any},
		{"UPDATE ks.hits SET n = n + 1 WHERE k = 1", "Counter operations are inherently non-serializable", gocql.Consistency(gocql.Serial)},
		{"UPDATE ks.hits SET n = n + 1 WHERE k = 1", "Counter operations are inherently non-serializable", gocql.Consistency(gocql.LocalSerial)},
		{"INSERT INTO ks.hits (k, n) VALUES (1, 1)", "INSERT statements are not allowed on counter tables, use UPDATE instead", gocql.One},
		{"UPDATE ks.hits SET n = 3 WHERE k = 1", "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)", gocql.One},
	} {
		err := s.Query(c.query).Consistency(c.cl).Exec()
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid || re.Message() != c.want {
			t.Errorf("%s at %s: %v", c.query, c.cl, err)
		}
	}
	var n int64
	if err := s.Query("SELECT n FROM ks.hits WHERE k = 1").Scan(&n); !errors.Is(err, gocql.ErrNotFound) {
		t.Fatalf("a refused counter write left %d, %v", n, err)
	}
	// Cassandra checks the level of a statement alone, not of a batch's: a
	// batch without conditions at SERIAL runs as at QUORUM.
	mustExec(t, s, "CREATE TABLE ks.plain (k int PRIMARY KEY, v int)")
	for _, c := range []struct {
		kind gocql.BatchType
		stmt string
	}{
		{gocql.CounterBatch, "UPDATE ks.hits SET n = n + 1 WHERE k = 1"},
		{gocql.LoggedBatch, "UPDATE ks.plain SET v = 1 WHERE k = 1"},
	} {
		b := s.NewBatch(c.kind)
		b.Query(c.stmt)
		b.SetConsistency(gocql.Consistency(gocql.Serial))
		if err := s.ExecuteBatch(b); err != nil {
			t.Errorf("a batch of %s at SERIAL: %v", c.stmt, err)
		}
	}
	var v int
	if err := s.Query("SELECT n FROM ks.hits WHERE k = 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("the counter batch at SERIAL: %d, %v", n, err)
	}
	if err := s.Query("SELECT v FROM ks.plain WHERE k = 1").Scan(&v); err != nil || v != 1 {
		t.Errorf("the logged batch at SERIAL: %d, %v", v, err)
	}
}
