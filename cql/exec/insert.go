package exec

import (
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// table resolves a statement's table.
func (s *Session) table(n cql.QualifiedName) (*schema.Table, error) {
	ks, err := s.keyspaceOf(n)
	if err != nil {
		return nil, err
	}
	t, err := s.schema().Table(ks, n.Name)
	return t, asInvalid(err)
}

func (s *Session) insert(st *cql.Insert, bound *binding) (*Result, error) {
	if st.IfNotExists {
		return s.conditionalWrite(st, bound, s.serial)
	}
	if err := s.checkStatement(st.Table, st); err != nil {
		return nil, err
	}
	m, err := s.insertMutation(st, bound, nil)
	if err != nil {
		return nil, err
	}
	return s.applyStatement(st.Table, []*mutation.Mutation{m})
}

// insertMutation builds what an INSERT writes; batchTS is the batch's
// timestamp, if it set one.
func (s *Session) insertMutation(st *cql.Insert, bound *binding, batchTS *int64) (*mutation.Mutation, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	if err := writeRefusal(t, st); err != nil {
		return nil, err
	}
	switch {
	case st.JSON != nil:
		return s.insertJSON(t, st, bound, batchTS)
	case len(st.Columns) != len(st.Values):
		return nil, invalidf("Unmatched column names/values")
	}
	pl, err := s.planFor(st, t, func(p *plan) error {
		var err error
		p.insert, err = newInsertPlan(t, st)
		return err
	})
	if err != nil {
		return nil, err
	}
	cols := pl.insert.columns
	used := make([]*schema.Column, 0, len(cols))
	values := make([][]byte, 0, len(cols))
	for i, c := range cols {
		v, err := term(st.Values[i], c.Type, c.Name, bound)
		if isUnset(err) && !c.IsPrimaryKey() {
			continue // left as it is: written as if not named
		}
		if err != nil {
			return nil, err
		}
		if v == nil && c.IsPrimaryKey() {
			return nil, invalidf("Invalid null value in condition for column %s", c.Name)
		}
		used, values = append(used, c), append(values, v)
	}
	w, err := s.cellWriter(st.Using, t, bound, batchTS)
	if err != nil {
		return nil, err
	}
	m, err := t.InsertRow(used, values, w)
	return m, asInvalid(err)
}

// applyWrites applies a statement's mutations.
func (s *Session) applyWrites(ms ...*mutation.Mutation) (*Result, error) {
	if err := s.c.Apply(ms, s.consistency, s.trace); err != nil {
		return nil, coordinatorError(err)
	}
	return voidResult, nil
}

// voidResult is every write's result; results are read-only.
var voidResult = &Result{Kind: VoidResult}

// cellWriter reads USING TTL and TIMESTAMP (the table's default TTL when
// none is given; USING TTL 0 is no TTL); a batch's timestamp stands when
// the statement sets none.
func (s *Session) cellWriter(u cql.Using, t *schema.Table, bound *binding, batchTS *int64) (*schema.CellWriter, error) {
	now := s.Now()
	w := &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix(), TTL: t.Options.DefaultTimeToLive, NextListPath: nextTimeuuid}
	if batchTS != nil {
		if u.Timestamp != nil {
			return nil, invalidf("Timestamp must be set either on BATCH or individual statements")
		}
		w.Timestamp = *batchTS
	}
	if batchTS == nil && bound.defaultTimestamp != nil {
		w.Timestamp = *bound.defaultTimestamp
	}
	if u.Timestamp != nil {
		v, err := term(u.Timestamp, cqltype.BigintType, "[timestamp]", bound)
		if isUnset(err) {
			return w, s.ttl(w, u, bound)
		}
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null value of timestamp")
		}
		w.Timestamp, _ = cqltype.DecodeBigint(v)
	}
	return w, s.ttl(w, u, bound)
}

// ttl reads USING TTL into w (unset or absent: the table's default).
func (s *Session) ttl(w *schema.CellWriter, u cql.Using, bound *binding) error {
	if u.TTL == nil {
		return nil
	}
	v, err := term(u.TTL, cqltype.IntType, "[ttl]", bound)
	if isUnset(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if v == nil {
		return invalidf("Invalid null value of TTL")
	}
	ttl, _ := cqltype.DecodeInt(v)
	switch {
	case ttl < 0:
		return invalidf("A TTL must be greater or equal to 0, but was %d", ttl)
	case ttl > schema.MaxTTL:
		return invalidf("ttl is too large. requested (%d) maximum (%d)", ttl, schema.MaxTTL)
	}
	w.TTL = ttl
	return nil
}

// functionEnv is the clock and randomness of now(), uuid() and the
// timeuuids that order list elements; one per process, so that its
// timeuuids only grow.
var functionEnv = &cqltype.FunctionEnv{}

func nextTimeuuid() []byte { return functionEnv.NextTimeUUID() }
