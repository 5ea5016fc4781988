package exec

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// GROUP BY as Cassandra 4.1 groups (SelectStatement's aggregation
// specification): by the partition key and a prefix of the clustering
// columns, in their declared order, columns restricted by equality
// skipped, the last element possibly a scalar function of the next
// clustering column (floor() of a time: grouping by time range). Each
// group answers one row: its aggregates over the group's rows, everything
// else from its first row.

// grouping is a prepared GROUP BY.
type grouping struct {
	// clustering are the clustering columns whose values key a group.
	clustering []*schema.Column
	// fn, when set, is the last element: a function of the next
	// clustering column, its value keying the group too.
	fn *selector
}

func newGrouping(t *schema.Table, p partitioner.Partitioner, st *cql.Select, bound *binding) (*grouping, error) {
	g := &grouping{}
	keyColumns := append(append([]*schema.Column(nil), t.PartitionKey...), t.Clustering...)
	next := 0
	prefix := 0
	for _, e := range st.GroupBy {
		var def *schema.Column
		switch e := e.(type) {
		case *cql.ColumnRef:
			def = t.Column(e.Name)
			if def == nil {
				return nil, invalidf("Undefined column name %s in table %s", cqltype.QuoteIdent(e.Name), t)
			}
			if !def.IsPrimaryKey() {
				return nil, invalidf("Group by is currently only supported on the columns of the PRIMARY KEY, got %s", def.Name)
			}
			if g.fn != nil {
				return nil, invalidf("Functions are only supported on the last element of the GROUP BY clause")
			}
		case *cql.FunctionCall:
			b := &selectionBuilder{t: t, p: p, bound: bound}
			sel, err := b.call(e)
			if err != nil {
				return nil, err
			}
			if sel.kind == selAggregate {
				return nil, invalidf("Aggregate functions are not supported within the GROUP BY clause, got: %s", sel.fn.name)
			}
			switch len(b.defs) {
			case 0:
				return nil, invalidf("GROUP BY functions must have one clustering column name as parameter")
			case 1:
			default:
				names := make([]string, len(b.defs))
				for i, d := range b.defs {
					names[i] = cqltype.QuoteIdent(d.Name)
				}
				return nil, invalidf("GROUP BY functions accept only one clustering column as parameter, got: %s", strings.Join(names, ","))
			}
			def = b.defs[0]
			if def.Kind != schema.Clustering {
				return nil, invalidf("Group by functions are only supported on clustering columns, got %s", def.Name)
			}
			g.fn = sel
		default:
			return nil, invalidf("%s is not supported in the GROUP BY clause", e)
		}
		for {
			if next == len(keyColumns) {
				return nil, invalidf("Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
			}
			c := keyColumns[next]
			next++
			if c.Kind == schema.Clustering {
				prefix++
			}
			if c == def {
				break
			}
			if !restrictedByEq(c, st.Where) {
				return nil, invalidf("Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
			}
		}
	}
	if next < len(t.PartitionKey) {
		return nil, invalidf("Group by is not supported on only a part of the partition key")
	}
	if prefix > 0 && st.Distinct {
		return nil, invalidf("Grouping on clustering columns is not allowed for SELECT DISTINCT queries")
	}
	if g.fn != nil {
		prefix-- // the function's column keys the group through the function
	}
	g.clustering = t.Clustering[:prefix]
	return g, nil
}

// key is the group a row belongs to: its partition, the grouped
// clustering values, and the function's value.
func (g *grouping) key(dst, partitionKey []byte, in *rowInput) ([]byte, error) {
	dst = appendPart(dst[:0], partitionKey)
	for _, c := range g.clustering {
		dst = appendPart(dst, in.cells[c.Index].Value)
	}
	if g.fn != nil {
		v, err := g.fn.eval(in)
		if err != nil {
			return nil, err
		}
		dst = appendPart(dst, v)
	}
	return dst, nil
}

// appendPart appends a length-prefixed part (null distinct from empty).
func appendPart(dst, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(v))), v...)
}

// groupState follows the groups of a GROUP BY read as its rows come, in
// key order: each group's rows meet in one aggregation, whose row is
// added to the result when the next group starts.
type groupState struct {
	cur       *aggregation
	key       []byte // the current group's
	scratch   []byte
	partition []byte // the partition groups are being counted in
	groups    int    // groups started in it
}

// add takes one row; full says a group's row was just added to res.
func (g *groupState) add(grp *grouping, sels []*selector, partitionKey []byte, in *rowInput, perPartition int, res *Result) (full bool, err error) {
	if g.scratch, err = grp.key(g.scratch, partitionKey, in); err != nil {
		return false, err
	}
	if g.cur == nil || !bytes.Equal(g.scratch, g.key) {
		if g.cur != nil {
			if err := g.finish(res); err != nil {
				return false, err
			}
			full = true
		}
		if !bytes.Equal(partitionKey, g.partition) {
			g.partition, g.groups = bytes.Clone(partitionKey), 0
		}
		if perPartition > 0 && g.groups >= perPartition {
			return full, nil // PER PARTITION LIMIT counts groups
		}
		g.cur, g.key = newAggregation(sels), bytes.Clone(g.scratch)
		g.groups++
	}
	return full, g.cur.add(in)
}

// finish adds the current group's row, if a group is open.
func (g *groupState) finish(res *Result) error {
	if g.cur == nil {
		return nil
	}
	row, err := g.cur.row()
	if err != nil {
		return err
	}
	res.Rows = append(res.Rows, row)
	g.cur = nil
	return nil
}
