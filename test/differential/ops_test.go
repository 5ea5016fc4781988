package differential

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gocql/gocql"
)

// Statements: what the generator writes, how it is sent (CQL text with
// literals, or prepared with bound values in whatever spelling the value
// has), and what it does to the model.

type opKind int

const (
	opInsert opKind = iota
	opInsertJSON
	opUpdate
	opDelete
)

type assignKind int

const (
	setValue     assignKind = iota // c = v
	addTo                          // c = c + v
	subtractFrom                   // c = c - v (for a map, v is a set of keys)
	prependTo                      // l = v + l
	setElement                     // m[key] = v
	setField                       // u.field = v
)

type assignment struct {
	kind  assignKind
	col   *column
	val   *lval // nil: null
	unset bool
	key   *lval // setElement
	field int   // setField
}

type deleteKind int

const (
	deletePartition deleteKind = iota
	deleteRow
	deleteRange
	deleteColumns
)

type deleteTarget struct {
	col *column
	key *lval // a map element; nil: the whole column
}

// tsMode is how a statement gives its timestamp.
type tsMode int

const (
	tsInText     tsMode = iota // USING TIMESTAMP
	tsInProtocol               // the protocol's default timestamp
	tsFromBatch                // the batch's
)

type op struct {
	kind    opKind
	pk, ck  []*lval      // ck nil: the partition's static row (or, for a delete, the partition)
	values  []assignment // INSERT: setValue of each column given (unset: left out)
	assigns []assignment // UPDATE
	del     deleteKind
	rt      rangeTomb
	targets []deleteTarget
	w       write
	ts      tsMode
	// defaultUnset: INSERT JSON ... DEFAULT UNSET.
	defaultUnset bool
	// invalid is the error code a node must answer with; nothing of the
	// statement is applied.
	invalid int
}

// asJSONRead is an INSERT JSON's values as the node reads them from the
// document (asJSONRead of each).
func (o *op) asJSONRead() *op {
	out := *o
	out.pk, out.ck = mapVals(o.pk, asJSONRead), mapVals(o.ck, asJSONRead)
	out.values = make([]assignment, len(o.values))
	for i, a := range o.values {
		a.val = asJSONRead(a.val)
		out.values[i] = a
	}
	return &out
}

// apply is what the statement does to the model.
func (m *model) apply(o *op) {
	if o.invalid != 0 {
		return
	}
	if o.kind == opInsertJSON {
		o = o.asJSONRead()
	}
	p := m.part(o.pk)
	switch o.kind {
	case opInsert, opInsertJSON:
		r := m.row(o.pk, o.ck)
		if r != p.static {
			r.marker = max(r.marker, o.w.ts)
		}
		for _, a := range o.values {
			if a.unset {
				continue
			}
			target := r
			if a.col.kind == staticCol {
				target = p.static
			}
			m.setColumn(target, a.col, a.val, o.w)
		}
	case opUpdate:
		for _, a := range o.assigns {
			if a.unset {
				continue
			}
			r := p.static
			if a.col.kind != staticCol {
				r = m.row(o.pk, o.ck)
			}
			switch a.kind {
			case setValue:
				m.setColumn(r, a.col, a.val, o.w)
			case addTo:
				if a.val != nil {
					m.addElements(r, a.col, a.val, o.w)
				}
			case subtractFrom:
				switch {
				case a.val == nil:
				case a.col.t.k == kList:
					m.removeFromList(p, r, a.col, a.val, o.w)
				default:
					m.removeElements(r, a.col, a.val, o.w)
				}
			case prependTo:
				if a.val != nil {
					m.prepend(r, a.col, a.val, o.w)
				}
			case setElement:
				cl := o.w.tombstone()
				if a.val != nil {
					cl = o.w.cell(canon(a.val))
				}
				cl.key = a.key
				r.putElem(a.col.name, string(canon(a.key)), cl)
			case setField:
				m.putField(r, a.col, a.field, a.val, o.w)
			}
		}
	case opDelete:
		switch o.del {
		case deletePartition:
			p.del = max(p.del, o.w.ts)
		case deleteRow:
			r := m.row(o.pk, o.ck)
			r.del = max(r.del, o.w.ts)
		case deleteRange:
			rt := o.rt
			rt.ts = o.w.ts
			p.rts = append(p.rts, rt)
		case deleteColumns:
			for _, d := range o.targets {
				r := p.static
				if d.col.kind != staticCol {
					r = m.row(o.pk, o.ck)
				}
				switch {
				case d.key != nil:
					cl := o.w.tombstone()
					cl.key = d.key
					r.putElem(d.col.name, string(canon(d.key)), cl)
				case d.col.t.multiCell():
					r.deleteComplex(d.col.name, o.w.ts)
				default:
					r.put(d.col.name, o.w.tombstone())
				}
			}
		}
	}
}

// subtrahend is the type of what c - v takes from a column of type t: a
// map's is a set of its keys.
func subtrahend(t *ctype) *ctype {
	if t.k == kMap {
		return &ctype{k: kSet, params: []*ctype{t.params[0]}}
	}
	return t
}

// textOK reports whether o can be sent as text, where unset assignments
// are left out: what is left must be something, and not static columns
// alone when the statement names a clustering.
func (o *op) textOK() bool {
	if o.kind != opUpdate {
		return true
	}
	var left []*column
	for _, a := range o.assigns {
		if !a.unset {
			left = append(left, a.col)
		}
	}
	return len(left) > 0 && !(o.ck != nil && allStatic(left))
}

// raw is a value gocql sends as it is.
type raw []byte

func (r raw) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// statement is an op rendered: CQL text and the values its markers take.
type statement struct {
	cql  string
	args []any
}

// renderer renders ops, as literals or with markers.
type renderer struct {
	t        *table
	prepared bool
	st       statement
}

// term is a value of type t in the statement: a marker bound to its wire
// bytes, or its literal. A tuple is always a literal: gocql binds a tuple
// marker component by component.
func (rd *renderer) term(t *ctype, v *lval, unset bool) string {
	switch {
	case unset:
		rd.st.args = append(rd.st.args, gocql.UnsetValue)
		return "?"
	case !rd.prepared || t.k == kTuple:
		if v == nil {
			return "null"
		}
		return literal(v)
	case v == nil:
		rd.st.args = append(rd.st.args, raw(nil)) // null whatever the type (gocql refuses nil for a UDT)
		return "?"
	}
	rd.st.args = append(rd.st.args, raw(wire(v)))
	return "?"
}

func (rd *renderer) where(o *op) string {
	var conds []string
	for i, c := range rd.t.pk {
		conds = append(conds, c.name+" = "+rd.term(c.t, o.pk[i], false))
	}
	if o.kind == opDelete && o.del == deleteRange {
		c := rd.t.ck[0]
		if o.rt.lo != nil {
			conds = append(conds, c.name+map[bool]string{true: " >= ", false: " > "}[o.rt.loIn]+rd.term(c.t, o.rt.lo, false))
		}
		if o.rt.hi != nil {
			conds = append(conds, c.name+map[bool]string{true: " <= ", false: " < "}[o.rt.hiIn]+rd.term(c.t, o.rt.hi, false))
		}
	}
	for i, c := range rd.t.ck {
		if i < len(o.ck) {
			conds = append(conds, c.name+" = "+rd.term(c.t, o.ck[i], false))
		}
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// using is the statement's USING clause ("" for none).
func using(o *op, ttl bool) string {
	var parts []string
	if ttl && o.w.ttl > 0 {
		parts = append(parts, "TTL "+strconv.Itoa(int(o.w.ttl)))
	}
	if o.ts == tsInText {
		parts = append(parts, "TIMESTAMP "+strconv.FormatInt(o.w.ts, 10))
	}
	if len(parts) == 0 {
		return ""
	}
	return " USING " + strings.Join(parts, " AND ")
}

func (rd *renderer) render(o *op) statement {
	rd.st = statement{}
	t := rd.t
	switch o.kind {
	case opInsert:
		var names, terms []string
		for i, c := range t.pk {
			names, terms = append(names, c.name), append(terms, rd.term(c.t, o.pk[i], false))
		}
		for i, c := range t.ck {
			names, terms = append(names, c.name), append(terms, rd.term(c.t, o.ck[i], false))
		}
		for _, a := range o.values {
			if a.unset && !rd.prepared {
				continue // text has no unset: the column is left out
			}
			names, terms = append(names, a.col.name), append(terms, rd.term(a.col.t, a.val, a.unset))
		}
		rd.st.cql = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)%s", t.qualified(), strings.Join(names, ", "), strings.Join(terms, ", "), using(o, true))
	case opInsertJSON:
		doc := []string{}
		for i, c := range t.pk {
			doc = append(doc, jsonString(c.name)+": "+jsonOf(o.pk[i]))
		}
		for i, c := range t.ck {
			doc = append(doc, jsonString(c.name)+": "+jsonOf(o.ck[i]))
		}
		for _, a := range o.values {
			switch {
			case a.unset:
			case a.val == nil:
				doc = append(doc, jsonString(a.col.name)+": null")
			default:
				doc = append(doc, jsonString(a.col.name)+": "+jsonOf(a.val))
			}
		}
		text := "{" + strings.Join(doc, ", ") + "}"
		arg := "'" + strings.ReplaceAll(text, "'", "''") + "'"
		if rd.prepared {
			rd.st.args = append(rd.st.args, text)
			arg = "?"
		}
		unset := ""
		if o.defaultUnset {
			unset = " DEFAULT UNSET"
		}
		rd.st.cql = fmt.Sprintf("INSERT INTO %s JSON %s%s%s", t.qualified(), arg, unset, using(o, true))
	case opUpdate:
		var sets []string
		for _, a := range o.assigns {
			if a.unset && !rd.prepared {
				continue // text has no unset: the assignment is left out
			}
			n := a.col.name
			switch a.kind {
			case setValue:
				sets = append(sets, n+" = "+rd.term(a.col.t, a.val, a.unset))
			case addTo:
				sets = append(sets, n+" = "+n+" + "+rd.term(a.col.t, a.val, a.unset))
			case subtractFrom:
				sets = append(sets, n+" = "+n+" - "+rd.term(subtrahend(a.col.t), a.val, a.unset))
			case prependTo:
				sets = append(sets, n+" = "+rd.term(a.col.t, a.val, a.unset)+" + "+n)
			case setElement:
				k := rd.term(a.col.t.params[0], a.key, false)
				sets = append(sets, n+"["+k+"] = "+rd.term(a.col.t.params[1], a.val, a.unset))
			case setField:
				sets = append(sets, n+"."+a.col.t.udt.fields[a.field]+" = "+rd.term(a.col.t.udt.types[a.field], a.val, a.unset))
			}
		}
		// The SET clause's markers come before the WHERE clause's.
		set := strings.Join(sets, ", ")
		rd.st.cql = fmt.Sprintf("UPDATE %s%s SET %s%s", t.qualified(), using(o, true), set, rd.where(o))
	case opDelete:
		var targets []string
		for _, d := range o.targets {
			if d.key != nil {
				targets = append(targets, d.col.name+"["+rd.term(d.col.t.params[0], d.key, false)+"]")
			} else {
				targets = append(targets, d.col.name)
			}
		}
		sel := ""
		if len(targets) > 0 {
			sel = " " + strings.Join(targets, ", ")
		}
		rd.st.cql = fmt.Sprintf("DELETE%s FROM %s%s%s", sel, t.qualified(), using(o, false), rd.where(o))
	}
	return rd.st
}
