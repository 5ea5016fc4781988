package cqltype

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Text forms of timestamp, date, time and duration values, following the
// Java parsers Cassandra 4.1 uses (TimestampSerializer's java.time patterns,
// SimpleDateSerializer, TimeSerializer, cql3.Duration). The java.time
// patterns are reimplemented as small scanners rather than a pattern engine:
// the behaviour that matters is which strings are accepted and what instant
// they mean, including java.time's SMART resolution (2021-02-30 is the last
// day of February, 24:00 is midnight of the next day).

const (
	millisPerDay   = 86_400_000
	nanosPerDay    = 86_400_000_000_000
	nanosPerSecond = 1_000_000_000
)

// isRawInteger matches Cassandra's ^-?\d+$ (Java's \d is ASCII only).
func isRawInteger(s string) bool {
	if strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func monthLength(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the day number (0 is 1970-01-01) of a proleptic
// Gregorian date; it is exact for every year java.time can represent.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays inverts daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// javaLocalDate formats a day number as java.time.LocalDate.toString does:
// at least four year digits, a '+' before years past 9999.
func javaLocalDate(days int64) string {
	y, m, d := civilFromDays(days)
	var ys string
	switch {
	case y < 0 && y > -1000:
		ys = fmt.Sprintf("-%04d", -y)
	case y >= 0 && y < 1000:
		ys = fmt.Sprintf("%04d", y)
	case y > 9999:
		ys = "+" + strconv.FormatInt(y, 10)
	default:
		ys = strconv.FormatInt(y, 10)
	}
	return fmt.Sprintf("%s-%02d-%02d", ys, m, d)
}

// textScanner walks a date/time string.
type textScanner struct {
	s string
	i int
}

func (p *textScanner) done() bool { return p.i == len(p.s) }

func (p *textScanner) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *textScanner) lit(c byte) bool {
	if p.peek() == c && p.i < len(p.s) {
		p.i++
		return true
	}
	return false
}

func (p *textScanner) digitsAhead() int {
	n := 0
	for p.i+n < len(p.s) && p.s[p.i+n] >= '0' && p.s[p.i+n] <= '9' {
		n++
	}
	return n
}

// num reads between min and max ASCII digits, greedily, as java.time's
// number parsers do. Values past 18 digits are refused: no field accepts
// them anyway.
func (p *textScanner) num(lo, hi int) (int64, bool) {
	n := min(p.digitsAhead(), hi)
	if n < lo || n > 18 {
		return 0, false
	}
	v, err := strconv.ParseInt(p.s[p.i:p.i+n], 10, 64)
	if err != nil {
		return 0, false
	}
	p.i += n
	return v, true
}

// zoneSpec is a parsed zone: none (local, which is UTC here), a fixed
// offset, or a region.
type zoneSpec struct {
	local  bool
	offset int64 // seconds east of UTC
	loc    *time.Location
}

// localDateTime is the fields a timestamp pattern produced.
type localDateTime struct {
	year, month, day      int64
	hour, minute, second  int64
	millis                int64
	hasSecond, hasFrac    bool
	yearOfEra, smartClamp bool
}

// parseTimestampString is TimestampSerializer.dateStringToTimestamp.
func parseTimestampString(s string, now func() time.Time) (int64, error) {
	if strings.EqualFold(s, "now") {
		return now().UnixMilli(), nil
	}
	if isRawInteger(s) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Unable to make long (for date) from: '%s'", s)
		}
		return v, nil
	}
	for _, try := range []func(string) (localDateTime, zoneSpec, bool){parseDateTimeForm, parseDateZoneForm, parseISODateForm} {
		ldt, zone, ok := try(s)
		if !ok {
			continue
		}
		if ms, ok := ldt.instant(zone); ok {
			return ms, nil
		}
	}
	return 0, fmt.Errorf("Unable to parse a date/time from '%s'", s)
}

// parseDateTimeForm reads y-M-d'T'H:m[:s][.f] and y-M-d H:m[:s][.f], each
// field one or more digits, then an optional zone.
func parseDateTimeForm(s string) (localDateTime, zoneSpec, bool) {
	p := &textScanner{s: s}
	var t localDateTime
	var ok bool
	t.yearOfEra, t.smartClamp = true, true
	if t.year, ok = p.num(1, 19); !ok || !p.lit('-') {
		return t, zoneSpec{}, false
	}
	if t.month, ok = p.num(1, 19); !ok || !p.lit('-') {
		return t, zoneSpec{}, false
	}
	if t.day, ok = p.num(1, 19); !ok {
		return t, zoneSpec{}, false
	}
	if !p.lit('T') && !p.lit(' ') {
		return t, zoneSpec{}, false
	}
	if t.hour, ok = p.num(1, 19); !ok || !p.lit(':') {
		return t, zoneSpec{}, false
	}
	if t.minute, ok = p.num(1, 19); !ok {
		return t, zoneSpec{}, false
	}
	// The optional [:s] section rolls back when it does not match whole.
	if p.peek() == ':' && p.i+1 < len(s) && s[p.i+1] >= '0' && s[p.i+1] <= '9' {
		p.i++
		if t.second, ok = p.num(1, 19); !ok {
			return t, zoneSpec{}, false
		}
		t.hasSecond = true
	}
	if p.lit('.') {
		n := min(p.digitsAhead(), 9)
		frac := s[p.i:p.i+n] + "000"
		t.millis, _ = strconv.ParseInt(frac[:3], 10, 64)
		p.i += n
		t.hasFrac = true
	}
	zone, ok := parseZoneSuffix(s[p.i:], true)
	return t, zone, ok
}

// parseDateZoneForm reads yyyy-MM-dd followed by a zone (required): the
// year has four digits, or more behind a '+'.
func parseDateZoneForm(s string) (localDateTime, zoneSpec, bool) {
	p := &textScanner{s: s}
	var t localDateTime
	t.yearOfEra, t.smartClamp = true, true
	if p.lit('+') {
		if p.digitsAhead() <= 4 {
			return t, zoneSpec{}, false
		}
	} else if p.digitsAhead() != 4 {
		return t, zoneSpec{}, false
	}
	var ok bool
	if t.year, ok = p.num(4, 19); !ok || !p.lit('-') {
		return t, zoneSpec{}, false
	}
	if t.month, ok = p.num(2, 2); !ok || !p.lit('-') {
		return t, zoneSpec{}, false
	}
	if t.day, ok = p.num(2, 2); !ok {
		return t, zoneSpec{}, false
	}
	rest := s[p.i:]
	if rest == "" {
		return t, zoneSpec{}, false
	}
	zone, ok := parseZoneSuffix(rest, false)
	return t, zone, ok
}

// parseISODateForm is DateTimeFormatter.ISO_DATE: a signed proleptic year
// (four to ten digits, '+' required past four), month, day and an optional
// +HH:MM[:ss] or Z offset.
func parseISODateForm(s string) (localDateTime, zoneSpec, bool) {
	p := &textScanner{s: s}
	var t localDateTime
	t.smartClamp = true
	y, ok := parseISOYear(p)
	if !ok {
		return t, zoneSpec{}, false
	}
	t.year = y
	if !p.lit('-') {
		return t, zoneSpec{}, false
	}
	if t.month, ok = p.num(2, 2); !ok || !p.lit('-') {
		return t, zoneSpec{}, false
	}
	if t.day, ok = p.num(2, 2); !ok {
		return t, zoneSpec{}, false
	}
	rest := s[p.i:]
	if rest == "" {
		return t, zoneSpec{local: true}, true
	}
	if rest == "Z" {
		return t, zoneSpec{}, true
	}
	off, ok := parseOffsetColon(rest, true)
	return t, zoneSpec{offset: off}, ok
}

// parseISOYear reads ISO_LOCAL_DATE's year: four to ten digits, a '+' before
// more than four, '-' for negative years (never -0).
func parseISOYear(p *textScanner) (int64, bool) {
	neg, pos := false, false
	switch {
	case p.lit('-'):
		neg = true
	case p.lit('+'):
		pos = true
	}
	n := p.digitsAhead()
	if n < 4 || pos && n <= 4 || !pos && !neg && n > 4 {
		return 0, false
	}
	y, ok := p.num(4, 10)
	if !ok || neg && y == 0 {
		return 0, false
	}
	if neg {
		y = -y
	}
	return y, true
}

// parseZoneSuffix reads what follows the date or time: nothing (local, only
// when allowLocal), " " and a zone name or offset (the " z", " zzzz" and
// " X" patterns), or an offset right after (the "X" and "XXX" patterns).
func parseZoneSuffix(rest string, allowLocal bool) (zoneSpec, bool) {
	if rest == "" {
		return zoneSpec{local: true}, allowLocal
	}
	if rest[0] == ' ' {
		z := rest[1:]
		if zone, ok := parseZoneText(z); ok {
			return zone, true
		}
		off, ok := parseOffsetX(z)
		return zoneSpec{offset: off}, ok
	}
	if off, ok := parseOffsetX(rest); ok {
		return zoneSpec{offset: off}, true
	}
	if rest == "Z" {
		return zoneSpec{}, true
	}
	off, ok := parseOffsetColon(rest, true)
	return zoneSpec{offset: off}, ok
}

// parseZoneText is java.time's zone name parser, limited to what does not
// depend on Java's locale data: offsets (+HH:MM[:ss]), UTC, UT, GMT (alone
// or followed by an offset), GMT0, Z, and IANA region ids.
func parseZoneText(z string) (zoneSpec, bool) {
	if z == "" {
		return zoneSpec{}, false
	}
	if z[0] == '+' || z[0] == '-' {
		off, ok := parseOffsetColon(z, true)
		return zoneSpec{offset: off}, ok
	}
	for _, prefix := range []string{"UTC", "GMT", "UT"} {
		if !strings.HasPrefix(z, prefix) {
			continue
		}
		rest := z[len(prefix):]
		if rest == "" || prefix == "GMT" && rest == "0" {
			return zoneSpec{}, true
		}
		if rest[0] != '+' && rest[0] != '-' {
			return zoneSpec{}, false
		}
		off, ok := parseOffsetColon(rest, true)
		return zoneSpec{offset: off}, ok
	}
	if z == "Z" {
		return zoneSpec{}, true
	}
	if !isRegionID(z) {
		return zoneSpec{}, false
	}
	loc, err := time.LoadLocation(z)
	if err != nil {
		return zoneSpec{}, false
	}
	return zoneSpec{loc: loc}, true
}

// isRegionID screens names before they reach the time zone database, which
// also understands "Local" and file-system paths.
func isRegionID(z string) bool {
	if z == "Local" || strings.Contains(z, "..") || strings.HasPrefix(z, "/") {
		return false
	}
	for i := 0; i < len(z); i++ {
		c := z[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}

// parseOffsetX is the "X" pattern (+HHmm): Z, or a sign, two hour digits
// and optionally two minute digits.
func parseOffsetX(s string) (int64, bool) {
	if s == "Z" {
		return 0, true
	}
	if len(s) != 3 && len(s) != 5 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	h, ok := twoDigits(s[1:3])
	if !ok {
		return 0, false
	}
	var m int64
	if len(s) == 5 {
		if m, ok = twoDigits(s[3:5]); !ok {
			return 0, false
		}
	}
	return offsetSeconds(s[0] == '-', h, m, 0)
}

// parseOffsetColon reads +HH:MM, and +HH:MM:ss when seconds are allowed.
func parseOffsetColon(s string, seconds bool) (int64, bool) {
	if len(s) != 6 && !(seconds && len(s) == 9) || s[0] != '+' && s[0] != '-' || s[3] != ':' {
		return 0, false
	}
	h, ok1 := twoDigits(s[1:3])
	m, ok2 := twoDigits(s[4:6])
	if !ok1 || !ok2 {
		return 0, false
	}
	var sec int64
	if len(s) == 9 {
		var ok bool
		if s[6] != ':' {
			return 0, false
		}
		if sec, ok = twoDigits(s[7:9]); !ok {
			return 0, false
		}
	}
	return offsetSeconds(s[0] == '-', h, m, sec)
}

func twoDigits(s string) (int64, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int64(s[0]-'0')*10 + int64(s[1]-'0'), true
}

// offsetSeconds applies ZoneOffset's limits: minutes and seconds below 60,
// at most 18 hours either way.
func offsetSeconds(neg bool, h, m, s int64) (int64, bool) {
	if m > 59 || s > 59 {
		return 0, false
	}
	total := h*3600 + m*60 + s
	if total > 18*3600 {
		return 0, false
	}
	if neg {
		total = -total
	}
	return total, true
}

// instant resolves the fields as java.time's SMART resolver would and
// returns milliseconds since the epoch.
func (t localDateTime) instant(zone zoneSpec) (int64, bool) {
	if t.yearOfEra && (t.year < 1 || t.year > 999_999_999) || t.year < -999_999_999 || t.year > 999_999_999 {
		return 0, false
	}
	if t.month < 1 || t.month > 12 || t.day < 1 || t.day > 31 {
		return 0, false
	}
	if t.hasFrac && !t.hasSecond {
		// java.time cannot build a time from hours, minutes and a
		// fraction without seconds.
		return 0, false
	}
	if t.minute > 59 || t.second > 59 {
		return 0, false
	}
	extraDay := int64(0)
	switch {
	case t.hour == 24 && t.minute == 0 && t.second == 0 && t.millis == 0:
		t.hour, extraDay = 0, 1
	case t.hour > 23:
		return 0, false
	}
	if ml := monthLength(t.year, t.month); t.smartClamp && t.day > ml {
		t.day = ml
	}
	if zone.loc != nil {
		if t.year < -290_000_000 || t.year > 290_000_000 {
			return 0, false
		}
		tm := time.Date(int(t.year), time.Month(t.month), int(t.day)+int(extraDay), int(t.hour), int(t.minute), int(t.second), int(t.millis)*1_000_000, zone.loc)
		return millisChecked(tm.Unix(), t.millis)
	}
	days := daysFromCivil(t.year, t.month, t.day) + extraDay
	secs := days*86400 + t.hour*3600 + t.minute*60 + t.second - zone.offset
	return millisChecked(secs, t.millis)
}

// millisChecked is Instant.toEpochMilli, which fails (an ArithmeticException
// in Cassandra) when the result does not fit a long.
func millisChecked(secs, millis int64) (int64, bool) {
	if secs > math.MaxInt64/1000-1 || secs < math.MinInt64/1000+1 {
		return 0, false
	}
	return secs*1000 + millis, true
}

// parseDateString is SimpleDateSerializer.dateStringToDays; it returns the
// date's wire form (days since the epoch plus 2^31).
func parseDateString(s string) (uint32, error) {
	if isRawInteger(s) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > math.MaxUint32 {
			return 0, fmt.Errorf("Unable to make unsigned int (for date) from: '%s'", s)
		}
		return uint32(v), nil
	}
	coerce := fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
	p := &textScanner{s: s}
	y, ok := parseISOYear(p)
	if !ok || !p.lit('-') {
		return 0, coerce
	}
	m, ok := p.num(2, 2)
	if !ok || !p.lit('-') {
		return 0, coerce
	}
	d, ok := p.num(2, 2)
	// ISO_LOCAL_DATE with the STRICT resolver: no clamping of the day.
	if !ok || !p.done() || m < 1 || m > 12 || d < 1 || d > monthLength(y, m) {
		return 0, coerce
	}
	days := daysFromCivil(y, m, d)
	if days > math.MaxInt64/millisPerDay || days < math.MinInt64/millisPerDay {
		return 0, coerce
	}
	if days < math.MinInt32 {
		return 0, fmt.Errorf("Input date %s is less than min supported date %sT00:00Z", s, javaLocalDate(math.MinInt32))
	}
	if days > math.MaxInt32 {
		return 0, fmt.Errorf("Input date %s is greater than max supported date %sT00:00Z", s, javaLocalDate(math.MaxInt32))
	}
	return uint32(int32(days)) ^ 0x80000000, nil
}

// parseTimeString is TimeSerializer.timeStringToLong: nanoseconds since
// midnight as a number, or hh:mm:ss[.fffffffff] read the lenient way
// TimeSerializer does (surrounding blanks trimmed, each field a Java int).
func parseTimeString(s string) (int64, error) {
	if isRawInteger(s) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v >= nanosPerDay {
			return 0, fmt.Errorf("Unable to make long (for time) from: '%s'", s)
		}
		return v, nil
	}
	ns, ok := parseTimeStrictly(javaTrim(s))
	if !ok {
		return 0, fmt.Errorf("(TimeType) Unable to coerce '%s' to a formatted time (long)", s)
	}
	return ns, nil
}

func parseJavaInt(s string) (int64, bool) {
	v, ok := parseJavaLong(s)
	return v, ok && v == int64(int32(v))
}

func parseTimeStrictly(s string) (int64, bool) {
	first := strings.IndexByte(s, ':')
	if first <= 0 {
		return 0, false
	}
	second := strings.IndexByte(s[first+1:], ':')
	if second < 0 {
		return 0, false
	}
	second += first + 1
	if second >= len(s)-1 {
		return 0, false
	}
	hour, ok := parseJavaInt(s[:first])
	if !ok || hour < 0 || hour >= 24 {
		return 0, false
	}
	minute, ok := parseJavaInt(s[first+1 : second])
	if !ok || minute < 0 || minute >= 60 {
		return 0, false
	}
	var sec, nanos int64
	period := strings.IndexByte(s[second+1:], '.')
	switch {
	case period >= 0 && second+1+period < len(s)-1:
		period += second + 1
		if sec, ok = parseJavaInt(s[second+1 : period]); !ok || sec < 0 || sec >= 60 {
			return 0, false
		}
		frac := s[period+1:]
		units, n := 0, int64(0)
		for i, r := range frac {
			d := javaDigit(r)
			if i == 0 && !unicode.IsDigit(r) || d < 0 {
				return 0, false
			}
			n = n*10 + int64(d)
			units++
		}
		if units > 9 {
			return 0, false
		}
		for ; units < 9; units++ {
			n *= 10
		}
		nanos = n
	case period >= 0:
		return 0, false
	default:
		if sec, ok = parseJavaInt(s[second+1:]); !ok || sec < 0 || sec >= 60 {
			return 0, false
		}
	}
	return hour*3_600_000_000_000 + minute*60_000_000_000 + sec*nanosPerSecond + nanos, true
}

// Duration units in the order Cassandra requires them, with the names its
// messages use.
const (
	durYears = iota + 1
	durMonths
	durWeeks
	durDays
	durHours
	durMinutes
	durSeconds
	durMillis
	durMicros
	durNanos
)

var durUnitNames = [...]string{"", "years", "months", "weeks", "days", "hours", "minutes", "seconds",
	"milliseconds", "microseconds", "nanoseconds"}

// durationBuilder accumulates units as cql3.Duration.Builder does: each unit
// at most once, larger units first, totals bounded.
type durationBuilder struct {
	months, days, nanos int64
	current             int
}

func (b *durationBuilder) add(unit int, n int64) error {
	if unit == b.current {
		return fmt.Errorf("Invalid duration. The %s are specified multiple times", durUnitNames[unit])
	}
	if unit < b.current {
		return fmt.Errorf("Invalid duration. The %s should be after %s", durUnitNames[b.current], durUnitNames[unit])
	}
	b.current = unit
	// Cassandra's message names the unit family and always quotes the int
	// maximum, even for nanoseconds.
	tooBig := func(family string) error {
		return fmt.Errorf("Invalid duration. The total number of %s must be less or equal to %d", family, math.MaxInt32)
	}
	switch unit {
	case durYears, durMonths:
		per := int64(1)
		if unit == durYears {
			per = 12
		}
		if n > (math.MaxInt32-b.months)/per {
			return tooBig("months")
		}
		b.months += n * per
	case durWeeks, durDays:
		per := int64(1)
		if unit == durWeeks {
			per = 7
		}
		if n > (math.MaxInt32-b.days)/per {
			return tooBig("days")
		}
		b.days += n * per
	default:
		per := [...]int64{durHours: 3_600_000_000_000, durMinutes: 60_000_000_000, durSeconds: nanosPerSecond,
			durMillis: 1_000_000, durMicros: 1_000, durNanos: 1}[unit]
		if n > (math.MaxInt64-b.nanos)/per {
			return tooBig("nanoseconds")
		}
		b.nanos += n * per
	}
	return nil
}

// durationNumber is Long.parseLong on a run of ASCII digits; Cassandra lets
// its NumberFormatException escape, and the client sees that text.
func durationNumber(digits string) (int64, error) {
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("java.lang.NumberFormatException: For input string: \"%s\"", digits)
	}
	return v, nil
}

// standardUnits lists the unit spellings of Cassandra's duration regular
// expression in its alternation order, which decides ties (ms before m).
var standardUnits = []struct {
	text string
	unit int
}{
	{"y", durYears}, {"Y", durYears}, {"mo", durMonths}, {"MO", durMonths}, {"mO", durMonths}, {"Mo", durMonths},
	{"w", durWeeks}, {"W", durWeeks}, {"d", durDays}, {"D", durDays}, {"h", durHours}, {"H", durHours},
	{"s", durSeconds}, {"S", durSeconds}, {"ms", durMillis}, {"MS", durMillis}, {"mS", durMillis}, {"Ms", durMillis},
	{"us", durMicros}, {"US", durMicros}, {"uS", durMicros}, {"Us", durMicros},
	{"\u00b5s", durMicros}, {"\u00b5S", durMicros},
	{"ns", durNanos}, {"NS", durNanos}, {"nS", durNanos}, {"Ns", durNanos}, {"m", durMinutes}, {"M", durMinutes},
}

// ParseDuration reads a duration in any of Cassandra's three syntaxes, with
// an optional leading '-': units (1y2mo3w4d5h6m7s8ms9us10ns, µs also
// accepted, case-insensitive), ISO 8601 with designators (P1Y2M3DT4H5M6S,
// P2W) and the ISO 8601 alternative form (P0001-02-03T04:05:06). It returns
// months, days and nanoseconds, all of the sign of the input, and
// Cassandra's messages for malformed text, repeated or misordered units and
// totals that overflow.
func ParseDuration(input string) (months, days int32, nanos int64, err error) {
	neg := strings.HasPrefix(input, "-")
	src := strings.TrimPrefix(input, "-")
	var b durationBuilder
	switch {
	case strings.HasPrefix(src, "P") && strings.HasSuffix(src, "W"):
		err = parseISOWeekDuration(src, &b)
	case strings.HasPrefix(src, "P") && strings.Contains(src, "-"):
		err = parseISOAlternativeDuration(src, &b)
	case strings.HasPrefix(src, "P"):
		err = parseISODuration(src, &b)
	default:
		err = parseStandardDuration(src, &b)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	if neg {
		return int32(-b.months), int32(-b.days), -b.nanos, nil
	}
	return int32(b.months), int32(b.days), b.nanos, nil
}

func unconvertible(src string) error {
	return fmt.Errorf("Unable to convert '%s' to a duration", src)
}

func parseStandardDuration(src string, b *durationBuilder) error {
	p := &textScanner{s: src}
	for {
		n := p.digitsAhead()
		if n == 0 {
			break
		}
		digits := src[p.i : p.i+n]
		rest := src[p.i+n:]
		unit := 0
		for _, u := range standardUnits {
			if strings.HasPrefix(rest, u.text) {
				unit = u.unit
				p.i += n + len(u.text)
				break
			}
		}
		if unit == 0 {
			break
		}
		v, err := durationNumber(digits)
		if err != nil {
			return err
		}
		if err := b.add(unit, v); err != nil {
			return err
		}
	}
	if p.i == 0 || !p.done() {
		return unconvertible(src)
	}
	return nil
}

// parseISODuration matches P[nY][nM][nD][T[nH][nM][nS]] in full.
func parseISODuration(src string, b *durationBuilder) error {
	p := &textScanner{s: src, i: 1}
	type part struct {
		unit   int
		digits string
	}
	var parts []part
	take := func(designator byte, unit int) {
		n := p.digitsAhead()
		if n > 0 && p.i+n < len(src) && src[p.i+n] == designator {
			parts = append(parts, part{unit, src[p.i : p.i+n]})
			p.i += n + 1
		}
	}
	take('Y', durYears)
	take('M', durMonths)
	take('D', durDays)
	if p.lit('T') {
		take('H', durHours)
		take('M', durMinutes)
		take('S', durSeconds)
	}
	if !p.done() {
		return unconvertible(src)
	}
	for _, pt := range parts {
		v, err := durationNumber(pt.digits)
		if err != nil {
			return err
		}
		if err := b.add(pt.unit, v); err != nil {
			return err
		}
	}
	return nil
}

func parseISOWeekDuration(src string, b *durationBuilder) error {
	digits := src[1 : len(src)-1]
	if !isRawInteger(digits) || strings.HasPrefix(digits, "-") {
		return unconvertible(src)
	}
	v, err := durationNumber(digits)
	if err != nil {
		return err
	}
	return b.add(durWeeks, v)
}

// parseISOAlternativeDuration matches PYYYY-MM-DDThh:mm:ss exactly.
func parseISOAlternativeDuration(src string, b *durationBuilder) error {
	const layout = "P0000-00-00T00:00:00"
	if len(src) != len(layout) {
		return unconvertible(src)
	}
	for i := 0; i < len(layout); i++ {
		if layout[i] == '0' {
			if src[i] < '0' || src[i] > '9' {
				return unconvertible(src)
			}
		} else if src[i] != layout[i] {
			return unconvertible(src)
		}
	}
	fields := []struct {
		unit     int
		from, to int
	}{{durYears, 1, 5}, {durMonths, 6, 8}, {durDays, 9, 11}, {durHours, 12, 14}, {durMinutes, 15, 17}, {durSeconds, 18, 20}}
	for _, f := range fields {
		v, _ := strconv.ParseInt(src[f.from:f.to], 10, 64)
		if err := b.add(f.unit, v); err != nil {
			return err
		}
	}
	return nil
}
