package differential

import (
	"strconv"
	"testing"

	"github.com/sibyldb/sibyl/cqltype"
)

// An INSERT JSON map whose keys repeat as text keeps, as Cassandra's JSON
// parser does, one member per distinct key text where it first appears,
// with its last value; equal keys of different texts are left to the
// map's own rule. Seed 10625 found the model reading them in document
// order instead (the node was right).
func TestJSONReadKeepsFirstPlaceLastValue(t *testing.T) {
	boolean, tinyint := &ctype{k: kBoolean}, &ctype{k: kTinyint}
	inner := &ctype{k: kMap, frozen: true, params: []*ctype{boolean, boolean}}
	outer := &ctype{k: kMap, params: []*ctype{inner, tinyint}}
	b := func(v bool) *lval {
		s := strconv.FormatBool(v)
		return &lval{t: boolean, raw: cqltype.EncodeBoolean(v), lit: s, json: s}
	}
	n := func(v int8) *lval {
		s := strconv.Itoa(int(v))
		return &lval{t: tinyint, raw: []byte{byte(v)}, lit: s, json: s}
	}
	m := func(kv ...*lval) *lval {
		v := &lval{t: inner}
		for i := 0; i < len(kv); i += 2 {
			v.keys, v.vals = append(v.keys, kv[i]), append(v.vals, kv[i+1])
		}
		return v
	}
	a := func() *lval { return m(b(true), b(false), b(true), b(true), b(false), b(true), b(false), b(false)) }
	doc := &lval{t: outer, keys: []*lval{a(), m(b(true), b(true), b(false), b(false), b(true), b(true)), a(), a()},
		vals: []*lval{n(1), n(2), n(3), n(4)}}
	got := jsonOf(asJSONRead(doc))
	want := `{"{\"true\": true, \"false\": false}": 4, "{\"true\": true, \"false\": false}": 2}`
	if got != want {
		t.Errorf("read as %s, want %s", got, want)
	}
}
