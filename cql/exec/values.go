package exec

import (
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
)

var literalKinds = map[cql.ConstantKind]cqltype.LiteralKind{
	cql.StringConstant: cqltype.StringLiteral, cql.IntegerConstant: cqltype.IntegerLiteral,
	cql.FloatConstant: cqltype.FloatLiteral, cql.BooleanConstant: cqltype.BooleanLiteral,
	cql.UUIDConstant: cqltype.UUIDLiteral, cql.HexConstant: cqltype.HexLiteral,
	cql.DurationConstant: cqltype.DurationLiteral,
}

// binding is what bind markers take their values from: the values a
// client bound, or, while a statement is prepared, nothing: each marker
// then records the receiver it is evaluated for and stands for an example
// value of its type.
type binding struct {
	values [][]byte
	unset  []bool // by marker index: the client bound "unset"
	// defaultTimestamp, when set, is the client's timestamp for writes
	// that give none (microseconds).
	defaultTimestamp *int64
	// receivers, when set, collects each marker's receiver by index
	// (preparing).
	receivers map[int]markerReceiver
}

// markerReceiver is what a bind marker binds: a value of typ, named as
// Cassandra names it (the column, or [limit], [ttl] and the like).
type markerReceiver struct {
	name string
	typ  *cqltype.Type
}

func bindValues(opts QueryParams) *binding {
	return &binding{values: opts.Values, unset: opts.Unset, defaultTimestamp: opts.DefaultTimestamp}
}

// preparing reports whether the statement is being prepared, not run.
func (b *binding) preparing() bool { return b != nil && b.receivers != nil }

func (b *binding) value(m *cql.BindMarker, t *cqltype.Type, receiver string) ([]byte, error) {
	if b == nil {
		b = &binding{}
	}
	if b.receivers != nil {
		if _, seen := b.receivers[m.Index]; !seen {
			b.receivers[m.Index] = markerReceiver{name: receiver, typ: t}
		}
		return t.Example(), nil
	}
	if m.Index >= len(b.values) {
		return nil, invalidf("There were %d markers(?) in CQL but %d bound variables", m.Index+1, len(b.values))
	}
	if m.Index < len(b.unset) && b.unset[m.Index] {
		return nil, &Error{Code: Invalid, Message: "Invalid unset value for column " + receiver, unset: true}
	}
	v, err := received(t, b.values[m.Index])
	return v, asInvalid(err) // Cassandra answers with the reason alone
}

// received is the one boundary every value a client sends crosses on its
// way to a mutation or a key, however it came (bound to a marker, written
// as a literal, returned by a function, read from INSERT JSON): it refuses
// bytes that are not a value of t and returns the value in the canonical
// form Cassandra gives it (cqltype.Normalize: sets sorted and without
// repeats, map keys sorted with the last value of a repeated key, tuples
// and UDTs rebuilt with their nulls spelled one way), so that everything
// below may rely on it. nil (null) stays nil.
func received(t *cqltype.Type, v []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return t.Normalize(v)
}

// term evaluates a term for a receiver of type t (receiver names it in
// errors, as Cassandra does). A nil result is null; any other result is
// canonical (see received).
func term(e cql.Expr, t *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	if m, ok := e.(*cql.BindMarker); ok {
		return bound.value(m, t, receiver)
	}
	v, err := literalTerm(e, t, receiver, bound)
	if err != nil {
		return nil, err
	}
	v, err = received(t, v)
	return v, asInvalid(err)
}

// literalTerm evaluates a term that is not a bind marker.
func literalTerm(e cql.Expr, t *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	switch e := e.(type) {
	case *cql.Null:
		return nil, nil
	case *cql.Constant:
		v, err := t.FromLiteral(literalKinds[e.Kind], e.Text)
		if err != nil {
			return nil, asInvalid(cqltype.WithReceiver(err, receiver))
		}
		return v, nil
	case *cql.ListLiteral:
		if t.Kind == cqltype.Vector {
			return vectorLiteral(e.Elements, t, receiver, bound)
		}
		if t.Kind != cqltype.List {
			return nil, invalidf("Invalid list literal for %s of type %s", receiver, t.SchemaString())
		}
		return elements(e.Elements, t.Params[0], receiver, bound)
	case *cql.SetLiteral:
		switch {
		case t.Kind == cqltype.Map && len(e.Elements) == 0:
			return cqltype.EncodeMap(nil, nil), nil
		case t.Kind != cqltype.Set:
			return nil, invalidf("Invalid set literal for %s of type %s", receiver, t.SchemaString())
		}
		return elements(e.Elements, t.Params[0], receiver, bound)
	case *cql.MapLiteral:
		if t.Kind != cqltype.Map {
			return nil, invalidf("Invalid map literal for %s of type %s", receiver, t.SchemaString())
		}
		return mapLiteral(e, t, receiver, bound)
	case *cql.TupleLiteral:
		if t.Kind != cqltype.Tuple {
			return nil, invalidf("Invalid tuple literal for %s of type %s", receiver, t.SchemaString())
		}
		if len(e.Elements) > len(t.Params) {
			return nil, invalidf("Invalid tuple literal for %s: too many elements. Type %s expects %d but got %d",
				receiver, t.SchemaString(), len(t.Params), len(e.Elements))
		}
		fields := make([][]byte, len(e.Elements))
		for i, el := range e.Elements {
			v, err := term(el, t.Params[i], receiver, bound)
			if err != nil {
				return nil, err
			}
			fields[i] = v
		}
		return cqltype.EncodeTuple(fields), nil
	case *cql.UDTLiteral:
		if t.Kind != cqltype.UDT {
			return nil, invalidf("Invalid user type literal for %s of type %s", receiver, t.SchemaString())
		}
		fields := make([][]byte, len(t.Params))
		for _, f := range e.Fields {
			i := fieldIndex(t, f.Name)
			if i < 0 {
				return nil, invalidf("Unknown field '%s' in value of user defined type %s", f.Name, t.Name)
			}
			v, err := term(f.Value, t.Params[i], receiver+"."+f.Name, bound)
			if err != nil {
				return nil, err
			}
			fields[i] = v
		}
		return cqltype.EncodeTuple(fields), nil
	case *cql.FunctionCall:
		return callTerm(e.Name.Keyspace, e.Name.Name, e.Args, t, receiver, bound)
	case *cql.Cast:
		// Cassandra reads CAST(x AS type) in a term as a call of the
		// castAsType function (FunctionCall.Raw.newCast).
		return callTerm("system", castName(e.To), []cql.Expr{e.Value}, t, receiver, bound)
	case *cql.TypeHint:
		return hintTerm(e, t, receiver, bound)
	}
	return nil, invalidf("%s is not supported yet as a value for %s", e, receiver)
}

func fieldIndex(t *cqltype.Type, name string) int {
	for i, f := range t.FieldNames {
		if f == name {
			return i
		}
	}
	return -1
}

// elements evaluates a list's or set's elements (term puts a set's in
// order).
func elements(es []cql.Expr, elem *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	vals := make([][]byte, 0, len(es))
	for _, e := range es {
		v, err := term(e, elem, receiver, bound)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("null is not supported inside collections")
		}
		vals = append(vals, v)
	}
	return cqltype.EncodeCollection(vals), nil
}

// vectorLiteral evaluates a list literal written for a vector: exactly as
// many elements as the vector's dimension, none of them null.
func vectorLiteral(es []cql.Expr, t *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	if len(es) != t.Dimension {
		return nil, invalidf("Invalid vector literal for %s of type %s; expected %d elements, but given %d",
			receiver, t.SchemaString(), t.Dimension, len(es))
	}
	vals := make([][]byte, len(es))
	for i, e := range es {
		v, err := term(e, t.Params[0], receiver, bound)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, invalidf("null is not supported inside vectors")
		}
		vals[i] = v
	}
	return cqltype.EncodeVector(t, vals), nil
}

// mapLiteral evaluates a map's entries (term puts them in order).
func mapLiteral(m *cql.MapLiteral, t *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	keys := make([][]byte, 0, len(m.Entries))
	vals := make([][]byte, 0, len(m.Entries))
	for _, e := range m.Entries {
		k, err := term(e.Key, t.Params[0], receiver, bound)
		if err != nil {
			return nil, err
		}
		v, err := term(e.Value, t.Params[1], receiver, bound)
		if err != nil {
			return nil, err
		}
		if k == nil || v == nil {
			return nil, invalidf("null is not supported inside collections")
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return cqltype.EncodeMap(keys, vals), nil
}

// isUnset reports whether err says a marker was bound to "unset", which
// leaves a written column, or a USING or LIMIT value, as if not given.
func isUnset(err error) bool {
	e, ok := err.(*Error)
	return ok && e.unset
}
