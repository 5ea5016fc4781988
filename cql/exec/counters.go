package exec

import (
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// Counters: a counter table's columns outside the primary key are all
// counters, which UPDATE increments and decrements (c = c + n, c = c - n)
// and DELETE deletes; INSERT, setting a value, TTLs and custom timestamps
// are refused, as Cassandra refuses them. The updates go to the
// coordinator's counter path (Coordinator.ApplyCounters) as counter update
// cells holding their deltas.

// checkCounterWrite refuses what a write of a counter table may not
// carry.
func checkCounterWrite(u cql.Using) error {
	if u.Timestamp != nil {
		return invalidf("Cannot provide custom timestamp for counter updates")
	}
	if u.TTL != nil {
		return invalidf("Cannot provide custom TTL for counter updates")
	}
	return nil
}

// writeRefusal is what Cassandra refuses of a write statement of table t
// as it prepares it, before its level or values count.
func writeRefusal(t *schema.Table, st cql.Statement) error {
	if schema.IsVirtualKeyspace(t.Keyspace) {
		return virtualWriteRefusal(t, st)
	}
	switch st := st.(type) {
	case *cql.Insert:
		if t.IsCounter() {
			return invalidf("INSERT statements are not allowed on counter tables, use UPDATE instead")
		}
	case *cql.Update:
		if t.IsCounter() {
			return checkCounterWrite(st.Using)
		}
	case *cql.Delete:
		if st.Using.TTL != nil {
			return invalidf("A DELETE statement cannot have a TTL")
		}
		if t.IsCounter() {
			return checkCounterWrite(st.Using)
		}
	}
	return nil
}

// virtualWriteRefusal is what Cassandra answers a write of a virtual
// table: what it refuses of any such write, then that the table takes no
// writes (no virtual table Sibyl has takes them).
func virtualWriteRefusal(t *schema.Table, st cql.Statement) error {
	var using cql.Using
	conditional := false
	switch st := st.(type) {
	case *cql.Insert:
		using, conditional = st.Using, st.IfNotExists
	case *cql.Update:
		using, conditional = st.Using, st.IfExists || len(st.Conditions) > 0
	case *cql.Delete:
		using, conditional = st.Using, st.IfExists || len(st.Conditions) > 0
	}
	switch {
	case using.Timestamp != nil:
		return invalidf("Custom timestamp is not supported by virtual tables")
	case using.TTL != nil:
		return invalidf("Expiring columns are not supported by virtual tables")
	case conditional:
		return invalidf("Conditional updates are not supported by virtual tables")
	}
	return invalidf("Modification is not supported by table %s.%s", describedName(t.Keyspace), describedName(t.Name))
}

// checkStatement refuses a write statement without conditions, not in a
// batch, before it is built: first what preparing it refuses, then its
// level (checkWriteLevel), as Cassandra checks it before it reads or
// builds anything (a list element's write reads the list at the level).
func (s *Session) checkStatement(name cql.QualifiedName, st cql.Statement) error {
	t, err := s.table(name)
	if err != nil {
		return err
	}
	if err := writeRefusal(t, st); err != nil {
		return err
	}
	return s.checkWriteLevel(t)
}

// checkWriteLevel refuses a level a statement that writes table t
// without conditions cannot run at: a serial one, and ANY for counters.
// Cassandra checks statements alone, not those of a batch (which run at
// a serial level as at QUORUM).
func (s *Session) checkWriteLevel(t *schema.Table) error {
	switch {
	case t.IsCounter() && s.consistency == request.Any:
		return invalidf("Consistency level ANY is not yet supported for counter table %s", t.Name)
	case t.IsCounter() && s.consistency.IsSerial():
		return invalidf("Counter operations are inherently non-serializable")
	case s.consistency.IsSerial():
		return invalidf("You must use conditional updates for serializable writes")
	}
	return nil
}

// assignCounter writes c = c + n or c = c - n into a row: one update cell
// per counter, the deltas of one statement summed.
func assignCounter(w *schema.CellWriter, r *mutation.Row, c *schema.Column, a cql.Assignment, bound *binding) error {
	switch a.Kind {
	case cql.AssignAdd, cql.AssignSubtract:
	case cql.AssignValue:
		return invalidf("Cannot set the value of counter column %s (counters can only be incremented/decremented, not set)", c.Name)
	default:
		return invalidf("Invalid operation (%s) for counter column %s", a, c.Name)
	}
	v, err := term(a.Value, cqltype.CounterType, c.Name, bound)
	if err != nil {
		return err
	}
	if v == nil {
		return invalidf("Invalid null value for counter increment")
	}
	delta, _ := cqltype.DecodeBigint(v)
	if a.Kind == cql.AssignSubtract {
		delta = -delta
	}
	for i := range r.Cells {
		if before, ok := mutation.CounterDelta(&r.Cells[i]); ok && r.Cells[i].Column == c.Name {
			r.Cells[i] = mutation.CounterUpdate(c.Name, w.Timestamp, before+delta)
			return nil
		}
	}
	r.Cells = append(r.Cells, mutation.CounterUpdate(c.Name, w.Timestamp, delta))
	return nil
}

// applyCounters applies the writes of counter tables.
func (s *Session) applyCounters(ms []*mutation.Mutation) (*Result, error) {
	if err := s.c.ApplyCounters(ms, s.consistency, s.trace); err != nil {
		return nil, coordinatorError(err)
	}
	return voidResult, nil
}

// checkBatchVirtual refuses what Cassandra refuses of a batch writing
// virtual tables: in a logged batch, or beside regular tables. (Their
// writes themselves are refused as each is built.)
func (s *Session) checkBatchVirtual(items []batchItem, kind cql.BatchKind) error {
	saved := s.keyspace
	defer func() { s.keyspace = saved }()
	virtual, regular := false, false
	for _, item := range items {
		s.keyspace = item.keyspace
		if t, err := s.table(statementTable(item.st)); err == nil {
			isVirtual := schema.IsVirtualKeyspace(t.Keyspace)
			virtual, regular = virtual || isVirtual, regular || !isVirtual
		}
	}
	switch {
	case virtual && kind == cql.LoggedBatch:
		return invalidf("Cannot include a virtual table statement in a logged batch")
	case virtual && regular:
		return invalidf("Mutations for virtual and regular tables cannot exist in the same batch")
	}
	return nil
}

// checkBatchCounters refuses a batch that mixes counter and other writes,
// counters in a logged batch, and other writes in a counter batch, in
// Cassandra's order; it reports whether the batch writes counters.
func (s *Session) checkBatchCounters(items []batchItem, kind cql.BatchKind, usingTimestamp bool) (bool, error) {
	saved := s.keyspace
	defer func() { s.keyspace = saved }()
	if usingTimestamp && kind == cql.CounterBatch {
		return false, invalidf("Cannot provide custom timestamp for counter BATCH")
	}
	counters, others := false, false
	for _, item := range items {
		s.keyspace = item.keyspace
		t, err := s.table(statementTable(item.st))
		if err != nil {
			return false, err
		}
		if t.IsCounter() {
			counters = true
		} else {
			others = true
		}
	}
	switch {
	case usingTimestamp && counters:
		return false, invalidf("Cannot provide custom timestamp for a BATCH containing counters")
	case kind == cql.CounterBatch && others:
		return false, invalidf("Cannot include non-counter statement in a counter batch")
	case counters && others:
		return false, invalidf("Counter and non-counter mutations cannot exist in the same batch")
	case kind == cql.LoggedBatch && counters:
		return false, invalidf("Cannot include a counter statement in a logged batch")
	}
	return counters, nil
}
