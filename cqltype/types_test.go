package cqltype

import (
	"errors"
	"strings"
	"testing"
)

// testResolver knows two UDTs in keyspace ks: addr (street text, zip int) and
// "Point" (x double, y double), the second needing quotes.
func testResolver(keyspace, name string) (*Type, error) {
	if keyspace != "ks" {
		return nil, errors.New("unknown keyspace " + keyspace)
	}
	switch name {
	case "addr":
		return UDTOf("ks", "addr", []string{"street", "zip"}, []*Type{TextType, IntType}, false), nil
	case "Point":
		return UDTOf("ks", "Point", []string{"x", "y"}, []*Type{DoubleType, DoubleType}, false), nil
	}
	return nil, nil
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want string // String() of the result
	}{
		{"int", "int"},
		{"INT", "int"},
		{"  Text ", "text"},
		{"varchar", "text"},
		{"counter", "counter"},
		{"duration", "duration"},
		{"timeuuid", "timeuuid"},
		{"list<int>", "list<int>"},
		{"list < int >", "list<int>"},
		{"set<text>", "set<text>"},
		{"map<text,int>", "map<text, int>"},
		{"map < varchar , frozen < list < int > > >", "map<text, frozen<list<int>>>"},
		{"frozen<list<int>>", "frozen<list<int>>"},
		{"frozen<map<int, list<int>>>", "frozen<map<int, frozen<list<int>>>>"},
		{"tuple<int, text>", "tuple<int, text>"},
		{"frozen<tuple<int,text>>", "tuple<int, text>"},
		{"tuple<int, list<int>>", "tuple<int, frozen<list<int>>>"},
		{"list<frozen<tuple<int, boolean>>>", "list<tuple<int, boolean>>"},
		{"list<tuple<int, boolean>>", "list<tuple<int, boolean>>"},
		{"addr", "addr"},
		{"ADDR", "addr"},
		{"frozen<addr>", "frozen<addr>"},
		{"ks.addr", "addr"},
		{`"Point"`, `"Point"`},
		{`frozen<"Point">`, `frozen<"Point">`},
		{"list<frozen<addr>>", "list<frozen<addr>>"},
		{"map<text, duration>", "map<text, duration>"},
		{"list<duration>", "list<duration>"},
		{"'org.apache.cassandra.db.marshal.DurationType'", "duration"},
		{"'org.apache.cassandra.db.marshal.UTF8Type'", "text"},
		{"'com.example.MyType'", "'com.example.MyType'"},
		{"'it''s'", "'it''s'"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in, "ks", testResolver)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
		// String must parse back to an equal type.
		again, err := Parse(got.String(), "ks", testResolver)
		if err != nil {
			t.Errorf("Parse(String()=%q): %v", got, err)
			continue
		}
		if !again.Equal(got) {
			t.Errorf("round trip of %q: %#v != %#v", tt.in, again, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantSub string
	}{
		{"", "expected a type name"},
		{"   ", "expected a type name"},
		{"int<int>", "takes no type parameters"},
		{"list", "needs type parameters"},
		{"list<>", "expected a type name"},
		{"list<int", "expected ',' or '>'"},
		{"list<int, int>", "exactly 1 type parameter"},
		{"map<int>", "exactly 2 type parameters"},
		{"map<int, int, int>", "exactly 2 type parameters"},
		{"frozen<int>", "frozen<> is only allowed"},
		{"frozen<list<int>", "expected '>'"},
		{"list<list<int>>", "non-frozen collections are not allowed inside collections"},
		{"map<int, set<int>>", "non-frozen collections are not allowed inside collections"},
		{"list<addr>", "non-frozen UDTs are not allowed inside collections"},
		{"list<counter>", "counters are not allowed inside collections"},
		{"tuple<counter>", "counters are not allowed"},
		{"set<duration>", "durations are not allowed inside sets"},
		{"map<duration, int>", "durations are not allowed inside map keys"},
		{"nosuch", "unknown type ks.nosuch"},
		{`"NoSuch"`, `unknown type ks."NoSuch"`},
		{"int int", "unexpected"},
		{"list<int>>", "unexpected"},
		{"'unterminated", "unterminated custom type name"},
		{`"unterminated`, "unterminated quoted name"},
		{"map<int; int>", "expected ',' or '>'"},
		{"other.addr", "unknown keyspace other"},
		{strings.Repeat("frozen<list<", 40) + "int" + strings.Repeat(">>", 40), "nested more than"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in, "ks", testResolver)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error containing %q", tt.in, tt.wantSub)
			continue
		}
		if !strings.Contains(err.Error(), tt.wantSub) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", tt.in, err, tt.wantSub)
		}
	}
	// Without a resolver every UDT name is an error.
	if _, err := Parse("addr", "ks", nil); err == nil || !strings.Contains(err.Error(), "unknown type addr") {
		t.Errorf("Parse without resolver: %v", err)
	}
}

func TestTypeProperties(t *testing.T) {
	for k := Ascii; k <= Varint; k++ {
		n := Native(k)
		if n == nil || n.Kind != k || n.String() != k.String() {
			t.Errorf("Native(%v) = %v", k, n)
		}
		if MarshalClass(k) == "" {
			t.Errorf("MarshalClass(%v) empty", k)
		}
	}
	if Native(List) != nil || Native(Custom) != nil {
		t.Error("Native of a non-native kind should be nil")
	}
	if Kind(200).String() != "kind(200)" {
		t.Errorf("unknown kind prints %q", Kind(200).String())
	}
	if Text.OptionID() != 0x000D || Duration.OptionID() != 0x0015 || Tuple.OptionID() != 0x0031 {
		t.Error("option ids")
	}
	addr, _ := testResolver("ks", "addr")
	tests := []struct {
		typ                     *Type
		collection, multi, comp bool
	}{
		{IntType, false, false, true},
		{ListOf(IntType, false), true, true, true},
		{ListOf(IntType, true), true, false, true},
		{MapOf(TextType, IntType, false), true, true, true},
		{SetOf(IntType, true), true, false, true},
		{TupleOf(IntType, TextType), false, false, true},
		{addr, false, true, true},
		{addr.Freeze(), false, false, true},
		{DurationType, false, false, false},
		{CounterType, false, false, false},
		{ListOf(DurationType, true), true, false, false},
	}
	for _, tt := range tests {
		if got := tt.typ.IsCollection(); got != tt.collection {
			t.Errorf("%s.IsCollection() = %v", tt.typ, got)
		}
		if got := tt.typ.IsMultiCell(); got != tt.multi {
			t.Errorf("%s.IsMultiCell() = %v", tt.typ, got)
		}
		if got := tt.typ.IsComparable(); got != tt.comp {
			t.Errorf("%s.IsComparable() = %v", tt.typ, got)
		}
	}
	if TupleOf(IntType).SchemaString() != "frozen<tuple<int>>" {
		t.Errorf("SchemaString = %s", TupleOf(IntType).SchemaString())
	}
	if ListOf(IntType, true).Equal(ListOf(IntType, false)) {
		t.Error("frozen and non-frozen lists compare Equal")
	}
	if !MapOf(TextType, ListOf(IntType, true), false).Equal(MapOf(TextType, ListOf(IntType, true), false)) {
		t.Error("identical maps not Equal")
	}
	if addr.Equal(UDTOf("ks", "addr", []string{"street", "zip2"}, []*Type{TextType, IntType}, false)) {
		t.Error("UDTs with different field names compare Equal")
	}
	if QuoteIdent("list") != `"list"` || QuoteIdent("a_1") != "a_1" || QuoteIdent(`A"b`) != `"A""b"` {
		t.Error("QuoteIdent")
	}
}
