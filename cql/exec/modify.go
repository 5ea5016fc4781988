package exec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

func (s *Session) update(st *cql.Update, bound *binding) (*Result, error) {
	if IsConditional(st) {
		return s.conditionalWrite(st, bound, s.serial)
	}
	if err := s.checkStatement(st.Table, st); err != nil {
		return nil, err
	}
	ms, err := s.updateMutations(st, bound, nil)
	if err != nil {
		return nil, err
	}
	return s.applyStatement(st.Table, ms)
}

// updateMutations builds what an UPDATE writes, one mutation per
// partition: cells, and no row marker (an updated row whose cells all go
// is gone, unlike an inserted one).
func (s *Session) updateMutations(st *cql.Update, bound *binding, batchTS *int64) ([]*mutation.Mutation, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	if err := writeRefusal(t, st); err != nil {
		return nil, err
	}
	kr, err := parseWhere(t, s.partitioner(), st.Where, bound, whereMode{})
	if err != nil {
		return nil, err
	}
	w, err := s.cellWriter(st.Using, t, bound, batchTS)
	if err != nil {
		return nil, err
	}
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
		onlyStatic = onlyStatic && c.Kind == schema.Static
	}
	return s.writeRows(t, kr, w.Now, onlyStatic, "UPDATE", func(static bool, r *mutation.Row, current currentList) error {
		for _, a := range st.Assignments {
			if c := t.Column(a.Column); (c.Kind == schema.Static) == static {
				if err := assign(w, r, c, a, bound, current); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// writeRows builds the mutations of an UPDATE, or of a DELETE of columns:
// fill writes the static row of each partition, then each clustering row
// the restrictions name (lists read at now). A clustering row needs every clustering column
// (by = or IN); a write of static columns only must not name any.
func (s *Session) writeRows(t *schema.Table, kr *keyRestrictions, now int64, onlyStatic bool, what string,
	fill func(static bool, r *mutation.Row, current currentList) error) ([]*mutation.Mutation, error) {
	var clusterings [][]byte
	if !onlyStatic || len(t.Clustering) == 0 {
		if !kr.fullRow(t) {
			return nil, invalidf("Some clustering keys are missing: %s", kr.missingColumn(t))
		}
		clusterings = kr.prefixes
		for _, c := range clusterings {
			if err := t.CheckClustering(c); err != nil {
				return nil, asInvalid(err)
			}
		}
	} else if kr.restricted {
		return nil, invalidf("Invalid restrictions on clustering columns since the %s statement modifies only static columns", what)
	}
	ms := make([]*mutation.Mutation, 0, len(kr.keys))
	for _, key := range kr.keys {
		m := mutation.NewMutation(t.ID, key)
		static := mutation.NewRow()
		if err := fill(true, static, s.listReader(t, key, nil, now)); err != nil {
			return nil, err
		}
		static.Normalize()
		if !static.IsEmpty() {
			m.Static = static
		}
		for _, clustering := range clusterings {
			row := mutation.NewRow()
			if err := fill(false, row, s.listReader(t, key, clustering, now)); err != nil {
				return nil, err
			}
			row.Normalize()
			m.Rows = append(m.Rows, mutation.RowUpdate{Clustering: clustering, Row: row})
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// assign writes one SET assignment into a row; one whose value was bound
// "unset" leaves the column as it is.
func assign(w *schema.CellWriter, r *mutation.Row, c *schema.Column, a cql.Assignment, bound *binding, current currentList) error {
	if err := assignValue(w, r, c, a, bound, current); !isUnset(err) {
		return err
	}
	return nil
}

func assignValue(w *schema.CellWriter, r *mutation.Row, c *schema.Column, a cql.Assignment, bound *binding, current currentList) error {
	t := c.Type
	if t.Kind == cqltype.Counter {
		return assignCounter(w, r, c, a, bound)
	}
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

func (s *Session) deleteRows(st *cql.Delete, bound *binding) (*Result, error) {
	if IsConditional(st) {
		return s.conditionalWrite(st, bound, s.serial)
	}
	if err := s.checkStatement(st.Table, st); err != nil {
		return nil, err
	}
	ms, err := s.deleteMutations(st, bound, nil)
	if err != nil {
		return nil, err
	}
	return s.applyStatement(st.Table, ms)
}

// applyStatement applies the mutations of a statement without conditions
// (not in a batch; checkStatement passed it), through the counter path for
// a counter table.
func (s *Session) applyStatement(name cql.QualifiedName, ms []*mutation.Mutation) (*Result, error) {
	t, err := s.table(name)
	if err != nil {
		return nil, err
	}
	if t.IsCounter() {
		return s.applyCounters(ms)
	}
	if err := checkIndexedVectors(t, ms); err != nil {
		return nil, err
	}
	return s.applyWrites(ms...)
}

// deleteMutations builds what a DELETE writes, one mutation per partition:
// a partition deletion, row deletions, range tombstones, or tombstones of
// the columns named.
func (s *Session) deleteMutations(st *cql.Delete, bound *binding, batchTS *int64) ([]*mutation.Mutation, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	if err := writeRefusal(t, st); err != nil {
		return nil, err
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
	if len(st.Columns) == 0 {
		del := mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
		ms := make([]*mutation.Mutation, 0, len(kr.keys))
		for _, key := range kr.keys {
			m := mutation.NewMutation(t.ID, key)
			switch {
			case kr.fullRow(t):
				for _, clustering := range kr.prefixes {
					if err := t.CheckClustering(clustering); err != nil {
						return nil, asInvalid(err)
					}
					row := mutation.NewRow()
					row.Deletion = del
					m.Rows = append(m.Rows, mutation.RowUpdate{Clustering: clustering, Row: row})
				}
			case !kr.restricted:
				m.Deletion = del
			default:
				for _, sl := range kr.slices {
					m.RangeTombstones = append(m.RangeTombstones, mutation.RangeTombstone{Start: sl.start, End: sl.end, Deletion: del})
				}
			}
			ms = append(ms, m)
		}
		return ms, nil
	}
	onlyStatic := true
	for _, sel := range st.Columns {
		c := t.Column(sel.Column)
		if c == nil {
			return nil, invalidf("Undefined column name %s in table %s.%s", sel.Column, t.Keyspace, t.Name)
		}
		if c.IsPrimaryKey() {
			return nil, invalidf("Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c.Name)
		}
		onlyStatic = onlyStatic && c.Kind == schema.Static
	}
	return s.writeRows(t, kr, w.Now, onlyStatic, "DELETE", func(static bool, r *mutation.Row, current currentList) error {
		for _, sel := range st.Columns {
			if c := t.Column(sel.Column); (c.Kind == schema.Static) == static {
				if err := deleteColumn(w, r, c, sel, bound, current); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// deleteColumn writes the deletion of a column, an element or a field.
func deleteColumn(w *schema.CellWriter, r *mutation.Row, c *schema.Column, sel cql.DeleteSelector, bound *binding, current currentList) error {
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

func (s *Session) batch(st *cql.Batch, bound *binding) (*Result, error) {
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
	items := make([]batchItem, len(st.Statements))
	for i, stmt := range st.Statements {
		items[i] = batchItem{st: stmt, bound: bound, keyspace: s.keyspace}
	}
	if err := s.checkBatchVirtual(items, st.Kind); err != nil {
		return nil, err
	}
	if IsConditional(st) {
		return s.conditionalBatch(items, batchTS != nil, s.serial)
	}
	counters, err := s.checkBatchCounters(items, st.Kind, batchTS != nil)
	if err != nil {
		return nil, err
	}
	return s.applyBatch(items, batchTS, st.Kind, counters)
}

// BatchStatement is one statement of a protocol BATCH message, with its
// own values.
type BatchStatement struct {
	Statement cql.Statement
	// Keyspace is the keyspace its names resolve in (for a prepared
	// statement, the one it was prepared in).
	Keyspace string
	Values   [][]byte
	Unset    []bool
}

// RunBatch runs a BATCH message: every statement's mutations are built,
// then applied together. opts gives the default timestamp.
func (s *Session) RunBatch(kind cql.BatchKind, stmts []BatchStatement, opts QueryParams) (*Result, error) {
	s.consistency, s.serial = opts.Consistency, opts.SerialConsistency
	if s.base == nil {
		s.base = s.c.Schema() // one schema for the checks and the statements
		defer func() { s.base = nil }()
	}
	items := make([]batchItem, len(stmts))
	conditional := false
	for i, b := range stmts {
		if err := s.authorize(b.Statement, b.Keyspace); err != nil {
			return nil, err
		}
		items[i] = batchItem{st: b.Statement, keyspace: b.Keyspace,
			bound: &binding{values: b.Values, unset: b.Unset, defaultTimestamp: opts.DefaultTimestamp}}
		conditional = conditional || IsConditional(b.Statement)
	}
	if err := s.checkBatchVirtual(items, kind); err != nil {
		return nil, err
	}
	if conditional {
		return s.conditionalBatch(items, false, s.serial)
	}
	counters, err := s.checkBatchCounters(items, kind, false)
	if err != nil {
		return nil, err
	}
	return s.applyBatch(items, nil, kind, counters)
}

type batchItem struct {
	st       cql.Statement
	bound    *binding
	keyspace string
}

// applyBatch builds and applies a batch's statements; counters says they
// write counter tables (checkBatchCounters).
func (s *Session) applyBatch(items []batchItem, batchTS *int64, kind cql.BatchKind, counters bool) (*Result, error) {
	saved := s.keyspace
	defer func() { s.keyspace = saved }()
	var ms []*mutation.Mutation
	for _, item := range items {
		stmt, bound := item.st, item.bound
		s.keyspace = item.keyspace
		var more []*mutation.Mutation
		var err error
		switch stmt := stmt.(type) {
		case *cql.Insert:
			var m *mutation.Mutation
			if m, err = s.insertMutation(stmt, bound, batchTS); m != nil {
				more = []*mutation.Mutation{m} // none while an INSERT JSON is prepared
			}
		case *cql.Update:
			more, err = s.updateMutations(stmt, bound, batchTS)
		case *cql.Delete:
			more, err = s.deleteMutations(stmt, bound, batchTS)
		default:
			err = invalidf("%s is not allowed in a batch", fmt.Sprint(stmt))
		}
		if err != nil {
			return nil, err
		}
		if t, err := s.table(statementTable(stmt)); err == nil {
			if err := checkIndexedVectors(t, more); err != nil {
				return nil, err
			}
		}
		ms = append(ms, more...)
	}
	if counters {
		return s.applyCounters(ms)
	}
	if kind == cql.LoggedBatch {
		if err := s.c.ApplyLogged(ms, s.consistency, s.trace); err != nil {
			return nil, coordinatorError(err)
		}
		return voidResult, nil
	}
	res, err := s.applyWrites(ms...)
	if err != nil || kind != cql.UnloggedBatch {
		return res, err
	}
	if w := s.unloggedBatchWarning(ms); w != "" {
		return &Result{Kind: VoidResult, Warnings: []string{w}}, nil
	}
	return res, nil
}

// unloggedBatchWarnThreshold is cassandra.yaml's
// unlogged_batch_across_partitions_warn_threshold, at its default.
const unloggedBatchWarnThreshold = 10

// unloggedBatchWarning is Cassandra's client warning for an unlogged batch
// over more partitions than the threshold ("" when it is within): such a
// batch buys neither atomicity nor speed. Partitions count by key, as
// Cassandra counts them, whatever their table.
func (s *Session) unloggedBatchWarning(ms []*mutation.Mutation) string {
	keys := map[string]bool{}
	tables := map[mutation.TableID]bool{}
	for _, m := range ms {
		keys[string(m.Key)] = true
		tables[m.Table] = true
	}
	if len(keys) <= unloggedBatchWarnThreshold {
		return ""
	}
	var names []string
	for _, ks := range s.schema().Keyspaces() {
		for _, t := range ks.Tables {
			if tables[t.ID] {
				names = append(names, cqltype.QuoteIdent(t.Keyspace)+"."+cqltype.QuoteIdent(t.Name))
			}
		}
	}
	slices.Sort(names)
	plural := "s"
	if len(names) == 1 {
		plural = ""
	}
	return fmt.Sprintf("Unlogged batch covering %d partitions detected against table%s [%s]. "+
		"You should use a logged batch for atomicity, or asynchronous writes for performance.",
		len(keys), plural, strings.Join(names, ", "))
}
