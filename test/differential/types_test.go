package differential

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
)

// The model's own view of CQL types and values. Scalars are serialized
// with cqltype's codecs (a value's bytes are not what this test is after);
// everything a node makes of a value (the canonical form of sets, maps,
// tuples and UDTs, and the order of elements and keys) is computed here
// independently, from the logical value, and compared with what the node
// returns.

type kind int

const (
	kInt kind = iota
	kBigint
	kSmallint
	kTinyint
	kVarint
	kText
	kAscii
	kBlob
	kBoolean
	kDouble
	kFloat
	kTimestamp
	kDate
	kTime
	kInet
	kUUID
	kTimeuuid
	kDecimal
	kDuration
	kList
	kSet
	kMap
	kTuple
	kUDT
)

var kindNames = map[kind]string{kInt: "int", kBigint: "bigint", kSmallint: "smallint", kTinyint: "tinyint", kVarint: "varint",
	kText: "text", kAscii: "ascii", kBlob: "blob", kBoolean: "boolean", kDouble: "double", kFloat: "float",
	kTimestamp: "timestamp", kDate: "date", kTime: "time", kInet: "inet", kUUID: "uuid", kTimeuuid: "timeuuid",
	kDecimal: "decimal", kDuration: "duration"}

// ctype is a CQL type.
type ctype struct {
	k      kind
	frozen bool
	params []*ctype
	udt    *udtDef
}

// udtDef is a user type of the keyspace.
type udtDef struct {
	name   string
	fields []string
	types  []*ctype
}

func (t *ctype) isCollection() bool { return t.k == kList || t.k == kSet || t.k == kMap }

// multiCell reports whether a column of t keeps its value as cells of
// elements or fields.
func (t *ctype) multiCell() bool { return !t.frozen && (t.isCollection() || t.k == kUDT) }

// cql is the type as CREATE TABLE writes it.
func (t *ctype) cql() string {
	var s string
	switch t.k {
	case kList:
		s = "list<" + t.params[0].cql() + ">"
	case kSet:
		s = "set<" + t.params[0].cql() + ">"
	case kMap:
		s = "map<" + t.params[0].cql() + ", " + t.params[1].cql() + ">"
	case kTuple:
		parts := make([]string, len(t.params))
		for i, p := range t.params {
			parts[i] = p.cql()
		}
		return "tuple<" + strings.Join(parts, ", ") + ">" // tuples are frozen whatever is written
	case kUDT:
		s = t.udt.name
	default:
		return kindNames[t.k]
	}
	if t.frozen {
		return "frozen<" + s + ">"
	}
	return s
}

// fieldTypes are a tuple's or UDT's component types.
func (t *ctype) fieldTypes() []*ctype {
	if t.k == kUDT {
		return t.udt.types
	}
	return t.params
}

// ordered reports whether values of t may be keys, set elements or map
// keys in this test: the types whose Cassandra order the model computes.
func (t *ctype) ordered() bool {
	switch t.k {
	case kUUID, kTimeuuid, kDecimal, kDuration:
		return false
	case kList, kSet, kMap, kTuple, kUDT:
		for _, p := range t.fieldTypesOrParams() {
			if !p.ordered() {
				return false
			}
		}
		return t.frozen || t.k == kTuple
	}
	return true
}

func (t *ctype) fieldTypesOrParams() []*ctype {
	if t.k == kUDT {
		return t.udt.types
	}
	return t.params
}

// lval is a logical value as the test sends it: collections hold their
// elements as given (repeated, unsorted), tuples and UDTs their fields as
// given (nil for null, possibly fewer than declared).
type lval struct {
	t         *ctype
	raw       []byte // scalars
	lit, json string // scalars
	elems     []*lval
	keys      []*lval
	vals      []*lval
	fields    []*lval
	unset     map[int]bool // tuple and UDT fields sent with length -2
}

// compare orders two values of one type as Cassandra does.
func compare(a, b *lval) int {
	t := a.t
	switch t.k {
	case kInt, kBigint, kSmallint, kTinyint, kTimestamp:
		return cmpInt(signed(a.raw), signed(b.raw))
	case kVarint:
		return varint(a.raw).Cmp(varint(b.raw))
	case kDouble, kFloat:
		fa, fb := floatOf(a.raw), floatOf(b.raw)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	case kList:
		return compareSeq(a.elems, b.elems)
	case kSet:
		return compareSeq(canonicalElems(a), canonicalElems(b))
	case kMap:
		ka, va := canonicalEntries(a)
		kb, vb := canonicalEntries(b)
		for i := 0; i < len(ka) && i < len(kb); i++ {
			if c := compare(ka[i], kb[i]); c != 0 {
				return c
			}
			if c := compare(va[i], vb[i]); c != 0 {
				return c
			}
		}
		return cmpInt(int64(len(ka)), int64(len(kb)))
	case kTuple, kUDT:
		n := max(len(a.fields), len(b.fields))
		for i := 0; i < n; i++ {
			var fa, fb *lval
			if i < len(a.fields) {
				fa = a.fields[i]
			}
			if i < len(b.fields) {
				fb = b.fields[i]
			}
			switch {
			case fa == nil && fb == nil:
				continue
			case fa == nil:
				return -1
			case fb == nil:
				return 1
			}
			if c := compare(fa, fb); c != 0 {
				return c
			}
		}
		return 0
	}
	return bytes.Compare(a.raw, b.raw)
}

func compareSeq(a, b []*lval) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmpInt(int64(len(a)), int64(len(b)))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func signed(b []byte) int64 {
	var v int64
	if len(b) > 0 && b[0]&0x80 != 0 {
		v = -1
	}
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}

func varint(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

func floatOf(b []byte) float64 {
	if len(b) == 4 {
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

// canonicalElems are a set's elements in order without repeats (the first
// of equal ones stays, as Cassandra keeps it).
func canonicalElems(v *lval) []*lval {
	out := append([]*lval(nil), v.elems...)
	sort.SliceStable(out, func(i, j int) bool { return compare(out[i], out[j]) < 0 })
	kept := out[:0]
	for _, e := range out {
		if len(kept) > 0 && compare(kept[len(kept)-1], e) == 0 {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// canonicalEntries are a map's keys in order without repeats (the first
// key's bytes and the last value of a repeated key stay).
func canonicalEntries(v *lval) (keys, vals []*lval) {
	idx := make([]int, len(v.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return compare(v.keys[idx[i]], v.keys[idx[j]]) < 0 })
	for _, i := range idx {
		if n := len(keys); n > 0 && compare(keys[n-1], v.keys[i]) == 0 {
			vals[n-1] = v.vals[i]
			continue
		}
		keys, vals = append(keys, v.keys[i]), append(vals, v.vals[i])
	}
	return keys, vals
}

// appendItem appends b as [bytes]: its length, then it; nil is null (-1).
func appendItem(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func encodeItems(items [][]byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(items)))
	for _, it := range items {
		out = appendItem(out, it)
	}
	return out
}

// canon is the value's bytes as Cassandra stores and returns them.
func canon(v *lval) []byte { return encode(v, true) }

// wire is the value's bytes as the test sends them.
func wire(v *lval) []byte { return encode(v, false) }

func encode(v *lval, canonical bool) []byte {
	if v == nil {
		return nil // only the invalid values the test sends hold a null element
	}
	switch v.t.k {
	case kList, kSet:
		elems := v.elems
		if canonical && v.t.k == kSet {
			elems = canonicalElems(v)
		}
		items := make([][]byte, len(elems))
		for i, e := range elems {
			items[i] = encode(e, canonical)
		}
		return encodeItems(items)
	case kMap:
		keys, vals := v.keys, v.vals
		if canonical {
			keys, vals = canonicalEntries(v)
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(keys)))
		for i := range keys {
			out = appendItem(out, encode(keys[i], canonical))
			out = appendItem(out, encode(vals[i], canonical))
		}
		return out
	case kTuple, kUDT:
		out := []byte{}
		for i, f := range v.fields {
			switch {
			case f != nil:
				out = appendItem(out, encode(f, canonical))
			case !canonical && v.unset[i]:
				out = binary.BigEndian.AppendUint32(out, 0xFFFFFFFE)
			default:
				out = binary.BigEndian.AppendUint32(out, 0xFFFFFFFF)
			}
		}
		return out
	}
	return v.raw
}

// literal is the value as CQL text.
func literal(v *lval) string {
	switch v.t.k {
	case kList:
		return "[" + strings.Join(texts(v.elems, literal), ", ") + "]"
	case kSet:
		return "{" + strings.Join(texts(v.elems, literal), ", ") + "}"
	case kMap:
		parts := make([]string, len(v.keys))
		for i := range v.keys {
			parts[i] = literal(v.keys[i]) + ": " + literal(v.vals[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case kTuple:
		return "(" + strings.Join(texts(v.fields, literal), ", ") + ")"
	case kUDT:
		var parts []string
		for i, f := range v.fields {
			if f == nil {
				parts = append(parts, v.t.udt.fields[i]+": null") // {} would be an empty map
			} else {
				parts = append(parts, v.t.udt.fields[i]+": "+literal(f))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return v.lit
}

// texts renders values with each, a nil one as null.
func texts(vals []*lval, each func(*lval) string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "null"
		if v != nil {
			out[i] = each(v)
		}
	}
	return out
}

// jsonOf is the value as INSERT JSON takes it.
func jsonOf(v *lval) string {
	switch v.t.k {
	case kList, kSet:
		return "[" + strings.Join(texts(v.elems, jsonOf), ", ") + "]"
	case kMap:
		parts := make([]string, len(v.keys))
		for i := range v.keys {
			k := jsonOf(v.keys[i])
			if !strings.HasPrefix(k, `"`) {
				k = jsonString(k) // JSON keys are strings: a key whose JSON is not one is the string of it
			}
			parts[i] = k + ": " + jsonOf(v.vals[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case kTuple:
		return "[" + strings.Join(texts(v.fields, jsonOf), ", ") + "]"
	case kUDT:
		var parts []string
		for i, f := range v.fields {
			if f != nil {
				parts = append(parts, jsonString(v.t.udt.fields[i])+": "+jsonOf(f))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return v.json
}

// asJSONRead is v as Cassandra reads it from the text jsonOf gives: its
// JSON parser (Jackson) keeps one member per distinct key text of an
// object, where that text first appears, with the value of its last
// appearance, before the map's own keys are compared. Keys whose texts
// differ but whose values are equal are then left to the map's rule
// (the later wins), in that order.
func asJSONRead(v *lval) *lval {
	if v == nil {
		return nil
	}
	out := *v
	switch v.t.k {
	case kList, kSet:
		out.elems = mapVals(v.elems, asJSONRead)
	case kTuple, kUDT:
		out.fields = mapVals(v.fields, asJSONRead)
	case kMap:
		out.keys, out.vals = nil, nil
		at := map[string]int{}
		for i, k := range v.keys {
			text := jsonOf(k)
			if j, ok := at[text]; ok {
				out.vals[j] = asJSONRead(v.vals[i])
				continue
			}
			at[text] = len(out.keys)
			out.keys, out.vals = append(out.keys, asJSONRead(k)), append(out.vals, asJSONRead(v.vals[i]))
		}
	}
	return &out
}

func mapVals(vs []*lval, f func(*lval) *lval) []*lval {
	if vs == nil {
		return nil
	}
	out := make([]*lval, len(vs))
	for i, v := range vs {
		out[i] = f(v)
	}
	return out
}

// gen makes random types and values from one seed.
type gen struct {
	r    *rand.Rand
	udts []*udtDef
}

var scalarKinds = []kind{kInt, kBigint, kSmallint, kTinyint, kVarint, kText, kAscii, kBlob, kBoolean, kDouble, kFloat,
	kTimestamp, kDate, kTime, kInet, kUUID, kTimeuuid, kDecimal, kDuration}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// scalarType is a random scalar type; ordered asks for one the model can
// order (a key, an element or a map key).
func (g *gen) scalarType(ordered bool) *ctype {
	for {
		t := &ctype{k: scalarKinds[g.pick(len(scalarKinds))]}
		if !ordered || t.ordered() {
			return t
		}
	}
}

// valueType is a random type for a column or element, nested up to depth;
// frozen says it must be frozen (inside collections, keys).
func (g *gen) valueType(depth int, frozen, ordered bool) *ctype {
	if depth <= 0 || g.chance(0.5) {
		return g.scalarType(ordered)
	}
	switch g.pick(5) {
	case 0:
		return &ctype{k: kList, frozen: frozen || g.chance(0.3), params: []*ctype{g.valueType(depth-1, true, ordered)}}
	case 1:
		return &ctype{k: kSet, frozen: frozen || g.chance(0.3), params: []*ctype{g.valueType(depth-1, true, true)}}
	case 2:
		return &ctype{k: kMap, frozen: frozen || g.chance(0.3), params: []*ctype{g.valueType(depth-1, true, true), g.valueType(depth-1, true, ordered)}}
	case 3:
		n := 1 + g.pick(3)
		ps := make([]*ctype, n)
		for i := range ps {
			ps[i] = g.valueType(depth-1, true, ordered)
		}
		return &ctype{k: kTuple, frozen: true, params: ps}
	}
	if len(g.udts) == 0 {
		return g.scalarType(ordered)
	}
	u := g.udts[g.pick(len(g.udts))]
	t := &ctype{k: kUDT, frozen: frozen || g.chance(0.5), udt: u}
	if ordered && !t.ordered() {
		return g.scalarType(ordered)
	}
	return t
}

// value is a random value of t: nested values may be repeated, unsorted,
// or have null fields; empty values only where empty says they may be (a
// simple column's top level).
func (g *gen) value(t *ctype, empty bool) *lval {
	v := &lval{t: t}
	switch t.k {
	case kList, kSet:
		n := g.pick(5)
		for i := 0; i < n; i++ {
			if i > 0 && t.k == kSet && g.chance(0.3) {
				v.elems = append(v.elems, v.elems[g.pick(i)]) // a repeat
				continue
			}
			v.elems = append(v.elems, g.value(t.params[0], false))
		}
		return v
	case kMap:
		n := g.pick(5)
		for i := 0; i < n; i++ {
			if i > 0 && g.chance(0.3) {
				v.keys = append(v.keys, v.keys[g.pick(i)]) // a repeated key, another value
			} else {
				v.keys = append(v.keys, g.value(t.params[0], false))
			}
			v.vals = append(v.vals, g.value(t.params[1], false))
		}
		return v
	case kTuple, kUDT:
		// Always every field: a UDT bound with fewer fields is stored so,
		// and one written as a literal or JSON gets them all, which the
		// model would have to tell apart (test/clients binds short ones).
		types := t.fieldTypes()
		n := len(types)
		v.fields = make([]*lval, n)
		for i := 0; i < n; i++ {
			if g.chance(0.25) {
				if g.chance(0.5) {
					if v.unset == nil {
						v.unset = map[int]bool{}
					}
					v.unset[i] = true
				}
				continue
			}
			v.fields[i] = g.value(types[i], false)
		}
		return v
	}
	if empty && g.chance(0.05) && emptyAllowed(t.k) {
		v.raw, v.lit, v.json = []byte{}, emptyLiteral(t.k), jsonString(strings.Trim(emptyLiteral(t.k), "'"))
		return v
	}
	g.scalar(v)
	return v
}

// emptyAllowed: the types an empty value (zero bytes, not null) is valid
// for, and that have a literal for it.
func emptyAllowed(k kind) bool { return k == kText || k == kAscii || k == kBlob }

func emptyLiteral(k kind) string {
	if k == kBlob {
		return "0x"
	}
	return "''"
}

func (g *gen) scalar(v *lval) {
	r := g.r
	switch v.t.k {
	case kInt:
		n := [...]int32{math.MinInt32, math.MaxInt32, 0, -1, 1}[r.IntN(5)]
		if r.IntN(3) > 0 {
			n = int32(r.IntN(200) - 100)
		}
		v.raw, v.lit = cqltype.EncodeInt(n), strconv.Itoa(int(n))
	case kBigint:
		n := [...]int64{math.MinInt64, math.MaxInt64, 0}[r.IntN(3)]
		if r.IntN(3) > 0 {
			n = int64(r.IntN(200) - 100)
		}
		v.raw, v.lit = cqltype.EncodeBigint(n), strconv.FormatInt(n, 10)
	case kSmallint:
		n := int16(r.IntN(65536) - 32768)
		v.raw, v.lit = binary.BigEndian.AppendUint16(nil, uint16(n)), strconv.Itoa(int(n))
	case kTinyint:
		n := int8(r.IntN(256) - 128)
		v.raw, v.lit = []byte{byte(n)}, strconv.Itoa(int(n))
	case kVarint:
		n := new(big.Int).Lsh(big.NewInt(int64(r.IntN(1000)-500)), uint(r.IntN(80)))
		v.raw, v.lit = cqltype.EncodeVarint(n), n.String()
	case kText, kAscii:
		alphabet := []string{"a", "b", "z", "'", " ", "0"}
		if v.t.k == kText {
			alphabet = append(alphabet, "é", "日", "\u0000")
		}
		var b strings.Builder
		for n := r.IntN(6) + 1; n > 0; n-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		v.raw, v.lit, v.json = []byte(s), "'"+strings.ReplaceAll(s, "'", "''")+"'", jsonString(s)
		return
	case kBlob:
		b := make([]byte, r.IntN(6)+1)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		v.raw, v.lit = b, "0x"+hex.EncodeToString(b)
		v.json = jsonString(v.lit)
		return
	case kBoolean:
		b := r.IntN(2) == 1
		v.raw, v.lit = cqltype.EncodeBoolean(b), strconv.FormatBool(b)
	case kDouble:
		f := [...]float64{0.5, -2.25, 1e300, -1e-300, 123456.789}[r.IntN(5)]
		v.raw, v.lit = cqltype.EncodeDouble(f), strconv.FormatFloat(f, 'g', -1, 64)
	case kFloat:
		f := [...]float32{0.5, -2.25, 3.4e38, 1.5e-30, 1234.5}[r.IntN(5)]
		v.raw = binary.BigEndian.AppendUint32(nil, math.Float32bits(f))
		v.lit = strconv.FormatFloat(float64(f), 'g', -1, 32)
	case kTimestamp:
		ms := int64(1)<<31 + r.Int64N(1<<40)
		if r.IntN(4) == 0 {
			ms = -ms
		}
		v.raw, v.lit = cqltype.EncodeBigint(ms), strconv.FormatInt(ms, 10)
	case kDate:
		days := r.IntN(200000) - 100000
		v.raw = binary.BigEndian.AppendUint32(nil, uint32(int64(days)+1<<31))
		v.lit = "'" + time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02") + "'"
		v.json = jsonString(strings.Trim(v.lit, "'"))
		return
	case kTime:
		ns := r.Int64N(86400 * 1e9)
		v.raw = cqltype.EncodeBigint(ns)
		s := time.Unix(0, ns).UTC().Format("15:04:05.000000000")
		v.lit, v.json = "'"+s+"'", jsonString(s)
		return
	case kInet:
		if r.IntN(2) == 0 {
			b := []byte{byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))}
			v.raw = b
			v.lit = fmt.Sprintf("'%d.%d.%d.%d'", b[0], b[1], b[2], b[3])
		} else {
			b := make([]byte, 16)
			b[0], b[1], b[15] = 0x20, 0x01, byte(r.IntN(256))
			v.raw = b
			v.lit = "'2001::" + strconv.FormatInt(int64(b[15]), 16) + "'"
		}
		v.json = jsonString(strings.Trim(v.lit, "'"))
		return
	case kUUID, kTimeuuid:
		b := make([]byte, 16)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		b[6] = b[6]&0x0F | 0x40
		if v.t.k == kTimeuuid {
			b[6] = b[6]&0x0F | 0x10
		}
		b[8] = b[8]&0x3F | 0x80
		v.raw = b
		v.lit = fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		v.json = jsonString(v.lit)
		return
	case kDecimal:
		unscaled := big.NewInt(int64(r.IntN(2000000) - 1000000))
		scale := r.IntN(5)
		v.raw = append(binary.BigEndian.AppendUint32(nil, uint32(scale)), cqltype.EncodeVarint(unscaled)...)
		s := new(big.Int).Abs(unscaled).String()
		for len(s) <= scale {
			s = "0" + s
		}
		if scale > 0 {
			s = s[:len(s)-scale] + "." + s[len(s)-scale:]
		}
		if unscaled.Sign() < 0 {
			s = "-" + s
		}
		// As a JSON string: Cassandra reads a JSON number as a double, and
		// 945.260 would come back as 945.26.
		v.lit, v.json = s, jsonString(s)
		return
	case kDuration:
		months, days, nanos := int32(r.IntN(30)), int32(r.IntN(40)), int64(r.IntN(1e6))
		sign := ""
		if r.IntN(3) == 0 {
			months, days, nanos, sign = -months, -days, -nanos, "-"
		}
		v.raw = cqltype.EncodeDuration(months, days, nanos)
		abs := func(n int64) int64 { return max(n, -n) }
		v.lit = fmt.Sprintf("%s%dmo%dd%dns", sign, abs(int64(months)), abs(int64(days)), abs(nanos))
		v.json = jsonString(v.lit)
		return
	}
	v.json = v.lit
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
