package cql

import "strings"

// The statements of user-defined functions and aggregates and of
// materialized views. Sibyl, as Cassandra with its default configuration,
// has them disabled; they parse so that they are answered as Cassandra
// answers them.

// CreateFunction is CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] name
// (arg type, ...) (CALLED | RETURNS NULL) ON NULL INPUT RETURNS type
// LANGUAGE language AS 'body'.
type CreateFunction struct {
	Name         QualifiedName
	OrReplace    bool
	IfNotExists  bool
	ArgNames     []string
	ArgTypes     []*TypeRef
	CalledOnNull bool
	Returns      *TypeRef
	Language     string // folded to lower case, as Cassandra folds it
	Body         string
}

func (s *CreateFunction) String() string {
	var b strings.Builder
	b.WriteString("CREATE " + orReplace(s.OrReplace) + "FUNCTION " + ifNotExistsWord(s.IfNotExists) + functionName(s.Name) + " (")
	for i := range s.ArgNames {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(s.ArgNames[i]) + " " + s.ArgTypes[i].String())
	}
	b.WriteString(") ")
	if s.CalledOnNull {
		b.WriteString("CALLED")
	} else {
		b.WriteString("RETURNS NULL")
	}
	b.WriteString(" ON NULL INPUT RETURNS " + s.Returns.String() + " LANGUAGE " + s.Language + " AS " + quoteString(s.Body))
	return b.String()
}

// CreateAggregate is CREATE [OR REPLACE] AGGREGATE [IF NOT EXISTS] name
// (type, ...) SFUNC f STYPE type [FINALFUNC f] [INITCOND term].
type CreateAggregate struct {
	Name        QualifiedName
	OrReplace   bool
	IfNotExists bool
	ArgTypes    []*TypeRef
	StateFunc   string
	StateType   *TypeRef
	FinalFunc   string // "" when none
	InitCond    Expr   // nil when none
}

func (s *CreateAggregate) String() string {
	var b strings.Builder
	b.WriteString("CREATE " + orReplace(s.OrReplace) + "AGGREGATE " + ifNotExistsWord(s.IfNotExists) + functionName(s.Name) + " (" + typeList(s.ArgTypes) + ")")
	b.WriteString(" SFUNC " + quoteFunctionName(s.StateFunc) + " STYPE " + s.StateType.String())
	if s.FinalFunc != "" {
		b.WriteString(" FINALFUNC " + quoteFunctionName(s.FinalFunc))
	}
	if s.InitCond != nil {
		b.WriteString(" INITCOND " + s.InitCond.String())
	}
	return b.String()
}

// DropFunction is DROP FUNCTION or, with Aggregate, DROP AGGREGATE
// [IF EXISTS] name [(type, ...)]; ArgsGiven says the types were written.
type DropFunction struct {
	Aggregate bool
	Name      QualifiedName
	IfExists  bool
	ArgTypes  []*TypeRef
	ArgsGiven bool
}

func (s *DropFunction) String() string {
	what := "FUNCTION "
	if s.Aggregate {
		what = "AGGREGATE "
	}
	out := "DROP " + what + ifExists(s.IfExists) + functionName(s.Name)
	if s.ArgsGiven {
		out += " (" + typeList(s.ArgTypes) + ")"
	}
	return out
}

// CreateView is CREATE MATERIALIZED VIEW [IF NOT EXISTS] name AS SELECT
// ... FROM base [WHERE ...] PRIMARY KEY (...) [WITH ...]; Select holds
// the selection, base table and restrictions.
type CreateView struct {
	Name            QualifiedName
	IfNotExists     bool
	Select          *Select
	PrimaryKey      PrimaryKey
	ClusteringOrder []ClusteringOrder
	Options         []Option
}

func (s *CreateView) String() string {
	var b strings.Builder
	b.WriteString("CREATE MATERIALIZED VIEW " + ifNotExistsWord(s.IfNotExists) + s.Name.String() + " AS " + s.Select.String())
	b.WriteString(" " + s.PrimaryKey.String())
	var with []string
	if len(s.ClusteringOrder) > 0 {
		var parts []string
		for _, o := range s.ClusteringOrder {
			parts = append(parts, o.String())
		}
		with = append(with, "CLUSTERING ORDER BY ("+strings.Join(parts, ", ")+")")
	}
	for _, o := range s.Options {
		with = append(with, o.String())
	}
	if len(with) > 0 {
		b.WriteString(" WITH " + strings.Join(with, " AND "))
	}
	return b.String()
}

// DropView is DROP MATERIALIZED VIEW [IF EXISTS] name.
type DropView struct {
	Name     QualifiedName
	IfExists bool
}

func (s *DropView) String() string {
	return "DROP MATERIALIZED VIEW " + ifExists(s.IfExists) + s.Name.String()
}

// AlterView is ALTER MATERIALIZED VIEW [IF EXISTS] name WITH options.
type AlterView struct {
	Name     QualifiedName
	IfExists bool
	Options  []Option
}

func (s *AlterView) String() string {
	return "ALTER MATERIALIZED VIEW " + ifExists(s.IfExists) + s.Name.String() + " WITH " + joinOptions(s.Options)
}

func orReplace(b bool) string {
	if b {
		return "OR REPLACE "
	}
	return ""
}

func functionName(n QualifiedName) string {
	if n.Keyspace == "" {
		return quoteFunctionName(n.Name)
	}
	return quoteIdent(n.Keyspace) + "." + quoteFunctionName(n.Name)
}

func typeList(types []*TypeRef) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

func (*CreateFunction) statement()  {}
func (*CreateAggregate) statement() {}
func (*DropFunction) statement()    {}
func (*CreateView) statement()      {}
func (*DropView) statement()        {}
func (*AlterView) statement()       {}
