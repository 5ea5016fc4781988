package exec

import (
	"fmt"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

func (s *Session) update(st *cql.Update, bound [][]byte) (*Result, error) {
	m, err := s.updateMutation(st, bound, nil)
	if err != nil {
		return nil, err
	}
	return s.applyWrites(m)
}

// updateMutation builds what an UPDATE writes: cells, and no row marker
// (an updated row whose cells all go is gone, unlike an inserted one).
func (s *Session) updateMutation(st *cql.Update, bound [][]byte, batchTS *int64) (*mutation.Mutation, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	if st.IfExists || len(st.Conditions) > 0 {
		return nil, lwtRefused()
	}
	kr, err := parseWhere(t, s.partitioner(), st.Where, bound, whereMode{})
	if err != nil {
		return nil, err
	}
	w, err := s.cellWriter(st.Using, t, bound, batchTS)
	if err != nil {
		return nil, err
	}
	m := mutation.NewMutation(t.ID, kr.key)
	row, static := mutation.NewRow(), mutation.NewRow()
	onlyStatic := true
	seen := map[string]bool{}
	for _, a := range st.Assignments {
		c := t.Column(a.Column)
		if c == nil {
			return nil, invalidf("Undefined column name %s in table %s.%s", a.Column, t.Keyspace, t.Name)
		}
		if c.IsPrimaryKey() {
			return nil, invalidf("PRIMARY KEY part %s found in SET part", c.Name)
		}
		if seen[c.Name] && a.Kind == cql.AssignValue {
			return nil, invalidf("Multiple definitions found for column %s", c.Name)
		}
		seen[c.Name] = true
		target := row
		if c.Kind == schema.Static {
			target = static
		} else {
			onlyStatic = false
		}
		if err := assign(w, target, c, a, bound, s.listReader(t, kr, w.Now)); err != nil {
			return nil, err
		}
	}
	if err := placeRows(t, kr, m, row, static, onlyStatic, "UPDATE"); err != nil {
		return nil, err
	}
	return m, nil
}

// placeRows puts the clustering row and the static row a write filled
// into its mutation: a clustering row needs every clustering column; a
// write of static columns only must not name any.
func placeRows(t *schema.Table, kr *keyRestrictions, m *mutation.Mutation, row, static *mutation.Row, onlyStatic bool, what string) error {
	schema.SortRow(row)
	schema.SortRow(static)
	if !onlyStatic || len(t.Clustering) == 0 {
		if !kr.fullRow(t) {
			return invalidf("Some clustering keys are missing: %s", t.Clustering[len(kr.prefix)].Name)
		}
		clustering, err := kr.clustering(t)
		if err != nil {
			return err
		}
		m.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
	} else if len(kr.prefix) > 0 {
		return invalidf("Invalid restrictions on clustering columns since the %s statement modifies only static columns", what)
	}
	if !static.IsEmpty() {
		m.Static = static
	}
	return nil
}

// assign writes one SET assignment into a row.
func assign(w *schema.CellWriter, r *mutation.Row, c *schema.Column, a cql.Assignment, bound [][]byte, current currentList) error {
	t := c.Type
	switch a.Kind {
	case cql.AssignValue:
		v, err := term(a.Value, t, c.Name, bound)
		if err != nil {
			return err
		}
		return asInvalid(w.Put(r, c, v))
	case cql.AssignAdd:
		if !t.IsMultiCell() {
			if t.Kind == cqltype.List || t.Kind == cqltype.Set || t.Kind == cqltype.Map {
				return invalidf("Invalid operation (%s) for frozen collection column %s", a, c.Name)
			}
			return invalidf("Invalid operation (%s) for non counter column %s", a, c.Name)
		}
		v, err := term(a.Value, t, c.Name, bound)
		if err != nil || v == nil {
			return err
		}
		cells, err := w.AppendCells(nil, c, v)
		if err != nil {
			return asInvalid(err)
		}
		r.Cells = append(r.Cells, cells...)
		return nil
	case cql.AssignSubtract:
		switch {
		case !t.IsMultiCell():
			return invalidf("Invalid operation (%s) for non counter column %s", a, c.Name)
		case t.Kind == cqltype.List:
			return removeListValues(w, r, c, a.Value, bound, current)
		}
		elemType := t.Params[0] // a set's elements, a map's keys
		v, err := term(a.Value, cqltype.SetOf(elemType, false), c.Name, bound)
		if err != nil || v == nil {
			return err
		}
		elems, err := cqltype.DecodeCollection(v)
		if err != nil {
			return asInvalid(err)
		}
		for _, e := range elems {
			path, err := elemType.AppendComparable(nil, e)
			if err != nil {
				return asInvalid(err)
			}
			r.Cells = append(r.Cells, w.Tombstone(c, path))
		}
		return nil
	case cql.AssignElement:
		if t.Kind != cqltype.Map || !t.IsMultiCell() {
			if t.Kind == cqltype.List && t.IsMultiCell() {
				return setListElement(w, r, c, a.Key, a.Value, bound, current)
			}
			return invalidf("Invalid operation (%s) for non map column %s", a, c.Name)
		}
		k, err := term(a.Key, t.Params[0], c.Name, bound)
		if err != nil {
			return err
		}
		if k == nil {
			return invalidf("Invalid null value for map key")
		}
		path, err := t.Params[0].AppendComparable(nil, k)
		if err != nil {
			return asInvalid(err)
		}
		v, err := term(a.Value, t.Params[1], c.Name, bound)
		if err != nil {
			return err
		}
		if v == nil {
			r.Cells = append(r.Cells, w.Tombstone(c, path))
			return nil
		}
		r.Cells = append(r.Cells, w.Cell(c, path, v))
		return nil
	case cql.AssignField:
		if t.Kind != cqltype.UDT {
			return invalidf("Invalid operation (%s) for non-UDT column %s", a, c.Name)
		}
		if !t.IsMultiCell() {
			return invalidf("Invalid operation (%s) for frozen UDT column %s", a, c.Name)
		}
		i := fieldIndex(t, a.Field)
		if i < 0 {
			return invalidf("UDT column %s does not have a field named %s", c.Name, a.Field)
		}
		v, err := term(a.Value, t.Params[i], c.Name+"."+a.Field, bound)
		if err != nil {
			return err
		}
		if v == nil {
			r.Cells = append(r.Cells, w.Tombstone(c, schema.FieldPath(i)))
			return nil
		}
		r.Cells = append(r.Cells, w.Cell(c, schema.FieldPath(i), v))
		return nil
	case cql.AssignPrepend:
		if t.Kind != cqltype.List || !t.IsMultiCell() {
			return invalidf("Invalid operation (%s) for non list column %s", a, c.Name)
		}
		return prependList(w, r, c, a.Value, bound)
	}
	return invalidf("%s is not supported yet", a)
}

func (s *Session) deleteRows(st *cql.Delete, bound [][]byte) (*Result, error) {
	m, err := s.deleteMutation(st, bound, nil)
	if err != nil {
		return nil, err
	}
	return s.applyWrites(m)
}

// deleteMutation builds what a DELETE writes: a partition deletion, a row
// deletion, a range tombstone, or tombstones of the columns named.
func (s *Session) deleteMutation(st *cql.Delete, bound [][]byte, batchTS *int64) (*mutation.Mutation, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	if st.IfExists || len(st.Conditions) > 0 {
		return nil, lwtRefused()
	}
	if st.Using.TTL != nil {
		return nil, invalidf("A DELETE statement cannot have a TTL")
	}
	kr, err := parseWhere(t, s.partitioner(), st.Where, bound, whereMode{allowRange: len(st.Columns) == 0})
	if err != nil {
		return nil, err
	}
	w, err := s.cellWriter(st.Using, t, bound, batchTS)
	if err != nil {
		return nil, err
	}
	w.TTL = 0
	m := mutation.NewMutation(t.ID, kr.key)
	del := mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
	if len(st.Columns) == 0 {
		switch {
		case kr.fullRow(t) && len(t.Clustering) > 0 || len(t.Clustering) == 0:
			clustering, err := kr.clustering(t)
			if err != nil {
				return nil, err
			}
			row := mutation.NewRow()
			row.Deletion = del
			m.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
		case len(kr.prefix) == 0 && kr.rangeColumn == nil:
			m.Deletion = del
		default:
			rt, err := kr.rangeTombstone(t, del)
			if err != nil {
				return nil, err
			}
			m.RangeTombstones = []mutation.RangeTombstone{rt}
		}
		return m, nil
	}
	row, static := mutation.NewRow(), mutation.NewRow()
	onlyStatic := true
	for _, sel := range st.Columns {
		c := t.Column(sel.Column)
		if c == nil {
			return nil, invalidf("Undefined column name %s in table %s.%s", sel.Column, t.Keyspace, t.Name)
		}
		if c.IsPrimaryKey() {
			return nil, invalidf("Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c.Name)
		}
		target := row
		if c.Kind == schema.Static {
			target = static
		} else {
			onlyStatic = false
		}
		if err := deleteColumn(w, target, c, sel, bound, s.listReader(t, kr, w.Now)); err != nil {
			return nil, err
		}
	}
	if err := placeRows(t, kr, m, row, static, onlyStatic, "DELETE"); err != nil {
		return nil, err
	}
	return m, nil
}

// deleteColumn writes the deletion of a column, an element or a field.
func deleteColumn(w *schema.CellWriter, r *mutation.Row, c *schema.Column, sel cql.DeleteSelector, bound [][]byte, current currentList) error {
	t := c.Type
	switch {
	case sel.Key != nil:
		if !t.IsMultiCell() || (t.Kind != cqltype.Map && t.Kind != cqltype.Set) {
			if t.Kind == cqltype.List && t.IsMultiCell() {
				return deleteListElement(w, r, c, sel.Key, bound, current)
			}
			return invalidf("Invalid deletion operation for non collection column %s", c.Name)
		}
		k, err := term(sel.Key, t.Params[0], c.Name, bound)
		if err != nil {
			return err
		}
		if k == nil {
			return invalidf("Invalid null value for %s element", c.Name)
		}
		path, err := t.Params[0].AppendComparable(nil, k)
		if err != nil {
			return asInvalid(err)
		}
		r.Cells = append(r.Cells, w.Tombstone(c, path))
		return nil
	case sel.Field != "":
		if t.Kind != cqltype.UDT || !t.IsMultiCell() {
			return invalidf("Invalid deletion operation for non-UDT column %s", c.Name)
		}
		i := fieldIndex(t, sel.Field)
		if i < 0 {
			return invalidf("UDT column %s does not have a field named %s", c.Name, sel.Field)
		}
		r.Cells = append(r.Cells, w.Tombstone(c, schema.FieldPath(i)))
		return nil
	}
	return asInvalid(w.Put(r, c, nil))
}

func (s *Session) batch(st *cql.Batch, bound [][]byte) (*Result, error) {
	if st.Kind == cql.CounterBatch {
		return nil, invalidf("Counter batches are not supported yet: counters arrive with a later issue")
	}
	if st.Using.TTL != nil {
		return nil, invalidf("Global TTL on the BATCH statement is not supported.")
	}
	var batchTS *int64
	if st.Using.Timestamp != nil {
		v, err := term(st.Using.Timestamp, cqltype.BigintType, "[timestamp]", bound)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null value of timestamp")
		}
		ts, _ := cqltype.DecodeBigint(v)
		batchTS = &ts
	}
	var ms []*mutation.Mutation
	for _, stmt := range st.Statements {
		var m *mutation.Mutation
		var err error
		switch stmt := stmt.(type) {
		case *cql.Insert:
			m, err = s.insertMutation(stmt, bound, batchTS)
		case *cql.Update:
			m, err = s.updateMutation(stmt, bound, batchTS)
		case *cql.Delete:
			m, err = s.deleteMutation(stmt, bound, batchTS)
		default:
			err = invalidf("%s is not allowed in a batch", fmt.Sprint(stmt))
		}
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return s.applyWrites(ms...)
}
