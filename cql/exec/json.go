package exec

import (
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// jsonColumn is the one column of a SELECT JSON result, named as Cassandra
// names it.
const jsonColumn = "[json]"

// selectJSON runs a SELECT JSON: the same query as without JSON, each
// row then folded into one text value, a JSON object of the selected
// columns by their result names. Folding after the fact keeps paging,
// aggregates and limits exactly as for the plain SELECT.
func (s *Session) selectJSON(st *cql.Select, opts QueryParams, bound *binding) (*Result, error) {
	plain := *st
	plain.JSON = false
	res, err := s.selectRows(&plain, opts, bound)
	if err != nil || res.Kind != RowsResult {
		return res, err
	}
	cols := res.Columns
	out := &Result{Kind: RowsResult, PagingState: res.PagingState}
	spec := ColumnSpec{Name: jsonColumn, Type: cqltype.TextType}
	if len(cols) > 0 {
		spec.Keyspace, spec.Table = cols[0].Keyspace, cols[0].Table
	}
	out.Columns = []ColumnSpec{spec}
	for _, row := range res.Rows {
		var b strings.Builder
		b.WriteByte('{')
		for i, v := range row {
			if i > 0 {
				b.WriteString(", ")
			}
			cqltype.AppendJSONString(&b, cqltype.JSONName(cols[i].Name))
			b.WriteString(": ")
			if v != nil && len(v) == 0 {
				// Cassandra's Selection writes an empty value as "" whatever
				// the type, before asking the type.
				b.WriteString(`""`)
				continue
			}
			b.WriteString(cols[i].Type.ToJSON(v))
		}
		b.WriteByte('}')
		out.Rows = append(out.Rows, [][]byte{[]byte(b.String())})
	}
	return out, nil
}

// insertJSON builds what INSERT JSON writes: the document's keys name
// columns (Cassandra's case rules: quoted keys are case-sensitive), its
// values convert with FromJSON, and the result goes through the same
// InsertMutation as INSERT ... VALUES. Columns the document leaves out are
// null, or untouched with DEFAULT UNSET.
func (s *Session) insertJSON(t *schema.Table, st *cql.Insert, bound *binding, batchTS *int64) (*mutation.Mutation, error) {
	raw, err := term(st.JSON, cqltype.TextType, jsonColumn, bound)
	if err != nil {
		return nil, err
	}
	if bound.preparing() {
		// The document is only known when executed: what is left to learn
		// is USING's markers.
		_, err := s.cellWriter(st.Using, t, bound, batchTS)
		return nil, err
	}
	if raw == nil {
		return nil, invalidf("Got null for INSERT JSON values")
	}
	doc, err := cqltype.ParseJSON(string(raw))
	if err != nil {
		return nil, invalidf("Could not decode JSON string as a map: %v. (String was: %s)", err, raw)
	}
	if doc == nil {
		return nil, invalidf("Got null for INSERT JSON values")
	}
	obj, ok := doc.(*cqltype.JSONObject)
	if !ok {
		return nil, invalidf("Could not decode JSON string as a map: expected a JSON object. (String was: %s)", raw)
	}
	byName := make(map[string]any, len(obj.Keys))
	for _, k := range obj.Keys { // two keys naming one column: the later stands
		byName[cqltype.JSONKey(k)] = obj.Values[k]
	}
	values := map[string][]byte{}
	for _, c := range t.Columns {
		jv, present := byName[c.Name]
		if !present {
			switch {
			case c.IsPrimaryKey() && st.DefaultUnset:
				return nil, invalidf("Invalid unset value for column %s", c.Name)
			case c.IsPrimaryKey():
				return nil, invalidf("Invalid null value in condition for column %s", c.Name)
			case !st.DefaultUnset:
				values[c.Name] = nil
			}
			continue
		}
		delete(byName, c.Name)
		v, err := c.Type.FromJSON(jv)
		if err == nil {
			v, err = received(c.Type, v)
		}
		if err != nil {
			return nil, invalidf("Error decoding JSON value for %s: %v", c.Name, err)
		}
		if v == nil && c.IsPrimaryKey() {
			return nil, invalidf("Invalid null value in condition for column %s", c.Name)
		}
		values[c.Name] = v
	}
	if len(byName) > 0 {
		// Cassandra names the first left over key of a hash map; the
		// smallest is as good and stable.
		left := make([]string, 0, len(byName))
		for k := range byName {
			left = append(left, k)
		}
		return nil, invalidf("JSON values map contains unrecognized column: %s", slices.Min(left))
	}
	w, err := s.cellWriter(st.Using, t, bound, batchTS)
	if err != nil {
		return nil, err
	}
	m, err := t.InsertMutation(values, w)
	return m, asInvalid(err)
}
