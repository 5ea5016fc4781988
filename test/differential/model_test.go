package differential

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"
	"strconv"
)

// The model: what Cassandra holds after a sequence of writes, cell by
// cell, and what a SELECT of every column returns. It follows Cassandra's
// rules, written here from them and not from Sibyl's code: last write
// wins per cell by timestamp, a deletion shadows what is no newer than it,
// ties go to tombstones, then to expiring cells, then to the greater value;
// INSERT writes a row marker, UPDATE does not; a whole collection written
// deletes what was there just below its timestamp; a row exists while its
// marker or a regular cell lives; a partition with no live row but live
// static cells reads as one row of nulls. TTLs in these tests outlive the
// test: their expiry is not modelled, their tie rule is.

const noTS = math.MinInt64

type colKind int

const (
	partitionKey colKind = iota
	clusteringKey
	staticCol
	regularCol
)

type column struct {
	name string
	t    *ctype
	kind colKind
	desc bool
}

type table struct {
	keyspace, name string
	pk, ck, other  []*column // other: static and regular columns
}

func (t *table) columns() []*column {
	return append(append(append([]*column(nil), t.pk...), t.ck...), t.other...)
}

func (t *table) qualified() string { return t.keyspace + "." + t.name }

// cell is one simple column's cell, or one element or field of a
// multi-cell column.
type cell struct {
	ts   int64
	tomb bool
	ttl  int32
	val  []byte // the canonical value (empty for a set element)
	// key orders elements: a set element, a map key (nil for lists and
	// fields); order is a list element's place, field a UDT field's index.
	key   *lval
	order int64
	field int
}

// supersedes reports whether c wins over o under Cassandra's reconcile.
func (c *cell) supersedes(o *cell) bool {
	if c.ts != o.ts {
		return c.ts > o.ts
	}
	cDel, oDel := c.tomb || c.ttl > 0, o.tomb || o.ttl > 0
	if cDel != oDel {
		return cDel
	}
	if c.tomb != o.tomb {
		return c.tomb
	}
	if c.ttl != o.ttl {
		return c.ttl > o.ttl // written together: the later expiry
	}
	return bytes.Compare(c.val, o.val) > 0
}

type complexCol struct {
	del   int64
	elems map[string]*cell
}

type mrow struct {
	ck      []*lval
	marker  int64
	del     int64
	simple  map[string]*cell
	complex map[string]*complexCol
}

func newRow(ck []*lval) *mrow {
	return &mrow{ck: ck, marker: noTS, del: noTS, simple: map[string]*cell{}, complex: map[string]*complexCol{}}
}

func (r *mrow) put(col string, c *cell) {
	if old := r.simple[col]; old == nil || c.supersedes(old) {
		r.simple[col] = c
	}
}

func (r *mrow) complexOf(col string) *complexCol {
	cx := r.complex[col]
	if cx == nil {
		cx = &complexCol{del: noTS, elems: map[string]*cell{}}
		r.complex[col] = cx
	}
	return cx
}

func (r *mrow) putElem(col, path string, c *cell) {
	cx := r.complexOf(col)
	if old := cx.elems[path]; old == nil || c.supersedes(old) {
		cx.elems[path] = c
	}
}

func (r *mrow) deleteComplex(col string, ts int64) {
	cx := r.complexOf(col)
	cx.del = max(cx.del, ts)
}

type rangeTomb struct {
	lo, hi     *lval // on the first clustering column; nil: open
	loIn, hiIn bool
	ts         int64
}

func (rt *rangeTomb) covers(v *lval) bool {
	if rt.lo != nil {
		if c := compare(v, rt.lo); c < 0 || c == 0 && !rt.loIn {
			return false
		}
	}
	if rt.hi != nil {
		if c := compare(v, rt.hi); c > 0 || c == 0 && !rt.hiIn {
			return false
		}
	}
	return true
}

type mpart struct {
	pk     []*lval
	del    int64
	rts    []rangeTomb
	static *mrow
	rows   map[string]*mrow
}

type model struct {
	t     *table
	parts map[string]*mpart
	// appended and prepended place list elements: appends after all
	// before, prepends before all before, as Cassandra's timeuuid paths.
	appended, prepended int64
}

func newModel(t *table) *model { return &model{t: t, parts: map[string]*mpart{}, appended: 1 << 40} }

// keyOf identifies a tuple of key values by their canonical bytes.
func keyOf(vals []*lval) string {
	var b []byte
	for _, v := range vals {
		b = appendItem(b, canon(v))
	}
	return string(b)
}

func (m *model) part(pk []*lval) *mpart {
	k := keyOf(pk)
	p := m.parts[k]
	if p == nil {
		p = &mpart{pk: pk, del: noTS, static: newRow(nil), rows: map[string]*mrow{}}
		m.parts[k] = p
	}
	return p
}

func (m *model) row(pk, ck []*lval) *mrow {
	p := m.part(pk)
	if len(ck) == 0 && len(m.t.ck) > 0 {
		return p.static
	}
	k := keyOf(ck)
	r := p.rows[k]
	if r == nil {
		r = newRow(ck)
		p.rows[k] = r
	}
	return r
}

// write is one statement's writing: its timestamp and TTL.
type write struct {
	ts  int64
	ttl int32
}

func (w write) cell(val []byte) *cell { return &cell{ts: w.ts, ttl: w.ttl, val: val} }

func (w write) tombstone() *cell { return &cell{ts: w.ts, tomb: true} }

// setColumn writes a column's whole value (nil: null), as INSERT and
// UPDATE's SET c = v do.
func (m *model) setColumn(r *mrow, c *column, v *lval, w write) {
	if !c.t.multiCell() {
		if v == nil {
			r.put(c.name, w.tombstone())
			return
		}
		r.put(c.name, w.cell(canon(v)))
		return
	}
	if v == nil {
		r.deleteComplex(c.name, w.ts)
		return
	}
	r.deleteComplex(c.name, w.ts-1)
	m.addElements(r, c, v, w)
}

// addElements writes a collection's or UDT's elements as cells.
func (m *model) addElements(r *mrow, c *column, v *lval, w write) {
	switch c.t.k {
	case kSet:
		for _, e := range canonicalElems(v) {
			cl := w.cell([]byte{})
			cl.key = e
			r.putElem(c.name, string(canon(e)), cl)
		}
	case kMap:
		keys, vals := canonicalEntries(v)
		for i, k := range keys {
			cl := w.cell(canon(vals[i]))
			cl.key = k
			r.putElem(c.name, string(canon(k)), cl)
		}
	case kList:
		for _, e := range v.elems {
			m.appended++
			m.putListElem(r, c, m.appended, e, w)
		}
	case kUDT:
		for i, f := range v.fields {
			if f != nil {
				m.putField(r, c, i, f, w)
			}
		}
	}
}

func (m *model) putListElem(r *mrow, c *column, order int64, e *lval, w write) {
	cl := w.cell(canon(e))
	cl.order = order
	r.putElem(c.name, listPath(order), cl)
}

func listPath(order int64) string { return strconv.FormatInt(order, 10) }

func (m *model) putField(r *mrow, c *column, i int, f *lval, w write) {
	var cl *cell
	if f == nil {
		cl = w.tombstone()
	} else {
		cl = w.cell(canon(f))
	}
	cl.field = i
	r.putElem(c.name, strconv.Itoa(i), cl)
}

// prepend writes l = v + l.
func (m *model) prepend(r *mrow, c *column, v *lval, w write) {
	m.prepended -= int64(len(v.elems))
	for i, e := range v.elems {
		m.putListElem(r, c, m.prepended+int64(i), e, w)
	}
}

// removeElements writes s = s - v or m = m - v (v a set of keys): their
// tombstones.
func (m *model) removeElements(r *mrow, c *column, v *lval, w write) {
	for _, e := range canonicalElems(v) {
		cl := w.tombstone()
		cl.key = e
		r.putElem(c.name, string(canon(e)), cl)
	}
}

// removeFromList writes l = l - v: a tombstone for every live element
// equal to one of v's, as the node finds them when it reads the list.
func (m *model) removeFromList(p *mpart, r *mrow, c *column, v *lval, w write) {
	for path, cl := range r.complexOf(c.name).elems {
		if !m.elemLive(p, r, c, cl) {
			continue
		}
		for _, e := range v.elems {
			if bytes.Equal(cl.val, canon(e)) {
				t := w.tombstone()
				t.order = cl.order
				r.putElem(c.name, path, t)
				break
			}
		}
	}
}

// rowDeletion is what deletes a row's data: the partition's deletion, the
// range tombstones over it and its own.
func (m *model) rowDeletion(p *mpart, r *mrow) int64 {
	d := max(p.del, r.del)
	if r == p.static {
		return max(p.del, r.del)
	}
	for i := range p.rts {
		if p.rts[i].covers(r.ck[0]) {
			d = max(d, p.rts[i].ts)
		}
	}
	return d
}

func (m *model) elemLive(p *mpart, r *mrow, c *column, cl *cell) bool {
	return !cl.tomb && cl.ts > max(m.rowDeletion(p, r), r.complexOf(c.name).del)
}

// columnValue is what a read returns for column c of r: the cell's value,
// a collection or UDT put together from its live elements, or nil.
func (m *model) columnValue(p *mpart, r *mrow, c *column) []byte {
	del := m.rowDeletion(p, r)
	if !c.t.multiCell() {
		cl := r.simple[c.name]
		if cl == nil || cl.tomb || cl.ts <= del {
			return nil
		}
		return cl.val
	}
	cx := r.complex[c.name]
	if cx == nil {
		return nil
	}
	var live []*cell
	for _, cl := range cx.elems {
		if !cl.tomb && cl.ts > max(del, cx.del) {
			live = append(live, cl)
		}
	}
	if len(live) == 0 {
		return nil
	}
	switch c.t.k {
	case kSet, kMap:
		sort.Slice(live, func(i, j int) bool { return compare(live[i].key, live[j].key) < 0 })
		b := binary.BigEndian.AppendUint32(nil, uint32(len(live)))
		for _, cl := range live {
			b = appendItem(b, canon(cl.key))
			if c.t.k == kMap {
				b = appendItem(b, cl.val)
			}
		}
		return b
	case kList:
		sort.Slice(live, func(i, j int) bool { return live[i].order < live[j].order })
		out := make([][]byte, len(live))
		for i, cl := range live {
			out[i] = cl.val
		}
		return encodeItems(out)
	}
	fields := make([][]byte, len(c.t.udt.types))
	for _, cl := range live {
		fields[cl.field] = cl.val
	}
	var b []byte
	for _, f := range fields {
		if f == nil {
			b = append(b, 0xFF, 0xFF, 0xFF, 0xFF)
			continue
		}
		b = appendItem(b, f)
	}
	return b
}

func (m *model) rowLive(p *mpart, r *mrow) bool {
	if r.marker != noTS && r.marker > m.rowDeletion(p, r) {
		return true
	}
	for _, c := range m.t.other {
		if c.kind == regularCol && m.columnValue(p, r, c) != nil {
			return true
		}
	}
	return false
}

// resultRow is one row of SELECT pk..., ck..., other... as bytes (nil:
// null).
type resultRow [][]byte

// expected is what a full scan returns, partition by partition (in no
// particular partition order; each partition's rows in clustering order).
func (m *model) expected() map[string][]resultRow {
	out := map[string][]resultRow{}
	for k, p := range m.parts {
		var rows []*mrow
		for _, r := range p.rows {
			if m.rowLive(p, r) {
				rows = append(rows, r)
			}
		}
		sort.Slice(rows, func(i, j int) bool { return m.compareClustering(rows[i].ck, rows[j].ck) < 0 })
		statics := map[string][]byte{}
		anyStatic := false
		for _, c := range m.t.other {
			if c.kind == staticCol {
				if v := m.columnValue(p, p.static, c); v != nil {
					statics[c.name], anyStatic = v, true
				}
			}
		}
		emit := func(r *mrow) {
			row := resultRow{}
			for _, v := range p.pk {
				row = append(row, canon(v))
			}
			for i := range m.t.ck {
				if r == nil {
					row = append(row, nil)
				} else {
					row = append(row, canon(r.ck[i]))
				}
			}
			for _, c := range m.t.other {
				switch {
				case c.kind == staticCol:
					row = append(row, statics[c.name])
				case r == nil:
					row = append(row, nil)
				default:
					row = append(row, m.columnValue(p, r, c))
				}
			}
			out[k] = append(out[k], row)
		}
		for _, r := range rows {
			emit(r)
		}
		if len(rows) == 0 && anyStatic {
			emit(nil)
		}
	}
	return out
}

func (m *model) compareClustering(a, b []*lval) int {
	for i, c := range m.t.ck {
		x := compare(a[i], b[i])
		if c.desc {
			x = -x
		}
		if x != 0 {
			return x
		}
	}
	return 0
}
