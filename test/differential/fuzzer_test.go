package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// fuzzer generates a schema and ops on it from one seed, with the key
// pools the ops draw from.
type fuzzer struct {
	g     *gen
	t     *table
	pks   [][]*lval
	cks   [][]*lval
	clock int64
	last  int64
}

func newFuzzer(seed uint64) *fuzzer {
	f := &fuzzer{g: &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))}, clock: 1_700_000_000_000_000}
	g := f.g
	for i := g.pick(3); i > 0; i-- {
		u := &udtDef{name: fmt.Sprintf("u%d", len(g.udts))}
		for j := 1 + g.pick(3); j > 0; j-- {
			u.fields = append(u.fields, fmt.Sprintf("f%d", len(u.fields)))
			u.types = append(u.types, g.valueType(1, true, g.chance(0.7)))
		}
		g.udts = append(g.udts, u)
	}
	t := &table{keyspace: fmt.Sprintf("ks%d", seed), name: "t"}
	for i := 1 + g.pick(2); i > 0; i-- {
		t.pk = append(t.pk, &column{name: fmt.Sprintf("p%d", len(t.pk)), t: columnType(g, 1, true, true), kind: partitionKey})
	}
	for i := g.pick(3); i > 0; i-- {
		t.ck = append(t.ck, &column{name: fmt.Sprintf("k%d", len(t.ck)), t: columnType(g, 1, true, true), kind: clusteringKey, desc: g.chance(0.4)})
	}
	for i := 2 + g.pick(5); i > 0; i-- {
		c := &column{name: fmt.Sprintf("c%d", len(t.other)), t: columnType(g, 2, false, false), kind: regularCol}
		if len(t.ck) > 0 && g.chance(0.2) {
			c.kind = staticCol
		}
		t.other = append(t.other, c)
	}
	f.t = t
	seen := map[string]bool{}
	for tries := 0; len(f.pks) < 5 && tries < 50; tries++ {
		k := f.keyValues(t.pk)
		if id := keyOf(k); !seen[id] {
			seen[id] = true
			f.pks = append(f.pks, k)
		}
	}
	seen = map[string]bool{}
	for tries := 0; len(t.ck) > 0 && len(f.cks) < 6 && tries < 50; tries++ {
		k := f.keyValues(t.ck)
		if id := keyOf(k); !seen[id] {
			seen[id] = true
			f.cks = append(f.cks, k)
		}
	}
	return f
}

// columnType is a random type for a column: any but a tuple, which
// gocql reads back only component by component (a null tuple and a tuple
// of nulls look the same); tuples are nested in other types instead.
func columnType(g *gen, depth int, frozen, ordered bool) *ctype {
	for {
		if t := g.valueType(depth, frozen, ordered); t.k != kTuple {
			return t
		}
	}
}

func (f *fuzzer) keyValues(cols []*column) []*lval {
	out := make([]*lval, len(cols))
	for i, c := range cols {
		out[i] = f.g.value(c.t, false)
	}
	return out
}

// ddl creates the keyspace's types and the table.
func (f *fuzzer) ddl() []string {
	ks := f.t.keyspace
	out := []string{"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}
	for _, u := range f.g.udts {
		fields := make([]string, len(u.fields))
		for i := range u.fields {
			fields[i] = u.fields[i] + " " + u.types[i].cql()
		}
		out = append(out, fmt.Sprintf("CREATE TYPE %s.%s (%s)", ks, u.name, strings.Join(fields, ", ")))
	}
	var cols, pk, ck, order []string
	for _, c := range f.t.columns() {
		def := c.name + " " + c.t.cql()
		if c.kind == staticCol {
			def += " static"
		}
		cols = append(cols, def)
	}
	for _, c := range f.t.pk {
		pk = append(pk, c.name)
	}
	for _, c := range f.t.ck {
		ck = append(ck, c.name)
		dir := "ASC"
		if c.desc {
			dir = "DESC"
		}
		order = append(order, c.name+" "+dir)
	}
	key := "(" + strings.Join(pk, ", ") + ")"
	if len(ck) > 0 {
		key += ", " + strings.Join(ck, ", ")
	}
	create := fmt.Sprintf("CREATE TABLE %s (%s, PRIMARY KEY (%s))", f.t.qualified(), strings.Join(cols, ", "), key)
	if len(order) > 0 {
		create += " WITH CLUSTERING ORDER BY (" + strings.Join(order, ", ") + ")"
	}
	return append(out, create)
}

// respell is v with the same value in another spelling: set elements and
// map entries shuffled and repeated, null tuple fields as -1 or -2.
func (f *fuzzer) respell(v *lval) *lval {
	if v == nil {
		return nil
	}
	g := f.g
	c := *v
	switch v.t.k {
	case kSet, kList:
		c.elems = make([]*lval, len(v.elems))
		for i, e := range v.elems {
			c.elems[i] = f.respell(e)
		}
		if v.t.k == kSet {
			g.r.Shuffle(len(c.elems), func(i, j int) { c.elems[i], c.elems[j] = c.elems[j], c.elems[i] })
			if len(c.elems) > 0 && g.chance(0.3) {
				first := canonicalElems(v)[0]
				c.elems = append([]*lval{first}, c.elems...) // a repeat the canonical form keeps
			}
		}
	case kMap:
		// Only distinct keys can be shuffled without changing which value a
		// repeated key ends with.
		keys, vals := canonicalEntries(v)
		c.keys, c.vals = append([]*lval(nil), keys...), append([]*lval(nil), vals...)
		g.r.Shuffle(len(c.keys), func(i, j int) {
			c.keys[i], c.keys[j] = c.keys[j], c.keys[i]
			c.vals[i], c.vals[j] = c.vals[j], c.vals[i]
		})
	case kTuple, kUDT:
		c.fields = make([]*lval, len(v.fields))
		c.unset = map[int]bool{}
		for i, fl := range v.fields {
			c.fields[i] = f.respell(fl)
			c.unset[i] = fl == nil && g.chance(0.5)
		}
	}
	return &c
}

func (f *fuzzer) pickPK() []*lval {
	k := f.pks[f.g.pick(len(f.pks))]
	out := make([]*lval, len(k))
	for i, v := range k {
		out[i] = f.respell(v)
	}
	return out
}

func (f *fuzzer) pickCK() []*lval {
	if len(f.cks) == 0 {
		return nil
	}
	k := f.cks[f.g.pick(len(f.cks))]
	out := make([]*lval, len(k))
	for i, v := range k {
		out[i] = f.respell(v)
	}
	return out
}

// nextWrite is a statement's timestamp and TTL: mostly later than any
// before, sometimes equal to the last (a tie) or older. A statement with a
// TTL takes a timestamp of its own, so that two expiring cells never tie
// on a timestamp (their tie goes to the later expiry, which the node's
// clock decides).
func (f *fuzzer) nextWrite(ttlOK bool) write {
	g := f.g
	if ttlOK && g.chance(0.15) {
		f.clock += 10
		return write{ts: f.clock, ttl: int32(3600 + g.pick(100000))}
	}
	var ts int64
	switch {
	case f.last != 0 && g.chance(0.1):
		ts = f.last
	case g.chance(0.1):
		ts = f.clock - int64(1+g.pick(300))
	default:
		f.clock += 10
		ts = f.clock
	}
	f.last = ts
	return write{ts: ts}
}

func (f *fuzzer) tsMode() tsMode {
	if f.g.chance(0.5) {
		return tsInText
	}
	return tsInProtocol
}

// columnValue is a value for a column: a value, null, or unset.
func (f *fuzzer) assignWhole(c *column) assignment {
	a := assignment{kind: setValue, col: c}
	switch r := f.g.r.Float64(); {
	case r < 0.1:
	case r < 0.2:
		a.unset = true
	default:
		a.val = f.g.value(c.t, true)
	}
	return a
}

func (f *fuzzer) insert() *op {
	o := &op{kind: opInsert, pk: f.pickPK(), ck: f.pickCK(), w: f.nextWrite(true), ts: f.tsMode()}
	if f.g.chance(0.2) {
		o.kind = opInsertJSON
		o.defaultUnset = f.g.chance(0.5)
		for _, c := range f.t.other {
			a := f.assignWhole(c)
			if a.unset && !o.defaultUnset {
				a.unset, a.val = false, nil // a column the document leaves out is null
			}
			if !a.unset && f.g.chance(0.3) { // left out of the document
				a.unset, a.val = o.defaultUnset, nil
			}
			o.values = append(o.values, a)
		}
		return o
	}
	for _, c := range f.t.other {
		if f.g.chance(0.6) {
			o.values = append(o.values, f.assignWhole(c))
		}
	}
	return o
}

// assignFor is a random assignment a column's type allows.
func (f *fuzzer) assignFor(c *column, inBatch bool) assignment {
	g := f.g
	t := c.t
	if !t.multiCell() || g.chance(0.3) {
		return f.assignWhole(c)
	}
	switch t.k {
	case kSet:
		if g.chance(0.5) {
			return assignment{kind: addTo, col: c, val: g.value(t, false)}
		}
		return assignment{kind: subtractFrom, col: c, val: g.value(t, false)}
	case kMap:
		switch g.pick(3) {
		case 0:
			return assignment{kind: addTo, col: c, val: g.value(t, false)}
		case 1:
			keys := &ctype{k: kSet, params: []*ctype{t.params[0]}}
			return assignment{kind: subtractFrom, col: c, val: g.value(keys, false)}
		}
		a := assignment{kind: setElement, col: c, key: g.value(t.params[0], false)}
		if g.chance(0.85) {
			a.val = g.value(t.params[1], false)
		}
		return a
	case kList:
		switch g.pick(3) {
		case 0:
			return assignment{kind: addTo, col: c, val: g.value(t, false)}
		case 1:
			return assignment{kind: prependTo, col: c, val: g.value(t, false)}
		}
		if inBatch {
			return assignment{kind: addTo, col: c, val: g.value(t, false)}
		}
		return assignment{kind: subtractFrom, col: c, val: g.value(t, false)}
	}
	a := assignment{kind: setField, col: c, field: g.pick(len(t.udt.fields))}
	if g.chance(0.85) {
		a.val = g.value(t.udt.types[a.field], false)
	}
	return a
}

func (f *fuzzer) update(inBatch bool) *op {
	g := f.g
	o := &op{kind: opUpdate, pk: f.pickPK(), ck: f.pickCK(), w: f.nextWrite(true), ts: f.tsMode()}
	var statics, all []*column
	for _, c := range f.t.other {
		if c.kind == staticCol {
			statics = append(statics, c)
		}
		all = append(all, c)
	}
	cols := all
	if len(statics) > 0 && g.chance(0.3) {
		cols, o.ck = statics, nil // the static row alone: no clustering in the WHERE
	}
	g.r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	n := 1 + g.pick(min(3, len(cols)))
	if allStatic(cols[:n]) {
		o.ck = nil // a write of static columns alone names no clustering
	}
	for _, c := range cols[:n] {
		a := f.assignFor(c, inBatch)
		o.assigns = append(o.assigns, a)
		if a.kind == setElement && g.chance(0.3) {
			again := a // the same element twice in one statement: the greater value wins
			again.val = g.value(c.t.params[1], false)
			o.assigns = append(o.assigns, again)
		}
	}
	return o
}

func (f *fuzzer) delete() *op {
	g := f.g
	o := &op{kind: opDelete, pk: f.pickPK(), w: f.nextWrite(false), ts: f.tsMode()}
	switch {
	case len(f.t.ck) == 0 && g.chance(0.4), g.chance(0.15):
		o.del = deletePartition
	case len(f.t.ck) > 0 && g.chance(0.3):
		o.del, o.ck = deleteRow, f.pickCK()
	case len(f.t.ck) > 0 && g.chance(0.3):
		o.del = deleteRange
		lo, hi := f.pickCK()[0], f.pickCK()[0]
		if compare(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		switch g.pick(3) {
		case 0:
			o.rt = rangeTomb{lo: lo, loIn: g.chance(0.5)}
		case 1:
			o.rt = rangeTomb{hi: hi, hiIn: g.chance(0.5)}
		default:
			o.rt = rangeTomb{lo: lo, hi: hi, loIn: g.chance(0.5), hiIn: g.chance(0.5)}
		}
	default:
		o.del, o.ck = deleteColumns, f.pickCK()
		var statics []*column
		for _, c := range f.t.other {
			if c.kind == staticCol {
				statics = append(statics, c)
			}
		}
		cols := f.t.other
		if len(statics) > 0 && g.chance(0.3) {
			cols, o.ck = statics, nil
		}
		var chosen []*column
		for _, i := range g.r.Perm(len(cols))[:1+g.pick(min(2, len(cols)))] {
			d := deleteTarget{col: cols[i]}
			if cols[i].t.k == kMap && cols[i].t.multiCell() && g.chance(0.5) {
				d.key = g.value(cols[i].t.params[0], false)
			}
			o.targets = append(o.targets, d)
			chosen = append(chosen, cols[i])
		}
		if allStatic(chosen) {
			o.ck = nil
		}
	}
	return o
}

// invalidOp is a statement a node must refuse without applying anything:
// a collection element bound as null, or a value of the wrong size.
func (f *fuzzer) invalidOp() *op {
	o := f.insert()
	o.kind = opInsert
	o.values = nil
	for _, c := range f.t.other {
		if c.t.isCollection() {
			bad := &lval{t: c.t}
			bad.elems = []*lval{nil}
			if c.t.k == kMap {
				bad.keys, bad.vals, bad.elems = []*lval{f.g.value(c.t.params[0], false)}, []*lval{nil}, nil
			}
			o.values, o.invalid = []assignment{{kind: setValue, col: c, val: bad}}, 0x2200
			return o
		}
	}
	bad := &lval{t: &ctype{k: kBlob}, raw: []byte{1, 2, 3}}
	for _, c := range f.t.other {
		if c.t.k == kInt || c.t.k == kBigint || c.t.k == kUUID || c.t.k == kDouble {
			o.values, o.invalid = []assignment{{kind: setValue, col: c, val: bad}}, 0x2200
			return o
		}
	}
	return nil
}

func allStatic(cols []*column) bool {
	for _, c := range cols {
		if c.kind != staticCol {
			return false
		}
	}
	return len(cols) > 0
}
