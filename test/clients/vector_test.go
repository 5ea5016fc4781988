package clients

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/ann"
)

// vectorLiteral writes v as a CQL list literal, each float exactly.
func vectorLiteral(v []float32) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// TestVectorSearch runs ANN queries through gocql against a model of the
// vectors: the rows come most similar first, with the similarity the
// model computes, and hold at least nine in ten of the exact nearest ten;
// in the memtable, after a flush and after a restart. A query at QUORUM
// is run at ONE with Cassandra's warning, and the prepared form binds
// the query vector.
func TestVectorSearch(t *testing.T) {
	in := startIntegrityNode(t)
	s := in.session()
	mustExec(t, s, createKeyspace,
		"CREATE TABLE ks.docs (id int, c int, emb vector<float, 8>, note text, PRIMARY KEY (id, c))",
		"CREATE CUSTOM INDEX ON ks.docs (emb) USING 'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'euclidean'}")
	r := rand.New(rand.NewPCG(11, 12))
	random := func() []float32 {
		v := make([]float32, 8)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	var model [][]float32 // row id*3+c
	for id := 0; id < 300; id++ {
		for c := 0; c < 3; c++ {
			v := random()
			model = append(model, v)
			mustExec(t, s, fmt.Sprintf("INSERT INTO ks.docs (id, c, emb) VALUES (%d, %d, %s)", id, c, vectorLiteral(v)))
		}
	}
	// Rows without a vector are never found.
	mustExec(t, s, "INSERT INTO ks.docs (id, c, note) VALUES (1000, 0, 'no vector')")
	queries := make([][]float32, 10)
	for i := range queries {
		queries[i] = random()
	}
	check := func(when string) {
		t.Helper()
		hits := 0
		for i, q := range queries {
			var iter *gocql.Iter
			if i%2 == 0 {
				iter = s.Query("SELECT id, c, similarity_euclidean(emb, " + vectorLiteral(q) + ") FROM ks.docs ORDER BY emb ANN OF " + vectorLiteral(q) + " LIMIT 10").
					Consistency(gocql.Quorum).Iter()
			} else {
				iter = s.Query("SELECT id, c, similarity_euclidean(emb, "+vectorLiteral(q)+") FROM ks.docs ORDER BY emb ANN OF ? LIMIT ?",
					rawVector(ann.AppendVector(nil, q)), 10).Consistency(gocql.One).Iter()
			}
			var id, c int
			var score float32
			var got []int
			last := float32(math.Inf(1))
			for iter.Scan(&id, &c, &score) {
				row := id*3 + c
				got = append(got, row)
				want := ann.Euclidean.Score(q, model[row])
				if math.Abs(float64(score-want)) > 1e-5 || score > last {
					t.Fatalf("%s: row %d/%d scored %v after %v, its similarity is %v", when, id, c, score, last, want)
				}
				last = score
			}
			warnings := iter.Warnings()
			if err := iter.Close(); err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if len(got) != 10 {
				t.Fatalf("%s: %d rows, want 10", when, len(got))
			}
			for _, row := range ann.Euclidean.Exact(model, q, 10) {
				if slices.Contains(got, row) {
					hits++
				}
			}
			downgraded := slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "Downgrading the consistency level to ONE") })
			if downgraded != (i%2 == 0) {
				t.Fatalf("%s: query %d warned %q", when, i, warnings)
			}
		}
		if recall := float64(hits) / float64(10*len(queries)); recall < 0.9 {
			t.Fatalf("%s: recall@10 %.2f, want >= 0.9", when, recall)
		}
	}
	in.checkAcrossFlushAndRestart(&s, check)
}

// rawVector binds a serialized vector: gocql 1.7 has no vector type.
type rawVector []byte

func (v rawVector) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return v, nil }
