package storage

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/ann"
	"github.com/sibyldb/sibyl/mutation"
)

func vectorIndexSpec(dim int) IndexSpec {
	return IndexSpec{Name: "iv", Vector: &VectorIndex{Similarity: ann.Euclidean, Dimension: dim},
		Terms: func(_, _ []byte, e *mutation.Entry, emit func([]byte)) {
			if e.Row != nil {
				for _, c := range e.Row.Cells {
					if c.Column == "v" && !c.Tombstone {
						emit(c.Value)
					}
				}
			}
		}}
}

// TestVectorIndexOffersTheNearestPartitions checks a vector index against
// exact search over the same vectors: the partitions it offers hold the
// nearest ones (recall@10 of at least 0.9 over the queries) and are few,
// from a memtable, from an SSTable with newer vectors of some partitions
// in the memtable, and after a restart reads the SSTable's graph.
func TestVectorIndexOffersTheNearestPartitions(t *testing.T) {
	const n, dim, k = 2000, 16, 10
	r := rand.New(rand.NewPCG(5, 6))
	random := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	fs := vfs.NewMem()
	opts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t", Indexes: []IndexSpec{vectorIndexSpec(dim)}}
	e, tbl := openIndexTest(t, fs, opts)
	model := make([][]float32, n) // by partition number
	write := func(pk int, ts int64) {
		v := random()
		model[pk] = v
		m := mutation.NewMutation(modelTableID, pkOf(pk))
		row := mutation.NewRow()
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, ann.AppendVector(nil, v))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	for pk := 0; pk < n; pk++ {
		write(pk, 1)
	}
	queries := make([][]float32, 20)
	for i := range queries {
		queries[i] = random()
	}
	check := func(tbl *Table, when string) {
		t.Helper()
		hits := 0
		for _, q := range queries {
			parts, err := tbl.IndexScan(IndexQuery{Index: "iv", Vector: q, Nearest: k}, ScanQuery{Now: 1})
			if err != nil {
				t.Fatal(err)
			}
			if max := 2 * nearestWanted(k); len(parts) > max {
				t.Fatalf("%s: the index offered %d partitions, want at most %d", when, len(parts), max)
			}
			offered := map[string]bool{}
			for _, p := range parts {
				offered[string(p.Key)] = true
			}
			for _, pk := range ann.Euclidean.Exact(model, q, k) {
				if offered[string(pkOf(pk))] {
					hits++
				}
			}
		}
		if recall := float64(hits) / float64(k*len(queries)); recall < 0.9 {
			t.Errorf("%s: recall@%d %.3f, want >= 0.9", when, k, recall)
		}
	}
	check(tbl, "in the memtable")
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	check(tbl, "in an SSTable")
	for pk := 0; pk < n; pk += 10 {
		write(pk, 2) // newer vectors in the memtable; the SSTable's are stale
	}
	check(tbl, "overwritten in the memtable")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, tbl = openIndexTest(t, fs, opts)
	defer e.Close()
	v := tbl.acquireView()
	for _, s := range v.sstables {
		if idx := s.index("iv"); idx == nil || idx.graph == nil {
			t.Fatalf("SSTable %d opened without its vector graph", s.gen)
		}
	}
	v.release()
	check(tbl, "after a restart")
}

// TestVectorIndexLooksPastOnePartitionsRows: when one partition's rows
// hold every vector nearest the query, the search goes wider until it
// offers as many partitions as a query needs.
func TestVectorIndexLooksPastOnePartitionsRows(t *testing.T) {
	opts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t", Indexes: []IndexSpec{vectorIndexSpec(2)}}
	e, tbl := openIndexTest(t, vfs.NewMem(), opts)
	defer e.Close()
	write := func(pk, ck int, v []float32) {
		m := mutation.NewMutation(modelTableID, pkOf(pk))
		row := mutation.NewRow()
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, ann.AppendVector(nil, v))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: row}}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	for ck := 0; ck < 300; ck++ {
		write(0, ck, []float32{float32(ck) / 1000, 0}) // all near the origin
	}
	for pk := 1; pk <= 60; pk++ {
		write(pk, 0, []float32{10 + float32(pk), 10})
	}
	for _, flushed := range []bool{false, true} {
		parts, err := tbl.IndexScan(IndexQuery{Index: "iv", Vector: []float32{0, 0}, Nearest: 10}, ScanQuery{Now: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := nearestWanted(10); len(parts) != want {
			t.Fatalf("flushed %v: the index offered %d partitions, want %d", flushed, len(parts), want)
		}
		if err := tbl.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}
