package cql

import (
	"strconv"
	"strings"
)

// Using is a USING clause. TTL and Timestamp are nil when absent, else an
// integer *Constant or a *BindMarker. DELETE takes only a timestamp.
type Using struct {
	TTL       Expr
	Timestamp Expr
}

// String renders "USING ...", or "" when the clause is empty.
func (u Using) String() string {
	switch {
	case u.TTL != nil && u.Timestamp != nil:
		return "USING TTL " + u.TTL.String() + " AND TIMESTAMP " + u.Timestamp.String()
	case u.TTL != nil:
		return "USING TTL " + u.TTL.String()
	case u.Timestamp != nil:
		return "USING TIMESTAMP " + u.Timestamp.String()
	}
	return ""
}

// clause renders u with a leading space, or "".
func (u Using) clause() string {
	if s := u.String(); s != "" {
		return " " + s
	}
	return ""
}

// Insert is INSERT INTO table (columns) VALUES (values), or INSERT INTO
// table JSON document [DEFAULT NULL | DEFAULT UNSET]; both take
// [IF NOT EXISTS] [USING ...]. JSON is nil for the VALUES form, else a
// string *Constant or a *BindMarker.
type Insert struct {
	Table        QualifiedName
	Columns      []string
	Values       []Expr
	JSON         Expr
	DefaultUnset bool // JSON only: omitted columns are left alone, not nulled
	IfNotExists  bool
	Using        Using
}

func (s *Insert) String() string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + s.Table.String())
	if s.JSON != nil {
		b.WriteString(" JSON " + s.JSON.String())
		if s.DefaultUnset {
			b.WriteString(" DEFAULT UNSET")
		}
	} else {
		b.WriteString(" (" + joinNames(s.Columns) + ") VALUES (" + joinExprs(s.Values) + ")")
	}
	if s.IfNotExists {
		b.WriteString(" IF NOT EXISTS")
	}
	b.WriteString(s.Using.clause())
	return b.String()
}

// AssignmentKind is the form of one SET assignment of an UPDATE.
type AssignmentKind uint8

// The assignment forms.
const (
	AssignValue    AssignmentKind = iota // c = v
	AssignElement                        // c[key] = v (list index or map key)
	AssignField                          // c.field = v
	AssignAdd                            // c = c + v, c += v (counters, collections)
	AssignSubtract                       // c = c - v, c -= v
	AssignPrepend                        // c = v + c (lists)
)

// Assignment is one SET item of an UPDATE. Key is set for AssignElement and
// Field for AssignField. "c = c -3" (a negative number right after the
// column) is AssignAdd of -3, as in Cassandra.
type Assignment struct {
	Column string
	Kind   AssignmentKind
	Key    Expr
	Field  string
	Value  Expr
}

func (a Assignment) String() string {
	c := quoteIdent(a.Column)
	switch a.Kind {
	case AssignElement:
		return c + "[" + a.Key.String() + "] = " + a.Value.String()
	case AssignField:
		return c + "." + quoteIdent(a.Field) + " = " + a.Value.String()
	case AssignAdd:
		return c + " = " + c + " + " + a.Value.String()
	case AssignSubtract:
		return c + " = " + c + " - " + a.Value.String()
	case AssignPrepend:
		return c + " = " + a.Value.String() + " + " + c
	}
	return c + " = " + a.Value.String()
}

// Update is UPDATE table [USING ...] SET assignments WHERE relations
// [IF EXISTS | IF conditions].
type Update struct {
	Table       QualifiedName
	Using       Using
	Assignments []Assignment
	Where       []Relation
	IfExists    bool
	Conditions  []Condition
}

func (s *Update) String() string {
	var b strings.Builder
	b.WriteString("UPDATE " + s.Table.String() + s.Using.clause() + " SET ")
	for i, a := range s.Assignments {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	writeWhere(&b, s.Where)
	writeIf(&b, s.IfExists, s.Conditions)
	return b.String()
}

// DeleteSelector is one item before FROM in a DELETE: a column, an element
// Column[Key] of a collection, or a field Column.Field of a user type.
type DeleteSelector struct {
	Column string
	Key    Expr
	Field  string
}

func (d DeleteSelector) String() string {
	switch {
	case d.Key != nil:
		return quoteIdent(d.Column) + "[" + d.Key.String() + "]"
	case d.Field != "":
		return quoteIdent(d.Column) + "." + quoteIdent(d.Field)
	}
	return quoteIdent(d.Column)
}

// Delete is DELETE [selectors] FROM table [USING TIMESTAMP t] WHERE
// relations [IF EXISTS | IF conditions]. No selectors deletes whole rows.
type Delete struct {
	Columns    []DeleteSelector
	Table      QualifiedName
	Using      Using
	Where      []Relation
	IfExists   bool
	Conditions []Condition
}

func (s *Delete) String() string {
	var b strings.Builder
	b.WriteString("DELETE ")
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	if len(s.Columns) > 0 {
		b.WriteByte(' ')
	}
	b.WriteString("FROM " + s.Table.String() + s.Using.clause())
	writeWhere(&b, s.Where)
	writeIf(&b, s.IfExists, s.Conditions)
	return b.String()
}

// BatchKind is the kind of a batch.
type BatchKind uint8

// The kinds of batches.
const (
	LoggedBatch BatchKind = iota
	UnloggedBatch
	CounterBatch
)

var batchKindNames = [...]string{"LOGGED", "UNLOGGED", "COUNTER"}

func (k BatchKind) String() string {
	if int(k) < len(batchKindNames) {
		return batchKindNames[k]
	}
	return "batchkind(" + strconv.Itoa(int(k)) + ")"
}

// Batch is BEGIN [UNLOGGED | COUNTER] BATCH [USING ...] statements APPLY
// BATCH.
type Batch struct {
	Kind       BatchKind
	Using      Using
	Statements []Modification
}

func (s *Batch) String() string {
	var b strings.Builder
	b.WriteString("BEGIN ")
	if s.Kind != LoggedBatch {
		b.WriteString(s.Kind.String() + " ")
	}
	b.WriteString("BATCH" + s.Using.clause())
	for _, st := range s.Statements {
		b.WriteString(" " + st.String() + ";")
	}
	b.WriteString(" APPLY BATCH")
	return b.String()
}

// Selector is one item of a SELECT list, with its alias ("" if none).
type Selector struct {
	Expr  Expr
	Alias string
}

func (s Selector) String() string {
	if s.Alias == "" {
		return s.Expr.String()
	}
	return s.Expr.String() + " AS " + quoteIdent(s.Alias)
}

// Ordering is one ORDER BY item.
type Ordering struct {
	Column     string
	Descending bool
	// ANN, when set, orders by similarity to this vector: ORDER BY
	// column ANN OF term (Cassandra 5.0).
	ANN Expr
}

func (o Ordering) String() string {
	s := quoteIdent(o.Column)
	if o.ANN != nil {
		s += " ANN OF " + o.ANN.String()
	}
	if o.Descending {
		return s + " DESC"
	}
	return s
}

// Select is SELECT [JSON] [DISTINCT] selectors FROM table [WHERE relations]
// [GROUP BY ...] [ORDER BY ...] [PER PARTITION LIMIT n] [LIMIT n]
// [ALLOW FILTERING]. No selectors means *. GroupBy holds selector
// expressions (columns, or functions of them). The limits are nil when
// absent, else an integer *Constant or a *BindMarker.
type Select struct {
	JSON              bool
	Distinct          bool
	Selectors         []Selector
	Table             QualifiedName
	Where             []Relation
	GroupBy           []Expr
	OrderBy           []Ordering
	PerPartitionLimit Expr
	Limit             Expr
	AllowFiltering    bool
}

func (s *Select) String() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if s.JSON {
		b.WriteString("JSON ")
	}
	if s.Distinct {
		b.WriteString("DISTINCT ")
	}
	if len(s.Selectors) == 0 {
		b.WriteByte('*')
	}
	for i, sel := range s.Selectors {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(sel.String())
	}
	b.WriteString(" FROM " + s.Table.String())
	writeWhere(&b, s.Where)
	if len(s.GroupBy) > 0 {
		b.WriteString(" GROUP BY " + joinExprs(s.GroupBy))
	}
	for i, o := range s.OrderBy {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(o.String())
	}
	if s.PerPartitionLimit != nil {
		b.WriteString(" PER PARTITION LIMIT " + s.PerPartitionLimit.String())
	}
	if s.Limit != nil {
		b.WriteString(" LIMIT " + s.Limit.String())
	}
	if s.AllowFiltering {
		b.WriteString(" ALLOW FILTERING")
	}
	return b.String()
}

func writeWhere(b *strings.Builder, where []Relation) {
	for i, r := range where {
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		b.WriteString(r.String())
	}
}

func writeIf(b *strings.Builder, exists bool, conds []Condition) {
	if exists {
		b.WriteString(" IF EXISTS")
		return
	}
	for i, c := range conds {
		if i == 0 {
			b.WriteString(" IF ")
		} else {
			b.WriteString(" AND ")
		}
		b.WriteString(c.String())
	}
}

func (*Insert) statement() {}
func (*Update) statement() {}
func (*Delete) statement() {}
func (*Batch) statement()  {}
func (*Select) statement() {}

func (*Insert) modification() {}
func (*Update) modification() {}
func (*Delete) modification() {}
