package exec

import (
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/schema"
)

// A query with ALLOW FILTERING reads the partitions its partition key
// names (every partition when the key is not fully given by = or IN) and
// keeps the rows every other relation accepts.

// rowFilter is one relation checked against each row.
type rowFilter struct {
	column *schema.Column
	op     cql.Operator
	values [][]byte      // the right side: one value, or IN's candidates
	elem   *cqltype.Type // the type values compare in
}

// splitForFiltering separates the relations a read can use to find its
// partitions (= or IN on every partition key column) from those to filter
// rows by.
func splitForFiltering(t *schema.Table, where []cql.Relation) (keys, filters []cql.Relation) {
	onKey := map[string]bool{}
	for _, r := range where {
		if r.Kind == cql.ColumnRelation && len(r.Columns) == 1 && (r.Op == cql.OpEq || r.Op == cql.OpIn) {
			if c := t.Column(r.Columns[0]); c != nil && c.Kind == schema.PartitionKey {
				onKey[c.Name] = true
			}
		}
	}
	whole := len(onKey) == len(t.PartitionKey)
	for _, r := range where {
		if whole && r.Kind == cql.ColumnRelation && len(r.Columns) == 1 && onKey[r.Columns[0]] && (r.Op == cql.OpEq || r.Op == cql.OpIn) {
			keys = append(keys, r)
			continue
		}
		filters = append(filters, r)
	}
	return keys, filters
}

// newFilters evaluates the filtering relations' values.
func newFilters(t *schema.Table, rels []cql.Relation, bound *binding) ([]rowFilter, error) {
	var out []rowFilter
	for _, r := range rels {
		if r.Kind != cql.ColumnRelation || len(r.Columns) != 1 {
			return nil, invalidf("%s is not supported yet in WHERE", r)
		}
		c := t.Column(r.Columns[0])
		if c == nil {
			return nil, invalidf("Undefined column name %s", r.Columns[0])
		}
		f := rowFilter{column: c, op: r.Op, elem: c.Type}
		switch r.Op {
		case cql.OpContains, cql.OpContainsKey:
			var err error
			if f.elem, err = containedType(c.Name, c.Type, r.Op); err != nil {
				return nil, err
			}
		case cql.OpEq, cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte, cql.OpIn:
			if c.Type.IsMultiCell() {
				return nil, invalidf("Collection column '%s' (%s) cannot be restricted by a '%s' relation", c.Name, c.Type.SchemaString(), r.Op)
			}
		default:
			return nil, invalidf("%s is not supported yet in WHERE", r)
		}
		if r.Op == cql.OpIn {
			vals, err := inValues(r, c, bound)
			if err != nil {
				return nil, err
			}
			f.values = vals
		} else {
			v, err := term(r.Value, f.elem, c.Name, bound)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, invalidf("Unsupported null value for column %s", c.Name)
			}
			f.values = [][]byte{v}
		}
		out = append(out, f)
	}
	return out, nil
}

// containedType is the type CONTAINS (or CONTAINS KEY) compares the
// elements (or keys) of column name, of type t, in.
func containedType(name string, t *cqltype.Type, op cql.Operator) (*cqltype.Type, error) {
	if op == cql.OpContainsKey {
		if t.Kind != cqltype.Map {
			return nil, invalidf("Cannot use CONTAINS KEY on non-map column %s", name)
		}
		return t.Params[0], nil
	}
	switch t.Kind {
	case cqltype.List, cqltype.Set:
		return t.Params[0], nil
	case cqltype.Map:
		return t.Params[1], nil
	}
	return nil, invalidf("Cannot use CONTAINS on non-collection column %s", name)
}

// accepts reports whether a row, as ReadRow gives it, passes the filter.
func (f *rowFilter) accepts(cells schema.RowValues) bool {
	v := cells[f.column.Index].Value
	if v == nil {
		return false
	}
	switch f.op {
	case cql.OpContains, cql.OpContainsKey:
		var elems [][]byte
		var err error
		if f.column.Type.Kind == cqltype.Map {
			keys, vals, derr := cqltype.DecodeMap(v)
			elems, err = vals, derr
			if f.op == cql.OpContainsKey {
				elems = keys
			}
		} else {
			elems, err = cqltype.DecodeCollection(v)
		}
		if err != nil {
			return false
		}
		for _, e := range elems {
			if f.elem.Compare(e, f.values[0]) == 0 {
				return true
			}
		}
		return false
	case cql.OpIn:
		for _, want := range f.values {
			if f.elem.Compare(v, want) == 0 {
				return true
			}
		}
		return false
	}
	c := f.elem.Compare(v, f.values[0])
	switch f.op {
	case cql.OpEq:
		return c == 0
	case cql.OpLt:
		return c < 0
	case cql.OpLte:
		return c <= 0
	case cql.OpGt:
		return c > 0
	case cql.OpGte:
		return c >= 0
	}
	return false
}
