package exec

import (
	"bytes"
	"sort"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// keyRestrictions is what a WHERE clause of a write says: the partition
// key, the clustering columns restricted by = (a prefix, in key order), and
// at most one range on the column after them.
type keyRestrictions struct {
	key []byte // the partition key, when = gives exactly one
	// keys are the partition keys a read names (several with IN), in token
	// order; empty for a scan, unless keyed is set (an empty IN).
	keys  [][]byte
	keyed bool
	// from and to bound a scan by token (token() relations): from
	// inclusive, to exclusive; empty says they exclude everything.
	from, to *partitioner.Token
	empty    bool
	prefix   [][]byte
	// lower and upper bound the range column, when there is one.
	// inColumn, when set, is the clustering column after the = prefix that
	// IN restricts, with its candidates in clustering order: the read is
	// one slice per candidate.
	inColumn     *schema.Column
	inValues     [][]byte
	rangeColumn  *schema.Column
	lower, upper []byte
	lowerIncl    bool
	upperIncl    bool
}

var filteringMessage = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. " +
	"If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING"

// whereMode says what a statement's WHERE may do: a read may name no key
// at all (a scan), and a read or a DELETE may restrict a range.
type whereMode struct {
	read       bool
	allowRange bool
}

// parseWhere reads a WHERE clause on primary key columns: every partition
// key column by = (a read may name none: a scan, kr.key nil), then = on a
// prefix of the clustering columns and, where the mode allows, one range on
// the column after them.
func parseWhere(t *schema.Table, p partitioner.Partitioner, where []cql.Relation, bound [][]byte, mode whereMode) (*keyRestrictions, error) {
	eq := map[string]cql.Expr{}
	in := map[string]cql.Relation{}
	ranges := map[string][]cql.Relation{}
	var tokens []cql.Relation
	for _, r := range where {
		if r.Kind == cql.TokenRelation && mode.read {
			tokens = append(tokens, r)
			continue
		}
		if r.Kind != cql.ColumnRelation || len(r.Columns) != 1 {
			return nil, invalidf("%s is not supported yet in WHERE", r)
		}
		c := t.Column(r.Columns[0])
		if c == nil {
			return nil, invalidf("Undefined column name %s", r.Columns[0])
		}
		if !c.IsPrimaryKey() {
			if mode.read {
				return nil, invalidf("%s", filteringMessage)
			}
			return nil, invalidf("Non PRIMARY KEY columns found in where clause: %s ", c.Name)
		}
		switch r.Op {
		case cql.OpEq:
			if _, dup := eq[c.Name]; dup {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
			}
			if _, dup := in[c.Name]; dup {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes a IN", c.Name)
			}
			if len(ranges[c.Name]) > 0 {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
			}
			eq[c.Name] = r.Value
		case cql.OpIn:
			if !mode.read {
				return nil, invalidf("IN restrictions are not supported yet here (%s)", r)
			}
			if _, dup := eq[c.Name]; dup {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
			}
			if _, dup := in[c.Name]; dup {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes a IN", c.Name)
			}
			in[c.Name] = r
		case cql.OpLt, cql.OpLte, cql.OpGt, cql.OpGte:
			if _, dup := eq[c.Name]; dup {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
			}
			if !mode.allowRange || c.Kind != schema.Clustering {
				if mode.read {
					return nil, invalidf("%s", filteringMessage)
				}
				return nil, invalidf("Invalid operator %s for PRIMARY KEY part %s", r.Op, c.Name)
			}
			ranges[c.Name] = append(ranges[c.Name], r)
		default:
			return nil, invalidf("%s is not supported yet in WHERE", r)
		}
	}
	kr := &keyRestrictions{}
	if len(tokens) > 0 {
		if len(tokens) != len(where) {
			return nil, invalidf("Columns \"%s\" cannot be restricted by both a normal relation and a token relation", tokens[0].Columns[0])
		}
		return kr, kr.tokenRange(t, p, tokens, bound)
	}
	if mode.read && len(where) == 0 {
		return kr, nil // a scan of the whole table
	}
	// Every partition key column takes one value (=) or several (IN); the
	// keys are every combination.
	combos := [][][]byte{nil}
	for _, c := range t.PartitionKey {
		var vals [][]byte
		if e, ok := eq[c.Name]; ok {
			v, err := keyValue(e, c, bound)
			if err != nil {
				return nil, err
			}
			vals = [][]byte{v}
		} else if r, ok := in[c.Name]; ok {
			var err error
			if vals, err = inValues(r, c, bound); err != nil {
				return nil, err
			}
		} else if mode.read {
			return nil, invalidf("%s", filteringMessage)
		} else {
			return nil, invalidf("Some partition key parts are missing: %s", c.Name)
		}
		var next [][][]byte
		for _, combo := range combos {
			for _, v := range vals {
				next = append(next, append(append([][]byte(nil), combo...), v))
			}
		}
		combos = next
	}
	kr.keyed = true
	seen := map[string]bool{}
	for _, combo := range combos {
		key, err := t.PartitionKeyBytes(combo)
		if err != nil {
			return nil, asInvalid(err)
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			kr.keys = append(kr.keys, key)
		}
	}
	sort.Slice(kr.keys, func(i, j int) bool {
		if c := partitioner.Compare(p.Token(kr.keys[i]), p.Token(kr.keys[j])); c != 0 {
			return c < 0
		}
		return bytes.Compare(kr.keys[i], kr.keys[j]) < 0
	})
	pkIn := false
	for _, c := range t.PartitionKey {
		_, isIn := in[c.Name]
		pkIn = pkIn || isIn
	}
	if len(kr.keys) == 1 && !pkIn {
		kr.key = kr.keys[0]
	}
	i := 0
	for ; i < len(t.Clustering); i++ {
		e, ok := eq[t.Clustering[i].Name]
		if !ok {
			break
		}
		v, err := keyValue(e, t.Clustering[i], bound)
		if err != nil {
			return nil, err
		}
		kr.prefix = append(kr.prefix, v)
	}
	if i < len(t.Clustering) {
		if r, ok := in[t.Clustering[i].Name]; ok {
			c := t.Clustering[i]
			vals, err := inValues(r, c, bound)
			if err != nil {
				return nil, err
			}
			kr.inColumn, kr.inValues = c, sortedDistinct(vals, c)
			if len(ranges[c.Name]) > 0 {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes a IN", c.Name)
			}
			for _, later := range t.Clustering[i+1:] {
				_, e := eq[later.Name]
				_, n := in[later.Name]
				if e || n || len(ranges[later.Name]) > 0 {
					return nil, invalidf("Restrictions on %s after an IN on %s are not supported yet", later.Name, c.Name)
				}
			}
			return kr, nil
		}
	}
	for j := i; j < len(t.Clustering); j++ {
		c := t.Clustering[j]
		_, isIn := in[c.Name]
		if _, ok := eq[c.Name]; ok || isIn || (j > i && len(ranges[c.Name]) > 0) {
			return nil, invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted", c.Name, t.Clustering[j-1].Name)
		}
	}
	if i < len(t.Clustering) && len(ranges[t.Clustering[i].Name]) > 0 {
		c := t.Clustering[i]
		kr.rangeColumn = c
		for _, r := range ranges[c.Name] {
			v, err := keyValue(r.Value, c, bound)
			if err != nil {
				return nil, err
			}
			if r.Op == cql.OpGt || r.Op == cql.OpGte {
				if kr.lower != nil {
					return nil, invalidf("More than one restriction was found for the start bound on %s", c.Name)
				}
				kr.lower, kr.lowerIncl = v, r.Op == cql.OpGte
			} else {
				if kr.upper != nil {
					return nil, invalidf("More than one restriction was found for the end bound on %s", c.Name)
				}
				kr.upper, kr.upperIncl = v, r.Op == cql.OpLte
			}
		}
	}
	return kr, nil
}

// tokenRange reads token(k) relations into a scan's token bounds.
func (kr *keyRestrictions) tokenRange(t *schema.Table, p partitioner.Partitioner, rels []cql.Relation, bound [][]byte) error {
	if p.Name() != partitioner.Murmur3().Name() {
		return invalidf("token() restrictions are supported with the Murmur3Partitioner only, for now")
	}
	for _, r := range rels {
		if len(r.Columns) != len(t.PartitionKey) {
			return invalidf("The token() function must be applied to all partition key components or none of them")
		}
		for i, name := range r.Columns {
			if name != t.PartitionKey[i].Name {
				return invalidf("The token function arguments must be in the partition key order: %s", partitionKeyNames(t))
			}
		}
		v, err := term(r.Value, cqltype.BigintType, "partition key token", bound)
		if err != nil {
			return err
		}
		if v == nil {
			return invalidf("Invalid null value for partition key token")
		}
		n, _ := cqltype.DecodeBigint(v)
		tok := partitioner.Murmur3Token(n)
		next := func() *partitioner.Token { // the token after n, or nil past the last
			if n == 1<<63-1 {
				return nil
			}
			nt := partitioner.Murmur3Token(n + 1)
			return &nt
		}
		switch r.Op {
		case cql.OpGt:
			kr.from = laterOf(kr.from, next())
			if n == 1<<63-1 {
				kr.empty = true
			}
		case cql.OpGte:
			kr.from = laterOf(kr.from, &tok)
		case cql.OpLt:
			kr.to = earlierOf(kr.to, &tok)
		case cql.OpLte:
			if nt := next(); nt != nil {
				kr.to = earlierOf(kr.to, nt)
			}
		case cql.OpEq:
			kr.from = laterOf(kr.from, &tok)
			if nt := next(); nt != nil {
				kr.to = earlierOf(kr.to, nt)
			}
		default:
			return invalidf("%s is not supported yet in WHERE", r)
		}
	}
	if kr.from != nil && kr.to != nil && !kr.from.Less(*kr.to) {
		kr.empty = true
	}
	return nil
}

func laterOf(a, b *partitioner.Token) *partitioner.Token {
	if a == nil || (b != nil && a.Less(*b)) {
		return b
	}
	return a
}

func earlierOf(a, b *partitioner.Token) *partitioner.Token {
	if a == nil || (b != nil && b.Less(*a)) {
		return b
	}
	return a
}

func partitionKeyNames(t *schema.Table) string {
	names := make([]string, len(t.PartitionKey))
	for i, c := range t.PartitionKey {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// sortedDistinct orders a clustering column's IN candidates as its rows
// are ordered (descending columns the other way round), without repeats.
func sortedDistinct(vals [][]byte, c *schema.Column) [][]byte {
	out := append([][]byte(nil), vals...)
	sort.SliceStable(out, func(i, j int) bool {
		cmp := c.Type.Compare(out[i], out[j])
		if c.Descending {
			cmp = -cmp
		}
		return cmp < 0
	})
	kept := out[:0]
	for _, v := range out {
		if len(kept) == 0 || c.Type.Compare(kept[len(kept)-1], v) != 0 {
			kept = append(kept, v)
		}
	}
	return kept
}

// slices are the clustering slices the restrictions select, in clustering
// order: one, or one per IN candidate.
func (kr *keyRestrictions) slices(t *schema.Table) ([][2][]byte, error) {
	if kr.inColumn == nil {
		start, end, err := kr.slice(t)
		return [][2][]byte{{start, end}}, err
	}
	out := make([][2][]byte, 0, len(kr.inValues))
	for _, v := range kr.inValues {
		enc, err := t.ClusteringLayout().Encode(nil, append(append([][]byte(nil), kr.prefix...), v))
		if err != nil {
			return nil, asInvalid(err)
		}
		out = append(out, [2][]byte{mutation.StartBound(enc, true), mutation.EndBound(enc, true)})
	}
	return out, nil
}

// inValues evaluates the candidates of an IN: a list of terms, or one
// marker bound to a list.
func inValues(r cql.Relation, c *schema.Column, bound [][]byte) ([][]byte, error) {
	if len(r.Values) == 0 && r.Value != nil {
		v, err := term(r.Value, cqltype.ListOf(c.Type, false), c.Name, bound)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("Invalid null value for IN restriction on %s", c.Name)
		}
		elems, err := cqltype.DecodeCollection(v)
		return elems, asInvalid(err)
	}
	out := make([][]byte, 0, len(r.Values))
	for _, e := range r.Values {
		v, err := keyValue(e, c, bound)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func keyValue(e cql.Expr, c *schema.Column, bound [][]byte) ([]byte, error) {
	v, err := term(e, c.Type, c.Name, bound)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, invalidf("Invalid null value in condition for column %s", c.Name)
	}
	return v, nil
}

// fullRow reports whether every clustering column is restricted by =.
func (kr *keyRestrictions) fullRow(t *schema.Table) bool {
	return len(kr.prefix) == len(t.Clustering) && kr.rangeColumn == nil
}

// clustering is the encoded clustering of the = prefix.
func (kr *keyRestrictions) clustering(t *schema.Table) ([]byte, error) {
	enc, err := t.ClusteringLayout().Encode(nil, kr.prefix)
	return enc, asInvalid(err)
}

// rangeTombstone is the deletion of what the restrictions select below
// the partition.
func (kr *keyRestrictions) rangeTombstone(t *schema.Table, d mutation.DeletionTime) (mutation.RangeTombstone, error) {
	start, end, err := kr.slice(t)
	return mutation.RangeTombstone{Start: start, End: end, Deletion: d}, err
}

// slice is the clustering slice the restrictions select: the = prefix,
// narrowed by the range if any; nil bounds when nothing is restricted. In
// byte order a descending column's bounds turn round.
func (kr *keyRestrictions) slice(t *schema.Table) (start, end []byte, err error) {
	if len(kr.prefix) == 0 && kr.rangeColumn == nil {
		return nil, nil, nil
	}
	enc, err := kr.clustering(t)
	if err != nil {
		return nil, nil, err
	}
	start, end = mutation.StartBound(enc, true), mutation.EndBound(enc, true)
	if kr.rangeColumn == nil {
		return start, end, nil
	}
	layout := t.ClusteringLayout()
	bound := func(v []byte) ([]byte, error) {
		b, err := layout.Encode(append([]byte(nil), enc...), [][]byte{v})
		return b, asInvalid(err)
	}
	lower, lowerIncl, upper, upperIncl := kr.lower, kr.lowerIncl, kr.upper, kr.upperIncl
	if kr.rangeColumn.Descending {
		lower, lowerIncl, upper, upperIncl = upper, upperIncl, lower, lowerIncl
	}
	if lower != nil {
		b, err := bound(lower)
		if err != nil {
			return nil, nil, err
		}
		start = mutation.StartBound(b, lowerIncl)
	}
	if upper != nil {
		b, err := bound(upper)
		if err != nil {
			return nil, nil, err
		}
		end = mutation.EndBound(b, upperIncl)
	}
	return start, end, nil
}
