package exec

import (
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/schema"
)

// User-defined functions and aggregates and materialized views are
// disabled, as in Cassandra 4.1's default configuration
// (user_defined_functions_enabled and materialized_views_enabled false):
// their statements get the answers Cassandra gives then. No function,
// aggregate or view can exist, so every one named is missing.

func (s *Session) createFunction(st *cql.CreateFunction) (*Result, error) {
	if _, err := s.keyspaceOf(st.Name); err != nil {
		return nil, err
	}
	if st.OrReplace && st.IfNotExists {
		return nil, invalidf("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives")
	}
	return nil, invalidf("User-defined functions are disabled in cassandra.yaml - set user_defined_functions_enabled=true to enable")
}

func (s *Session) createAggregate(st *cql.CreateAggregate) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	if st.OrReplace && st.IfNotExists {
		return nil, invalidf("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives")
	}
	if err := checkUnfrozenArguments(st.ArgTypes); err != nil {
		return nil, err
	}
	if st.StateType.Frozen && !isTupleRef(st.StateType) {
		return nil, invalidf("State type '%s' cannot be frozen; remove frozen<> modifier from '%s'", st.StateType, st.StateType)
	}
	ks := s.schema().Keyspace(ksName)
	if ks == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ksName)
	}
	if err := resolveTypes(ksName, ks, append([]*cql.TypeRef{st.StateType}, st.ArgTypes...)); err != nil {
		return nil, err
	}
	args := []string{st.StateType.String()}
	for _, t := range st.ArgTypes {
		args = append(args, t.String())
	}
	return nil, invalidf("State function %s.%s(%s) doesn't exist", ksName, st.StateFunc, strings.Join(args, ", "))
}

func (s *Session) dropFunction(st *cql.DropFunction) (*Result, error) {
	ksName, err := s.keyspaceOf(st.Name)
	if err != nil {
		return nil, err
	}
	what := "Function"
	if st.Aggregate {
		what = "Aggregate"
	}
	name := ksName + "." + st.Name.Name
	if st.ArgsGiven {
		args := make([]string, len(st.ArgTypes))
		for i, t := range st.ArgTypes {
			args[i] = t.String()
		}
		name += "(" + strings.Join(args, ", ") + ")"
	}
	missing := func() (*Result, error) {
		if st.IfExists {
			return &Result{Kind: SchemaChangeResult}, nil
		}
		return nil, invalidf("%s '%s' doesn't exist", what, name)
	}
	ks := s.schema().Keyspace(ksName)
	if ks == nil {
		return missing()
	}
	if err := checkUnfrozenArguments(st.ArgTypes); err != nil {
		return nil, err
	}
	if err := resolveTypes(ksName, ks, st.ArgTypes); err != nil {
		return nil, err
	}
	return missing()
}

func (s *Session) createView(st *cql.CreateView) (*Result, error) {
	if _, err := s.keyspaceOf(st.Name); err != nil {
		return nil, err
	}
	return nil, invalidf("Materialized views are disabled. Enable in cassandra.yaml to use.")
}

// missingView answers DROP and ALTER MATERIALIZED VIEW.
func (s *Session) missingView(name cql.QualifiedName, ifExists bool) (*Result, error) {
	ksName, err := s.keyspaceOf(name)
	if err != nil {
		return nil, err
	}
	if ifExists {
		return &Result{Kind: SchemaChangeResult}, nil
	}
	return nil, invalidf("Materialized view '%s.%s' doesn't exist", ksName, name.Name)
}

// checkUnfrozenArguments refuses a frozen argument type, as Cassandra
// does of functions and aggregates (tuples, always frozen, aside).
func checkUnfrozenArguments(types []*cql.TypeRef) error {
	for _, t := range types {
		if t.Frozen && !isTupleRef(t) {
			return invalidf("Argument '%s' cannot be frozen; remove frozen<> modifier from '%s'", t, t)
		}
	}
	return nil
}

func isTupleRef(t *cql.TypeRef) bool { return t.Kind == cqltype.Tuple }

// resolveTypes checks that the types name what the keyspace has.
func resolveTypes(ksName string, ks *schema.Keyspace, types []*cql.TypeRef) error {
	for _, t := range types {
		if _, err := t.Resolve(ksName, typeResolver(ks)); err != nil {
			return asInvalid(err)
		}
	}
	return nil
}
