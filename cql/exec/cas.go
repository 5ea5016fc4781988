package exec

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// Conditional writes (lightweight transactions): INSERT ... IF NOT
// EXISTS, UPDATE and DELETE ... IF EXISTS or IF conditions, and batches
// holding them. The coordinator reads the rows the conditions name in a
// Paxos round (request.CAS); decide checks the conditions against what it
// read and builds the writes at the round's timestamp, and the result is
// Cassandra's: a row with [applied], and when the conditions did not hold,
// the current values of what they looked at.

// casCondition is one IF condition, its values bound.
type casCondition struct {
	column *schema.Column
	op     cql.Operator // IN compares each candidate with =
	// values are the right side: IN's candidates, or the one value (nil:
	// null).
	values [][]byte
	// typ is the type the values compare in: the column's, its element's
	// or its field's.
	typ *cqltype.Type
	// keyed conditions name an element: key is the map key or the list
	// index (nil: null). field is a user type's field, -1 for none.
	keyed bool
	key   []byte
	field int
}

// casRow is what a conditional write asks of one row: that it exists,
// that it does not, or that its columns meet conditions.
type casRow struct {
	kind       casRowKind
	clustering []byte // a clustering row's
	exists     bool
	notExists  bool
	conds      []casCondition
}

// casRowKind says which row a casRow is about.
type casRowKind uint8

const (
	clusteringRow casRowKind = iota
	staticRow
	// wholePartition is a deletion of rows IF EXISTS that names none: any
	// live row makes the partition exist.
	wholePartition
)

// casRequest is a conditional write of one partition.
type casRequest struct {
	t    *schema.Table
	key  []byte
	rows []*casRow // the rows with conditions, in clustering order; the static row last
	// build makes the writes, at the round's timestamp.
	build []func(ts int64) ([]*mutation.Mutation, error)
	// columns are the columns a failed write shows (nil: all of them),
	// after the primary key's for a batch.
	columns []*schema.Column
	batch   bool
}

// casKind says what a conditional statement is, for its messages.
func casKind(st cql.Statement) string {
	if _, ok := st.(*cql.Delete); ok {
		return "deletions"
	}
	return "updates"
}

// isConditional reports whether a write has IF conditions.
func IsConditional(st cql.Statement) bool {
	switch st := st.(type) {
	case *cql.Insert:
		return st.IfNotExists
	case *cql.Update:
		return st.IfExists || len(st.Conditions) > 0
	case *cql.Delete:
		return st.IfExists || len(st.Conditions) > 0
	case *cql.Batch:
		for _, sub := range st.Statements {
			if IsConditional(sub) {
				return true
			}
		}
	}
	return false
}

// conditionalWrite runs one conditional INSERT, UPDATE or DELETE.
func (s *Session) conditionalWrite(st cql.Statement, bound *binding, serial *request.Consistency) (*Result, error) {
	t, err := s.table(statementTable(st))
	if err != nil {
		return nil, err
	}
	if schema.IsVirtualKeyspace(t.Keyspace) {
		return nil, virtualWriteRefusal(t, st)
	}
	req := &casRequest{t: t}
	if err := s.addConditional(req, st, bound); err != nil {
		return nil, err
	}
	return s.runCAS(req, bound, serial)
}

// conditionalBatch runs a batch with conditions: one partition of one
// table, every condition checked and every statement applied in one
// Paxos round.
func (s *Session) conditionalBatch(items []batchItem, usingTimestamp bool, serial *request.Consistency) (*Result, error) {
	if usingTimestamp {
		return nil, invalidf("Cannot provide custom timestamp for conditional BATCH")
	}
	saved := s.keyspace
	defer func() { s.keyspace = saved }()
	var req *casRequest
	wildcard := false
	for _, item := range items {
		s.keyspace = item.keyspace
		t, err := s.table(statementTable(item.st))
		if err != nil {
			return nil, err
		}
		if schema.IsVirtualKeyspace(t.Keyspace) {
			return nil, invalidf("Conditional BATCH statements cannot include mutations for virtual tables")
		}
		if req == nil {
			req = &casRequest{t: t, batch: true}
		} else if t.ID != req.t.ID {
			return nil, invalidf("Batch with conditions cannot span multiple tables")
		}
		if err := s.addConditional(req, item.st, item.bound); err != nil {
			return nil, err
		}
		switch st := item.st.(type) {
		case *cql.Insert:
			wildcard = wildcard || st.IfNotExists
		case *cql.Update:
			wildcard = wildcard || st.IfExists
		case *cql.Delete:
			wildcard = wildcard || st.IfExists
		}
	}
	if wildcard {
		req.columns = nil
	} else {
		req.columns = withKeyColumns(req.t, req.columns)
	}
	return s.runCAS(req, items[0].bound, serial)
}

// withKeyColumns puts a table's primary key columns before cols, once
// each.
func withKeyColumns(t *schema.Table, cols []*schema.Column) []*schema.Column {
	out := append(append([]*schema.Column(nil), t.PartitionKey...), t.Clustering...)
	for _, c := range cols {
		if !containsColumn(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsColumn(cols []*schema.Column, c *schema.Column) bool {
	for _, x := range cols {
		if x == c {
			return true
		}
	}
	return false
}

// addConditional adds one statement to a conditional write: its
// partition (which must be the request's), the conditions of its row and
// how to build its writes.
func (s *Session) addConditional(req *casRequest, st cql.Statement, bound *binding) error {
	t := req.t
	if t.IsCounter() && IsConditional(st) {
		return invalidf("Conditional updates are not supported on counter tables")
	}
	var (
		using   cql.Using
		where   []cql.Relation
		conds   []cql.Condition
		ifExist bool
	)
	switch st := st.(type) {
	case *cql.Insert:
		using = st.Using
	case *cql.Update:
		using, where, conds, ifExist = st.Using, st.Where, st.Conditions, st.IfExists
	case *cql.Delete:
		using, where, conds, ifExist = st.Using, st.Where, st.Conditions, st.IfExists
	default:
		return invalidf("%s is not allowed in a batch", fmt.Sprint(st))
	}
	if using.Timestamp != nil {
		if IsConditional(st) {
			return invalidf("Cannot provide custom timestamp for conditional updates")
		}
		return invalidf("Cannot provide custom timestamp for conditional BATCH")
	}
	compiled, err := s.casConditions(t, conds, bound)
	if err != nil {
		return err
	}
	if ins, ok := st.(*cql.Insert); ok {
		return s.addConditionalInsert(req, ins, bound)
	}
	kr, err := parseWhere(t, s.partitioner(), where, bound, whereMode{allowRange: isDeleteOfRows(st)})
	if err != nil {
		return err
	}
	if kr.key == nil {
		if req.batch {
			return invalidf("Batch with conditions cannot span multiple partitions (you cannot use IN on the partition key)")
		}
		return invalidf("IN on the partition key is not supported with conditional %s", casKind(st))
	}
	if hasClusteringIn(t, where) {
		return invalidf("IN on the clustering key columns is not supported with conditional %s", casKind(st))
	}
	if err := req.partition(kr.key); err != nil {
		return err
	}
	regularConds := false
	for _, c := range compiled {
		regularConds = regularConds || c.column.Kind != schema.Static
	}
	onlyStatic, err := writesOnlyStatic(t, st)
	if err != nil {
		return err
	}
	if del, ok := st.(*cql.Delete); ok && !kr.fullRow(t) && len(t.Clustering) > 0 && IsConditional(st) {
		if !onlyStatic && len(del.Columns) > 0 {
			return invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns")
		}
		if regularConds {
			return invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns")
		}
	}
	row := &casRow{exists: ifExist, conds: compiled}
	switch {
	case len(t.Clustering) == 0:
		row.clustering = []byte{}
	case !kr.restricted && onlyStatic && !regularConds:
		row.kind = staticRow
	case kr.fullRow(t):
		row.clustering = kr.prefixes[0]
		if err := t.CheckClustering(row.clustering); err != nil {
			return asInvalid(err)
		}
	case isDeleteOfRows(st) && !regularConds:
		row.kind = staticRow
		if len(compiled) == 0 {
			row.kind = wholePartition
		}
	default:
		return invalidf("Some clustering keys are missing: %s", kr.missingColumn(t))
	}
	if ifExist || len(compiled) > 0 {
		if err := req.addRow(row); err != nil {
			return err
		}
	}
	req.addColumns(compiled)
	switch st := st.(type) {
	case *cql.Update:
		req.build = append(req.build, func(ts int64) ([]*mutation.Mutation, error) { return s.updateMutations(st, bound, &ts) })
	case *cql.Delete:
		req.build = append(req.build, func(ts int64) ([]*mutation.Mutation, error) { return s.deleteMutations(st, bound, &ts) })
	}
	return nil
}

// addConditionalInsert adds an INSERT (IF NOT EXISTS, or none in a
// batch): its row is known once its values are, so it is built once here
// for its key.
func (s *Session) addConditionalInsert(req *casRequest, st *cql.Insert, bound *binding) error {
	ts := s.Now().UnixMicro()
	m, err := s.insertMutation(st, bound, &ts)
	if err != nil {
		return err
	}
	req.build = append(req.build, func(ts int64) ([]*mutation.Mutation, error) {
		m, err := s.insertMutation(st, bound, &ts)
		if m == nil || err != nil {
			return nil, err
		}
		return []*mutation.Mutation{m}, nil
	})
	if m == nil {
		return nil // an INSERT JSON being prepared: its document is not known
	}
	if err := req.partition(m.Key); err != nil {
		return err
	}
	if st.IfNotExists {
		return req.addRow(&casRow{clustering: append([]byte{}, m.Rows[0].Clustering...), notExists: true})
	}
	return nil
}

// partition sets the request's partition, refusing a second one.
func (req *casRequest) partition(key []byte) error {
	if req.key != nil && !bytes.Equal(req.key, key) {
		return invalidf("Batch with conditions cannot span multiple partitions")
	}
	req.key = key
	return nil
}

// addRow adds the conditions on one row; a batch may add several to one
// row, but not mix existence with column conditions.
func (req *casRequest) addRow(row *casRow) error {
	for _, r := range req.rows {
		if r.kind != row.kind || !bytes.Equal(r.clustering, row.clustering) {
			continue
		}
		switch {
		case r.exists && row.exists, r.notExists && row.notExists:
			return nil // one condition twice
		case r.exists && row.notExists, r.notExists && row.exists:
			return invalidf("Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row")
		case r.notExists && len(row.conds) > 0, row.notExists && len(r.conds) > 0:
			return invalidf("Cannot mix IF conditions and IF NOT EXISTS for the same row")
		case r.exists && len(row.conds) > 0, row.exists && len(r.conds) > 0:
			return invalidf("Cannot mix IF conditions and IF EXISTS for the same row")
		}
		r.conds = append(r.conds, row.conds...)
		return nil
	}
	at := len(req.rows)
	for i, r := range req.rows {
		if r.kind != clusteringRow || row.kind == clusteringRow && bytes.Compare(row.clustering, r.clustering) < 0 {
			at = i
			break
		}
	}
	req.rows = append(req.rows[:at], append([]*casRow{row}, req.rows[at:]...)...)
	return nil
}

// addColumns adds the columns conditions look at to those a failed write
// shows, in the order of the conditions, once each.
func (req *casRequest) addColumns(conds []casCondition) {
	for _, c := range conds {
		if !containsColumn(req.columns, c.column) {
			req.columns = append(req.columns, c.column)
		}
	}
}

// isDeleteOfRows reports whether st deletes whole rows (no columns
// named): it may name a range of them, or the whole partition.
func isDeleteOfRows(st cql.Statement) bool {
	d, ok := st.(*cql.Delete)
	return ok && len(d.Columns) == 0
}

// writesOnlyStatic reports whether an UPDATE sets, or a DELETE deletes,
// static columns only.
func writesOnlyStatic(t *schema.Table, st cql.Statement) (bool, error) {
	var names []string
	switch st := st.(type) {
	case *cql.Update:
		for _, a := range st.Assignments {
			names = append(names, a.Column)
		}
	case *cql.Delete:
		for _, c := range st.Columns {
			names = append(names, c.Column)
		}
	}
	if len(names) == 0 {
		return false, nil
	}
	for _, n := range names {
		c := t.Column(n)
		if c == nil {
			return false, invalidf("Undefined column name %s in table %s.%s", n, t.Keyspace, t.Name)
		}
		if c.Kind != schema.Static {
			return false, nil
		}
	}
	return true, nil
}

// hasClusteringIn reports whether an IN restricts clustering columns.
func hasClusteringIn(t *schema.Table, where []cql.Relation) bool {
	for _, r := range where {
		if r.Op != cql.OpIn || len(r.Columns) == 0 {
			continue
		}
		if c := t.Column(r.Columns[0]); c != nil && c.Kind == schema.Clustering {
			return true
		}
	}
	return false
}

// casConditions binds a statement's IF conditions.
func (s *Session) casConditions(t *schema.Table, conds []cql.Condition, bound *binding) ([]casCondition, error) {
	out := make([]casCondition, 0, len(conds))
	for _, c := range conds {
		col := t.Column(c.Column)
		if col == nil {
			return nil, invalidf("Undefined column name %s in table %s.%s", c.Column, t.Keyspace, t.Name)
		}
		if col.Type.Kind == cqltype.Counter {
			return nil, invalidf("Conditions on counters are not supported")
		}
		cc := casCondition{column: col, op: c.Op, typ: col.Type, field: -1}
		receiver := col.Name
		switch {
		case c.Key != nil:
			keyType, keyName := cqltype.IntType, "idx("+col.Name+")"
			switch col.Type.Kind {
			case cqltype.List:
				cc.typ, receiver = col.Type.Params[0], "value("+col.Name+")"
			case cqltype.Map:
				keyType, keyName = col.Type.Params[0], "key("+col.Name+")"
				cc.typ, receiver = col.Type.Params[1], "value("+col.Name+")"
			case cqltype.Set:
				return nil, invalidf("Invalid element access syntax for set column %s", col.Name)
			default:
				return nil, invalidf("Invalid element access syntax for non-collection column %s", col.Name)
			}
			k, err := term(c.Key, keyType, keyName, bound)
			if isUnset(err) {
				return nil, invalidf("Invalid 'unset' value in condition")
			}
			if err != nil {
				return nil, err
			}
			cc.keyed, cc.key = true, k
		case c.Field != "":
			if col.Type.Kind != cqltype.UDT {
				return nil, invalidf("Invalid field selection: %s of type %s is not a user type", col.Name, col.Type.SchemaString())
			}
			if cc.field = fieldIndex(col.Type, c.Field); cc.field < 0 {
				return nil, invalidf("Unknown field %s for column %s", c.Field, col.Name)
			}
			cc.typ, receiver = col.Type.Params[cc.field], col.Name+"."+c.Field
		}
		if col.IsPrimaryKey() {
			return nil, invalidf("PRIMARY KEY column '%s' cannot have IF conditions", col.Name)
		}
		switch c.Op {
		case cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte:
			if cc.typ.ReferencesDuration() {
				switch cc.typ.Kind {
				case cqltype.List, cqltype.Set, cqltype.Map:
					return nil, invalidf("Slice conditions are not supported on collections containing durations")
				case cqltype.Tuple:
					return nil, invalidf("Slice conditions are not supported on tuples containing durations")
				case cqltype.UDT:
					return nil, invalidf("Slice conditions are not supported on UDTs containing durations")
				}
				return nil, invalidf("Slice conditions ( %s ) are not supported on durations", c.Op)
			}
		case cql.OpContains, cql.OpContainsKey:
			var err error
			if cc.typ, err = containedType(col.Name, cc.typ, c.Op); err != nil {
				return nil, err
			}
		}
		values, err := conditionValues(c, cc.typ, receiver, bound)
		if err != nil {
			return nil, err
		}
		cc.values = values
		out = append(out, cc)
	}
	return out, nil
}

// conditionValues binds a condition's right side: IN's candidates (a
// list, or one marker for the whole list; unset candidates left out), or
// its one value.
func conditionValues(c cql.Condition, typ *cqltype.Type, receiver string, bound *binding) ([][]byte, error) {
	if c.Op != cql.OpIn {
		v, err := term(c.Value, typ, receiver, bound)
		if isUnset(err) {
			return nil, invalidf("Invalid 'unset' value in condition")
		}
		return [][]byte{v}, err
	}
	if len(c.Values) == 0 && c.Value != nil {
		v, err := term(c.Value, cqltype.ListOf(typ, false), "in("+receiver+")", bound)
		if isUnset(err) {
			return nil, invalidf("Invalid 'unset' value in condition")
		}
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null list in IN condition")
		}
		elems, err := cqltype.DecodeCollection(v)
		return elems, asInvalid(err)
	}
	out := make([][]byte, 0, len(c.Values))
	for _, e := range c.Values {
		v, err := term(e, typ, receiver, bound)
		if isUnset(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// holds reports whether a row (as ReadRow reads it; null columns nil)
// meets the condition.
func (cc *casCondition) holds(cells schema.RowValues) (bool, error) {
	v := cells[cc.column.Index].Value
	col := cc.column.Type
	switch {
	case cc.keyed:
		if cc.key == nil {
			kind := "map"
			if col.Kind == cqltype.List {
				kind = "list"
			}
			return false, invalidf("Invalid null value for %s element access", kind)
		}
		var err error
		if v, err = elementValue(col, v, cc.key); err != nil {
			return false, err
		}
	case cc.field >= 0 && v != nil:
		fields, err := cqltype.DecodeTuple(v, len(col.Params))
		if err != nil {
			return false, asInvalid(err)
		}
		v = fields[cc.field]
	case cc.field >= 0:
	case cc.op == cql.OpContains || cc.op == cql.OpContainsKey:
		return containsValue(col, v, cc.op == cql.OpContainsKey, cc.typ, cc.values[0])
	}
	for _, want := range cc.values {
		ok, err := compareCondition(cc.op, cc.typ, want, v)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// elementValue is a list's element at an index, or a map's value at a key,
// of a collection's serialized value (nil when absent).
func elementValue(t *cqltype.Type, v, key []byte) ([]byte, error) {
	if t.Kind == cqltype.List {
		i, err := cqltype.DecodeInt(key)
		if err != nil {
			return nil, asInvalid(err)
		}
		if i < 0 {
			return nil, invalidf("Invalid negative list index %d", i)
		}
		if v == nil {
			return nil, nil
		}
		elems, err := cqltype.DecodeCollection(v)
		if err != nil || int(i) >= len(elems) {
			return nil, asInvalid(err)
		}
		return elems[i], nil
	}
	if v == nil {
		return nil, nil
	}
	keys, vals, err := cqltype.DecodeMap(v)
	if err != nil {
		return nil, asInvalid(err)
	}
	for i, k := range keys {
		if t.Params[0].Compare(k, key) == 0 {
			return vals[i], nil
		}
	}
	return nil, nil
}

// containsValue is IF c CONTAINS v (or CONTAINS KEY) against a
// collection's serialized value.
func containsValue(t *cqltype.Type, v []byte, key bool, elem *cqltype.Type, want []byte) (bool, error) {
	if v == nil || want == nil {
		return false, nil
	}
	var elems [][]byte
	var err error
	if t.Kind == cqltype.Map {
		keys, vals, derr := cqltype.DecodeMap(v)
		elems, err = vals, derr
		if key {
			elems = keys
		}
	} else {
		elems, err = cqltype.DecodeCollection(v)
	}
	if err != nil {
		return false, asInvalid(err)
	}
	for _, e := range elems {
		if elem.Compare(e, want) == 0 {
			return true, nil
		}
	}
	return false, nil
}

// compareCondition is "row op want", with Cassandra's rules for null: a
// null value only = null and != anything else; a null condition value
// only takes = and !=.
func compareCondition(op cql.Operator, t *cqltype.Type, want, row []byte) (bool, error) {
	if op == cql.OpIn {
		op = cql.OpEq
	}
	if want == nil {
		switch op {
		case cql.OpEq:
			return row == nil, nil
		case cql.OpNeq:
			return row != nil, nil
		}
		return false, invalidf("Invalid comparison with null for operator \"%s\"", op)
	}
	if row == nil {
		return op == cql.OpNeq, nil
	}
	c := t.Compare(row, want)
	switch op {
	case cql.OpEq:
		return c == 0, nil
	case cql.OpNeq:
		return c != 0, nil
	case cql.OpLt:
		return c < 0, nil
	case cql.OpLte:
		return c <= 0, nil
	case cql.OpGt:
		return c > 0, nil
	case cql.OpGte:
		return c >= 0, nil
	}
	return false, invalidf("Unsupported operator %s in a condition", op)
}

// reads are the slices of the partition the conditions look at: each
// row's, or, when only the static row (or the partition) has conditions,
// the partition's first live row, which tells a partition with data from
// one without.
func (req *casRequest) reads(now int64) []request.Slice {
	var out []request.Slice
	for _, r := range req.rows {
		if r.kind == clusteringRow {
			out = append(out, request.Slice{Start: mutation.StartBound(r.clustering, true), End: mutation.EndBound(r.clustering, true), Now: now})
		}
	}
	if len(out) == 0 {
		out = append(out, request.Slice{Limit: 1, Now: now})
	}
	return out
}

// holds reports whether the partition as read meets every condition.
func (req *casRequest) holds(current *request.Partition, now int64, cells schema.RowValues) (bool, error) {
	t := req.t
	var static *mutation.Row
	if current != nil && current.Static != nil && t.RowVisible(current.Static, now) {
		static = current.Static
	}
	for _, r := range req.rows {
		var row *mutation.Row
		var present bool
		switch r.kind {
		case clusteringRow:
			row = req.row(current, r.clustering, now)
			present = row != nil
		case wholePartition:
			present = static != nil || current != nil && slices.ContainsFunc(current.Rows, func(x request.Row) bool { return t.RowVisible(x.Row, now) })
		default:
			present = static != nil
		}
		switch {
		case r.exists && !present, r.notExists && present:
			return false, nil
		case len(r.conds) == 0:
			continue
		}
		if row == nil {
			row = mutation.NewRow()
		}
		if err := t.ReadRow(cells, nil, req.key, r.clustering, row, static, now); err != nil {
			return false, &Error{Code: ServerError, Message: err.Error()}
		}
		for i := range r.conds {
			ok, err := r.conds[i].holds(cells)
			if !ok || err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// row is the live row at clustering in the partition as read (nil when
// there is none).
func (req *casRequest) row(current *request.Partition, clustering []byte, now int64) *mutation.Row {
	if current == nil {
		return nil
	}
	for _, r := range current.Rows {
		if bytes.Equal(r.Clustering, clustering) && req.t.RowVisible(r.Row, now) {
			return r.Row
		}
	}
	return nil
}

// runCAS checks the levels, runs the conditional write through the
// coordinator and makes its result.
func (s *Session) runCAS(req *casRequest, bound *binding, serial *request.Consistency) (*Result, error) {
	level := request.Serial
	if serial != nil {
		level = *serial
	}
	if !level.IsSerial() {
		return nil, invalidf("Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
	}
	commit := s.consistency
	if commit.IsSerial() {
		return nil, invalidf("%s is not supported as conditional update commit consistency. Use ANY if you mean \"make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads\"", commit)
	}
	if commit == request.EachQuorum {
		if ks := s.schema().Keyspace(req.t.Keyspace); ks != nil && ks.Replication.Class != schema.NetworkTopologyStrategy {
			return nil, invalidf("consistency level EACH_QUORUM not compatible with replication strategy (%s)", ks.Replication.Class)
		}
	}
	now := s.Now().Unix()
	cells := make(schema.RowValues, len(req.t.Columns))
	build := func(current *request.Partition, ts int64) ([]*mutation.Mutation, error) {
		saved := s.current
		s.current = &prefetched{p: current}
		defer func() { s.current = saved }()
		var ms []*mutation.Mutation
		for _, b := range req.build {
			more, err := b(ts)
			if err != nil {
				return nil, err
			}
			ms = append(ms, more...)
		}
		if err := checkIndexedVectors(req.t, ms); err != nil {
			return nil, err
		}
		return ms, nil
	}
	// The statements are checked before the round, as Cassandra checks
	// them before it reads: what only the data can refuse (a list index)
	// waits for the data.
	if _, err := build(nil, s.Now().UnixMicro()); err != nil && !isDataError(err) {
		return nil, err
	}
	if req.key == nil { // being prepared, its key unknown
		return voidResult, nil
	}
	decide := func(current *request.Partition, ts int64) ([]*mutation.Mutation, bool, error) {
		ok, err := req.holds(current, now, cells)
		if err != nil || !ok {
			return nil, false, err
		}
		ms, err := build(current, ts)
		return ms, err == nil, err
	}
	current, applied, err := s.c.CAS(req.t, request.CAS{Key: req.key, Reads: req.reads(now), Serial: level, Commit: commit, Decide: decide, Trace: s.trace})
	if err != nil {
		return nil, coordinatorError(err)
	}
	return req.result(current, applied, now, cells)
}

// result is a conditional write's answer: [applied], and when it did not
// apply, the rows its conditions looked at with the columns they name
// (every column for IF EXISTS and IF NOT EXISTS), as Cassandra builds it.
func (req *casRequest) result(current *request.Partition, applied bool, now int64, cells schema.RowValues) (*Result, error) {
	t := req.t
	res := &Result{Kind: RowsResult, Columns: []ColumnSpec{{Keyspace: t.Keyspace, Table: t.Name, Name: "[applied]", Type: cqltype.BooleanType}}}
	if applied || current == nil {
		res.Rows = [][][]byte{{cqltype.EncodeBoolean(applied)}}
		return res, nil
	}
	cols := req.columns
	if cols == nil {
		cols = t.Columns
	}
	for _, c := range cols {
		res.Columns = append(res.Columns, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: c.Name, Type: c.Type})
	}
	rows := current.Rows
	static := current.Static
	if static != nil && !t.RowVisible(static, now) {
		static = nil
	}
	var visible []request.Row
	for _, r := range rows {
		if t.RowVisible(r.Row, now) {
			visible = append(visible, r)
		}
	}
	if len(visible) == 0 && static != nil {
		visible = []request.Row{{Clustering: nil, Row: mutation.NewRow()}}
	}
	for _, r := range visible {
		if err := t.ReadRow(cells, nil, current.Key, r.Clustering, r.Row, static, now); err != nil {
			return nil, &Error{Code: ServerError, Message: err.Error()}
		}
		out := make([][]byte, 0, len(cols)+1)
		out = append(out, cqltype.EncodeBoolean(false))
		for _, c := range cols {
			out = append(out, cells[c.Index].Value)
		}
		res.Rows = append(res.Rows, out)
	}
	if len(res.Rows) == 0 {
		res.Columns = res.Columns[:1]
		res.Rows = [][][]byte{{cqltype.EncodeBoolean(false)}}
	}
	return res, nil
}

// prefetched is the partition a conditional write read in its Paxos
// round: a list operation's read before write reads it there.
type prefetched struct{ p *request.Partition }

// row is the part of the partition a read of one row gets: its static
// row and the row at clustering (any row for a table without clustering,
// whole).
func (f *prefetched) row(clustering []byte, whole bool) *request.Partition {
	if f.p == nil {
		return nil
	}
	out := &request.Partition{Key: f.p.Key, Static: f.p.Static}
	for _, r := range f.p.Rows {
		if whole || bytes.Equal(r.Clustering, clustering) {
			out.Rows = append(out.Rows, r)
		}
	}
	return out
}

// isDataError reports whether err comes from the data a statement found,
// not from the statement.
func isDataError(err error) bool {
	e, ok := err.(*Error)
	return ok && e.onData
}
