package cql

import (
	"sort"

	"github.com/sibyldb/sibyl/internal/invariants"
)

// BindMarkers returns the bind markers of a statement in Index order (the
// order a client binds values in), for the metadata of a prepared
// statement. A batch's markers span its statements.
func BindMarkers(st Statement) []*BindMarker {
	var ms []*BindMarker
	WalkExprs(st, func(e Expr) {
		if m, ok := e.(*BindMarker); ok {
			ms = append(ms, m)
		}
	})
	sort.Slice(ms, func(i, j int) bool { return ms[i].Index < ms[j].Index })
	return ms
}

// WalkExprs calls fn for every expression in st, outer expressions before
// the ones inside them: values, keys, selectors, relation and condition
// operands, limits, USING values and options.
func WalkExprs(st Statement, fn func(Expr)) {
	w := walker{fn: fn}
	switch s := st.(type) {
	case *CreateKeyspace:
		w.options(s.Options)
	case *AlterKeyspace:
		w.options(s.Options)
	case *CreateTable:
		w.options(s.Options)
	case *AlterTable:
		w.options(s.Options)
	case *CreateIndex:
		w.options(s.Options)
	case *CreateView:
		w.options(s.Options)
	case *AlterView:
		w.options(s.Options)
	case *CreateAggregate:
		if s.InitCond != nil {
			w.expr(s.InitCond)
		}
	case *DropKeyspace, *Use, *DropTable, *Truncate, *CreateType, *AlterType, *DropType, *DropIndex, *CreateFunction, *DropFunction, *DropView, *Describe, *DropRole, *RoleGrant,
		*PermissionGrant, *ListPermissions, *ListRoles:
	case *CreateRole:
		w.expr(s.Options.Options)
	case *AlterRole:
		w.expr(s.Options.Options)
	case *Insert:
		w.exprs(s.Values)
		w.expr(s.JSON)
		w.using(s.Using)
	case *Update:
		w.using(s.Using)
		for _, a := range s.Assignments {
			w.expr(a.Key)
			w.expr(a.Value)
		}
		w.relations(s.Where)
		w.conditions(s.Conditions)
	case *Delete:
		for _, d := range s.Columns {
			w.expr(d.Key)
		}
		w.using(s.Using)
		w.relations(s.Where)
		w.conditions(s.Conditions)
	case *Batch:
		w.using(s.Using)
		for _, m := range s.Statements {
			WalkExprs(m, fn)
		}
	case *Select:
		for _, sel := range s.Selectors {
			w.expr(sel.Expr)
		}
		w.relations(s.Where)
		w.exprs(s.GroupBy)
		for _, o := range s.OrderBy {
			w.expr(o.ANN)
		}
		w.expr(s.PerPartitionLimit)
		w.expr(s.Limit)
	default:
		panic(invariants.Failf("WalkExprs: unknown statement type %T", st))
	}
}

type walker struct{ fn func(Expr) }

func (w walker) expr(e Expr) {
	if e == nil {
		return
	}
	w.fn(e)
	switch e := e.(type) {
	case *ListLiteral:
		w.exprs(e.Elements)
	case *SetLiteral:
		w.exprs(e.Elements)
	case *TupleLiteral:
		w.exprs(e.Elements)
	case *MapLiteral:
		for _, en := range e.Entries {
			w.expr(en.Key)
			w.expr(en.Value)
		}
	case *UDTLiteral:
		for _, f := range e.Fields {
			w.expr(f.Value)
		}
	case *TypeHint:
		w.expr(e.Value)
	case *FunctionCall:
		w.exprs(e.Args)
	case *Cast:
		w.expr(e.Value)
	case *FieldSelection:
		w.expr(e.Value)
	case *ElementSelection:
		w.expr(e.Value)
		w.expr(e.Key)
	case *SliceSelection:
		w.expr(e.Value)
		if e.From != nil {
			w.expr(e.From)
		}
		if e.To != nil {
			w.expr(e.To)
		}
	}
}

func (w walker) exprs(es []Expr) {
	for _, e := range es {
		w.expr(e)
	}
}

func (w walker) using(u Using) {
	w.expr(u.TTL)
	w.expr(u.Timestamp)
}

func (w walker) options(opts []Option) {
	for _, o := range opts {
		w.expr(o.Value)
	}
}

func (w walker) relations(rs []Relation) {
	for _, r := range rs {
		w.expr(r.Key)
		w.expr(r.Value)
		w.exprs(r.Values)
	}
}

func (w walker) conditions(cs []Condition) {
	for _, c := range cs {
		w.expr(c.Key)
		w.expr(c.Value)
		w.exprs(c.Values)
	}
}
