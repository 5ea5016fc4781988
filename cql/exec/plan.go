package exec

import (
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// A statement run again and again (a prepared one above all) keeps what
// does not depend on its bound values: the columns it names, its
// selectors, the shape of its WHERE clause. A plan holds for the
// *schema.Table it was made against; a schema change makes a new one, and
// the plan is made again.

// planCacheSize bounds a session's plans; statements parsed for one run
// (unprepared queries) would otherwise pile up.
const planCacheSize = 256

type plan struct {
	t      *schema.Table
	insert *insertPlan
	sel    *selectPlan
}

// planFor returns the session's plan of st against t, or makes one with
// build.
func (s *Session) planFor(st cql.Statement, t *schema.Table, build func(p *plan) error) (*plan, error) {
	if p, ok := s.plans[st]; ok && p.t == t {
		return p, nil
	}
	p := &plan{t: t}
	if err := build(p); err != nil {
		return nil, err
	}
	if s.plans == nil || len(s.plans) >= planCacheSize {
		s.plans = make(map[cql.Statement]*plan)
	}
	s.plans[st] = p
	return p, nil
}

// insertPlan is an INSERT's columns, checked.
type insertPlan struct {
	columns []*schema.Column
}

func newInsertPlan(t *schema.Table, st *cql.Insert) (*insertPlan, error) {
	p := &insertPlan{}
	seen := make(map[string]bool, len(st.Columns))
	for _, name := range st.Columns {
		c := t.Column(name)
		if c == nil {
			return nil, invalidf("Undefined column name %s in table %s.%s", name, t.Keyspace, t.Name)
		}
		if seen[name] {
			return nil, invalidf("Multiple definitions found for column %s", name)
		}
		seen[name] = true
		p.columns = append(p.columns, c)
	}
	return p, nil
}

// selectPlan is a SELECT's selectors (when none takes a bound value) and,
// for a read of one partition by = only, where its key values are.
type selectPlan struct {
	sels    []*selector
	columns []ColumnSpec // the result's columns, when sels is kept
	need    []bool       // the columns sels read, by Column.Index
	point   *pointRead
}

// pointRead is a WHERE clause of = relations only, on every partition key
// column and a prefix of the clustering columns: the common read by key,
// which needs none of parseWhere's general work.
type pointRead struct {
	partitionKey []cql.Expr // by partition key position
	clustering   []cql.Expr // a prefix, by position
}

func newPointRead(t *schema.Table, where []cql.Relation) *pointRead {
	p := &pointRead{partitionKey: make([]cql.Expr, len(t.PartitionKey)), clustering: make([]cql.Expr, len(t.Clustering))}
	for _, r := range where {
		if r.Kind != cql.ColumnRelation || r.Op != cql.OpEq || len(r.Columns) != 1 {
			return nil
		}
		c := t.Column(r.Columns[0])
		if c == nil {
			return nil
		}
		var slot *cql.Expr
		switch c.Kind {
		case schema.PartitionKey:
			slot = &p.partitionKey[c.Position]
		case schema.Clustering:
			slot = &p.clustering[c.Position]
		default:
			return nil
		}
		if *slot != nil {
			return nil // a column restricted twice: parseWhere says why
		}
		*slot = r.Value
	}
	for _, e := range p.partitionKey {
		if e == nil {
			return nil
		}
	}
	n := 0
	for n < len(p.clustering) && p.clustering[n] != nil {
		n++
	}
	for _, e := range p.clustering[n:] {
		if e != nil {
			return nil
		}
	}
	p.clustering = p.clustering[:n]
	return p
}

// pointScratch holds a point read's restrictions and their one-element
// lists; a session reuses one, as it runs one statement at a time.
type pointScratch struct {
	kr       keyRestrictions
	keys     [1][]byte
	prefixes [1][]byte
	slices   [1]clusteringSlice
}

// restrictions evaluates the key values into scratch: what parseWhere
// would return.
func (p *pointRead) restrictions(t *schema.Table, bound *binding, scratch *pointScratch) (*keyRestrictions, error) {
	pk := make([][]byte, len(p.partitionKey))
	for i, e := range p.partitionKey {
		v, err := keyValue(e, t.PartitionKey[i], bound)
		if err != nil {
			return nil, err
		}
		pk[i] = v
	}
	key, err := t.StatementKey(pk)
	if err != nil {
		return nil, asInvalid(err)
	}
	ck := make([][]byte, len(p.clustering))
	for i, e := range p.clustering {
		if ck[i], err = keyValue(e, t.Clustering[i], bound); err != nil {
			return nil, err
		}
	}
	prefix, err := encodeAt(t, nil, 0, ck)
	if err != nil {
		return nil, err
	}
	one := scratch
	*one = pointScratch{}
	one.keys[0], one.prefixes[0] = key, prefix
	one.slices[0] = clusteringSlice{start: prefix, end: mutation.TopBound} // the whole partition
	if len(prefix) > 0 {
		one.slices[0] = clusteringSlice{start: mutation.StartBound(prefix, true), end: mutation.EndBound(prefix, true)}
	}
	kr := &one.kr
	kr.key, kr.keys, kr.keyed = key, one.keys[:], true
	kr.eqColumns, kr.restricted = len(ck), len(ck) > 0
	kr.prefixes, kr.slices = one.prefixes[:], one.slices[:]
	return kr, nil
}
