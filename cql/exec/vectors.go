package exec

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/ann"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// Vector search (Cassandra 5.0): the similarity functions and list
// literals given to vector parameters.

// similarityCalls are the vector similarity functions by name.
var similarityCalls = map[string]ann.Similarity{
	"similarity_cosine":      ann.Cosine,
	"similarity_dot_product": ann.DotProduct,
	"similarity_euclidean":   ann.Euclidean,
}

// similarityFunction is a similarity function over the vector type its
// arguments have: the first argument of a known type decides it, and it
// must be a float vector.
func similarityFunction(name string, sim ann.Similarity, args []cqltype.FunctionArg) (*function, error) {
	qualified := "system." + name
	if len(args) != 2 {
		return nil, invalidf("Invalid number of arguments for function %s(vector<float, n>, vector<float, n>)", qualified)
	}
	var vt *cqltype.Type
	for _, a := range args {
		if t := cqltype.ArgType(a); t != nil {
			if !t.IsFloatVector() {
				return nil, invalidf("Function %s requires a float vector argument, but found argument %s of type %s", qualified, a, t.SchemaString())
			}
			if vt == nil {
				vt = t
			}
		}
	}
	if vt == nil {
		if n, ok := args[0].(listArg); ok {
			vt = cqltype.VectorOf(cqltype.FloatType, len(n.elems))
		} else if n, ok := args[1].(listArg); ok {
			vt = cqltype.VectorOf(cqltype.FloatType, len(n.elems))
		} else {
			return nil, invalidf("Cannot infer type of argument %s in call to function %s(vector<float, n>, vector<float, n>): use type casts to disambiguate", args[0], qualified)
		}
	}
	return &function{name: qualified, args: []*cqltype.Type{vt, vt}, returns: cqltype.FloatType,
		scalar: func(vals [][]byte) ([]byte, error) {
			if vals[0] == nil || vals[1] == nil {
				return nil, nil
			}
			a, err := ann.DecodeVector(vals[0], nil)
			if err != nil {
				return nil, invalidf("%v", err)
			}
			b, err := ann.DecodeVector(vals[1], nil)
			if err != nil {
				return nil, invalidf("%v", err)
			}
			if len(a) != len(b) {
				return nil, invalidf("All arguments must have the same vector dimensions")
			}
			if sim == ann.Cosine && (ann.IsZero(a) || ann.IsZero(b)) {
				return nil, invalidf("Function %s doesn't support all-zero vectors.", qualified)
			}
			return cqltype.EncodeFloat(sim.Score(a, b)), nil
		}}, nil
}

// listArg is a list literal as overload resolution sees it: it fits a
// list, or a vector of as many elements.
type listArg struct {
	elems []cql.Expr
	text  string
}

func (a listArg) AssignableTo(p *cqltype.Type) cqltype.Assignability {
	switch {
	case p.Kind == cqltype.Vector && p.Dimension == len(a.elems), p.Kind == cqltype.List:
		for _, e := range a.elems {
			if !termArg(e).AssignableTo(p.Params[0]).IsAssignable() {
				return cqltype.NotAssignable
			}
		}
		return cqltype.WeaklyAssignable
	}
	return cqltype.NotAssignable
}

func (a listArg) String() string { return a.text }

func isSimilarityCall(name string) bool {
	_, ok := similarityCalls[name]
	return ok
}

// maxTopK is the largest LIMIT an ANN query takes (Cassandra's
// cassandra.sai.vector_search.max_top_k).
const maxTopK = 1000

// annQuery is a SELECT's ORDER BY column ANN OF vector: the rows are
// ranked by their vector's similarity to it, by the column index's
// function, most similar first.
type annQuery struct {
	column *schema.Column
	index  *schema.Index
	sim    ann.Similarity
	vector []float32
	raw    []byte
	// rowVector holds the row being scored: rows are scored one at a
	// time, in the select's loop.
	rowVector []float32
}

func hasANN(order []cql.Ordering) bool {
	return slices.ContainsFunc(order, func(o cql.Ordering) bool { return o.ANN != nil })
}

// vectorIndexOf is the storage-attached index of vector column c, or nil.
func vectorIndexOf(t *schema.Table, c *schema.Column) *schema.Index {
	for _, ix := range t.Indexes {
		if targets, err := ix.Targets(); err == nil && len(targets) == 1 && targets[0].Column == c.Name &&
			ix.Options[schema.IndexClassOption] == schema.StorageAttachedIndexClass {
			return ix
		}
	}
	return nil
}

// planANN checks an ANN ordering as Cassandra 5.0 does when it prepares
// the statement, and evaluates its vector.
func planANN(t *schema.Table, st *cql.Select, bound *binding) (*annQuery, error) {
	var o *cql.Ordering
	for i := range st.OrderBy {
		if st.OrderBy[i].ANN == nil {
			continue
		}
		if o != nil {
			return nil, invalidf("Cannot specify more than one ANN ordering")
		}
		o = &st.OrderBy[i]
	}
	if len(st.OrderBy) > 1 {
		return nil, invalidf("ANN ordering does not support any other ordering")
	}
	if o.Descending {
		return nil, invalidf("Descending ANN ordering is not supported")
	}
	c := t.Column(o.Column)
	if c == nil {
		return nil, invalidf("Undefined column name %s in table %s", o.Column, t)
	}
	if !c.Type.IsFloatVector() {
		return nil, invalidf("ANN ordering is only supported on float vector indexes")
	}
	ix := vectorIndexOf(t, c)
	if ix == nil {
		return nil, invalidf("ANN ordering by vector requires the column to be indexed")
	}
	if err := checkANNRestrictions(t, st.Where); err != nil {
		return nil, err
	}
	q := &annQuery{column: c, index: ix, sim: indexSimilarity(t, ix)}
	v, err := term(o.ANN, c.Type, c.Name, bound)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, invalidf("Invalid null value for %s in ANN ordering", c.Name)
	}
	q.raw = v
	if q.vector, err = ann.DecodeVector(v, nil); err != nil {
		return nil, invalidf("%v", err)
	}
	if err := checkIndexableVector(q.sim, q.vector); err != nil && !bound.preparing() {
		return nil, err
	}
	return q, nil
}

// checkANNRestrictions refuses restrictions an ANN query cannot honour
// by its index: a partition key partly restricted, a clustering column
// without the whole partition key, a regular column no index serves.
func checkANNRestrictions(t *schema.Table, where []cql.Relation) error {
	pkEq := map[string]bool{}
	for _, r := range where {
		if r.Kind == cql.ColumnRelation && (r.Op == cql.OpEq || r.Op == cql.OpIn) {
			for _, name := range r.Columns {
				if c := t.Column(name); c != nil && c.Kind == schema.PartitionKey {
					pkEq[name] = true
				}
			}
		}
	}
	wholeKey := len(pkEq) == len(t.PartitionKey)
	for _, r := range where {
		if r.Kind == cql.TokenRelation || len(r.Columns) == 0 {
			continue
		}
		c := t.Column(r.Columns[0])
		if c == nil {
			continue // the WHERE clause's own checks name it
		}
		switch {
		case c.Kind == schema.PartitionKey && !wholeKey,
			c.Kind == schema.Clustering && !wholeKey,
			!c.IsPrimaryKey() && !indexServes(t, r):
			return invalidf("ANN ordering by vector requires all restricted column(s) to be indexed")
		}
	}
	return nil
}

// checkIndexableVector refuses a vector a vector index cannot rank, as
// Cassandra's index does: a zero vector under cosine, a value that is not
// finite or too large to square.
func checkIndexableVector(sim ann.Similarity, v []float32) error {
	for i, f := range v {
		switch {
		case math.IsNaN(float64(f)) || math.IsInf(float64(f), 0):
			return invalidf("non-finite value at vector[%d]=%s", i, cqltype.JavaFloatText(float64(f), 32))
		case math.Abs(float64(f)) > 1e17:
			return invalidf("Out-of-bounds value at vector[%d]=%s", i, cqltype.JavaFloatText(float64(f), 32))
		}
	}
	if sim == ann.Cosine && ann.IsZero(v) {
		return invalidf("Zero vectors cannot be indexed or queried with cosine similarity")
	}
	return nil
}

// topKChecks are the checks Cassandra makes of an ANN query when it runs
// it, in its order, with the warnings of what it changes: the level (to
// ONE or LOCAL_ONE) and a page size below the limit (to the limit).
func (s *Session) topKChecks(grouped bool, limit, perPartition int, opts QueryParams) ([]string, error) {
	var warnings []string
	if grouped {
		return nil, invalidf("Top-K queries can not be run with aggregation")
	}
	switch c := opts.Consistency; {
	case c == request.Serial || c == request.LocalSerial:
		return nil, invalidf("Top-K queries can only be run with consistency level ONE/LOCAL_ONE. Consistency level %s was used.", c)
	case !readsOneReplica(c):
		to := request.One
		if c.IsLocal() {
			to = request.LocalOne
		}
		warnings = append(warnings, fmt.Sprintf("Top-K queries can only be run with consistency level ONE / LOCAL_ONE / NODE_LOCAL. "+
			"Consistency level %s was requested. Downgrading the consistency level to %s.", c, to))
		s.consistency = to
	}
	if limit == 0 {
		return nil, invalidf("Top-K queries must have a limit specified and the limit must be less than the query page size")
	}
	if perPartition > 0 {
		return nil, invalidf("Top-K queries do not support per-partition limits")
	}
	if opts.PageSize > 0 && opts.PageSize < limit {
		warnings = append(warnings, fmt.Sprintf("Top-K queries do not support paging and the page size is set to %d, which is less than LIMIT %d. "+
			"The page size has been set to %d to match the LIMIT.", opts.PageSize, limit, limit))
	}
	if limit > maxTopK {
		return nil, invalidf("Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than %d. LIMIT was %d", maxTopK, limit)
	}
	return warnings, nil
}

// indexSimilarity is the similarity function a vector index ranks by.
func indexSimilarity(t *schema.Table, ix *schema.Index) ann.Similarity {
	name, _, _ := ix.VectorSimilarity(t)
	sim, _ := ann.ParseSimilarity(name)
	return sim
}

// score is the similarity of a row's vector to the query's, as a float
// value; nil when the row has no vector.
func (q *annQuery) score(v []byte) []byte {
	if v == nil {
		return nil
	}
	rv, err := ann.DecodeVector(v, q.rowVector[:0])
	if err != nil || len(rv) != len(q.vector) {
		return nil
	}
	q.rowVector = rv
	return cqltype.EncodeFloat(q.sim.Score(q.vector, rv))
}

// compareScores orders two scores, a missing one lowest.
func compareScores(a, b []byte) int {
	switch {
	case a == nil || b == nil:
		return cmp.Compare(boolInt(a != nil), boolInt(b != nil))
	}
	return cqltype.FloatType.Compare(a, b)
}

// checkVectorRelations refuses a relation on an indexed vector column
// outside ANN ordering: the index only ranks.
func checkVectorRelations(t *schema.Table, where []cql.Relation) error {
	for _, r := range where {
		if r.Kind != cql.ColumnRelation || len(r.Columns) != 1 {
			continue
		}
		if c := t.Column(r.Columns[0]); c != nil && c.Type.Kind == cqltype.Vector && vectorIndexOf(t, c) != nil {
			return invalidf("Vector indexes only support ANN queries")
		}
	}
	return nil
}

// checkIndexedVectors refuses writes to t of vectors a vector index of
// their column cannot rank (checkIndexableVector), as Cassandra's index
// refuses them; here before anything is written, so no replica takes
// part of a write.
func checkIndexedVectors(t *schema.Table, ms []*mutation.Mutation) error {
	if len(t.Indexes) == 0 {
		return nil
	}
	for _, c := range t.Columns {
		if !c.Type.IsFloatVector() {
			continue
		}
		ix := vectorIndexOf(t, c)
		if ix == nil {
			continue
		}
		sim := indexSimilarity(t, ix)
		check := func(r *mutation.Row) error {
			if r == nil {
				return nil
			}
			for _, cell := range r.Cells {
				if cell.Column != c.Name || cell.Tombstone || len(cell.Value) == 0 {
					continue
				}
				v, err := ann.DecodeVector(cell.Value, nil)
				if err != nil {
					return invalidf("%v", err)
				}
				if err := checkIndexableVector(sim, v); err != nil {
					return err
				}
			}
			return nil
		}
		for _, m := range ms {
			if m == nil {
				continue
			}
			if err := check(m.Static); err != nil {
				return err
			}
			for _, ru := range m.Rows {
				if err := check(ru.Row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hasTokenRelation reports a token() restriction: an ANN query with one
// ranks every row of the token range, as each source's nearest vectors
// over the whole table may lie outside it.
func hasTokenRelation(where []cql.Relation) bool {
	return slices.ContainsFunc(where, func(r cql.Relation) bool { return r.Kind == cql.TokenRelation })
}
