package exec

import (
	"slices"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// Selectors as Cassandra 4.1 prepares them (cql3/selection): columns,
// WRITETIME and TTL, function calls (token() included), casts, type hints,
// constants given a type by a function parameter or a hint, and aggregates.
// A selection with an aggregate yields one row: the aggregates see every
// row, and everything else takes its value from the first row (as
// Cassandra's SimpleSelector keeps the first input).

type selectorKind uint8

const (
	selColumn selectorKind = iota
	selWritetime
	selTTL
	selTerm      // a constant, evaluated once
	selCall      // a scalar function of other selectors
	selAggregate // an aggregate of other selectors
	selField     // a field of a user type value (args[0])
	selElement   // a map's value or a set's element (args[0])
	selSlice     // a slice of a map or set (args[0])
)

// selector is one node of a selection.
type selector struct {
	kind   selectorKind
	name   string // Cassandra's column name for it
	typ    *cqltype.Type
	column *schema.Column // selColumn, selWritetime, selTTL
	value  []byte         // selTerm
	fn     *function      // selCall, selAggregate
	args   []*selector
	field  int    // selField: the field's index
	from   []byte // selElement: the key; selSlice: the lower bound, nil if open
	to     []byte // selSlice: the upper bound, nil if open
}

func (s *selector) aggregates() bool {
	if s.kind == selAggregate {
		return true
	}
	for _, a := range s.args {
		if a.aggregates() {
			return true
		}
	}
	return false
}

// selectionBuilder prepares the selectors of one SELECT.
type selectionBuilder struct {
	t     *schema.Table
	p     partitioner.Partitioner
	bound *binding
	// takesTerms is set once a term is prepared.
	takesTerms bool
	// defs are the columns read, in the order first used; Cassandra names
	// the first of them in a failed CAST's message.
	defs []*schema.Column
}

func (b *selectionBuilder) use(c *schema.Column) {
	for _, d := range b.defs {
		if d == c {
			return
		}
	}
	b.defs = append(b.defs, c)
}

// selections resolves the selectors (none: every column, in the table's
// order).
//
// takesTerms says some selector holds a term, which may be a bound value:
// the selectors are then made again for each execution.
func selections(t *schema.Table, p partitioner.Partitioner, sels []cql.Selector, bound *binding) (out []*selector, takesTerms bool, err error) {
	if len(sels) == 0 {
		for _, c := range t.Columns {
			out = append(out, &selector{kind: selColumn, name: c.Name, typ: c.Type, column: c})
		}
		return out, false, nil
	}
	b := &selectionBuilder{t: t, p: p, bound: bound}
	for _, sel := range sels {
		s, err := b.build(sel.Expr)
		if err != nil {
			return nil, false, err
		}
		if sel.Alias != "" {
			c := *s
			c.name = sel.Alias
			s = &c
		}
		out = append(out, s)
	}
	return out, b.takesTerms, nil
}

// isTerm reports whether e is a constant, null or marker: a selector whose
// type only its receiver can tell.
func isTerm(e cql.Expr) bool {
	switch e.(type) {
	case *cql.Constant, *cql.Null, *cql.BindMarker:
		return true
	}
	return false
}

// isConstantList reports a list literal of terms: an argument whose type
// its parameter gives (a vector's, for the similarity functions).
func isConstantList(e cql.Expr) bool {
	l, ok := e.(*cql.ListLiteral)
	return ok && !slices.ContainsFunc(l.Elements, func(e cql.Expr) bool { return !isTerm(e) })
}

// build prepares a selector that stands on its own (its type must be known
// without a receiver).
func (b *selectionBuilder) build(e cql.Expr) (*selector, error) {
	switch e := e.(type) {
	case *cql.ColumnRef:
		c := b.t.Column(e.Name)
		if c == nil {
			return nil, invalidf("Undefined column name %s in selection clause", e.Name)
		}
		b.use(c)
		return &selector{kind: selColumn, name: c.Name, typ: c.Type, column: c}, nil
	case *cql.WritetimeOrTTL:
		return b.writetimeOrTTL(e)
	case *cql.CountRows:
		return &selector{kind: selAggregate, name: "count", typ: countRows.returns, fn: countRows}, nil
	case *cql.FunctionCall:
		return b.call(e)
	case *cql.Cast:
		return b.cast(e)
	case *cql.TypeHint:
		return b.hint(e)
	case *cql.FieldSelection:
		return b.fieldSelection(e)
	case *cql.ElementSelection:
		return b.subSelection(e, e.Value, "Element")
	case *cql.SliceSelection:
		return b.subSelection(e, e.Value, "Slice")
	case *cql.Constant, *cql.Null, *cql.BindMarker:
		return nil, invalidf("Cannot infer type for term %s in selection clause (try using a cast to force a type)", termArg(e))
	}
	return nil, invalidf("%s is not supported yet as a selector", e)
}

// fieldSelection prepares value.field, as Selectable.WithFieldSelection.
func (b *selectionBuilder) fieldSelection(e *cql.FieldSelection) (*selector, error) {
	inner, err := b.build(e.Value)
	if err != nil {
		return nil, err
	}
	if inner.typ.Kind != cqltype.UDT {
		return nil, invalidf("Invalid field selection: %s of type %s is not a user type", e.Value, inner.typ.SchemaString())
	}
	i := slices.Index(inner.typ.FieldNames, e.Field)
	if i < 0 {
		return nil, invalidf("%s of type %s has no field %s", e.Value, inner.typ.SchemaString(), cqltype.QuoteIdent(e.Field))
	}
	return &selector{kind: selField, name: e.String(), typ: inner.typ.Params[i], args: []*selector{inner}, field: i}, nil
}

// subSelection prepares value[key] and value[from..to] (what says which,
// "Element" or "Slice"), as Selectable.WithElementSelection and
// WithSliceSelection: only of maps and sets, the keys read as the map's
// keys or the set's elements.
func (b *selectionBuilder) subSelection(e, value cql.Expr, what string) (*selector, error) {
	inner, err := b.build(value)
	if err != nil {
		return nil, err
	}
	t := inner.typ
	if !t.IsCollection() {
		if what == "Element" {
			return nil, invalidf("Invalid element selection: %s is of type %s is not a collection", value, t.SchemaString())
		}
		return nil, invalidf("Invalid slice selection: %s of type %s is not a collection", value, t.SchemaString())
	}
	receiver := "key(" + inner.name + ")"
	switch t.Kind {
	case cqltype.List:
		return nil, invalidf("%s selection is only allowed on sets and maps, but %s is a list", what, value)
	case cqltype.Set:
		receiver = "value(" + inner.name + ")"
	}
	s := &selector{name: e.String(), args: []*selector{inner}}
	bound := func(x cql.Expr) ([]byte, error) {
		if x == nil {
			return nil, nil
		}
		b.takesTerms = true
		v, err := term(x, t.Params[0], receiver, b.bound)
		switch {
		case isUnset(err) && what == "Element":
			return nil, invalidf("Invalid unset value for element selection on %s", inner.name)
		case isUnset(err):
			return nil, nil // an unset bound is an open one
		case err != nil:
			return nil, err
		case v == nil:
			return nil, invalidf("Invalid null value for %s selection on %s", strings.ToLower(what), inner.name)
		}
		return v, nil
	}
	switch e := e.(type) {
	case *cql.ElementSelection:
		s.kind, s.typ = selElement, t.Params[len(t.Params)-1]
		s.from, err = bound(e.Key)
	case *cql.SliceSelection:
		s.kind, s.typ = selSlice, t
		if s.from, err = bound(e.From); err == nil {
			s.to, err = bound(e.To)
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (b *selectionBuilder) writetimeOrTTL(e *cql.WritetimeOrTTL) (*selector, error) {
	c := b.t.Column(e.Column)
	if c == nil {
		return nil, invalidf("Undefined column name %s in selection clause", e.Column)
	}
	fn, typ, kind := "writetime", cqltype.BigintType, selWritetime
	switch e.Kind {
	case cql.TTL:
		fn, typ, kind = "ttl", cqltype.IntType, selTTL
	case cql.MaxWritetime:
		return nil, invalidf("maxwritetime is not supported yet")
	}
	if c.IsPrimaryKey() {
		return nil, invalidf("Cannot use selection function %s on PRIMARY KEY part %s", fn, c.Name)
	}
	if c.Type.IsMultiCell() {
		return nil, invalidf("Cannot use selection function %s on non-frozen %s", fn, c.Type.SchemaString())
	}
	b.use(c)
	return &selector{kind: kind, name: fn + "(" + c.Name + ")", typ: typ, column: c}, nil
}

// term prepares a constant, null or marker for a receiver of type t, named
// "[selection]" as Cassandra names every term of a selection.
func (b *selectionBuilder) term(e cql.Expr, t *cqltype.Type) (*selector, error) {
	b.takesTerms = true
	v, err := term(e, t, "[selection]", b.bound)
	if err != nil {
		return nil, err
	}
	return &selector{kind: selTerm, name: termArg(e).String(), typ: t, value: v}, nil
}

// call prepares a function call: the arguments that have a type of their
// own are prepared first, the call is resolved against them (terms taking
// any type they fit), and then the terms are prepared for the chosen
// parameters.
func (b *selectionBuilder) call(e *cql.FunctionCall) (*selector, error) {
	ks, name := e.Name.Keyspace, e.Name.Name
	argExprs := e.Args
	if (ks == "" || ks == "system") && name == "tojson" {
		// Selectable.WithToJSonFunction: its argument's type is its
		// signature.
		if len(argExprs) != 1 {
			return nil, invalidf("toJson() only accepts one argument (got %d)", len(argExprs))
		}
		arg, err := b.build(argExprs[0])
		if err != nil {
			return nil, err
		}
		return b.apply(toJSONFunction(arg.typ), []*selector{arg})
	}
	if (ks == "" || ks == "system") && name == "count" && len(argExprs) == 1 {
		// count(1) counts rows: every count overload would fit the
		// constant, so Cassandra special-cases it.
		if _, ok := argExprs[0].(*cql.Constant); ok {
			return &selector{kind: selAggregate, name: "count", typ: countRows.returns, fn: countRows}, nil
		}
	}
	args := make([]*selector, len(argExprs))
	fargs := make([]cqltype.FunctionArg, len(argExprs))
	for i, a := range argExprs {
		if isTerm(a) || isConstantList(a) {
			fargs[i] = termArg(a)
			continue
		}
		s, err := b.build(a)
		if err != nil {
			return nil, err
		}
		args[i] = s
		fargs[i] = cqltype.TypedArg(s.typ, s.name)
	}
	f, err := resolveFunction(b.t, b.p, ks, name, fargs, nil)
	if err != nil {
		return nil, unknownInSelection(err)
	}
	for i, a := range argExprs {
		if args[i] != nil {
			continue
		}
		s, err := b.term(a, f.args[i])
		if err != nil {
			return nil, err
		}
		args[i] = s
	}
	return b.apply(f, args)
}

// apply makes the selector of a resolved function over its arguments.
func (b *selectionBuilder) apply(f *function, args []*selector) (*selector, error) {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.name
	}
	s := &selector{kind: selCall, name: f.column(names), typ: f.returns, fn: f, args: args}
	if f.newAggregate != nil {
		for _, a := range args {
			if a.aggregates() {
				return nil, invalidf("aggregate functions cannot be used as arguments of aggregate functions")
			}
		}
		s.kind = selAggregate
	}
	return s, nil
}

// cast prepares CAST(x AS type) as Selectable.WithCast does: a cast to the
// value's own type is the value itself, and a type no cast function
// produces names the first column of the selection.
func (b *selectionBuilder) cast(e *cql.Cast) (*selector, error) {
	arg, err := b.build(e.Value)
	if err != nil {
		return nil, err
	}
	to := cqltype.Native(e.To)
	if to == nil {
		return nil, invalidf("%s is not supported yet as a selector", e)
	}
	if arg.typ.Equal(to) {
		return arg, nil
	}
	name := castName(e.To)
	candidates := castFunctions[name]
	if len(candidates) == 0 {
		first := arg.name
		if len(b.defs) > 0 {
			first = b.defs[0].Name
		}
		return nil, invalidf("%s cannot be cast to %s", first, e.To)
	}
	f, err := pickFunction("system."+name, candidates, []cqltype.FunctionArg{cqltype.TypedArg(arg.typ, arg.name)}, nil)
	if err != nil {
		return nil, err
	}
	return b.apply(f, []*selector{arg})
}

// hint prepares (type)x as Selectable.WithTypeHint does: x must fit the
// type, and the result is x read as the type, named "(type)x".
func (b *selectionBuilder) hint(e *cql.TypeHint) (*selector, error) {
	ht, err := e.Type.Resolve(b.t.Keyspace, nil)
	if err != nil {
		return nil, asInvalid(err)
	}
	var inner *selector
	var arg cqltype.FunctionArg
	if isTerm(e.Value) {
		arg = termArg(e.Value)
	} else {
		if inner, err = b.build(e.Value); err != nil {
			return nil, err
		}
		arg = cqltype.TypedArg(inner.typ, inner.name)
	}
	if !arg.AssignableTo(ht).IsAssignable() {
		return nil, invalidf("Cannot assign value %s to %s of type %s", e, e, ht.SchemaString())
	}
	if inner == nil {
		if inner, err = b.term(e.Value, ht); err != nil {
			return nil, err
		}
	}
	s := *inner
	s.name = "(" + e.Type.String() + ")" + inner.name
	s.typ = ht
	return &s, nil
}

// rowInput is one row as selectors read it.
type rowInput struct {
	cells schema.RowValues
	now   int64
}

// eval computes a selector without aggregates over one row.
func (s *selector) eval(r *rowInput) ([]byte, error) {
	switch s.kind {
	case selTerm:
		return s.value, nil
	case selField, selElement, selSlice:
		v, err := s.args[0].eval(r)
		if err != nil {
			return nil, err
		}
		return s.sub(v)
	case selCall:
		vals := make([][]byte, len(s.args))
		for i, a := range s.args {
			v, err := a.eval(r)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		v, err := s.fn.scalar(vals)
		return v, asInvalid(err)
	}
	if r == nil {
		return nil, nil // an aggregation over no rows has no first row
	}
	c := r.cells[s.column.Index]
	switch {
	case c.Value == nil:
		return nil, nil
	case s.kind == selWritetime:
		return cqltype.EncodeBigint(c.Timestamp), nil
	case s.kind == selTTL:
		if c.TTL > 0 {
			return cqltype.EncodeInt(int32(c.ExpiresAt - r.now)), nil
		}
		return nil, nil
	}
	return c.Value, nil
}

// sub selects a part of v, the value of s.args[0].
func (s *selector) sub(v []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	t := s.args[0].typ
	var err error
	switch s.kind {
	case selField:
		v, err = t.Field(v, s.field)
	case selElement:
		v, err = t.Element(v, s.from)
	case selSlice:
		v, err = t.Slice(v, s.from, s.to)
	}
	return v, asInvalid(err)
}

// aggregation runs the aggregates of a selection over its rows.
type aggregation struct {
	sels   []*selector
	nodes  []*selector // every aggregate node
	states map[*selector]aggregate
	first  *rowInput
}

func newAggregation(sels []*selector) *aggregation {
	a := &aggregation{sels: sels, states: map[*selector]aggregate{}}
	var walk func(s *selector)
	walk = func(s *selector) {
		if s.kind == selAggregate {
			a.nodes = append(a.nodes, s)
			a.states[s] = s.fn.newAggregate()
			return // aggregates do not nest
		}
		for _, arg := range s.args {
			walk(arg)
		}
	}
	for _, s := range sels {
		walk(s)
	}
	return a
}

func (a *aggregation) add(r *rowInput) error {
	if a.first == nil {
		// The row's cells are reused for the next row: keep a copy.
		a.first = &rowInput{cells: slices.Clone(r.cells), now: r.now}
	}
	for _, n := range a.nodes {
		vals := make([][]byte, len(n.args))
		for i, arg := range n.args {
			v, err := arg.eval(r)
			if err != nil {
				return err
			}
			vals[i] = v
		}
		if err := a.states[n].add(vals); err != nil {
			return asInvalid(err)
		}
	}
	return nil
}

// row is the one result row.
func (a *aggregation) row() ([][]byte, error) {
	out := make([][]byte, len(a.sels))
	for i, s := range a.sels {
		v, err := a.final(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (a *aggregation) final(s *selector) ([]byte, error) {
	switch s.kind {
	case selAggregate:
		return a.states[s].result(), nil
	case selField, selElement, selSlice:
		v, err := a.final(s.args[0])
		if err != nil {
			return nil, err
		}
		return s.sub(v)
	case selCall:
		vals := make([][]byte, len(s.args))
		for i, arg := range s.args {
			v, err := a.final(arg)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		v, err := s.fn.scalar(vals)
		return v, asInvalid(err)
	}
	return s.eval(a.first)
}
