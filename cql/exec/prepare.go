package exec

import (
	"errors"
	"fmt"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// Prepared is what a client learns when it prepares a statement (the
// native protocol's PREPARE): what each bind marker binds, which markers
// hold the partition key, and the columns a SELECT returns.
type Prepared struct {
	Statement cql.Statement
	// Keyspace is the session's keyspace when the statement was prepared:
	// its unqualified names resolve against it whoever executes it.
	Keyspace string
	// Markers describe the bind markers, by index: the keyspace and table
	// of the statement, and the receiver's name and type.
	Markers []ColumnSpec
	// PartitionKeyIndexes holds, for each partition key column in order,
	// the index of the marker that binds it; nil unless markers bind the
	// whole key (the client then cannot route by token).
	PartitionKeyIndexes []int
	// Columns are a SELECT's result columns; nil for other statements.
	Columns []ColumnSpec
}

// Prepare checks a statement against the schema and describes its bind
// markers and results. The statement runs once against no data, each
// marker standing for an example value of the type its receiver takes, so
// the types come from the same code that checks bound values; nothing is
// written or read.
func (s *Session) Prepare(st cql.Statement) (*Prepared, error) {
	p := &Prepared{Statement: st, Keyspace: s.keyspace}
	markers := cql.BindMarkers(st)
	switch st := st.(type) {
	case *cql.Insert, *cql.Update, *cql.Delete, *cql.Batch, *cql.Select:
	default:
		if len(markers) > 0 {
			return nil, invalidf("Bind variables are not supported in %T statements", st)
		}
		return p, nil
	}
	// Levels are the execution's to check: the dry run takes one that
	// every statement may run at.
	dry := &Session{c: dryCoordinator{s.c}, keyspace: s.keyspace, Now: s.Now, consistency: request.One}
	b := &binding{receivers: map[int]markerReceiver{}}
	res, err := dry.run(st, QueryParams{}, b)
	var e *Error
	if err != nil && !(errors.As(err, &e) && e.onData) {
		return nil, err
	}
	tables, err := s.markerTables(st)
	if err != nil {
		return nil, err
	}
	for i, m := range markers {
		r, ok := b.receivers[m.Index]
		if !ok || m.Index != i {
			return nil, &Error{Code: ServerError, Message: fmt.Sprintf("cannot work out what bind marker %d binds in %s", i, st)}
		}
		name := r.name
		if m.Name != "" {
			name = m.Name
		}
		t := tables[m.Index]
		if t == nil {
			return nil, &Error{Code: ServerError, Message: fmt.Sprintf("cannot work out the table of bind marker %d in %s", i, st)}
		}
		p.Markers = append(p.Markers, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: name, Type: r.typ})
	}
	if sel, ok := st.(*cql.Select); ok && res != nil {
		p.Columns = res.Columns
		p.PartitionKeyIndexes = partitionKeyIndexes(tables[-1], sel.Where, b)
	} else if _, batch := st.(*cql.Batch); !batch && len(markers) > 0 {
		p.PartitionKeyIndexes = partitionKeyIndexes(tables[-1], nil, b)
	}
	return p, nil
}

// ExecutePrepared runs a prepared statement in the keyspace it was
// prepared in.
func (s *Session) ExecutePrepared(p *Prepared, opts QueryParams) (*Result, error) {
	ks := s.keyspace
	s.keyspace = p.Keyspace
	res, err := s.Query(p.Statement, opts)
	if _, isUse := p.Statement.(*cql.Use); !isUse || err != nil {
		s.keyspace = ks
	}
	return res, err
}

// markerTables finds the table each marker's statement writes or reads:
// by marker index, and under -1 the statement's own table (a batch has
// none).
func (s *Session) markerTables(st cql.Statement) (map[int]*schema.Table, error) {
	out := map[int]*schema.Table{}
	var visit func(st cql.Statement, top bool) error
	visit = func(st cql.Statement, top bool) error {
		if b, ok := st.(*cql.Batch); ok {
			for _, sub := range b.Statements {
				if err := visit(sub, false); err != nil {
					return err
				}
			}
			return nil
		}
		t, err := s.table(statementTable(st))
		if err != nil {
			return err
		}
		for _, m := range cql.BindMarkers(st) {
			out[m.Index] = t
		}
		if top {
			out[-1] = t
		}
		return nil
	}
	if err := visit(st, true); err != nil {
		return nil, err
	}
	// A batch's own USING markers belong to no statement: give them the
	// first statement's table, as a client only needs one.
	if b, ok := st.(*cql.Batch); ok && len(b.Statements) > 0 {
		first, err := s.table(statementTable(b.Statements[0]))
		if err != nil {
			return nil, err
		}
		for _, m := range cql.BindMarkers(st) {
			if out[m.Index] == nil {
				out[m.Index] = first
			}
		}
	}
	return out, nil
}

// partitionKeyIndexes finds, for each partition key column, the first
// marker bound to it as a whole value; nil when some column has none.
// For a SELECT, only markers of = relations count: a routing key names one
// partition.
func partitionKeyIndexes(t *schema.Table, where []cql.Relation, b *binding) []int {
	if t == nil {
		return nil
	}
	eqMarkers := map[int]bool{}
	for _, r := range where {
		if m, ok := r.Value.(*cql.BindMarker); ok && r.Kind == cql.ColumnRelation && r.Op == cql.OpEq {
			eqMarkers[m.Index] = true
		}
	}
	out := make([]int, len(t.PartitionKey))
	for i, c := range t.PartitionKey {
		out[i] = -1
		for idx := 0; idx < len(b.receivers); idx++ {
			r := b.receivers[idx]
			if r.name == c.Name && r.typ.Equal(c.Type) && (where == nil || eqMarkers[idx]) {
				out[i] = idx
				break
			}
		}
		if out[i] < 0 {
			return nil
		}
	}
	return out
}

// dryCoordinator is the coordinator a statement is prepared against: the
// real schema, and no data; writes go nowhere.
type dryCoordinator struct{ real Coordinator }

func (d dryCoordinator) Schema() *schema.Schema { return d.real.Schema() }

func (d dryCoordinator) ApplySchema(*schema.Schema, []*mutation.Mutation) error { return nil }

func (d dryCoordinator) Apply([]*mutation.Mutation, request.Consistency, *tracing.Trace) error {
	return nil
}

func (d dryCoordinator) ApplyLogged([]*mutation.Mutation, request.Consistency, *tracing.Trace) error {
	return nil
}

func (d dryCoordinator) ApplyCounters([]*mutation.Mutation, request.Consistency, *tracing.Trace) error {
	return nil
}

func (d dryCoordinator) ReadPartition(*schema.Table, request.PartitionRead) (*request.Partition, error) {
	return nil, nil
}

func (d dryCoordinator) Scan(*schema.Table, request.RangeRead) ([]*request.Partition, error) {
	return nil, nil
}

func (d dryCoordinator) Truncate(*schema.Table) error { return nil }

// CAS does not decide: the statement's markers were seen as it was checked.
func (d dryCoordinator) CAS(*schema.Table, request.CAS) (*request.Partition, bool, error) {
	return nil, false, nil
}

func (d dryCoordinator) Partitioner() partitioner.Partitioner {
	if ps, ok := d.real.(partitionerSource); ok {
		return ps.Partitioner()
	}
	return nil
}

// statementTable is the table a write or a SELECT names.
func statementTable(st cql.Statement) cql.QualifiedName {
	switch st := st.(type) {
	case *cql.Insert:
		return st.Table
	case *cql.Update:
		return st.Table
	case *cql.Delete:
		return st.Table
	case *cql.Select:
		return st.Table
	}
	return cql.QualifiedName{}
}
