package exec

import (
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

func (s *Session) selectRows(st *cql.Select, opts QueryParams) (*Result, error) {
	bound := opts.Values
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	switch {
	case st.JSON:
		return nil, invalidf("SELECT JSON is not supported yet")
	case st.Distinct:
		return nil, invalidf("SELECT DISTINCT is not supported yet")
	case len(st.GroupBy) > 0:
		return nil, invalidf("GROUP BY is not supported yet")
	case len(st.OrderBy) > 0:
		return nil, invalidf("ORDER BY is not supported yet")
	case st.PerPartitionLimit != nil:
		return nil, invalidf("PER PARTITION LIMIT is not supported yet")
	}
	sels, err := selections(t, s.partitioner(), st.Selectors, bound)
	if err != nil {
		return nil, err
	}
	var agg *aggregation
	for _, sel := range sels {
		if sel.aggregates() {
			agg = newAggregation(sels)
			break
		}
	}
	limit := 0
	if st.Limit != nil {
		v, err := term(st.Limit, cqltype.IntType, "[limit]", bound)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null value of limit")
		}
		n, _ := cqltype.DecodeInt(v)
		if n <= 0 {
			return nil, invalidf("LIMIT must be strictly positive")
		}
		limit = int(n)
	}
	key, q, err := restrictions(t, st.Where, bound)
	if err != nil {
		return nil, err
	}
	// An aggregation reads every row: LIMIT counts result rows, and it
	// has one; it is not paged.
	readLimit := limit
	if agg != nil {
		readLimit = 0
		opts.PageSize, opts.PagingState = 0, nil
	}
	pg, err := newPager(opts, limit)
	if err != nil {
		return nil, err
	}
	if opts.PageSize > 0 || opts.PagingState != nil {
		// Paging reads past the page, to find where the next one starts.
		readLimit = 0
	}
	q.Limit, q.Now = readLimit, s.Now().Unix()
	var parts []*Partition
	if key != nil {
		p, err := s.c.ReadPartition(t, key, q)
		if err != nil {
			return nil, &Error{Code: ServerError, Message: err.Error()}
		}
		if p != nil {
			parts = []*Partition{p}
		}
	} else if parts, err = s.c.Scan(t, ScanQuery{Limit: readLimit, Now: q.Now}); err != nil {
		return nil, &Error{Code: ServerError, Message: err.Error()}
	}
	res := &Result{Kind: RowsResult}
	for _, sel := range sels {
		res.Columns = append(res.Columns, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: sel.name, Type: sel.typ})
	}
	for _, p := range parts {
		rows := p.Rows
		if len(rows) == 0 && p.Static != nil && q.Start == nil && q.End == nil {
			// A partition with only static data reads as one row whose
			// clustering columns are null.
			rows = []Row{{Row: mutation.NewRow()}}
		}
		for _, r := range rows {
			if agg == nil {
				take, done := pg.take(p.Key, r.Clustering)
				if done {
					res.PagingState = pg.state()
					return res, nil
				}
				if !take {
					continue
				}
			}
			cells, err := t.RowCells(p.Key, r.Clustering, r.Row, p.Static, q.Now)
			if err != nil {
				return nil, &Error{Code: ServerError, Message: err.Error()}
			}
			in := &rowInput{cells: cells, now: q.Now}
			if agg != nil {
				if err := agg.add(in); err != nil {
					return nil, err
				}
				continue
			}
			out := make([][]byte, len(sels))
			for i, sel := range sels {
				if out[i], err = sel.eval(in); err != nil {
					return nil, err
				}
			}
			res.Rows = append(res.Rows, out)
		}
	}
	if agg != nil {
		// Aggregates answer one row even over no rows (count 0).
		row, err := agg.row()
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// restrictions turns WHERE into a partition key and a clustering slice, or
// no key (a scan of the table). Today: every partition key column by =,
// then = on a prefix of the clustering columns and one range (or =) on
// the next.
func restrictions(t *schema.Table, where []cql.Relation, bound [][]byte) ([]byte, PartitionQuery, error) {
	var q PartitionQuery
	eq := map[string]cql.Expr{}
	type rangeRel struct {
		op  cql.Operator
		val cql.Expr
	}
	ranges := map[string][]rangeRel{}
	for _, r := range where {
		if r.Kind != cql.ColumnRelation || len(r.Columns) != 1 {
			return nil, q, invalidf("%s is not supported yet in WHERE", r)
		}
		name := r.Columns[0]
		c := t.Column(name)
		if c == nil {
			return nil, q, invalidf("Undefined column name %s", name)
		}
		switch r.Op {
		case cql.OpEq:
			if _, dup := eq[name]; dup {
				return nil, q, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
			}
			eq[name] = r.Value
		case cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte:
			ranges[name] = append(ranges[name], rangeRel{r.Op, r.Value})
		default:
			return nil, q, invalidf("%s is not supported yet in WHERE", r)
		}
		if !c.IsPrimaryKey() {
			return nil, q, invalidf("Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
		}
	}
	if len(where) == 0 {
		return nil, q, nil
	}
	pk := make([][]byte, len(t.PartitionKey))
	for i, c := range t.PartitionKey {
		e, ok := eq[c.Name]
		if !ok {
			return nil, q, invalidf("Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
		}
		v, err := term(e, c.Type, c.Name, bound)
		if err != nil {
			return nil, q, err
		}
		if v == nil {
			return nil, q, invalidf("Invalid null value in condition for column %s", c.Name)
		}
		pk[i] = v
	}
	key, err := t.PartitionKeyBytes(pk)
	if err != nil {
		return nil, q, asInvalid(err)
	}
	var prefix [][]byte
	layout := t.ClusteringLayout()
	i := 0
	for ; i < len(t.Clustering); i++ {
		c := t.Clustering[i]
		e, ok := eq[c.Name]
		if !ok {
			break
		}
		v, err := term(e, c.Type, c.Name, bound)
		if err != nil {
			return nil, q, err
		}
		if v == nil {
			return nil, q, invalidf("Invalid null value in condition for column %s", c.Name)
		}
		prefix = append(prefix, v)
	}
	for j := i; j < len(t.Clustering); j++ {
		c := t.Clustering[j]
		if _, ok := eq[c.Name]; ok || (j > i && len(ranges[c.Name]) > 0) {
			return nil, q, invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", c.Name, t.Clustering[j-1].Name)
		}
	}
	enc, err := layout.Encode(nil, prefix)
	if err != nil {
		return nil, q, asInvalid(err)
	}
	if len(prefix) > 0 {
		q.Start, q.End = mutation.StartBound(enc, true), mutation.EndBound(enc, true)
	}
	if i < len(t.Clustering) {
		c := t.Clustering[i]
		for _, r := range ranges[c.Name] {
			v, err := term(r.val, c.Type, c.Name, bound)
			if err != nil {
				return nil, q, err
			}
			if v == nil {
				return nil, q, invalidf("Invalid null value in condition for column %s", c.Name)
			}
			b, err := layout.Encode(append([]byte(nil), enc...), [][]byte{v})
			if err != nil {
				return nil, q, asInvalid(err)
			}
			// In byte order a descending column's ranges turn round.
			lower := r.op == cql.OpGt || r.op == cql.OpGte
			inclusive := r.op == cql.OpGte || r.op == cql.OpLte
			if c.Descending {
				lower = !lower
			}
			if lower {
				q.Start = mutation.StartBound(b, inclusive)
			} else {
				q.End = mutation.EndBound(b, inclusive)
			}
		}
	}
	return key, q, nil
}
