package exec

import (
	"bytes"
	"sort"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// Clustering restrictions become byte ranges of encoded clusterings. The
// leading columns restricted by = or IN (one column or a tuple of them)
// give prefixes, every combination of their values; a range on the
// columns after them cuts each prefix's rows to slices. A tuple range,
// (c1, c2) > (1, 2), compares each column in its type's natural order
// whatever the clustering order, so it is the union of one slice per
// column: c1 > 1, or c1 = 1 and c2 > 2.

// clusteringSlice is the range [start, end) of encoded clusterings, as
// mutation.StartBound and EndBound make them: an empty start is the
// bottom, mutation.TopBound the top.
type clusteringSlice struct{ start, end []byte }

// clusteringRestrictions are a WHERE clause's clustering restrictions.
type clusteringRestrictions struct {
	// eqColumns is how many leading clustering columns = or IN restrict.
	eqColumns int
	// prefixes are the encoded values of those columns, one per
	// combination, in clustering order; one empty prefix when none.
	prefixes [][]byte
	// slices are the ranges selected, in clustering order: one per prefix,
	// or several when a range on a tuple with mixed orders needs them.
	slices []clusteringSlice
	// restricted says some clustering column is restricted.
	restricted bool
}

// clusteringRelation is one relation on clustering columns: on one column,
// or on a tuple of consecutive ones (first is the position of the first).
type clusteringRelation struct {
	first   int
	columns []*schema.Column
	rel     cql.Relation
	multi   bool
}

func (r clusteringRelation) isRange() bool {
	switch r.rel.Op {
	case cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte:
		return true
	}
	return false
}

// fullRow reports whether = or IN restrict every clustering column, so
// the prefixes are whole clusterings.
func (cr *clusteringRestrictions) fullRow(t *schema.Table) bool {
	return cr.eqColumns == len(t.Clustering)
}

// missingColumn names the first clustering column no = or IN restricts.
func (cr *clusteringRestrictions) missingColumn(t *schema.Table) string {
	return t.Clustering[cr.eqColumns].Name
}

// multiColumnRelation checks a tuple relation's columns: clustering
// columns, each once, consecutive in key order.
func multiColumnRelation(t *schema.Table, r cql.Relation) (clusteringRelation, error) {
	cr := clusteringRelation{rel: r, multi: true}
	seen := map[string]bool{}
	for i, name := range r.Columns {
		c := t.Column(name)
		if c == nil {
			return cr, invalidf("Undefined column name %s", name)
		}
		if c.Kind != schema.Clustering {
			return cr, invalidf("Multi-column relations can only be applied to clustering columns but was applied to: %s", c.Name)
		}
		if seen[c.Name] {
			return cr, invalidf("Column \"%s\" appeared twice in a relation: %s", c.Name, r)
		}
		seen[c.Name] = true
		if i > 0 && c.Position != cr.columns[i-1].Position+1 {
			return cr, invalidf("Clustering columns must appear in the PRIMARY KEY order in multi-column relations: %s", r)
		}
		cr.columns = append(cr.columns, c)
	}
	cr.first = cr.columns[0].Position
	switch r.Op {
	case cql.OpEq, cql.OpIn, cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte:
	default:
		return cr, invalidf("%s is not supported yet in WHERE", r)
	}
	return cr, nil
}

// parseClustering turns the relations on clustering columns into prefixes
// and slices. Relations start at some column; from the first, each = or
// IN covers its columns and the next must start after them, and a range
// ends the chain.
func parseClustering(t *schema.Table, rels []clusteringRelation, bound *binding) (clusteringRestrictions, error) {
	cr := clusteringRestrictions{prefixes: [][]byte{{}}, restricted: len(rels) > 0}
	byFirst := map[int][]clusteringRelation{}
	covered := map[int]bool{}       // positions some relation restricts
	multiCovered := map[int]bool{}  // positions a tuple relation restricts
	singleCovered := map[int]bool{} // positions a one-column relation restricts
	for _, r := range rels {
		byFirst[r.first] = append(byFirst[r.first], r)
		for _, c := range r.columns {
			covered[c.Position] = true
			if r.multi {
				multiCovered[c.Position] = true
			} else {
				singleCovered[c.Position] = true
			}
		}
	}
	for pos := range multiCovered {
		if singleCovered[pos] {
			return cr, invalidf("Mixing single column relations and multi column relations on clustering columns is not allowed")
		}
	}
	pos := 0
	var ranges []clusteringRelation
	visitedStart := map[int]bool{} // positions whose relations the loop took
	for pos < len(t.Clustering) {
		here := byFirst[pos]
		if len(here) == 0 {
			break
		}
		visitedStart[pos] = true
		var eqs []clusteringRelation
		for _, r := range here {
			if r.isRange() {
				ranges = append(ranges, r)
			} else {
				eqs = append(eqs, r)
			}
		}
		if len(eqs) == 0 {
			break
		}
		name := eqs[0].columns[0].Name
		if len(eqs) > 1 || len(ranges) > 0 {
			if eqs[0].rel.Op == cql.OpIn && (len(eqs) == 1 || eqs[1].rel.Op == cql.OpIn) {
				return cr, invalidf("%s cannot be restricted by more than one relation if it includes a IN", name)
			}
			return cr, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
		}
		tuples, err := clusteringValues(eqs[0], bound)
		if err != nil {
			return cr, err
		}
		if cr.prefixes, err = extendPrefixes(t, cr.prefixes, pos, tuples); err != nil {
			return cr, err
		}
		pos += len(eqs[0].columns)
		cr.eqColumns = pos
	}
	end := pos // the first column after everything consumed
	for _, r := range ranges {
		end = max(end, r.first+len(r.columns))
	}
	// A relation that starts inside what an = or IN tuple covered was
	// never visited: Cassandra refuses the pair.
	for _, r := range rels {
		if r.first < end && !visitedStart[r.first] {
			return cr, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", r.columns[0].Name)
		}
	}
	for later := end; later < len(t.Clustering); later++ {
		if !covered[later] {
			continue
		}
		if len(ranges) > 0 {
			return cr, invalidf("Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
				t.Clustering[later].Name, ranges[0].columns[0].Name)
		}
		return cr, invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted",
			t.Clustering[later].Name, t.Clustering[pos].Name)
	}
	for _, p := range cr.prefixes {
		cr.slices = append(cr.slices, clusteringSlice{start: mutation.StartBound(p, true), end: mutation.EndBound(p, true)})
	}
	if len(ranges) == 0 {
		return cr, nil
	}
	var lower, upper *clusteringRelation
	for i, r := range ranges {
		side := &upper
		if r.rel.Op == cql.OpGt || r.rel.Op == cql.OpGte {
			side = &lower
		}
		if *side != nil {
			which := "end"
			if side == &lower {
				which = "start"
			}
			return cr, invalidf("More than one restriction was found for the %s bound on %s", which, columnNames(r.columns))
		}
		*side = &ranges[i]
	}
	var out []clusteringSlice
	for i, p := range cr.prefixes {
		within := cr.slices[i : i+1]
		for _, r := range []*clusteringRelation{lower, upper} {
			if r == nil {
				continue
			}
			s, err := rangeSlices(t, p, *r, bound)
			if err != nil {
				return cr, err
			}
			within = intersectSlices(within, s)
		}
		out = append(out, within...)
	}
	cr.slices = out
	return cr, nil
}

func columnNames(cs []*schema.Column) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// clusteringValues evaluates the right side of an = or IN on clustering
// columns: one tuple of values (one value each for a single column) per
// candidate.
func clusteringValues(r clusteringRelation, bound *binding) ([][][]byte, error) {
	if !r.multi {
		c := r.columns[0]
		if r.rel.Op == cql.OpEq {
			v, err := keyValue(r.rel.Value, c, bound)
			return [][][]byte{{v}}, err
		}
		vals, err := inValues(r.rel, c, bound)
		out := make([][][]byte, len(vals))
		for i, v := range vals {
			out[i] = [][]byte{v}
		}
		return out, err
	}
	if r.rel.Op == cql.OpEq {
		tuple, err := tupleValue(r, r.rel.Value, bound)
		return [][][]byte{tuple}, err
	}
	if len(r.rel.Values) == 0 && r.rel.Value != nil { // IN ?
		v, err := term(r.rel.Value, cqltype.ListOf(tupleType(r.columns), false), "in("+columnNames(r.columns)+")", bound)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null value for IN restriction on (%s)", columnNames(r.columns))
		}
		elems, err := cqltype.DecodeCollection(v)
		if err != nil {
			return nil, asInvalid(err)
		}
		out := make([][][]byte, len(elems))
		for i, e := range elems {
			if out[i], err = splitTupleValue(r, e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	out := make([][][]byte, len(r.rel.Values))
	for i, e := range r.rel.Values {
		var err error
		if out[i], err = tupleValue(r, e, bound); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func tupleType(cs []*schema.Column) *cqltype.Type {
	ts := make([]*cqltype.Type, len(cs))
	for i, c := range cs {
		ts[i] = c.Type
	}
	return cqltype.TupleOf(ts...)
}

// tupleValue evaluates a tuple term against a tuple relation's columns.
func tupleValue(r clusteringRelation, e cql.Expr, bound *binding) ([][]byte, error) {
	if lit, ok := e.(*cql.TupleLiteral); ok {
		if len(lit.Elements) != len(r.columns) {
			return nil, invalidf("Expected %d elements in value tuple, but got %d: %s", len(r.columns), len(lit.Elements), lit)
		}
		// Each element is a value of its column, as Cassandra checks it.
		vals := make([][]byte, len(lit.Elements))
		for i, el := range lit.Elements {
			var err error
			if vals[i], err = keyValue(el, r.columns[i], bound); err != nil {
				return nil, err
			}
		}
		return vals, nil
	}
	v, err := term(e, tupleType(r.columns), "("+columnNames(r.columns)+")", bound)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, invalidf("Invalid null value for tuple (%s)", columnNames(r.columns))
	}
	return splitTupleValue(r, v)
}

func splitTupleValue(r clusteringRelation, v []byte) ([][]byte, error) {
	vals, err := cqltype.DecodeTuple(v, len(r.columns))
	if err != nil {
		return nil, asInvalid(err)
	}
	for i, x := range vals {
		if x == nil {
			return nil, invalidf("Invalid null value in condition for column %s", r.columns[i].Name)
		}
	}
	return vals, nil
}

// encodeAt appends the encoding of values for the clustering columns
// from position pos.
func encodeAt(t *schema.Table, dst []byte, pos int, values [][]byte) ([]byte, error) {
	enc, err := t.ClusteringLayout()[pos:].Encode(dst, values)
	return enc, asInvalid(err)
}

// extendPrefixes appends every tuple to every prefix (the columns from
// pos), keeping the result sorted in clustering order and distinct.
func extendPrefixes(t *schema.Table, prefixes [][]byte, pos int, tuples [][][]byte) ([][]byte, error) {
	out := make([][]byte, 0, len(prefixes)*len(tuples))
	for _, p := range prefixes {
		for _, tuple := range tuples {
			enc, err := encodeAt(t, append([]byte(nil), p...), pos, tuple)
			if err != nil {
				return nil, err
			}
			out = append(out, enc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	kept := out[:0]
	for _, p := range out {
		if len(kept) == 0 || !bytes.Equal(kept[len(kept)-1], p) {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// rangeSlices are the rows under prefix whose columns from r.first compare
// with r's values by r's operator, each column in its type's order.
func rangeSlices(t *schema.Table, prefix []byte, r clusteringRelation, bound *binding) ([]clusteringSlice, error) {
	var vals [][]byte
	if r.multi {
		var err error
		if vals, err = tupleValue(r, r.rel.Value, bound); err != nil {
			return nil, err
		}
	} else {
		v, err := keyValue(r.rel.Value, r.columns[0], bound)
		if err != nil {
			return nil, err
		}
		vals = [][]byte{v}
	}
	greater := r.rel.Op == cql.OpGt || r.rel.Op == cql.OpGte
	var out []clusteringSlice
	fixed := prefix // the prefix and the values of the columns before k
	for k, c := range r.columns {
		at, err := encodeAt(t, append([]byte(nil), fixed...), r.first+k, vals[k:k+1])
		if err != nil {
			return nil, err
		}
		// Byte order runs with the type's order, or against it for a
		// descending column.
		if greater != c.Descending {
			out = append(out, clusteringSlice{start: mutation.StartBound(at, false), end: mutation.EndBound(fixed, true)})
		} else {
			out = append(out, clusteringSlice{start: mutation.StartBound(fixed, true), end: mutation.EndBound(at, false)})
		}
		fixed = at
	}
	if r.rel.Op == cql.OpGte || r.rel.Op == cql.OpLte {
		out = append(out, clusteringSlice{start: mutation.StartBound(fixed, true), end: mutation.EndBound(fixed, true)})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].start, out[j].start) < 0 })
	return out, nil
}

// intersectSlices is the ranges both sorted, disjoint lists cover.
func intersectSlices(a, b []clusteringSlice) []clusteringSlice {
	var out []clusteringSlice
	for i, j := 0, 0; i < len(a) && j < len(b); {
		start, end := a[i].start, a[i].end
		if bytes.Compare(b[j].start, start) > 0 {
			start = b[j].start
		}
		if bytes.Compare(b[j].end, end) < 0 {
			end = b[j].end
		}
		if bytes.Compare(start, end) < 0 {
			out = append(out, clusteringSlice{start: start, end: end})
		}
		if bytes.Compare(a[i].end, b[j].end) < 0 {
			i++
		} else {
			j++
		}
	}
	return out
}
