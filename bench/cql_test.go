package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
)

// BenchmarkCQL measures what the CQL layer costs: a prepared INSERT and a
// prepared SELECT by key through exec.Session against the same writes and
// reads made directly through the node's coordinator (mutations built by
// hand, partition reads), side by side, alternating, in one process.
// SIBYL_CQL_OPS (default 200,000) and SIBYL_CQL_ROUNDS (default 3) size it.
func BenchmarkCQL(b *testing.B) {
	ops := envInt("SIBYL_CQL_OPS", 200_000)
	rounds := envInt("SIBYL_CQL_ROUNDS", 3)
	value := make([]byte, b1ValueSize)
	fmt.Printf("CQL layer: %d prepared INSERTs (bigint key, %d-byte blob) and %d prepared SELECTs by key, %d goroutines, against the same through the coordinator\n",
		ops, b1ValueSize, ops, b1Writers)
	var writeRatios, readRatios []float64
	for round := 0; round < rounds; round++ {
		cqlW, cqlR := runCQL(b, ops, value, true)
		rawW, rawR := runCQL(b, ops, value, false)
		writeRatios = append(writeRatios, cqlW/rawW)
		readRatios = append(readRatios, cqlR/rawR)
		fmt.Printf("round %d: writes cql %.0f/s raw %.0f/s (%.2f); reads cql %.0f/s raw %.0f/s (%.2f)\n",
			round+1, cqlW, rawW, cqlW/rawW, cqlR, rawR, cqlR/rawR)
	}
	w, r := median(writeRatios), median(readRatios)
	fmt.Printf("median ratio cql/raw: writes %.2f, reads %.2f (goal: the CQL layer adds under 30%%, a ratio of at least %.2f)\n",
		w, r, 1/1.3)
	b.ReportMetric(w, "cql-write-ratio")
	b.ReportMetric(r, "cql-read-ratio")
}

// runCQL writes then reads ops rows on a fresh node, through CQL or not,
// and returns the ops/s of each phase.
func runCQL(b *testing.B, ops int, value []byte, viaCQL bool) (writes, reads float64) {
	n, err := node.Open(node.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	if _, err := exec.NewSession(n).Run(`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.kv (k bigint PRIMARY KEY, v blob)`); err != nil {
		b.Fatal(err)
	}
	t, err := n.Schema().Table("ks", "kv")
	if err != nil {
		b.Fatal(err)
	}
	insert, err := cql.Parse("INSERT INTO ks.kv (k, v) VALUES (?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	query, err := cql.Parse("SELECT v FROM ks.kv WHERE k = ?")
	if err != nil {
		b.Fatal(err)
	}
	sessions := make([]*exec.Session, b1Writers)
	for i := range sessions {
		sessions[i] = exec.NewSession(n)
	}
	// parallel gives goroutine w the operations i with i%b1Writers == w, so
	// each goroutine keeps to one session, as a connection does.
	worker := func(i int) int { return i % b1Writers }
	writes, err = parallel(ops, func(i int) error {
		key := cqltype.EncodeBigint(int64(i))
		if viaCQL {
			_, err := sessions[worker(i)].Execute(insert, key, value)
			return err
		}
		m := mutation.NewMutation(t.ID, key)
		row := mutation.NewRow()
		ts := time.Now().UnixMicro()
		row.Liveness = mutation.LivenessInfo{Timestamp: ts, ExpiresAt: mutation.NoDeletionTime}
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, value)}
		m.Rows = []mutation.RowUpdate{{Row: row}}
		return n.Apply([]*mutation.Mutation{m}, request.One, nil)
	})
	if err != nil {
		b.Fatal(err)
	}
	reads, err = parallel(ops, func(i int) error {
		key := cqltype.EncodeBigint(int64(i))
		if viaCQL {
			r, err := sessions[worker(i)].Execute(query, key)
			if err == nil && len(r.Rows) != 1 {
				err = fmt.Errorf("key %d: %d rows", i, len(r.Rows))
			}
			return err
		}
		p, err := n.ReadPartition(t, request.PartitionRead{Key: key, Slice: request.Slice{Now: time.Now().Unix()}})
		if err == nil && (p == nil || len(p.Rows) != 1) {
			err = fmt.Errorf("key %d not found", i)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return writes, reads
}
