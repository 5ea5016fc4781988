package cqltype

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"
	"time"
)

// testNode is a fixed clock sequence and node (variant bits 10).
const testNode = 0x9234_0123456789ab

func testEnv() *FunctionEnv {
	return &FunctionEnv{Now: fixedClock, Rand: rand.New(rand.NewPCG(1, 2)), ClockSeqAndNode: testNode}
}

func mustFunction(t *testing.T, name string, args ...*Type) *Function {
	t.Helper()
	f, err := LookupFunction(name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

func TestFunctionCalls(t *testing.T) {
	tu := hexb("53b81e107ca711eb92340123456789ab") // fixedNow's millisecond as a timeuuid
	date := hexb("80004902")                       // 2021-03-04
	ts := EncodeTimestamp(1614834367089)           // fixedNow
	tests := []struct {
		name string
		args []*Type
		in   [][]byte
		want string // hex; "null" for a nil result
		err  string
	}{
		{"currenttimestamp", nil, nil, "00000177fba0fa71", ""},
		{"currentdate", nil, nil, "80004902", ""},
		{"currenttime", nil, nil, "000010b46bd2a080", ""},
		{"mintimeuuid", []*Type{TimestampType}, [][]byte{ts}, "53b81e107ca711eb8080808080808080", ""},
		{"maxtimeuuid", []*Type{TimestampType}, [][]byte{ts}, "53b8451f7ca711eb7f7f7f7f7f7f7f7f", ""},
		{"mintimeuuid", []*Type{TimestampType}, [][]byte{EncodeTimestamp(0)}, "138140001dd211b28080808080808080", ""},
		{"maxtimeuuid", []*Type{TimestampType}, [][]byte{EncodeTimestamp(0)}, "1381670f1dd211b27f7f7f7f7f7f7f7f", ""},
		{"mintimeuuid", []*Type{TimestampType}, [][]byte{nil}, "null", ""},
		{"maxtimeuuid", []*Type{TimestampType}, [][]byte{{}}, "null", ""},
		{"dateof", []*Type{TimeuuidType}, [][]byte{tu}, "00000177fba0fa71", ""},
		{"dateof", []*Type{TimeuuidType}, [][]byte{nil}, "null", ""},
		{"unixtimestampof", []*Type{TimeuuidType}, [][]byte{tu}, "00000177fba0fa71", ""},
		{"unixtimestampof", []*Type{TimeuuidType}, [][]byte{nil}, "null", ""},
		{"todate", []*Type{TimeuuidType}, [][]byte{tu}, "80004902", ""},
		{"todate", []*Type{TimestampType}, [][]byte{ts}, "80004902", ""},
		{"todate", []*Type{TimestampType}, [][]byte{EncodeTimestamp(0)}, "80000000", ""},
		// Cassandra truncates toward zero: the last instant of 1969 is
		// still day 0, a day and a millisecond before the epoch is day -1.
		{"todate", []*Type{TimestampType}, [][]byte{EncodeTimestamp(-1)}, "80000000", ""},
		{"todate", []*Type{TimestampType}, [][]byte{EncodeTimestamp(-86_400_001)}, "7fffffff", ""},
		{"todate", []*Type{TimestampType}, [][]byte{nil}, "null", ""},
		{"todate", []*Type{TimestampType}, [][]byte{{}}, "null", ""},
		{"totimestamp", []*Type{TimeuuidType}, [][]byte{tu}, "00000177fba0fa71", ""},
		{"totimestamp", []*Type{DateType}, [][]byte{date}, "00000177fa88b800", ""},
		{"totimestamp", []*Type{DateType}, [][]byte{hexb("7fffffff")}, hex.EncodeToString(EncodeTimestamp(-86_400_000)), ""},
		{"totimestamp", []*Type{DateType}, [][]byte{nil}, "null", ""},
		{"tounixtimestamp", []*Type{TimeuuidType}, [][]byte{tu}, "00000177fba0fa71", ""},
		{"tounixtimestamp", []*Type{TimestampType}, [][]byte{ts}, "00000177fba0fa71", ""},
		{"tounixtimestamp", []*Type{DateType}, [][]byte{date}, "00000177fa88b800", ""},
		{"tounixtimestamp", []*Type{TimeuuidType}, [][]byte{{}}, "null", ""},
		{"tounixtimestamp", []*Type{TimeuuidType}, [][]byte{hexb("550e8400e29b41d4a716446655440000")}, "",
			"Invalid value for argument 0 of function system.tounixtimestamp: Invalid version for TimeUUID type."},

		{"intasblob", []*Type{IntType}, [][]byte{EncodeInt(5)}, "00000005", ""},
		{"intasblob", []*Type{IntType}, [][]byte{nil}, "null", ""},
		{"blobasint", []*Type{BlobType}, [][]byte{hexb("00000005")}, "00000005", ""},
		{"blobasint", []*Type{BlobType}, [][]byte{{}}, "", ""},
		{"blobasint", []*Type{BlobType}, [][]byte{nil}, "null", ""},
		{"blobasint", []*Type{BlobType}, [][]byte{hexb("0102")}, "",
			"In call to function blobasint, value 0x0102 is not a valid binary representation for type int"},
		{"blobassmallint", []*Type{BlobType}, [][]byte{{}}, "",
			"In call to function blobassmallint, value 0x is not a valid binary representation for type smallint"},
		{"blobastext", []*Type{BlobType}, [][]byte{hexb("ff")}, "",
			"In call to function blobastext, value 0xff is not a valid binary representation for type text"},
		{"blobasvarchar", []*Type{BlobType}, [][]byte{hexb("ff")}, "ff", ""},
		{"blobasascii", []*Type{BlobType}, [][]byte{hexb("80")}, "",
			"In call to function blobasascii, value 0x80 is not a valid binary representation for type ascii"},
		{"blobastimeuuid", []*Type{BlobType}, [][]byte{hexb("550e8400e29b41d4a716446655440000")}, "",
			"In call to function blobastimeuuid, value 0x550e8400e29b41d4a716446655440000 is not a valid binary representation for type timeuuid"},
		{"blobastimeuuid", []*Type{BlobType}, [][]byte{tu}, hex.EncodeToString(tu), ""},
		{"blobasboolean", []*Type{BlobType}, [][]byte{{1}}, "01", ""},
		{"blobasduration", []*Type{BlobType}, [][]byte{EncodeDuration(1, 2, 3)}, hex.EncodeToString(EncodeDuration(1, 2, 3)), ""},
		{"blobasduration", []*Type{BlobType}, [][]byte{{2, 1, 0}}, "",
			"In call to function blobasduration, value 0x020100 is not a valid binary representation for type duration"},
		{"textasblob", []*Type{TextType}, [][]byte{[]byte("hé")}, "68c3a9", ""},
		{"varcharasblob", []*Type{TextType}, [][]byte{[]byte("a")}, "61", ""},
		{"asciiasblob", []*Type{AsciiType}, [][]byte{[]byte("a")}, "61", ""},
		{"timeuuidasblob", []*Type{TimeuuidType}, [][]byte{tu}, hex.EncodeToString(tu), ""},
		{"counterasblob", []*Type{CounterType}, [][]byte{EncodeBigint(7)}, "0000000000000007", ""},
		{"intasblob", []*Type{IntType}, [][]byte{{1}}, "",
			"Invalid value for argument 0 of function system.intasblob: Expected 4 or 0 byte int (1)"},
	}
	for _, tc := range tests {
		f := mustFunction(t, tc.name, tc.args...)
		got, err := f.Call(testEnv(), tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s(%x): got %x, %v; want error %q", f, tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s(%x): %v", f, tc.in, err)
			continue
		}
		h := hex.EncodeToString(got)
		if got == nil {
			h = "null"
		}
		if h != tc.want {
			t.Errorf("%s(%x) = %s, want %s", f, tc.in, h, tc.want)
		}
	}
}

func TestNowIsStrictlyIncreasing(t *testing.T) {
	clock := fixedNow
	env := &FunctionEnv{Now: func() time.Time { return clock }, ClockSeqAndNode: testNode}
	now := mustFunction(t, "now")
	cur := mustFunction(t, "currenttimeuuid")
	call := func(f *Function) string {
		v, err := f.Call(env, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(v)
	}
	want := []string{
		"53b81e107ca711eb92340123456789ab", // the clock's millisecond
		"53b81e1a7ca711eb92340123456789ab", // same millisecond: one microsecond later
		"53b81e247ca711eb92340123456789ab", // currenttimeuuid shares the generator
	}
	got := []string{call(now), call(now), call(cur)}
	clock = clock.Add(-time.Second) // a clock going backwards does not go back
	got = append(got, call(now))
	want = append(want, "53b81e2e7ca711eb92340123456789ab")
	clock = fixedNow.Add(time.Millisecond)
	got = append(got, call(now))
	want = append(want, "53b845207ca711eb92340123456789ab")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: got %s, want %s", i, got[i], want[i])
		}
	}
	for i := 1; i < len(got); i++ {
		if TimeuuidType.Compare(hexb(got[i-1]), hexb(got[i])) >= 0 {
			t.Errorf("call %d did not increase: %s then %s", i, got[i-1], got[i])
		}
	}
	if now.Pure || cur.Pure {
		t.Errorf("now() must not be pure")
	}
}

func TestNowPicksANode(t *testing.T) {
	env := &FunctionEnv{Now: fixedClock, Rand: rand.New(rand.NewPCG(3, 4))}
	v := env.NextTimeUUID()
	if err := TimeuuidType.Validate(v); err != nil {
		t.Fatal(err)
	}
	if v[8]&0xC0 != 0x80 {
		t.Errorf("variant bits of %x are not 10", v)
	}
	if v[10]&0x01 != 0x01 {
		t.Errorf("multicast bit of the node in %x is not set", v)
	}
	if w := env.NextTimeUUID(); !bytes.Equal(v[8:], w[8:]) {
		t.Errorf("clock sequence and node changed: %x then %x", v, w)
	}
	if ms, _ := TimeUUIDUnixMillis(v); ms != fixedNow.UnixMilli() {
		t.Errorf("timestamp %d, want %d", ms, fixedNow.UnixMilli())
	}
	var zero FunctionEnv // the zero value runs on the system clock and crypto randomness
	if err := TimeuuidType.Validate(zero.NextTimeUUID()); err != nil {
		t.Error(err)
	}
}

func TestUUIDFunction(t *testing.T) {
	f := mustFunction(t, "uuid")
	env := testEnv()
	a, err := f.Call(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Call(env, nil)
	if len(a) != 16 || a[6]>>4 != 4 || a[8]&0xC0 != 0x80 {
		t.Errorf("uuid() = %x, want a version 4 variant 1 uuid", a)
	}
	if bytes.Equal(a, b) {
		t.Errorf("uuid() repeated %x", a)
	}
	c, _ := f.Call(testEnv(), nil)
	if !bytes.Equal(a, c) {
		t.Errorf("uuid() with the same seed: %x then %x", a, c)
	}
	d, _ := f.Call(nil, nil)
	if len(d) != 16 || d[6]>>4 != 4 {
		t.Errorf("uuid() without env = %x", d)
	}
	if f.Pure {
		t.Errorf("uuid() must not be pure")
	}
}

func TestResolveFunction(t *testing.T) {
	col := func(typ *Type) FunctionArg { return TypedArg(typ, "c") }
	const todateSigs = "system.todate : (timeuuid) -> date, system.todate : (timestamp) -> date"
	tests := []struct {
		keyspace, name string
		args           []FunctionArg
		receiver       *Type
		want           string // the chosen signature
		err            string
	}{
		{"", "foo", nil, nil, "", "Unknown function foo called"},
		{"ks", "now", nil, nil, "", "Unknown function ks.now called"},
		{"system", "now", nil, nil, "system.now : () -> timeuuid", ""},
		{"", "now", []FunctionArg{col(IntType)}, nil, "", "Invalid number of arguments in call to function system.now: 0 required but 1 provided"},
		{"", "intasblob", []FunctionArg{col(IntType), col(IntType)}, nil, "",
			"Invalid number of arguments in call to function system.intasblob: 1 required but 2 provided"},
		{"", "intasblob", []FunctionArg{col(TextType)}, nil, "",
			"Type error: c cannot be passed as argument 0 of function system.intasblob of type int"},
		{"", "intasblob", []FunctionArg{LiteralArg(StringLiteral, "abc")}, nil, "",
			"Type error: 'abc' cannot be passed as argument 0 of function system.intasblob of type int"},
		{"", "intasblob", []FunctionArg{LiteralArg(IntegerLiteral, "5")}, nil, "system.intasblob : (int) -> blob", ""},
		{"", "bigintasblob", []FunctionArg{LiteralArg(IntegerLiteral, "5")}, nil, "system.bigintasblob : (bigint) -> blob", ""},
		{"", "intasblob", []FunctionArg{MarkerArg("?")}, nil, "system.intasblob : (int) -> blob", ""},
		{"", "intasblob", []FunctionArg{NullArg()}, nil, "system.intasblob : (int) -> blob", ""},
		{"", "counterasblob", []FunctionArg{NullArg()}, nil, "",
			"Type error: NULL cannot be passed as argument 0 of function system.counterasblob of type counter"},
		{"", "blobasint", []FunctionArg{col(IntType)}, nil, "system.blobasint : (blob) -> int", ""},
		{"", "blobastext", []FunctionArg{LiteralArg(StringLiteral, "x")}, nil, "",
			"Type error: 'x' cannot be passed as argument 0 of function system.blobastext of type blob"},
		{"", "blobastext", []FunctionArg{LiteralArg(HexLiteral, "0x61")}, nil, "system.blobastext : (blob) -> text", ""},
		{"", "textasblob", []FunctionArg{col(AsciiType)}, nil, "system.textasblob : (text) -> blob", ""},
		{"", "todate", []FunctionArg{col(TimestampType)}, nil, "system.todate : (timestamp) -> date", ""},
		{"", "todate", []FunctionArg{col(TimeuuidType)}, nil, "system.todate : (timeuuid) -> date", ""},
		{"", "todate", []FunctionArg{LiteralArg(StringLiteral, "2021-01-01")}, nil, "system.todate : (timestamp) -> date", ""},
		{"", "todate", []FunctionArg{col(BigintType)}, nil, "system.todate : (timestamp) -> date", ""},
		{"", "todate", []FunctionArg{MarkerArg("?")}, nil, "",
			"Ambiguous call to function todate (can be matched by following signatures: " + todateSigs + "): use type casts to disambiguate"},
		{"", "todate", []FunctionArg{MarkerArg(":d")}, DateType, "",
			"Ambiguous call to function todate (can be matched by following signatures: " + todateSigs + "): use type casts to disambiguate"},
		{"system", "todate", []FunctionArg{col(IntType)}, nil, "",
			"Invalid call to function system.todate, none of its type signatures match (known type signatures: " + todateSigs + ")"},
		{"", "todate", nil, nil, "",
			"Invalid call to function todate, none of its type signatures match (known type signatures: " + todateSigs + ")"},
		{"", "todate", []FunctionArg{MarkerArg("?")}, TextType, "",
			"Invalid call to function todate, none of its type signatures match (known type signatures: " + todateSigs + ")"},
		{"", "totimestamp", []FunctionArg{LiteralArg(IntegerLiteral, "5")}, nil, "system.totimestamp : (date) -> timestamp", ""},
		{"", "totimestamp", []FunctionArg{col(IntType)}, nil, "system.totimestamp : (date) -> timestamp", ""},
		{"", "tounixtimestamp", []FunctionArg{LiteralArg(IntegerLiteral, "5")}, nil, "",
			"Ambiguous call to function tounixtimestamp (can be matched by following signatures: " +
				"system.tounixtimestamp : (timestamp) -> bigint, system.tounixtimestamp : (date) -> bigint): use type casts to disambiguate"},
		{"", "tounixtimestamp", []FunctionArg{col(DateType)}, nil, "system.tounixtimestamp : (date) -> bigint", ""},
		{"", "tounixtimestamp", []FunctionArg{col(TimeuuidType)}, BigintType, "system.tounixtimestamp : (timeuuid) -> bigint", ""},
		{"", "mintimeuuid", []FunctionArg{LiteralArg(StringLiteral, "2021-01-01")}, nil, "system.mintimeuuid : (timestamp) -> timeuuid", ""},
		{"", "mintimeuuid", []FunctionArg{col(TimeuuidType)}, nil, "",
			"Type error: c cannot be passed as argument 0 of function system.mintimeuuid of type timestamp"},
	}
	for _, tc := range tests {
		f, err := ResolveFunction(tc.keyspace, tc.name, tc.args, tc.receiver)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s.%s%v: got %v, %v\nwant error %q", tc.keyspace, tc.name, tc.args, f, err, tc.err)
			}
			continue
		}
		if err != nil || f.String() != tc.want {
			t.Errorf("%s.%s%v: got %v, %v; want %s", tc.keyspace, tc.name, tc.args, f, err, tc.want)
		}
	}
}

func TestUnknownFunctionError(t *testing.T) {
	_, err := LookupFunction("nosuch", nil)
	ufe, ok := err.(*UnknownFunctionError)
	if !ok {
		t.Fatalf("got %T %v", err, err)
	}
	if got, want := ufe.SelectionMessage(), "Unknown function nosuch called in selection clause"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBlobConversionFunctionsCoverNativeTypes(t *testing.T) {
	for k := Ascii; k <= Varint; k++ {
		if k == Blob {
			continue
		}
		typ := Native(k)
		to := mustFunction(t, k.String()+"asblob", typ)
		from := mustFunction(t, "blobas"+k.String(), BlobType)
		if !to.Returns.Equal(BlobType) || !from.Returns.Equal(typ) || !to.Pure || !from.Pure {
			t.Errorf("%s / %s have the wrong shape", to, from)
		}
	}
	if f := mustFunction(t, "blobasvarchar", BlobType); !f.Returns.Equal(TextType) {
		t.Errorf("blobasvarchar returns %s", f.Returns)
	}
	if _, err := LookupFunction("blobasblob", []*Type{BlobType}); err == nil {
		t.Errorf("blobasblob exists; Cassandra has none")
	}
	// uuid, 5 clock functions, 11 time conversions, 7 floors, 5 math
	// functions of 9 types, 2 x 19 blob conversions, varchar's 2.
	if n := len(Functions()); n != 1+5+2+2+7+7+45+38+2 {
		t.Errorf("%d functions registered", n)
	}
}

func TestFunctionNames(t *testing.T) {
	f := mustFunction(t, "tounixtimestamp", DateType)
	if got, want := f.String(), "system.tounixtimestamp : (date) -> bigint"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := f.ArgName(0), "arg0(system.tounixtimestamp)"; got != want {
		t.Errorf("ArgName = %q, want %q", got, want)
	}
	if _, err := f.Call(nil, nil); err == nil ||
		err.Error() != "Invalid number of arguments in call to function system.tounixtimestamp: 1 required but 0 provided" {
		t.Errorf("Call with no arguments: %v", err)
	}
	// An argument's constant error names the argument as Cassandra does.
	g := mustFunction(t, "intasblob", IntType)
	_, err := g.Args[0].FromLiteral(IntegerLiteral, "x")
	if err == nil || err.Error() != "Unable to make int from 'x'" {
		t.Errorf("got %v", err)
	}
	_, err = g.Args[0].FromLiteral(StringLiteral, "x")
	if err = WithReceiver(err, g.ArgName(0)); err == nil ||
		err.Error() != `Invalid STRING constant (x) for "arg0(system.intasblob)" of type int` {
		t.Errorf("got %v", err)
	}
}
