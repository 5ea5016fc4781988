package cql

import (
	"fmt"
	"strings"
	"testing"
)

// lexString renders tokens as kind:text, with positions, for comparison.
func lexString(toks []token) string {
	names := map[tokenKind]string{
		tkEOF: "EOF", tkIdent: "IDENT", tkQuotedIdent: "QUOTED", tkString: "STRING", tkInteger: "INT",
		tkFloat: "FLOAT", tkDuration: "DURATION", tkUUID: "UUID", tkHex: "HEX", tkPunct: "P",
	}
	var parts []string
	for _, t := range toks {
		if t.kind == tkEOF {
			break
		}
		parts = append(parts, fmt.Sprintf("%s:%s", names[t.kind], t.text))
	}
	return strings.Join(parts, " ")
}

func TestLex(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT a FROM t", "IDENT:SELECT IDENT:a IDENT:FROM IDENT:t"},
		{`"Quoted""Name" "x"`, `QUOTED:Quoted"Name QUOTED:x`},
		{`""`, "QUOTED:"},
		{"'it''s' ''", "STRING:it's STRING:"},
		{"$$a 'b' $c$$", "STRING:a 'b' $c"},
		{"$$$$", "STRING:"},
		{"1 -1 +1 007", "INT:1 INT:-1 P:+ INT:1 INT:007"},
		{"1.5 -1.5 1. 1e5 1E-5 2e+3 1.5e10", "FLOAT:1.5 FLOAT:-1.5 FLOAT:1. FLOAT:1e5 FLOAT:1E-5 FLOAT:2e+3 FLOAT:1.5e10"},
		{"1..2", "INT:1 P:.. INT:2"},
		{"1e", "INT:1 IDENT:e"},
		{"NaN -NaN Infinity -Infinity -infinity", "IDENT:NaN FLOAT:-NaN IDENT:Infinity FLOAT:-Infinity FLOAT:-infinity"},
		{"-nanx", "P:- IDENT:nanx"},
		{"true FALSE", "IDENT:true IDENT:FALSE"},
		{"0x 0xCAFE 0X1f", "HEX:0x HEX:0xcafe HEX:0x1f"},
		{"550e8400-e29b-41d4-a716-446655440000", "UUID:550e8400-e29b-41d4-a716-446655440000"},
		{"DEADBEEF-DEAD-BEEF-DEAD-BEEFDEADBEEF", "UUID:deadbeef-dead-beef-dead-beefdeadbeef"},
		{"deadbeef-dead-beef-dead-beefdeadbee", "IDENT:deadbeef P:- IDENT:dead P:- IDENT:beef P:- IDENT:dead P:- IDENT:beefdeadbee"},
		{"1h30m 12mo3d 1y2mo3w4d5h6m7s8ms9us10ns 3µs -5s 2H", "DURATION:1h30m DURATION:12mo3d DURATION:1y2mo3w4d5h6m7s8ms9us10ns DURATION:3µs DURATION:-5s DURATION:2H"},
		{"1h5", "DURATION:1h INT:5"},
		{"P1Y2M PT1H P1Y2M3DT4H5M6S P2W -P1D P0001-02-03T04:05:06", "DURATION:P1Y2M DURATION:PT1H DURATION:P1Y2M3DT4H5M6S DURATION:P2W DURATION:-P1D DURATION:P0001-02-03T04:05:06"},
		{"P PT P1 P1Dx p1d P1H PT1D P1W2D", "IDENT:P IDENT:PT IDENT:P1 IDENT:P1Dx IDENT:p1d IDENT:P1H IDENT:PT1D IDENT:P1W2D"},
		{"? :name", "P:? P:: IDENT:name"},
		{"( ) [ ] { } , ; . : = < <= > >= != + - * / % += -= ..", "P:( P:) P:[ P:] P:{ P:} P:, P:; P:. P:: P:= P:< P:<= P:> P:>= P:!= P:+ P:- P:* P:/ P:% P:+= P:-= P:.."},
		{"a<=b", "IDENT:a P:<= IDENT:b"},
		{"c-1", "IDENT:c INT:-1"},
		{"c - 1", "IDENT:c P:- INT:1"},
		{"c-=1", "IDENT:c P:-= INT:1"},
		{"a -- comment\nb // another\nc /* block\n */ d", "IDENT:a IDENT:b IDENT:c IDENT:d"},
		{"a--", "IDENT:a"},
		{"map<int,frozen<list<int>>>", "IDENT:map P:< IDENT:int P:, IDENT:frozen P:< IDENT:list P:< IDENT:int P:> P:> P:>"},
		{"ks.t", "IDENT:ks P:. IDENT:t"},
		{"a_1 B2", "IDENT:a_1 IDENT:B2"},
	} {
		toks, _, err := lex(c.in)
		if err != nil {
			t.Errorf("lex(%q): %v", c.in, err)
			continue
		}
		if got := lexString(toks); got != c.want {
			t.Errorf("lex(%q):\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestLexPositions(t *testing.T) {
	toks, stream, err := lex("SELECT 'é'\n  , \"ü\" /* x\ny */ z\r\n\tw")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, fmt.Sprintf("%d:%d@%d", tk.line, tk.col, tk.index))
	}
	// Columns count characters, not bytes; the end of input has no place,
	// as in Cassandra. Indexes count the hidden tokens (whitespace runs,
	// the comment) before each token.
	want := "1:0@0 1:7@2 2:2@4 2:4@6 3:5@10 4:1@12 0:-1@13"
	if strings.Join(got, " ") != want {
		t.Fatalf("positions %s, want %s", strings.Join(got, " "), want)
	}
	if len(stream) != 13 || stream[3] != (streamPos{1, 10}) || stream[8] != (streamPos{2, 8}) {
		t.Fatalf("hidden tokens %v", stream)
	}
}
