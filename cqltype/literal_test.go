package cqltype

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

// fixedNow is the clock the literal and function tests use:
// 2021-03-04T05:06:07.089123456Z, Unix millis 1614834367089.
var fixedNow = time.Date(2021, 3, 4, 5, 6, 7, 89_123_456, time.UTC)

func fixedClock() time.Time { return fixedNow }

type literalCase struct {
	typ  *Type
	kind LiteralKind
	text string
	want string // hex of the value, when err is ""
	err  string // the exact message; for InvalidConstantError, with receiver "c"
}

// runLiteralCases checks FromLiteral (through the fixed clock) for each case.
func runLiteralCases(t *testing.T, cases []literalCase) {
	t.Helper()
	for _, c := range cases {
		got, err := c.typ.fromLiteral(c.kind, c.text, fixedClock)
		err = WithReceiver(err, "c")
		name := c.typ.String() + "/" + c.kind.String() + "/" + c.text
		if c.err != "" {
			if err == nil {
				t.Errorf("%s: got %x, want error %q", name, got, c.err)
			} else if err.Error() != c.err {
				t.Errorf("%s: error\n got %q\nwant %q", name, err.Error(), c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
			continue
		}
		if h := hex.EncodeToString(got); h != c.want {
			t.Errorf("%s: got %s, want %s", name, h, c.want)
		}
	}
}

func TestFromLiteralNumbers(t *testing.T) {
	runLiteralCases(t, []literalCase{
		{IntType, IntegerLiteral, "42", "0000002a", ""},
		{IntType, IntegerLiteral, "-2147483648", "80000000", ""},
		{IntType, IntegerLiteral, "2147483647", "7fffffff", ""},
		{IntType, IntegerLiteral, "3000000000", "", "Unable to make int from '3000000000'"},
		{IntType, IntegerLiteral, "-2147483649", "", "Unable to make int from '-2147483649'"},
		{TinyintType, IntegerLiteral, "127", "7f", ""},
		{TinyintType, IntegerLiteral, "-128", "80", ""},
		{TinyintType, IntegerLiteral, "128", "", "Unable to make byte from '128'"},
		{SmallintType, IntegerLiteral, "32767", "7fff", ""},
		{SmallintType, IntegerLiteral, "-32769", "", "Unable to make short from '-32769'"},
		{BigintType, IntegerLiteral, "9223372036854775807", "7fffffffffffffff", ""},
		{BigintType, IntegerLiteral, "-9223372036854775808", "8000000000000000", ""},
		{BigintType, IntegerLiteral, "9223372036854775808", "", "Unable to make long from '9223372036854775808'"},
		{CounterType, IntegerLiteral, "5", "0000000000000005", ""},
		{CounterType, IntegerLiteral, "-9223372036854775809", "", "Unable to make long from '-9223372036854775809'"},
		{VarintType, IntegerLiteral, "0", "00", ""},
		{VarintType, IntegerLiteral, "128", "0080", ""},
		{VarintType, IntegerLiteral, "-1", "ff", ""},
		{VarintType, IntegerLiteral, "-129", "ff7f", ""},
		{VarintType, IntegerLiteral, "18446744073709551616", "010000000000000000", ""},
		{DecimalType, IntegerLiteral, "5", "0000000005", ""},
		{DecimalType, IntegerLiteral, "-5", "00000000fb", ""},
		{FloatType, IntegerLiteral, "3", "40400000", ""},
		{DoubleType, IntegerLiteral, "3", "4008000000000000", ""},
		{TimestampType, IntegerLiteral, "1000", "00000000000003e8", ""},
		{TimestampType, IntegerLiteral, "-1", "ffffffffffffffff", ""},
		{TimestampType, IntegerLiteral, "9223372036854775808", "", "Unable to make long (for date) from: '9223372036854775808'"},
		{DateType, IntegerLiteral, "2147483648", "80000000", ""},
		{DateType, IntegerLiteral, "0", "00000000", ""},
		{DateType, IntegerLiteral, "4294967295", "ffffffff", ""},
		{DateType, IntegerLiteral, "4294967296", "", "Unable to make unsigned int (for date) from: '4294967296'"},
		{DateType, IntegerLiteral, "-1", "", "Unable to make unsigned int (for date) from: '-1'"},
		{TimeType, IntegerLiteral, "0", "0000000000000000", ""},
		{TimeType, IntegerLiteral, "86399999999999", "00004e94914effff", ""},
		{TimeType, IntegerLiteral, "86400000000000", "", "Unable to make long (for time) from: '86400000000000'"},
		{TimeType, IntegerLiteral, "-1", "", "Unable to make long (for time) from: '-1'"},
		{DurationType, IntegerLiteral, "5", "", "Unable to convert '5' to a duration"},
		{DurationType, IntegerLiteral, "-5", "", "Unable to convert '5' to a duration"},
		{TextType, IntegerLiteral, "5", "", `Invalid INTEGER constant (5) for "c" of type text`},
		{AsciiType, IntegerLiteral, "5", "", `Invalid INTEGER constant (5) for "c" of type ascii`},
		{BooleanType, IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type boolean`},
		{BlobType, IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type blob`},
		{UUIDType, IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type uuid`},
		{TimeuuidType, IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type timeuuid`},
		{InetType, IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type inet`},

		{FloatType, FloatLiteral, "1.5", "3fc00000", ""},
		{DoubleType, FloatLiteral, "1.5", "3ff8000000000000", ""},
		{DoubleType, FloatLiteral, "-2.5e-3", "bf647ae147ae147b", ""},
		{FloatType, FloatLiteral, "NaN", "7fc00000", ""},
		{DoubleType, FloatLiteral, "NaN", "7ff8000000000000", ""},
		{DoubleType, FloatLiteral, "Infinity", "7ff0000000000000", ""},
		{FloatType, FloatLiteral, "-Infinity", "ff800000", ""},
		{FloatType, FloatLiteral, "1e39", "7f800000", ""},
		{DoubleType, FloatLiteral, "1e-400", "0000000000000000", ""},
		{DecimalType, FloatLiteral, "1.50", "000000020096", ""},
		{DecimalType, FloatLiteral, "-1.5e3", "fffffffef1", ""},
		{DecimalType, FloatLiteral, "1E+3", "fffffffd01", ""},
		{DecimalType, FloatLiteral, "0.000", "0000000300", ""},
		{DecimalType, FloatLiteral, "NaN", "", "unable to make BigDecimal from 'NaN'"},
		{DecimalType, FloatLiteral, "Infinity", "", "unable to make BigDecimal from 'Infinity'"},
		{IntType, FloatLiteral, "1.5", "", `Invalid FLOAT constant (1.5) for "c" of type int`},
		{BigintType, FloatLiteral, "1.0", "", `Invalid FLOAT constant (1.0) for "c" of type bigint`},
		{VarintType, FloatLiteral, "1.0", "", `Invalid FLOAT constant (1.0) for "c" of type varint`},
		{TimestampType, FloatLiteral, "1.0", "", `Invalid FLOAT constant (1.0) for "c" of type timestamp`},
		{TextType, FloatLiteral, "NaN", "", `Invalid FLOAT constant (NaN) for "c" of type text`},
	})
}

func TestFromLiteralOtherKinds(t *testing.T) {
	udt := UDTOf("ks", "addr", []string{"street"}, []*Type{TextType}, false)
	runLiteralCases(t, []literalCase{
		{BooleanType, BooleanLiteral, "true", "01", ""},
		{BooleanType, BooleanLiteral, "false", "00", ""},
		{BooleanType, BooleanLiteral, "TRUE", "01", ""},
		{TextType, BooleanLiteral, "true", "", `Invalid BOOLEAN constant (true) for "c" of type text`},
		{IntType, BooleanLiteral, "true", "", `Invalid BOOLEAN constant (true) for "c" of type int`},

		{UUIDType, UUIDLiteral, "550e8400-e29b-41d4-a716-446655440000", "550e8400e29b41d4a716446655440000", ""},
		{UUIDType, UUIDLiteral, "53b81e10-7ca7-11eb-9234-0123456789ab", "53b81e107ca711eb92340123456789ab", ""},
		{TimeuuidType, UUIDLiteral, "53b81e10-7ca7-11eb-9234-0123456789ab", "53b81e107ca711eb92340123456789ab", ""},
		{TimeuuidType, UUIDLiteral, "550e8400-e29b-41d4-a716-446655440000", "", "TimeUUID supports only version 1 UUIDs"},
		{BlobType, UUIDLiteral, "550e8400-e29b-41d4-a716-446655440000", "",
			`Invalid UUID constant (550e8400-e29b-41d4-a716-446655440000) for "c" of type blob`},
		{TextType, UUIDLiteral, "550e8400-e29b-41d4-a716-446655440000", "",
			`Invalid UUID constant (550e8400-e29b-41d4-a716-446655440000) for "c" of type text`},

		{BlobType, HexLiteral, "0xcafe", "cafe", ""},
		{BlobType, HexLiteral, "0XCAFE", "cafe", ""},
		{BlobType, HexLiteral, "0x", "", ""},
		{BlobType, HexLiteral, "0xabc", "", "cannot parse 'abc' as hex bytes"},
		{BlobType, HexLiteral, "0xzz", "", "cannot parse 'zz' as hex bytes"},
		{CustomOf("org.example.MyType"), HexLiteral, "0x0102", "0102", ""},
		{CustomOf("org.example.MyType"), IntegerLiteral, "1", "", "Unable to parse '1' as a value of custom type 'org.example.MyType'"},
		{IntType, HexLiteral, "0x01", "", `Invalid HEX constant (0x01) for "c" of type int`},
		{TextType, HexLiteral, "0x01", "", `Invalid HEX constant (0x01) for "c" of type text`},
		{UUIDType, HexLiteral, "0x01", "", `Invalid HEX constant (0x01) for "c" of type uuid`},

		{DurationType, DurationLiteral, "1h30m", hex.EncodeToString(EncodeDuration(0, 0, 5_400_000_000_000)), ""},
		{DurationType, DurationLiteral, "-P1D", hex.EncodeToString(EncodeDuration(0, -1, 0)), ""},
		{DurationType, DurationLiteral, "P1Y2M", hex.EncodeToString(EncodeDuration(14, 0, 0)), ""},
		{DurationType, DurationLiteral, "1d1y", "", "Invalid duration. The days should be after years"},
		{TextType, DurationLiteral, "1h", "", `Invalid DURATION constant (1h) for "c" of type text`},
		{TimestampType, DurationLiteral, "1h", "", `Invalid DURATION constant (1h) for "c" of type timestamp`},

		{TextType, StringLiteral, "héllo", "68c3a96c6c6f", ""},
		{TextType, StringLiteral, "", "", ""},
		{AsciiType, StringLiteral, "abc", "616263", ""},
		{AsciiType, StringLiteral, "é", "", "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1"},
		{AsciiType, StringLiteral, "a😀", "", "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 2"},
		{IntType, StringLiteral, "42", "", `Invalid STRING constant (42) for "c" of type int`},
		{BigintType, StringLiteral, "42", "", `Invalid STRING constant (42) for "c" of type bigint`},
		{CounterType, StringLiteral, "42", "", `Invalid STRING constant (42) for "c" of type counter`},
		{VarintType, StringLiteral, "42", "", `Invalid STRING constant (42) for "c" of type varint`},
		{DecimalType, StringLiteral, "4.2", "", `Invalid STRING constant (4.2) for "c" of type decimal`},
		{DoubleType, StringLiteral, "4.2", "", `Invalid STRING constant (4.2) for "c" of type double`},
		{UUIDType, StringLiteral, "550e8400-e29b-41d4-a716-446655440000", "",
			`Invalid STRING constant (550e8400-e29b-41d4-a716-446655440000) for "c" of type uuid`},
		{BlobType, StringLiteral, "cafe", "", `Invalid STRING constant (cafe) for "c" of type blob`},
		{BooleanType, StringLiteral, "true", "", `Invalid STRING constant (true) for "c" of type boolean`},
		{DurationType, StringLiteral, "1h", "", `Invalid STRING constant (1h) for "c" of type duration`},
		{ListOf(IntType, false), StringLiteral, "x", "", `Invalid STRING constant (x) for "c" of type list<int>`},
		{ListOf(IntType, true), IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type frozen<list<int>>`},
		{TupleOf(IntType, TextType), IntegerLiteral, "1", "", `Invalid INTEGER constant (1) for "c" of type frozen<tuple<int, text>>`},
		{udt, StringLiteral, "x", "", `Invalid STRING constant (x) for "c" of type addr`},

		{InetType, StringLiteral, "127.0.0.1", "7f000001", ""},
		{InetType, StringLiteral, "::1", "00000000000000000000000000000001", ""},
		{InetType, StringLiteral, "[::1]", "00000000000000000000000000000001", ""},
		{InetType, StringLiteral, "2001:db8::ff00:42:8329", "20010db8000000000000ff0000428329", ""},
		{InetType, StringLiteral, "::ffff:10.0.0.1", "0a000001", ""},
		{InetType, StringLiteral, "fe80::1%eth0", "fe800000000000000000000000000001", ""},
		{InetType, StringLiteral, "127.1", "7f000001", ""},
		{InetType, StringLiteral, "10.65536", "0a010000", ""},
		{InetType, StringLiteral, "", "", ""},
		{InetType, StringLiteral, "1.2.3.256", "", "Unable to make inet address from '1.2.3.256'"},
		{InetType, StringLiteral, "localhost", "", "Unable to make inet address from 'localhost'"},
		{InetType, StringLiteral, "1.2.3.4.5", "", "Unable to make inet address from '1.2.3.4.5'"},
	})
}

func TestFromLiteralTemporal(t *testing.T) {
	runLiteralCases(t, []literalCase{
		{DateType, StringLiteral, "2021-03-04", "80004902", ""},
		{DateType, StringLiteral, "1970-01-01", "80000000", ""},
		{DateType, StringLiteral, "1969-12-31", "7fffffff", ""},
		{DateType, StringLiteral, "2147483648", "80000000", ""},
		{DateType, StringLiteral, "+5881580-07-11", "ffffffff", ""},
		{DateType, StringLiteral, "-5877641-06-23", "00000000", ""},
		{DateType, StringLiteral, "+5881580-07-12", "", "Input date +5881580-07-12 is greater than max supported date +5881580-07-11T00:00Z"},
		{DateType, StringLiteral, "-5877641-06-22", "", "Input date -5877641-06-22 is less than min supported date -5877641-06-23T00:00Z"},
		{DateType, StringLiteral, "+999999999-12-31", "", "Unable to coerce '+999999999-12-31' to a formatted date (long)"},
		{DateType, StringLiteral, "2021-02-30", "", "Unable to coerce '2021-02-30' to a formatted date (long)"},
		{DateType, StringLiteral, "2020-02-29", "80004791", ""},
		{DateType, StringLiteral, "2021-2-3", "", "Unable to coerce '2021-2-3' to a formatted date (long)"},
		{DateType, StringLiteral, "12021-02-03", "", "Unable to coerce '12021-02-03' to a formatted date (long)"},
		{DateType, StringLiteral, "2021-03-04T00:00", "", "Unable to coerce '2021-03-04T00:00' to a formatted date (long)"},
		{DateType, StringLiteral, "", "", "Unable to coerce '' to a formatted date (long)"},

		{TimeType, StringLiteral, "08:12:54", "00001ae5bbc3bc00", ""},
		{TimeType, StringLiteral, "08:12:54.123", hex.EncodeToString(EncodeTime(29574123000000)), ""},
		{TimeType, StringLiteral, "08:12:54.123456789", hex.EncodeToString(EncodeTime(29574123456789)), ""},
		{TimeType, StringLiteral, " 8:12:54 ", "00001ae5bbc3bc00", ""},
		{TimeType, StringLiteral, "+8:12:54", "00001ae5bbc3bc00", ""},
		{TimeType, StringLiteral, "23:59:59.999999999", "00004e94914effff", ""},
		{TimeType, StringLiteral, "29574000000000", "00001ae5bbc3bc00", ""},
		{TimeType, StringLiteral, "08:12:54.1234567890", "", "(TimeType) Unable to coerce '08:12:54.1234567890' to a formatted time (long)"},
		{TimeType, StringLiteral, "24:00:00", "", "(TimeType) Unable to coerce '24:00:00' to a formatted time (long)"},
		{TimeType, StringLiteral, "08:60:00", "", "(TimeType) Unable to coerce '08:60:00' to a formatted time (long)"},
		{TimeType, StringLiteral, "08:12", "", "(TimeType) Unable to coerce '08:12' to a formatted time (long)"},
		{TimeType, StringLiteral, "08:12:54.", "", "(TimeType) Unable to coerce '08:12:54.' to a formatted time (long)"},
		{TimeType, StringLiteral, "08:12:54.x", "", "(TimeType) Unable to coerce '08:12:54.x' to a formatted time (long)"},
		{TimeType, StringLiteral, "", "", "(TimeType) Unable to coerce '' to a formatted time (long)"},

		{TimestampType, StringLiteral, "2021-03-04 05:06:07", "00000177fba0fa18", ""},
		{TimestampType, StringLiteral, "2021-03-04T05:06:07", "00000177fba0fa18", ""},
		{TimestampType, StringLiteral, "2021-3-4 5:6:7", "00000177fba0fa18", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07.123", "00000177fba0fa93", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07.123456789", "00000177fba0fa93", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07.1", hex.EncodeToString(EncodeTimestamp(1614834367100)), ""},
		{TimestampType, StringLiteral, "2021-03-04T05:06:07.123Z", "00000177fba0fa93", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07+0100", "00000177fb6a0b98", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07+01", "00000177fb6a0b98", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07+01:00", "00000177fb6a0b98", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 +0100", "00000177fb6a0b98", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 +01:00", "00000177fb6a0b98", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 GMT+01:00", "00000177fb6a0b98", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07-0530", "00000177fccf19d8", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 UTC", "00000177fba0fa18", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 Z", "00000177fba0fa18", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07Z", "00000177fba0fa18", ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06", "00000177fba0dec0", ""},
		{TimestampType, StringLiteral, "2021-03-04", "00000177fa88b800", ""},
		{TimestampType, StringLiteral, "2021-03-04+0100", "00000177fa51c980", ""},
		{TimestampType, StringLiteral, "2021-03-04 +01:00", "00000177fa51c980", ""},
		{TimestampType, StringLiteral, "2021-02-30 00:00", "00000177e5ef4800", ""},
		{TimestampType, StringLiteral, "2021-03-04 24:00", "00000177ffaf1400", ""},
		{TimestampType, StringLiteral, "0001-01-01", "ffffc77cedd32800", ""},
		{TimestampType, StringLiteral, "0000-01-01", "ffffc77590fba000", ""},
		{TimestampType, StringLiteral, "1969-12-31 23:59:59.999", "ffffffffffffffff", ""},
		{TimestampType, StringLiteral, "1614834367089", "00000177fba0fa71", ""},
		{TimestampType, StringLiteral, "now", "00000177fba0fa71", ""},
		{TimestampType, StringLiteral, "NoW", "00000177fba0fa71", ""},
		{TimestampType, StringLiteral, "", "", ""},
		{TimestampType, StringLiteral, "99999999999999999999", "", "Unable to make long (for date) from: '99999999999999999999'"},
		{TimestampType, StringLiteral, "2021-03-04 05:06.5", "", "Unable to parse a date/time from '2021-03-04 05:06.5'"},
		{TimestampType, StringLiteral, "2021-13-01 00:00", "", "Unable to parse a date/time from '2021-13-01 00:00'"},
		{TimestampType, StringLiteral, "2021-03-04 25:00", "", "Unable to parse a date/time from '2021-03-04 25:00'"},
		{TimestampType, StringLiteral, "2021-03-04 05:06:60", "", "Unable to parse a date/time from '2021-03-04 05:06:60'"},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07+19:00", "", "Unable to parse a date/time from '2021-03-04 05:06:07+19:00'"},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07UTC", "", "Unable to parse a date/time from '2021-03-04 05:06:07UTC'"},
		{TimestampType, StringLiteral, "0000-01-01 00:00", "", "Unable to parse a date/time from '0000-01-01 00:00'"},
		{TimestampType, StringLiteral, "+1", "", "Unable to parse a date/time from '+1'"},
		{TimestampType, StringLiteral, "garbage", "", "Unable to parse a date/time from 'garbage'"},
	})
}

func TestFromLiteralNamedZone(t *testing.T) {
	if _, err := time.LoadLocation("America/New_York"); err != nil {
		t.Skip("no time zone database:", err)
	}
	runLiteralCases(t, []literalCase{
		// EST, five hours behind UTC, in March before the switch.
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 America/New_York", hex.EncodeToString(EncodeTimestamp(1614834367000 + 5*3600_000)), ""},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 Nowhere/Atlantis", "", "Unable to parse a date/time from '2021-03-04 05:06:07 Nowhere/Atlantis'"},
		{TimestampType, StringLiteral, "2021-03-04 05:06:07 Local", "", "Unable to parse a date/time from '2021-03-04 05:06:07 Local'"},
	})
}

func TestFromString(t *testing.T) {
	tests := []struct {
		typ  *Type
		text string
		want string
		err  string
	}{
		{BooleanType, "", "00", ""},
		{BooleanType, "False", "00", ""},
		{BooleanType, "yes", "", "Unable to make boolean from 'yes'"},
		{IntType, "", "", ""},
		{IntType, "+5", "00000005", ""},
		{IntType, "\u0663", "00000003", ""}, // ARABIC-INDIC DIGIT THREE, as Character.digit reads it
		{IntType, " 5", "", "Unable to make int from ' 5'"},
		{IntType, "-", "", "Unable to make int from '-'"},
		{SmallintType, "", "", ""},
		{VarintType, "+5", "05", ""},
		{VarintType, "", "", ""},
		{VarintType, "abc", "", "unable to make int from 'abc'"},
		{DecimalType, ".5", "0000000105", ""},
		{DecimalType, "1.", "0000000001", ""},
		{DecimalType, "", "", ""},
		{DecimalType, "1e2147483648", "", "unable to make BigDecimal from '1e2147483648'"},
		{DecimalType, "1.2.3", "", "unable to make BigDecimal from '1.2.3'"},
		{DoubleType, "1.5f", "3ff8000000000000", ""},
		{DoubleType, " 2.5\t", "4004000000000000", ""},
		{DoubleType, "0x1.8p1", "4008000000000000", ""},
		{DoubleType, "-NaN", "7ff8000000000000", ""},
		{DoubleType, "inf", "", "Unable to make double from 'inf'"},
		{DoubleType, "1_000", "", "Unable to make double from '1_000'"},
		{FloatType, "1e", "", "Unable to make float from '1e'"},
		{BlobType, "CAFE", "cafe", ""},
		{BlobType, "", "", ""},
		{UUIDType, "", "", ""},
		{UUIDType, "not-a-uuid", "", "Unable to make UUID from 'not-a-uuid'"},
		{TimeuuidType, "x", "", "Unknown timeuuid representation: x"},
		{TimeuuidType, "", "", ""},
		{CounterType, "7", "0000000000000007", ""},
		{DurationType, "", "", ""},
		{TextType, "a\xffb", "61efbfbd62", ""},
		{ListOf(IntType, false), "[1]", "", "Unable to parse '[1]' as a value of type list<int>: only native types have a text form"},
	}
	for _, tc := range tests {
		got, err := tc.typ.FromString(tc.text)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %q: got %x, %v; want error %q", tc.typ, tc.text, got, err, tc.err)
			}
			continue
		}
		if err != nil || hex.EncodeToString(got) != tc.want {
			t.Errorf("%s %q: got %x, %v; want %s", tc.typ, tc.text, got, err, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in     string
		months int32
		days   int32
		nanos  int64
		err    string
	}{
		{"1y2mo3w4d5h6m7s8ms9us10ns", 14, 25, 18_367_008_009_010, ""},
		{"12h30m", 0, 0, 45_000_000_000_000, ""},
		{"1µs", 0, 0, 1000, ""},
		{"1US", 0, 0, 1000, ""},
		{"5MS", 0, 0, 5_000_000, ""},
		{"5M", 0, 0, 300_000_000_000, ""},
		{"5Mo", 5, 0, 0, ""},
		{"2W", 0, 14, 0, ""},
		{"-1h", 0, 0, -3_600_000_000_000, ""},
		{"P1Y2M3DT4H5M6S", 14, 3, 14_706_000_000_000, ""},
		{"PT1M", 0, 0, 60_000_000_000, ""},
		{"P2W", 0, 14, 0, ""},
		{"-P2W", 0, -14, 0, ""},
		{"P0001-02-03T04:05:06", 14, 3, 14_706_000_000_000, ""},
		{"P", 0, 0, 0, ""},
		{"PT", 0, 0, 0, ""},
		{"-P1D", 0, -1, 0, ""},
		{"178956970y7mo", 2147483647, 0, 0, ""},
		{"1d1y", 0, 0, 0, "Invalid duration. The days should be after years"},
		{"1h1h", 0, 0, 0, "Invalid duration. The hours are specified multiple times"},
		{"1s1m", 0, 0, 0, "Invalid duration. The seconds should be after minutes"},
		{"1x", 0, 0, 0, "Unable to convert '1x' to a duration"},
		{"-abc", 0, 0, 0, "Unable to convert 'abc' to a duration"},
		{"", 0, 0, 0, "Unable to convert '' to a duration"},
		{"1h 30m", 0, 0, 0, "Unable to convert '1h 30m' to a duration"},
		{"P1Y-2M", 0, 0, 0, "Unable to convert 'P1Y-2M' to a duration"},
		{"P1H", 0, 0, 0, "Unable to convert 'P1H' to a duration"},
		{"PW", 0, 0, 0, "Unable to convert 'PW' to a duration"},
		{"P001-02-03T04:05:06", 0, 0, 0, "Unable to convert 'P001-02-03T04:05:06' to a duration"},
		{"2147483648mo", 0, 0, 0, "Invalid duration. The total number of months must be less or equal to 2147483647"},
		{"178956971y", 0, 0, 0, "Invalid duration. The total number of months must be less or equal to 2147483647"},
		{"306783379w", 0, 0, 0, "Invalid duration. The total number of days must be less or equal to 2147483647"},
		{"2562048h", 0, 0, 0, "Invalid duration. The total number of nanoseconds must be less or equal to 2147483647"},
		{"99999999999999999999h", 0, 0, 0, `java.lang.NumberFormatException: For input string: "99999999999999999999"`},
	}
	for _, tc := range tests {
		m, d, ns, err := ParseDuration(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: got %d %d %d, %v; want error %q", tc.in, m, d, ns, err, tc.err)
			}
			continue
		}
		if err != nil || m != tc.months || d != tc.days || ns != tc.nanos {
			t.Errorf("%q: got %d %d %d, %v; want %d %d %d", tc.in, m, d, ns, err, tc.months, tc.days, tc.nanos)
		}
	}
}

func TestTestLiteral(t *testing.T) {
	tests := []struct {
		typ  *Type
		kind LiteralKind
		text string
		want Assignability
	}{
		{IntType, IntegerLiteral, "5", ExactMatch},
		{BigintType, IntegerLiteral, "5", WeaklyAssignable},
		{BigintType, IntegerLiteral, "3000000000", ExactMatch},
		{VarintType, IntegerLiteral, "99999999999999999999", ExactMatch},
		{IntType, IntegerLiteral, "99999999999999999999", WeaklyAssignable},
		{DoubleType, FloatLiteral, "1.5", ExactMatch},
		{DoubleType, FloatLiteral, "0.1", ExactMatch},
		{DecimalType, FloatLiteral, "1.5", WeaklyAssignable},
		{DecimalType, FloatLiteral, "3.141592653589793238", ExactMatch},
		{DoubleType, FloatLiteral, "NaN", ExactMatch},
		{AsciiType, StringLiteral, "abc", ExactMatch},
		{TextType, StringLiteral, "abc", WeaklyAssignable},
		{TextType, StringLiteral, "é", ExactMatch},
		{AsciiType, StringLiteral, "é", WeaklyAssignable},
		{CustomOf("a.B"), StringLiteral, "x", WeaklyAssignable},
		{ListOf(IntType, true), IntegerLiteral, "1", NotAssignable},
		{UUIDType, UUIDLiteral, "550e8400-e29b-41d4-a716-446655440000", WeaklyAssignable},
		{TimestampType, StringLiteral, "2021-01-01", WeaklyAssignable},
		{TimeuuidType, StringLiteral, "2021-01-01", NotAssignable},
	}
	for _, tc := range tests {
		if got := tc.typ.TestLiteral(tc.kind, tc.text); got != tc.want {
			t.Errorf("%s %s %q: got %s, want %s", tc.typ, tc.kind, tc.text, got, tc.want)
		}
	}
}

func TestTestAssignment(t *testing.T) {
	tests := []struct {
		from, to *Type
		want     Assignability
	}{
		{IntType, IntType, ExactMatch},
		{AsciiType, TextType, WeaklyAssignable},
		{TextType, AsciiType, NotAssignable},
		{IntType, VarintType, WeaklyAssignable},
		{IntType, BigintType, NotAssignable},
		{BigintType, TimestampType, WeaklyAssignable},
		{TimestampType, BigintType, WeaklyAssignable},
		{IntType, DateType, WeaklyAssignable},
		{BigintType, TimeType, WeaklyAssignable},
		{TimeuuidType, UUIDType, WeaklyAssignable},
		{UUIDType, TimeuuidType, NotAssignable},
		{ListOf(IntType, false), BlobType, WeaklyAssignable},
		{ListOf(IntType, true), ListOf(IntType, false), ExactMatch},
	}
	for _, tc := range tests {
		if got := tc.from.TestAssignment(tc.to); got != tc.want {
			t.Errorf("%s -> %s: got %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestInvalidConstantError(t *testing.T) {
	_, err := IntType.FromLiteral(StringLiteral, "x")
	var ice *InvalidConstantError
	if !errors.As(err, &ice) {
		t.Fatalf("got %T %v, want *InvalidConstantError", err, err)
	}
	if got, want := err.Error(), "Invalid STRING constant (x) of type int"; got != want {
		t.Errorf("without receiver: got %q, want %q", got, want)
	}
	if got, want := ice.For("k").Error(), `Invalid STRING constant (x) for "k" of type int`; got != want {
		t.Errorf("For: got %q, want %q", got, want)
	}
	if ice.Receiver != "" {
		t.Errorf("For modified the original error")
	}
	other := errors.New("boom")
	if WithReceiver(other, "k") != other || WithReceiver(nil, "k") != nil {
		t.Errorf("WithReceiver changed an unrelated error")
	}
}

func TestCivilDays(t *testing.T) {
	for _, y := range []int64{-5877641, -1, 0, 1, 1582, 1969, 1970, 2000, 2024, 5881580} {
		for _, m := range []int64{1, 2, 12} {
			d := daysFromCivil(y, m, 1)
			want := time.Date(int(y), time.Month(m), 1, 0, 0, 0, 0, time.UTC).Unix() / 86400
			if d != want {
				t.Errorf("daysFromCivil(%d, %d, 1) = %d, want %d", y, m, d, want)
			}
			if gy, gm, gd := civilFromDays(d); gy != y || gm != m || gd != 1 {
				t.Errorf("civilFromDays(%d) = %d-%d-%d", d, gy, gm, gd)
			}
		}
	}
}
