package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/ann"
)

// rawVector binds a serialized vector<float, n>: gocql 1.7 has no vector
// type.
type rawVector []byte

func (v rawVector) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return v, nil }

// BenchmarkVectorSearch measures vector search on one bin/sibyl server:
// SIBYL_VEC_N rows (default 50,000) of SIBYL_VEC_DIM floats (default 64)
// drawn around 200 random centres (as embeddings cluster), loaded with
// prepared INSERTs, a cosine storage-attached index on them. It runs
// SIBYL_VEC_Q queries (default 500, drawn the same way) as
// `ORDER BY v ANN OF ? LIMIT 10` with 8 in flight and reports recall@10
// against exact search over the same rows, queries per second and
// latency, first with the rows in memtables and SSTables as the load left
// them, then after a flush (every row in an SSTable's graph).
func BenchmarkVectorSearch(b *testing.B) {
	n, dim, nq := envInt("SIBYL_VEC_N", 50_000), envInt("SIBYL_VEC_DIM", 64), envInt("SIBYL_VEC_Q", 500)
	srv := startServer(b, "the vector benchmark")
	defer srv.stop(b)
	s := srv.session(b)
	defer s.Close()
	for _, q := range []string{
		"CREATE KEYSPACE vs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		fmt.Sprintf("CREATE TABLE vs.docs (id int PRIMARY KEY, v vector<float, %d>)", dim),
		"CREATE CUSTOM INDEX ON vs.docs (v) USING 'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'cosine'}",
	} {
		if err := s.Query(q).Exec(); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(42, 7))
	centres := make([][]float32, 200)
	for i := range centres {
		centres[i] = gaussian(r, dim, 1)
	}
	draw := func() []float32 {
		c := centres[r.IntN(len(centres))]
		v := gaussian(r, dim, 0.35)
		for i := range v {
			v[i] += c[i]
		}
		return v
	}
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = draw()
	}
	queries := make([][]float32, nq)
	for i := range queries {
		queries[i] = draw()
	}
	fmt.Printf("vector search: %d rows of vector<float, %d> around %d centres, cosine; %d queries LIMIT 10, 8 in flight\n",
		n, dim, len(centres), nq)
	start := time.Now()
	_, _, err := inFlight(64, n, func(i int) error {
		return s.Query("INSERT INTO vs.docs (id, v) VALUES (?, ?)", i, rawVector(ann.AppendVector(nil, rows[i]))).Exec()
	})
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("  load: %d rows in %s (%.0f rows/s)\n", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
	exact := make([][]int, nq)
	_, _, _ = inFlight(2, nq, func(i int) error {
		exact[i] = ann.Cosine.Exact(rows, queries[i], 10)
		return nil
	})
	run := func(state string) {
		var hits atomic.Int64
		rate, hist, err := inFlight(8, nq, func(i int) error {
			iter := s.Query("SELECT id FROM vs.docs ORDER BY v ANN OF ? LIMIT 10", rawVector(ann.AppendVector(nil, queries[i]))).Iter()
			var id int
			var got []int
			for iter.Scan(&id) {
				got = append(got, id)
			}
			if err := iter.Close(); err != nil {
				return err
			}
			for _, want := range exact[i] {
				if slices.Contains(got, want) {
					hits.Add(1)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		recall := float64(hits.Load()) / float64(10*nq)
		fmt.Printf("  %s: recall@10 %.3f, %.0f queries/s, p50 %s, p99 %s\n", state, recall, rate,
			micros(hist.ValueAtQuantile(50)), micros(hist.ValueAtQuantile(99)))
		b.ReportMetric(recall, "recall@10-"+strings.ReplaceAll(state, " ", "-"))
		b.ReportMetric(rate, "queries/s-"+strings.ReplaceAll(state, " ", "-"))
	}
	run("as loaded")
	srv.nodetool(b, "flush")
	// The flush's graph is written after the SSTable is published: wait
	// for the server to settle before measuring.
	time.Sleep(2 * time.Second)
	run("after a flush")
}

func gaussian(r *rand.Rand, dim int, sd float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64() * sd)
	}
	return v
}
