package exec

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

func (s *Session) selectRows(st *cql.Select, opts QueryParams, bound *binding) (*Result, error) {
	t, err := s.table(st.Table)
	if err != nil {
		return nil, err
	}
	switch {
	case st.JSON:
		return s.selectJSON(st, opts, bound)
	}
	var nearest *annQuery
	if hasANN(st.OrderBy) {
		if nearest, err = planANN(t, st, bound); err != nil {
			return nil, err
		}
	} else if err := checkVectorRelations(t, st.Where); err != nil {
		return nil, err
	}
	// A query an index serves reads as one that allows filtering: the
	// same rows, found by the index.
	filtering := st.AllowFiltering || indexedQuery(t, st.Where)
	pl, err := s.planFor(st, t, func(p *plan) error {
		sels, takesTerms, err := selections(t, s.partitioner(), st.Selectors, bound)
		if err != nil {
			return err
		}
		p.sel = &selectPlan{}
		if !takesTerms {
			p.sel.sels, p.sel.columns = sels, resultColumns(t, sels)
			p.sel.need = neededColumns(t, sels, nil)
		}
		if !filtering {
			p.sel.point = newPointRead(t, st.Where)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sels := pl.sel.sels
	if sels == nil {
		if sels, _, err = selections(t, s.partitioner(), st.Selectors, bound); err != nil {
			return nil, err
		}
	}
	var grp *grouping
	if len(st.GroupBy) > 0 {
		if grp, err = newGrouping(t, s.partitioner(), st, bound); err != nil {
			return nil, err
		}
	}
	var agg *aggregation
	for _, sel := range sels {
		if sel.aggregates() && grp == nil {
			agg = newAggregation(sels)
			break
		}
	}
	limit, err := positiveLimit(st.Limit, "limit", "LIMIT", bound)
	if err != nil {
		return nil, err
	}
	perPartition, err := positiveLimit(st.PerPartitionLimit, "per partition limit", "PER PARTITION LIMIT", bound)
	if err != nil {
		return nil, err
	}
	if st.Distinct {
		if err := checkDistinct(t, sels, st.Where); err != nil {
			return nil, err
		}
		perPartition = 1 // one row per partition: its key and static columns
	}
	var kr *keyRestrictions
	var filters []rowFilter
	if pl.sel.point != nil {
		kr, err = pl.sel.point.restrictions(t, bound, &s.point)
	} else {
		where := st.Where
		if filtering {
			var rest []cql.Relation
			where, rest = splitForFiltering(t, st.Where)
			if filters, err = newFilters(t, rest, bound); err != nil {
				return nil, err
			}
		}
		kr, err = parseWhere(t, s.partitioner(), where, bound, whereMode{read: true, allowRange: true})
	}
	if err != nil {
		return nil, err
	}
	reverse := false
	var sorted *postOrder
	var warnings []string
	if nearest != nil {
		if warnings, err = s.topKChecks(agg != nil || grp != nil, limit, perPartition, opts); err != nil {
			return nil, err
		}
		// Every row found is ranked before LIMIT cuts: not paged.
		opts.PageSize, opts.PagingState = 0, nil
		sorted = &postOrder{nearest: nearest}
	} else if len(st.OrderBy) > 0 {
		if !kr.keyed {
			return nil, invalidf("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
		}
		if reverse, err = orderBy(t, st.OrderBy, st.Where); err != nil {
			return nil, err
		}
		if kr.key == nil && agg == nil && grp == nil {
			// IN on the partition key: each partition's rows come in the
			// order asked, and the rows of all of them are sorted after,
			// then cut to LIMIT. That cannot be paged: as in Cassandra,
			// whose post-ordered reads carry no row limit, a paged one is
			// refused whatever its LIMIT.
			if opts.PageSize > 0 {
				return nil, invalidf("Cannot page queries with both ORDER BY and a IN restriction on the partition key; " +
					"you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query")
			}
			opts.PageSize, opts.PagingState = 0, nil
			sorted = newPostOrder(t, st.OrderBy, reverse)
		}
	}
	if agg != nil || grp != nil {
		// An aggregation reads every row: LIMIT counts result rows (it has
		// one, or one per group); it is not paged.
		opts.PageSize, opts.PagingState = 0, nil
	}
	pg := pager{size: max(opts.PageSize, 0), limit: limit}
	if sorted != nil {
		pg.limit = 0 // every row is read and sorted before LIMIT cuts
	}
	if opts.PagingState != nil {
		if pg.resume, err = decodePagingState(opts.PagingState); err != nil {
			return nil, err
		}
	}
	now := s.Now().Unix()
	rd := partitionReader{s: s, t: t, kr: kr, reverse: reverse, now: now}
	if len(filters) > 0 && readsOneReplica(s.consistency) {
		// Where replicas' answers merge, a replica whose newer data no
		// longer matches leaves a partition out while another returns its
		// stale row: until reads recheck such partitions (Cassandra's
		// replica filtering protection), those levels scan.
		if rd.index, err = indexRead(t, st.Where, bound); err != nil {
			return nil, err
		}
	}
	if nearest != nil && !kr.keyed && rd.index == nil && !hasTokenRelation(st.Where) {
		// Each replica offers the partitions of its nearest vectors; the
		// rows read are ranked here. (With another index's relation, that
		// index's rows are all ranked instead.)
		rd.index = &request.IndexRead{Index: nearest.index.StorageName(), Vector: nearest.raw, Nearest: limit}
	}
	rd.resumeAt(pg.resume)
	if agg == nil && grp == nil {
		rd.limit = pg.want()
		if len(filters) == 0 {
			rd.perPartition = perPartition
		} else if rd.limit > 0 {
			rd.limit = max(rd.limit, 256) // filters may drop many of the rows read
		}
	}
	res := &Result{Kind: RowsResult, Columns: pl.sel.columns}
	if res.Columns == nil {
		res.Columns = resultColumns(t, sels)
	}
	if agg != nil || grp != nil {
		res.Warnings = aggregationWarnings(t, st.Where)
	}
	res.Warnings = append(res.Warnings, warnings...)
	rd.warnings = &res.Warnings
	var group groupState
	var partitionKey []byte
	kept := 0 // rows of this partition the filters let through
	cells := s.rowScratch(len(t.Columns))
	need := pl.sel.need
	if need == nil || len(filters) > 0 || nearest != nil {
		need = neededColumns(t, sels, filters)
	}
	if nearest != nil {
		need[nearest.column.Index] = true
	}
	for first := true; ; first = false {
		p, whole, err := rd.next()
		if err != nil {
			return nil, err
		}
		if p == nil {
			break
		}
		if first || !bytes.Equal(p.Key, partitionKey) {
			partitionKey, kept = p.Key, 0
			if first && pg.resume != nil && bytes.Equal(p.Key, pg.resume.key) {
				kept = pg.resume.inPartition
			}
		}
		rows := p.Rows
		staticOnly := len(rows) == 0 && p.Static != nil && whole && t.RowVisible(p.Static, now)
		if staticOnly {
			// A partition with only static data reads as one row whose
			// clustering columns are null.
			rows = []request.Row{{Row: mutation.NewRow()}}
		}
		for _, r := range rows {
			if !staticOnly && !t.RowVisible(r.Row, now) {
				continue // only a dropped column's data kept it
			}
			haveCells := false
			if len(filters) > 0 {
				if err := t.ReadRow(cells, need, p.Key, r.Clustering, r.Row, p.Static, now); err != nil {
					return nil, &Error{Code: ServerError, Message: err.Error()}
				}
				if haveCells = true; !acceptsAll(filters, cells) {
					continue
				}
			}
			if grp == nil && perPartition > 0 && kept >= perPartition {
				break // before paging: every page sees the same rows
			}
			kept++
			if agg == nil && grp == nil {
				take, done := pg.take(p.Key, r.Clustering, kept)
				if done {
					res.PagingState = pg.state()
					sorted.sort(res.Rows, len(sels))
					return res, nil
				}
				if !take {
					continue
				}
			}
			if !haveCells {
				if err := t.ReadRow(cells, need, p.Key, r.Clustering, r.Row, p.Static, now); err != nil {
					return nil, &Error{Code: ServerError, Message: err.Error()}
				}
			}
			if nearest != nil && cells[nearest.column.Index].Value == nil {
				continue // no vector: not in the index, so not found
			}
			in := &rowInput{cells: cells, now: now}
			if grp != nil {
				full, err := group.add(grp, sels, p.Key, in, perPartition, res)
				if err != nil {
					return nil, err
				}
				if full && limit > 0 && len(res.Rows) >= limit {
					return res, nil
				}
				continue
			}
			if agg != nil {
				if err := agg.add(in); err != nil {
					return nil, err
				}
				continue
			}
			out := make([][]byte, len(sels), len(sels)+sorted.width())
			for i, sel := range sels {
				if out[i], err = sel.eval(in); err != nil {
					return nil, err
				}
			}
			res.Rows = append(res.Rows, sorted.withKey(out, cells))
		}
	}
	if err := group.finish(res); err != nil {
		return nil, err
	}
	sorted.sort(res.Rows, len(sels))
	if sorted != nil && limit > 0 && len(res.Rows) > limit {
		res.Rows = res.Rows[:limit]
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

// aggregationWarnings are the client warnings of an aggregation that may
// read many partitions, worded as Cassandra words them: one with no
// restriction on the partition key (a token() range counts as one), or one
// naming its partitions with IN.
func aggregationWarnings(t *schema.Table, where []cql.Relation) []string {
	restricted, in := false, false
	for _, r := range where {
		switch r.Kind {
		case cql.TokenRelation:
			restricted = true
		case cql.ColumnRelation:
			if c := t.Column(r.Columns[0]); c != nil && c.Kind == schema.PartitionKey {
				restricted = true
				in = in || r.Op == cql.OpIn
			}
		}
	}
	switch {
	case !restricted:
		return []string{"Aggregation query used without partition key"}
	case in:
		return []string{"Aggregation query used on multiple partition keys (IN restriction)"}
	}
	return nil
}

// positiveLimit evaluates LIMIT or PER PARTITION LIMIT (0 when absent).
func positiveLimit(e cql.Expr, receiver, clause string, bound *binding) (int, error) {
	if e == nil {
		return 0, nil
	}
	v, err := term(e, cqltype.IntType, "["+receiver+"]", bound)
	if isUnset(err) {
		return 0, nil // as if not given
	}
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, invalidf("Invalid null value of %s", receiver)
	}
	n, _ := cqltype.DecodeInt(v)
	if n <= 0 {
		return 0, invalidf("%s must be strictly positive", clause)
	}
	return int(n), nil
}

// orderBy checks ORDER BY against the clustering columns and reports
// whether it reverses their declared order.
func orderBy(t *schema.Table, order []cql.Ordering, where []cql.Relation) (reverse bool, err error) {
	next := 0 // the clustering column an ordering may name next
	for i, o := range order {
		c := t.Column(o.Column)
		if c == nil {
			return false, invalidf("Undefined column name %s", o.Column)
		}
		if c.Kind != schema.Clustering {
			return false, invalidf("Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s", o.Column)
		}
		// Columns restricted by equality may be skipped.
		for ; next < c.Position && restrictedByEq(t.Clustering[next], where); next++ {
		}
		if c.Position != next {
			return false, invalidf("Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY")
		}
		next++
		r := o.Descending != c.Descending
		if i > 0 && r != reverse {
			return false, invalidf("Unsupported order by relation")
		}
		reverse = r
	}
	return reverse, nil
}

// restrictedByEq reports whether a relation gives the column one value.
func restrictedByEq(c *schema.Column, where []cql.Relation) bool {
	for _, r := range where {
		if r.Kind == cql.ColumnRelation && len(r.Columns) == 1 && r.Columns[0] == c.Name && r.Op == cql.OpEq {
			return true
		}
	}
	return false
}

// postOrder sorts the rows of an IN query on the partition key by its
// ORDER BY columns, as Cassandra's ordering comparator does: by the
// columns' clustering order, all of it reversed when the query reverses
// it. Each row carries its ordering values after its selected ones until
// it is sorted.
type postOrder struct {
	columns []*schema.Column
	reverse bool
	// nearest, when set, ranks rows by their vector's similarity to its
	// vector instead, most similar first.
	nearest *annQuery
}

func newPostOrder(t *schema.Table, order []cql.Ordering, reverse bool) *postOrder {
	p := &postOrder{reverse: reverse}
	for _, o := range order {
		p.columns = append(p.columns, t.Column(o.Column))
	}
	return p
}

func (p *postOrder) width() int {
	if p == nil {
		return 0
	}
	if p.nearest != nil {
		return 1
	}
	return len(p.columns)
}

// withKey appends the row's ordering values to its selected ones.
func (p *postOrder) withKey(out [][]byte, cells schema.RowValues) [][]byte {
	if p == nil {
		return out
	}
	if q := p.nearest; q != nil {
		return append(out, q.score(cells[q.column.Index].Value))
	}
	for _, c := range p.columns {
		out = append(out, cells[c.Index].Value)
	}
	return out
}

// sort orders rows (each width values past n) and drops their ordering
// values.
func (p *postOrder) sort(rows [][][]byte, n int) {
	if p == nil {
		return
	}
	slices.SortStableFunc(rows, func(a, b [][]byte) int {
		if p.nearest != nil {
			return compareScores(b[n], a[n])
		}
		for i, c := range p.columns {
			var x int
			switch u, v := a[n+i], b[n+i]; {
			case u == nil || v == nil: // a partition's static row: nulls first
				x = cmp.Compare(boolInt(u != nil), boolInt(v != nil))
			default:
				x = c.Type.Compare(u, v)
			}
			if c.Descending != p.reverse {
				x = -x
			}
			if x != 0 {
				return x
			}
		}
		return 0
	})
	for i := range rows {
		rows[i] = rows[i][:n]
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkDistinct holds SELECT DISTINCT to partition key and static columns,
// all of the partition key, and no clustering restriction.
func checkDistinct(t *schema.Table, sels []*selector, where []cql.Relation) error {
	seen := map[string]bool{}
	var bad error
	var visit func(s *selector)
	visit = func(s *selector) {
		if c := s.column; c != nil {
			if c.Kind != schema.PartitionKey && c.Kind != schema.Static && bad == nil {
				bad = invalidf("SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)", c.Name)
			}
			seen[c.Name] = true
		}
		for _, a := range s.args {
			visit(a)
		}
	}
	for _, s := range sels {
		visit(s)
	}
	if bad != nil {
		return bad
	}
	for _, c := range t.PartitionKey {
		if !seen[c.Name] {
			return invalidf("SELECT DISTINCT queries must request all the partition key columns (missing %s)", c.Name)
		}
	}
	for _, r := range where {
		for _, name := range r.Columns {
			if c := t.Column(name); c != nil && c.Kind == schema.Clustering {
				return invalidf("SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.")
			}
		}
	}
	return nil
}

func acceptsAll(filters []rowFilter, cells schema.RowValues) bool {
	for i := range filters {
		if !filters[i].accepts(cells) {
			return false
		}
	}
	return true
}

// resultColumns describes the columns of a SELECT's result.
func resultColumns(t *schema.Table, sels []*selector) []ColumnSpec {
	out := make([]ColumnSpec, len(sels))
	for i, sel := range sels {
		out[i] = ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: sel.name, Type: sel.typ}
	}
	return out
}

// rowScratch is the session's RowValues for reading rows into, n long: a
// session runs one statement at a time.
func (s *Session) rowScratch(n int) schema.RowValues {
	if cap(s.scratch) < n {
		s.scratch = make(schema.RowValues, n)
	}
	return s.scratch[:n]
}

// neededColumns marks, by Column.Index, the columns the selectors and
// filters read: a row is decoded only as far as they need.
func neededColumns(t *schema.Table, sels []*selector, filters []rowFilter) []bool {
	need := make([]bool, len(t.Columns))
	var visit func(s *selector)
	visit = func(s *selector) {
		if s.column != nil {
			need[s.column.Index] = true
		}
		for _, a := range s.args {
			visit(a)
		}
	}
	for _, s := range sels {
		visit(s)
	}
	for _, f := range filters {
		need[f.column.Index] = true
	}
	return need
}
