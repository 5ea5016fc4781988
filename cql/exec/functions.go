package exec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// Function calls as Cassandra 4.1 runs them. cqltype owns the scalar
// functions that work on single values; the executor adds what needs a
// table or many rows: token(), the CAST functions and the aggregates. All
// of them go through one overload resolution (FunctionResolver's rules,
// cqltype.ResolveFunction for cqltype's own), so the error messages agree.

// function is a native function as the executor calls it.
type function struct {
	name    string // Cassandra's qualified name: "system.todate", "system.castAsInt"
	args    []*cqltype.Type
	returns *cqltype.Type
	// scalar computes a scalar function; nil for aggregates.
	scalar func(args [][]byte) ([]byte, error)
	// newAggregate starts an aggregation; nil for scalar functions.
	newAggregate func() aggregate
	// columnName names a result column of the function; nil means
	// Cassandra's default, name(arg, ...).
	columnName func(args []string) string
	// empty marks the count, min and max overloads of Cassandra's "empty"
	// type, which cqltype cannot spell: args and returns stand in with
	// blob, the signature prints "empty", and only what is weakly
	// assignable to every type (markers, null, calls that do not resolve)
	// fits it, as only those fit an EmptyType receiver in Cassandra.
	empty bool
}

// String is Cassandra's signature form: "system.max : (int) -> int".
func (f *function) String() string {
	if f.empty {
		ret := "empty"
		if f.name == "system.count" {
			ret = "bigint"
		}
		return f.name + " : (empty) -> " + ret
	}
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return f.name + " : (" + strings.Join(parts, ", ") + ") -> " + f.returns.SchemaString()
}

// accepts is testAssignment of argument a against parameter i.
func (f *function) accepts(i int, a cqltype.FunctionArg) cqltype.Assignability {
	if f.empty {
		// Nothing typed or constant fits both a boolean and a uuid.
		if a.AssignableTo(cqltype.BooleanType).IsAssignable() && a.AssignableTo(cqltype.UUIDType).IsAssignable() {
			return cqltype.WeaklyAssignable
		}
		return cqltype.NotAssignable
	}
	return a.AssignableTo(f.args[i])
}

// argName is the receiver name of argument i (FunctionResolver.makeArgSpec
// lower-cases the function name).
func (f *function) argName(i int) string {
	return "arg" + strconv.Itoa(i) + "(" + strings.ToLower(f.name) + ")"
}

func (f *function) column(args []string) string {
	if f.columnName != nil {
		return f.columnName(args)
	}
	return f.name + "(" + strings.Join(args, ", ") + ")"
}

// scalarOf wraps one of cqltype's functions. It reads functionEnv when
// called, not when wrapped, so a test can swap the environment.
func scalarOf(f *cqltype.Function) *function {
	return &function{name: f.QualifiedName(), args: f.Args, returns: f.Returns,
		scalar: func(args [][]byte) ([]byte, error) { return f.Call(functionEnv, args) }}
}

// resolveFunction picks the function a call names, like Cassandra's
// FunctionResolver.get: token() (when a table is known), the aggregates and
// the casts are the executor's; everything else is cqltype's. receiver, when
// known, rules out overloads whose result it cannot take.
func resolveFunction(t *schema.Table, p partitioner.Partitioner, keyspace, name string, args []cqltype.FunctionArg, receiver *cqltype.Type) (*function, error) {
	if keyspace == "" || keyspace == "system" {
		var candidates []*function
		switch {
		case isOperation(name) || name == negateName:
			return pickOperation(name, operationFunctions[name], args, receiver)
		case name == "tojson":
			// Its argument's type decides its signature: only a selection
			// knows it (selectionBuilder.toJSON).
			return nil, invalidf("toJson() may only be used within the selection clause of SELECT statements")
		case name == "fromjson" && receiver == nil:
			return nil, invalidf("fromJson() cannot be used in the selection clause of a SELECT statement")
		case name == "fromjson":
			candidates = []*function{fromJSONFunction(receiver)}
		case isCollectionFunction(name):
			f, err := collectionFunction(name, args)
			if err != nil {
				return nil, err
			}
			candidates = []*function{f}
		case isSimilarityCall(name):
			f, err := similarityFunction(name, similarityCalls[name], args)
			if err != nil {
				return nil, err
			}
			candidates = []*function{f}
		case name == "token" && t != nil:
			candidates = []*function{tokenFunction(t, p)}
		case aggregateFunctions[name] != nil:
			candidates = aggregateFunctions[name]
		case castFunctions[name] != nil:
			candidates = castFunctions[name]
		}
		if candidates != nil {
			display := name
			if keyspace != "" {
				display = keyspace + "." + name
			}
			return pickFunction(display, candidates, args, receiver)
		}
	}
	f, err := cqltype.ResolveFunction(keyspace, name, args, receiver)
	if err != nil {
		return nil, err
	}
	return scalarOf(f), nil
}

// fromJSONFunction is fromJson() for a receiver of type t: the value of
// t a JSON document stands for, as INSERT JSON reads each column's.
func fromJSONFunction(t *cqltype.Type) *function {
	fail := func(detail string) error {
		return &Error{Code: FunctionFailure, Message: "execution of 'system.fromjson[text]' failed: " + detail,
			Replica: &ReplicaFailure{FunctionKeyspace: "system", Function: "fromjson", ArgTypes: []string{"text"}}}
	}
	return &function{name: "system.fromjson", args: []*cqltype.Type{cqltype.TextType}, returns: t,
		scalar: func(args [][]byte) ([]byte, error) {
			if args[0] == nil {
				return nil, nil
			}
			doc, err := cqltype.ParseJSON(string(args[0]))
			if err != nil {
				return nil, fail(fmt.Sprintf("Could not decode JSON string '%s': %v", args[0], err))
			}
			v, err := t.FromJSON(doc)
			if err == nil {
				v, err = received(t, v)
			}
			if err != nil {
				return nil, fail(err.Error())
			}
			return v, nil
		}}
}

// toJSONFunction is toJson() of a value of type t: its JSON text, "null"
// for null.
func toJSONFunction(t *cqltype.Type) *function {
	return &function{name: "system.tojson", args: []*cqltype.Type{t}, returns: cqltype.TextType,
		scalar: func(args [][]byte) ([]byte, error) {
			if args[0] == nil {
				return []byte("null"), nil
			}
			return []byte(t.ToJSON(args[0])), nil
		}}
}

// pickFunction is FunctionResolver's choice among candidates, with its
// messages (cqltype.ResolveFunction does the same for cqltype's functions).
func pickFunction(display string, candidates []*function, args []cqltype.FunctionArg, receiver *cqltype.Type) (*function, error) {
	if len(candidates) == 1 {
		f := candidates[0]
		if len(args) != len(f.args) {
			return nil, invalidf("Invalid number of arguments in call to function %s: %d required but %d provided",
				f.name, len(f.args), len(args))
		}
		for i, a := range args {
			if !f.accepts(i, a).IsAssignable() {
				return nil, invalidf("Type error: %s cannot be passed as argument %d of function %s of type %s",
					a, i, f.name, f.args[i].SchemaString())
			}
		}
		return f, nil
	}
	var compatible []*function
	for _, f := range candidates {
		if receiver != nil && !f.returns.TestAssignment(receiver).IsAssignable() {
			continue
		}
		switch matchArgs(f, args) {
		case cqltype.ExactMatch:
			return f, nil
		case cqltype.WeaklyAssignable:
			compatible = append(compatible, f)
		}
	}
	switch len(compatible) {
	case 0:
		return nil, invalidf("Invalid call to function %s, none of its type signatures match (known type signatures: %s)",
			display, joinFunctions(candidates))
	case 1:
		return compatible[0], nil
	}
	return nil, invalidf("Ambiguous call to function %s (can be matched by following signatures: %s): use type casts to disambiguate",
		display, joinFunctions(compatible))
}

func matchArgs(f *function, args []cqltype.FunctionArg) cqltype.Assignability {
	if len(args) != len(f.args) {
		return cqltype.NotAssignable
	}
	res := cqltype.ExactMatch
	for i, a := range args {
		switch f.accepts(i, a) {
		case cqltype.NotAssignable:
			return cqltype.NotAssignable
		case cqltype.WeaklyAssignable:
			res = cqltype.WeaklyAssignable
		}
	}
	return res
}

func joinFunctions(fs []*function) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ")
}

// tokenFunction is token() of a table: its parameters are the partition key
// columns, its result the partitioner's token (bigint for Murmur3, varint
// for the RandomPartitioner), as TokenFct builds it per table.
func tokenFunction(t *schema.Table, p partitioner.Partitioner) *function {
	args := make([]*cqltype.Type, len(t.PartitionKey))
	for i, c := range t.PartitionKey {
		args[i] = c.Type
	}
	returns := cqltype.BigintType
	if p.Kind() != partitioner.Murmur3Kind {
		returns = cqltype.VarintType
	}
	return &function{name: "system.token", args: args, returns: returns,
		scalar: func(vals [][]byte) ([]byte, error) {
			for _, v := range vals {
				if v == nil {
					return nil, nil
				}
			}
			key, err := t.PartitionKeyBytes(vals)
			if err != nil {
				return nil, asInvalid(err)
			}
			tok := p.Token(key)
			if p.Kind() == partitioner.Murmur3Kind {
				return cqltype.EncodeBigint(tok.Int64()), nil
			}
			return cqltype.EncodeVarint(tok.BigInt()), nil
		}}
}

// partitionerSource is what a Coordinator implements to say which
// partitioner its cluster uses; token() needs it.
type partitionerSource interface {
	Partitioner() partitioner.Partitioner
}

// partitioner is the coordinator's partitioner, or Murmur3 (Cassandra's
// default) when the coordinator does not say.
func (s *Session) partitioner() partitioner.Partitioner {
	if ps, ok := s.c.(partitionerSource); ok {
		if p := ps.Partitioner(); p != nil {
			return p
		}
	}
	return partitioner.Murmur3()
}

// termArg is a term as overload resolution sees it (Cassandra's
// Term.Raw.testAssignment).
func termArg(e cql.Expr) cqltype.FunctionArg {
	switch e := e.(type) {
	case *cql.Constant:
		return cqltype.LiteralArg(literalKinds[e.Kind], e.Text)
	case *cql.Null:
		return cqltype.NullArg()
	case *cql.BindMarker:
		return cqltype.MarkerArg(e.String())
	case *cql.TypeHint:
		ht, err := e.Type.Resolve("", nil)
		if err != nil {
			return fixedArg{cqltype.NotAssignable, e.String()}
		}
		return cqltype.TypedArg(ht, e.String())
	case *cql.FunctionCall:
		return callArg{keyspace: e.Name.Keyspace, name: e.Name.Name, args: e.Args, text: e.String()}
	case *cql.Cast:
		return callArg{keyspace: "system", name: castName(e.To), args: []cql.Expr{e.Value}, text: e.String()}
	case *cql.ListLiteral:
		return listArg{elems: e.Elements, text: e.String()}
	}
	// Collection, tuple and user type literals never fit a native
	// parameter, and native functions have no other kind.
	return fixedArg{cqltype.NotAssignable, e.String()}
}

type fixedArg struct {
	a    cqltype.Assignability
	text string
}

func (a fixedArg) AssignableTo(*cqltype.Type) cqltype.Assignability { return a.a }
func (a fixedArg) String() string                                   { return a.text }

// callArg is a nested call as an argument: FunctionCall.Raw.testAssignment
// resolves it against the parameter and calls a call it cannot resolve
// weakly assignable, so that the nested call's own error is the one shown.
type callArg struct {
	keyspace, name string
	args           []cql.Expr
	text           string
}

func (a callArg) AssignableTo(p *cqltype.Type) cqltype.Assignability {
	args := make([]cqltype.FunctionArg, len(a.args))
	for i, e := range a.args {
		args[i] = termArg(e)
	}
	f, err := resolveFunction(nil, nil, a.keyspace, a.name, args, p)
	if err != nil {
		return cqltype.WeaklyAssignable
	}
	return f.returns.TestAssignment(p)
}

func (a callArg) String() string { return a.text }

// callTerm evaluates a function call given to a receiver of type t, as
// FunctionCall.Raw.prepare and bind do.
func callTerm(keyspace, name string, argExprs []cql.Expr, t *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	args := make([]cqltype.FunctionArg, len(argExprs))
	for i, e := range argExprs {
		args[i] = termArg(e)
	}
	f, err := resolveFunction(nil, nil, keyspace, name, args, t)
	if err != nil {
		return nil, asInvalid(err)
	}
	if f.scalar == nil {
		return nil, invalidf("Aggregation function are not supported in the where clause")
	}
	if !f.returns.TestAssignment(t).IsAssignable() {
		return nil, invalidf("Type error: cannot assign result of function %s (type %s) to %s (type %s)",
			f.name, f.returns.SchemaString(), receiver, t.SchemaString())
	}
	vals := make([][]byte, len(argExprs))
	for i, e := range argExprs {
		v, err := term(e, f.args[i], f.argName(i), bound)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	v, err := f.scalar(vals)
	return v, asInvalid(err)
}

// hintTerm evaluates (type)value, as TypeCast.prepare does: the value must
// fit the hinted type, the hinted type must fit the receiver, and the value
// is then read as the receiver's.
func hintTerm(h *cql.TypeHint, t *cqltype.Type, receiver string, bound *binding) ([]byte, error) {
	ht, err := h.Type.Resolve("", nil)
	if err != nil {
		return nil, asInvalid(err)
	}
	if !termArg(h.Value).AssignableTo(ht).IsAssignable() {
		return nil, invalidf("Cannot cast value %s to type %s", termArg(h.Value), h.Type)
	}
	if !ht.TestAssignment(t).IsAssignable() {
		return nil, invalidf("Cannot assign value %s to %s of type %s", h, receiver, t.SchemaString())
	}
	return term(h.Value, t, receiver, bound)
}

// unknownInSelection restates an unknown function error in the words
// Cassandra uses for the selection clause (Selectable.WithFunction.Raw).
func unknownInSelection(err error) error {
	var u *cqltype.UnknownFunctionError
	if errors.As(err, &u) {
		return invalidf("Unknown function '%s'", u.Name)
	}
	return asInvalid(err)
}
