package exec

import (
	"bytes"
	"sort"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// keyRestrictions is what a WHERE clause says of the primary key: the
// partitions (by key or by token range) and the clustering slices within
// them.
type keyRestrictions struct {
	key []byte // the partition key, when = gives exactly one
	// keys are the partition keys named (several with IN), in token order;
	// empty for a scan, unless keyed is set (an empty IN).
	keys  [][]byte
	keyed bool
	// from and to bound a scan by token (token() relations): from
	// inclusive, to exclusive; empty says they exclude everything.
	from, to *partitioner.Token
	empty    bool
	clusteringRestrictions
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
// key column by = or IN (a read may name none: a scan, or restrict the
// token instead), then the clustering columns (see parseClustering); a
// range only where the mode allows one.
func parseWhere(t *schema.Table, p partitioner.Partitioner, where []cql.Relation, bound *binding, mode whereMode) (*keyRestrictions, error) {
	eq := map[string]cql.Expr{}
	in := map[string]cql.Relation{}
	hasRange := map[string]bool{}
	var tokens []cql.Relation
	var onClustering []clusteringRelation
	for _, r := range where {
		if r.Kind == cql.TokenRelation && mode.read {
			tokens = append(tokens, r)
			continue
		}
		if r.Kind == cql.MultiColumnRelation {
			cr, err := multiColumnRelation(t, r)
			if err != nil {
				return nil, err
			}
			if cr.isRange() && !mode.allowRange {
				return nil, invalidf("Invalid operator %s for PRIMARY KEY part %s", r.Op, cr.columns[0].Name)
			}
			onClustering = append(onClustering, cr)
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
			if hasRange[c.Name] {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
			}
			eq[c.Name] = r.Value
		case cql.OpIn:
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
			hasRange[c.Name] = true
		default:
			return nil, invalidf("%s is not supported yet in WHERE", r)
		}
		if c.Kind == schema.Clustering {
			onClustering = append(onClustering, clusteringRelation{first: c.Position, columns: []*schema.Column{c}, rel: r})
		}
	}
	kr := &keyRestrictions{}
	if len(tokens) > 0 {
		if len(tokens) != len(where) {
			return nil, invalidf("Columns \"%s\" cannot be restricted by both a normal relation and a token relation", tokens[0].Columns[0])
		}
		kr.clusteringRestrictions, _ = parseClustering(t, nil, bound)
		return kr, kr.tokenRange(t, p, tokens, bound)
	}
	if mode.read && len(where) == 0 {
		kr.clusteringRestrictions, _ = parseClustering(t, nil, bound)
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
	var err error
	if kr.clusteringRestrictions, err = parseClustering(t, onClustering, bound); err != nil {
		return nil, err
	}
	kr.keyed = true
	seen := map[string]bool{}
	for _, combo := range combos {
		key, err := t.StatementKey(combo)
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
	return kr, nil
}

// tokenRange reads token(k) relations into a scan's token bounds.
func (kr *keyRestrictions) tokenRange(t *schema.Table, p partitioner.Partitioner, rels []cql.Relation, bound *binding) error {
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
		n, err := tokenValue(t, p, r.Value, bound)
		if err != nil {
			return err
		}
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

// tokenValue is the right side of a token() relation: a bigint, or
// token(v1, ...), the token of the partition key those values make.
func tokenValue(t *schema.Table, p partitioner.Partitioner, e cql.Expr, bound *binding) (int64, error) {
	if fc, ok := e.(*cql.FunctionCall); ok && strings.EqualFold(fc.Name.Name, "token") && (fc.Name.Keyspace == "" || fc.Name.Keyspace == "system") {
		if len(fc.Args) != len(t.PartitionKey) {
			return 0, invalidf("Invalid number of arguments in call to function token: %d required but %d provided", len(t.PartitionKey), len(fc.Args))
		}
		vals := make([][]byte, len(fc.Args))
		for i, a := range fc.Args {
			v, err := keyValue(a, t.PartitionKey[i], bound)
			if err != nil {
				return 0, err
			}
			vals[i] = v
		}
		key, err := t.PartitionKeyBytes(vals)
		if err != nil {
			return 0, asInvalid(err)
		}
		return p.Token(key).Int64(), nil
	}
	v, err := term(e, cqltype.BigintType, "partition key token", bound)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, invalidf("Invalid null value for partition key token")
	}
	n, _ := cqltype.DecodeBigint(v)
	return n, nil
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

// inValues evaluates the candidates of an IN: a list of terms, or one
// marker bound to a list.
func inValues(r cql.Relation, c *schema.Column, bound *binding) ([][]byte, error) {
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

func keyValue(e cql.Expr, c *schema.Column, bound *binding) ([]byte, error) {
	v, err := term(e, c.Type, c.Name, bound)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, invalidf("Invalid null value in condition for column %s", c.Name)
	}
	return v, nil
}
