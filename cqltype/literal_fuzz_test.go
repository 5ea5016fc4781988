package cqltype

import (
	"bytes"
	"errors"
	"testing"
)

var literalFuzzTypes = []*Type{
	AsciiType, BigintType, BlobType, BooleanType, CounterType, DateType, DecimalType, DoubleType,
	DurationType, FloatType, InetType, IntType, SmallintType, TextType, TimeType, TimestampType,
	TimeuuidType, TinyintType, UUIDType, VarintType, ListOf(IntType, true), CustomOf("a.B"),
}

// roundTrips lists the types whose Format output FromString reads back to
// the same bytes.
var roundTrips = map[Kind]bool{
	Bigint: true, Int: true, Smallint: true, Tinyint: true, Varint: true, Decimal: true,
	Boolean: true, Timestamp: true, Time: true, Duration: true,
}

func FuzzFromLiteral(f *testing.F) {
	seeds := []string{
		"", "0", "-1", "42", "3000000000", "1.5", "-2.5e-3", "NaN", "-Infinity", "0x1.8p1", "true",
		"550e8400-e29b-41d4-a716-446655440000", "53b81e10-7ca7-11eb-9234-0123456789ab", "0xcafe",
		"1h30m", "-P1D", "P0001-02-03T04:05:06", "P2W", "1y2mo3w4d5h6m7s8ms9us10ns", "1µs",
		"2021-03-04", "2021-03-04 05:06:07.123+0100", "2021-03-04T05:06 UTC", "2021-02-30 24:00",
		"+5881580-07-11", "08:12:54.123456789", " 8:1:2 ", "127.1", "::ffff:10.0.0.1", "[::1]",
		"now", "٣", "1e2147483648", "99999999999999999999h",
	}
	for i, s := range seeds {
		f.Add(byte(i), byte(i), s)
	}
	f.Fuzz(func(t *testing.T, which, kind byte, s string) {
		typ := literalFuzzTypes[int(which)%len(literalFuzzTypes)]
		k := LiteralKind(kind % 7)
		v, err := typ.fromLiteral(k, s, fixedClock)
		var ice *InvalidConstantError
		if assignable := typ.TestLiteral(k, s).IsAssignable(); assignable == errors.As(err, &ice) {
			t.Fatalf("%s %s %q: assignable=%v but error %v", typ, k, s, assignable, err)
		}
		if err == nil && len(v) > 0 {
			if verr := typ.Validate(v); verr != nil {
				t.Fatalf("%s %s %q: produced invalid %x: %v", typ, k, s, v, verr)
			}
		}
		v, err = typ.fromString(s, fixedClock)
		if err != nil || len(v) == 0 {
			return
		}
		if verr := typ.Validate(v); verr != nil {
			t.Fatalf("%s FromString(%q) produced invalid %x: %v", typ, s, v, verr)
		}
		if roundTrips[typ.Kind] {
			text := typ.Format(v)
			back, err := typ.fromString(text, fixedClock)
			if err != nil || !bytes.Equal(back, v) {
				t.Fatalf("%s: %q parsed to %x, formatted as %q, which parses to %x (%v)", typ, s, v, text, back, err)
			}
		}
	})
}
