package cql

import (
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
)

// Node is any part of the syntax tree. String renders it as canonical CQL:
// keywords upper case, single spaces, names quoted only when they must be.
type Node interface {
	String() string
}

// Statement is one parsed CQL statement: one of the pointer types
// *CreateKeyspace, *AlterKeyspace, *DropKeyspace, *Use, *CreateTable,
// *AlterTable, *DropTable, *Truncate, *CreateType, *AlterType, *DropType, *Insert,
// *Update, *Delete, *Batch and *Select.
type Statement interface {
	Node
	statement()
}

// Modification is a statement that may appear inside a batch: *Insert,
// *Update or *Delete.
type Modification interface {
	Statement
	modification()
}

// QualifiedName names a table, type or function, optionally in a keyspace.
// Keyspace is "" when the name is not qualified (the session's keyspace, or
// for functions the system keyspace, applies).
type QualifiedName struct {
	Keyspace string
	Name     string
}

func (n QualifiedName) String() string {
	if n.Keyspace == "" {
		return quoteIdent(n.Name)
	}
	return quoteIdent(n.Keyspace) + "." + quoteIdent(n.Name)
}

// Expr is a term or a selector. Terms (values in INSERT, SET, WHERE, IF,
// USING, function arguments) are *Constant, *Null, *BindMarker, *ListLiteral,
// *SetLiteral, *MapLiteral, *UDTLiteral, *TupleLiteral, *TypeHint,
// *FunctionCall and *Cast. Selectors (SELECT's list and GROUP BY) may also be
// *ColumnRef, *FieldSelection, *ElementSelection, *SliceSelection,
// *WritetimeOrTTL and *CountRows, and their
// function arguments and collection elements may be selectors too.
type Expr interface {
	Node
	expr()
}

// ConstantKind is the lexical kind of a literal; its CQL type is decided
// later, by the column or argument that receives it.
type ConstantKind uint8

// The kinds of constants.
const (
	StringConstant   ConstantKind = iota // Text is the unescaped content
	IntegerConstant                      // Text is [-]digits
	FloatConstant                        // Text is as written, or NaN, Infinity, -Infinity
	BooleanConstant                      // Text is true or false
	UUIDConstant                         // Text is the uuid in lower case
	HexConstant                          // Text is 0x and the hex digits in lower case
	DurationConstant                     // Text is as written (1h30m, P1DT2H, -5s)
)

var constantKindNames = [...]string{"string", "integer", "float", "boolean", "uuid", "blob", "duration"}

func (k ConstantKind) String() string {
	if int(k) < len(constantKindNames) {
		return constantKindNames[k]
	}
	return "constant(" + strconv.Itoa(int(k)) + ")"
}

// Constant is a literal value.
type Constant struct {
	Kind ConstantKind
	Text string
}

func (c *Constant) String() string {
	if c.Kind == StringConstant {
		return quoteString(c.Text)
	}
	return c.Text
}

// Null is the NULL literal.
type Null struct{}

func (*Null) String() string { return "NULL" }

// BindMarker is ? (Name "") or :name. Index is its position, from 0, among
// all the markers of the statement (a batch counts across its statements),
// which is the order a client binds positional values in.
type BindMarker struct {
	Name  string
	Index int
}

func (m *BindMarker) String() string {
	if m.Name == "" {
		return "?"
	}
	return ":" + quoteIdent(m.Name)
}

// ListLiteral is [e, ...].
type ListLiteral struct{ Elements []Expr }

func (l *ListLiteral) String() string { return "[" + joinExprs(l.Elements) + "]" }

// SetLiteral is {e, ...}. An empty {} is a SetLiteral; it also stands for
// an empty map, which only the receiving column can tell.
type SetLiteral struct{ Elements []Expr }

func (s *SetLiteral) String() string { return "{" + joinExprs(s.Elements) + "}" }

// MapEntry is one key: value pair of a map literal.
type MapEntry struct{ Key, Value Expr }

func (e MapEntry) String() string { return e.Key.String() + ": " + e.Value.String() }

// MapLiteral is {k: v, ...}.
type MapLiteral struct{ Entries []MapEntry }

func (m *MapLiteral) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range m.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	b.WriteByte('}')
	return b.String()
}

// UDTField is one field: value pair of a user type literal.
type UDTField struct {
	Name  string
	Value Expr
}

func (f UDTField) String() string { return quoteIdent(f.Name) + ": " + f.Value.String() }

// UDTLiteral is {field: v, ...}, told from a map by its bare field names.
type UDTLiteral struct{ Fields []UDTField }

func (u *UDTLiteral) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range u.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.String())
	}
	b.WriteByte('}')
	return b.String()
}

// TupleLiteral is (e, ...). In a term a single element in parentheses is a
// tuple of one; in a selector, parentheses around one selector only group.
type TupleLiteral struct{ Elements []Expr }

func (t *TupleLiteral) String() string { return "(" + joinExprs(t.Elements) + ")" }

// TypeHint is (type)value: the value is to be read as the given type.
type TypeHint struct {
	Type  *TypeRef
	Value Expr
}

func (h *TypeHint) String() string { return "(" + h.Type.String() + ")" + h.Value.String() }

// FunctionCall is name(args...), including token(...) in selectors.
type FunctionCall struct {
	Name QualifiedName
	Args []Expr
	// Operator is "+", "-", "*", "/" or "%" for an arithmetic operation
	// (Name is its function, _add and so on), or "-" with one argument
	// for a negation (_negate); "" for a call.
	Operator string
}

func (f *FunctionCall) String() string {
	switch {
	case f.Operator != "" && len(f.Args) == 1:
		return "- " + f.Args[0].String() // spaced: "-1" would lex as a number
	case f.Operator != "":
		return f.Args[0].String() + " " + f.Operator + " " + f.Args[1].String()
	}
	name := quoteFunctionName(f.Name.Name)
	if f.Name.Keyspace != "" {
		name = quoteIdent(f.Name.Keyspace) + "." + name
	}
	return name + "(" + joinExprs(f.Args) + ")"
}

// Cast is CAST(value AS type); the target is always a native type.
type Cast struct {
	Value Expr
	To    cqltype.Kind
}

func (c *Cast) String() string { return "CAST(" + c.Value.String() + " AS " + c.To.String() + ")" }

// ColumnRef names a column in a selector.
type ColumnRef struct{ Name string }

func (c *ColumnRef) String() string { return quoteIdent(c.Name) }

// FieldSelection is value.field, a field of a user type value.
type FieldSelection struct {
	Value Expr
	Field string
}

func (f *FieldSelection) String() string { return f.Value.String() + "." + quoteIdent(f.Field) }

// ElementSelection is value[key]: a map's value for a key, or a set's
// element if present.
type ElementSelection struct {
	Value Expr
	Key   Expr
}

func (e *ElementSelection) String() string { return e.Value.String() + "[" + e.Key.String() + "]" }

// SliceSelection is value[from..to]: the elements of a map or set between
// two bounds, both included; a nil bound is open.
type SliceSelection struct {
	Value    Expr
	From, To Expr
}

func (e *SliceSelection) String() string {
	bound := func(b Expr) string {
		if b == nil {
			return ""
		}
		return b.String()
	}
	return e.Value.String() + "[" + bound(e.From) + ".." + bound(e.To) + "]"
}

// WritetimeKind says which cell metadata a WritetimeOrTTL selector reads.
type WritetimeKind uint8

// The cell metadata functions.
const (
	Writetime WritetimeKind = iota
	MaxWritetime
	TTL
)

var writetimeNames = [...]string{"WRITETIME", "MAXWRITETIME", "TTL"}

func (k WritetimeKind) String() string {
	if int(k) < len(writetimeNames) {
		return writetimeNames[k]
	}
	return "writetimekind(" + strconv.Itoa(int(k)) + ")"
}

// WritetimeOrTTL is WRITETIME(c), MAXWRITETIME(c) or TTL(c).
type WritetimeOrTTL struct {
	Kind   WritetimeKind
	Column string
}

func (w *WritetimeOrTTL) String() string { return w.Kind.String() + "(" + quoteIdent(w.Column) + ")" }

// CountRows is count(*) (count(1) is an ordinary call of count).
type CountRows struct{}

func (*CountRows) String() string { return "count(*)" }

func (*Constant) expr()         {}
func (*Null) expr()             {}
func (*BindMarker) expr()       {}
func (*ListLiteral) expr()      {}
func (*SetLiteral) expr()       {}
func (*MapLiteral) expr()       {}
func (*UDTLiteral) expr()       {}
func (*TupleLiteral) expr()     {}
func (*TypeHint) expr()         {}
func (*FunctionCall) expr()     {}
func (*Cast) expr()             {}
func (*ColumnRef) expr()        {}
func (*FieldSelection) expr()   {}
func (*ElementSelection) expr() {}
func (*SliceSelection) expr()   {}
func (*WritetimeOrTTL) expr()   {}
func (*CountRows) expr()        {}

func joinExprs(es []Expr) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	return b.String()
}

func joinNames(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(n))
	}
	return b.String()
}

// Operator is the comparison of a relation or condition.
type Operator uint8

// The operators.
const (
	OpEq          Operator = iota // =
	OpLt                          // <
	OpLte                         // <=
	OpGt                          // >
	OpGte                         // >=
	OpNeq                         // !=
	OpIn                          // IN
	OpContains                    // CONTAINS
	OpContainsKey                 // CONTAINS KEY
	OpLike                        // LIKE
	OpIsNotNull                   // IS NOT NULL
)

var operatorNames = [...]string{"=", "<", "<=", ">", ">=", "!=", "IN", "CONTAINS", "CONTAINS KEY", "LIKE", "IS NOT NULL"}

func (o Operator) String() string {
	if int(o) < len(operatorNames) {
		return operatorNames[o]
	}
	return "operator(" + strconv.Itoa(int(o)) + ")"
}

// RelationKind is the shape of a relation's left side.
type RelationKind uint8

// The kinds of relations.
const (
	ColumnRelation      RelationKind = iota // c op v
	ElementRelation                         // c[key] op v
	TokenRelation                           // token(c1, c2) op v
	MultiColumnRelation                     // (c1, c2) op (v1, v2)
)

// Relation is one restriction of a WHERE clause.
//
// Columns holds the one column of ColumnRelation and ElementRelation, and
// the columns of TokenRelation and MultiColumnRelation. Key is the element
// key of ElementRelation. For OpIn, Values holds the candidates (tuple
// literals or markers for MultiColumnRelation), or Value holds the marker of
// "IN ?" and Values is empty. For OpIsNotNull both are empty. Otherwise Value
// is the right side (for MultiColumnRelation a *TupleLiteral or a marker).
type Relation struct {
	Kind    RelationKind
	Columns []string
	Key     Expr
	Op      Operator
	Value   Expr
	Values  []Expr
}

func (r Relation) String() string {
	var b strings.Builder
	switch r.Kind {
	case ColumnRelation:
		b.WriteString(quoteIdent(r.Columns[0]))
	case ElementRelation:
		b.WriteString(quoteIdent(r.Columns[0]) + "[" + r.Key.String() + "]")
	case TokenRelation:
		b.WriteString("token(" + joinNames(r.Columns) + ")")
	case MultiColumnRelation:
		b.WriteString("(" + joinNames(r.Columns) + ")")
	}
	writeComparison(&b, r.Op, r.Value, r.Values)
	return b.String()
}

// writeComparison renders " op value" for relations and conditions.
func writeComparison(b *strings.Builder, op Operator, value Expr, values []Expr) {
	b.WriteByte(' ')
	b.WriteString(op.String())
	switch {
	case op == OpIsNotNull:
	case op == OpIn && value == nil:
		b.WriteString(" (" + joinExprs(values) + ")")
	default:
		b.WriteString(" " + value.String())
	}
}

// Condition is one condition of an IF clause (a lightweight transaction):
// Column, or its element Column[Key], or its field Column.Field, compared
// with Value (for OpIn: Values, or Value for "IN ?", as in Relation).
type Condition struct {
	Column string
	Key    Expr
	Field  string
	Op     Operator
	Value  Expr
	Values []Expr
}

func (c Condition) String() string {
	var b strings.Builder
	b.WriteString(quoteIdent(c.Column))
	switch {
	case c.Key != nil:
		b.WriteString("[" + c.Key.String() + "]")
	case c.Field != "":
		b.WriteString("." + quoteIdent(c.Field))
	}
	writeComparison(&b, c.Op, c.Value, c.Values)
	return b.String()
}

// Option is one name = value property of a WITH clause. Value is a
// *Constant, or a *MapLiteral whose keys and values are *Constant.
type Option struct {
	Name  string
	Value Expr
}

func (o Option) String() string { return quoteIdent(o.Name) + " = " + o.Value.String() }

func joinOptions(opts []Option) string {
	var b strings.Builder
	for i, o := range opts {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(o.String())
	}
	return b.String()
}
