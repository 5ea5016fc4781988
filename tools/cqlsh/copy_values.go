package cqlsh

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
)

// The values of COPY's files, as cqlsh writes and reads them: the display
// form of each type (top-level text as it is, but for the backslash
// escapes cqlsh adds), read back type by type into CQL literals.

// formatCopyTimestamp writes a timestamp with DATETIMEFORMAT (a strftime
// format) in UTC, its fraction of a second cut to milliseconds as COPY TO
// cuts it; a time strftime cannot write is the milliseconds since the
// epoch, as in cqlsh.
func formatCopyTimestamp(ms int64, format string) string {
	t := time.UnixMilli(ms).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return strconv.FormatInt(ms, 10)
	}
	s, err := strftime(format, t)
	if err != nil {
		return strconv.FormatInt(ms, 10)
	}
	return roundMicroseconds(s)
}

// roundMicroseconds cuts the first ".digits" of a formatted time to three
// digits (cqlsh's round_microseconds).
func roundMicroseconds(s string) string {
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		return s
	}
	end := dot + 1
	for end < len(s) && end-dot <= 6 && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	digits := s[dot+1 : end]
	if digits == "" {
		return s
	}
	n, _ := strconv.Atoi(digits)
	for i := len(digits); i < 3; i++ {
		n *= 10
	}
	for i := len(digits); i > 3; i-- {
		n /= 10
	}
	return fmt.Sprintf("%s.%03d%s", s[:dot], n, s[end:])
}

// strftime formats t with the directives of Python's strftime that a
// timestamp format uses.
func strftime(format string, t time.Time) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("unsupported directive %%%c in %s", format[i], quoteRepr(format))
		}
	}
	return b.String(), nil
}

// strptime reads a time written with a strftime format; ok is false when
// the text does not fit it.
func strptime(format, s string) (time.Time, bool) {
	var year, month, day, hour, minute, sec, micros int
	month, day = 1, 1
	pm, twelve := false, false
	loc := time.UTC
	number := func(width int) (int, bool) {
		n := 0
		i := 0
		for ; i < width && i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			n = n*10 + int(s[i]-'0')
		}
		if i == 0 {
			return 0, false
		}
		s = s[i:]
		return n, true
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			if !strings.HasPrefix(s, format[i:i+1]) {
				return time.Time{}, false
			}
			s = s[1:]
			continue
		}
		i++
		ok := true
		switch format[i] {
		case 'Y':
			year, ok = number(4)
		case 'y':
			year, ok = number(2)
			year += 1900
			if year < 1969 {
				year += 100
			}
		case 'm':
			month, ok = number(2)
		case 'd':
			day, ok = number(2)
		case 'H':
			hour, ok = number(2)
		case 'I':
			hour, ok = number(2)
			twelve = true
		case 'p':
			switch {
			case strings.HasPrefix(strings.ToUpper(s), "PM"):
				pm = true
			case !strings.HasPrefix(strings.ToUpper(s), "AM"):
				return time.Time{}, false
			}
			s = s[min(2, len(s)):]
		case 'M':
			minute, ok = number(2)
		case 'S':
			sec, ok = number(2)
		case 'f':
			before := len(s)
			micros, ok = number(6)
			for n := before - len(s); n < 6; n++ {
				micros *= 10
			}
		case 'z':
			if s == "" || (s[0] != '+' && s[0] != '-') {
				return time.Time{}, false
			}
			sign := 1
			if s[0] == '-' {
				sign = -1
			}
			s = s[1:]
			var hh, mm int
			if hh, ok = number(2); ok {
				s = strings.TrimPrefix(s, ":")
				mm, ok = number(2)
			}
			loc = time.FixedZone("", sign*(hh*3600+mm*60))
		case '%':
			if !strings.HasPrefix(s, "%") {
				return time.Time{}, false
			}
			s = s[1:]
		default:
			return time.Time{}, false
		}
		if !ok {
			return time.Time{}, false
		}
	}
	if s != "" {
		return time.Time{}, false
	}
	if twelve {
		hour %= 12
		if pm {
			hour += 12
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, micros*1000, loc), true
}

// importLiteral turns a field of a COPY file into the CQL literal of a
// value of t: NULL's text is null; the rest as cqlsh's COPY FROM reads
// each type.
func importLiteral(t *cqltype.Type, field string, opts *copyOptions) (string, error) {
	if field == opts.null {
		return "null", nil
	}
	return fieldLiteral(t, field, opts, false)
}

// fieldLiteral converts a value; nested is true inside collections,
// tuples and user types, where strings and the quoted scalar types come
// in single quotes.
func fieldLiteral(t *cqltype.Type, v string, opts *copyOptions, nested bool) (string, error) {
	if nested {
		v = strings.TrimSpace(v)
		// A null field of a tuple or user type: null, or the NULL
		// text as cqlsh writes a user type's (text is quoted either way).
		if v == "null" || v == opts.null {
			return "null", nil
		}
	}
	switch t.Kind {
	case cqltype.Text, cqltype.Ascii:
		if nested {
			v = unquoteValue(v)
		}
		return quoteCQL(unescapeDisplay(v)), nil
	case cqltype.Timestamp:
		v = unquoteValue(v)
		if ts, ok := strptime(opts.dateTimeFormat, v); ok {
			return quoteCQL(ts.UTC().Format("2006-01-02 15:04:05.000-0700")), nil
		}
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return v, nil // milliseconds since the epoch
		}
		return quoteCQL(v), nil // one of CQL's own forms
	case cqltype.Date, cqltype.Time, cqltype.Inet:
		return quoteCQL(unquoteValue(v)), nil
	case cqltype.Boolean:
		switch {
		case strings.EqualFold(v, opts.boolStyle[0]):
			return "true", nil
		case strings.EqualFold(v, opts.boolStyle[1]):
			return "false", nil
		}
		return "", fmt.Errorf("Invalid boolean value %s, expected %s or %s", quoteRepr(v), opts.boolStyle[0], opts.boolStyle[1])
	case cqltype.Duration:
		if v == "" {
			return "0s", nil
		}
		return v, nil
	case cqltype.Tinyint, cqltype.Smallint, cqltype.Int, cqltype.Bigint, cqltype.Varint, cqltype.Counter:
		v = strings.TrimSpace(v)
		if !isInteger(v) {
			return "", fmt.Errorf("invalid literal for int() with base 10: %s", quoteRepr(v))
		}
		return v, nil
	case cqltype.Float, cqltype.Double, cqltype.Decimal:
		v = strings.TrimSpace(v)
		if _, err := strconv.ParseFloat(v, 64); err != nil && v != "NaN" && v != "Infinity" && v != "-Infinity" {
			return "", fmt.Errorf("could not convert string to float: %s", quoteRepr(v))
		}
		return v, nil
	case cqltype.List, cqltype.Set:
		parts, err := splitComposite(v, ',')
		if err != nil {
			return "", err
		}
		open, end := "[", "]"
		if t.Kind == cqltype.Set {
			open, end = "{", "}"
		}
		return convertParts(parts, func(int) *cqltype.Type { return t.Params[0] }, open, end, opts)
	case cqltype.Tuple:
		parts, err := splitComposite(v, ',')
		if err != nil {
			return "", err
		}
		if len(parts) > len(t.Params) {
			return "", fmt.Errorf("Tuple of %d values for a tuple of %d types", len(parts), len(t.Params))
		}
		return convertParts(parts, func(i int) *cqltype.Type { return t.Params[i] }, "(", ")", opts)
	case cqltype.Map, cqltype.UDT:
		entries, err := splitComposite(v, ',')
		if err != nil {
			return "", err
		}
		var out []string
		for _, e := range entries {
			kv, err := splitComposite("{"+e+"}", ':')
			if err != nil {
				return "", err
			}
			if len(kv) != 2 {
				return "", fmt.Errorf("Invalid map entry %s", quoteRepr(e))
			}
			var key, val string
			if t.Kind == cqltype.Map {
				if key, err = fieldLiteral(t.Params[0], kv[0], opts, true); err == nil {
					val, err = fieldLiteral(t.Params[1], kv[1], opts, true)
				}
			} else {
				name := unquoteField(strings.TrimSpace(kv[0]))
				i := fieldIndex(t, name)
				if i < 0 {
					return "", fmt.Errorf("Unknown field %s in %s", quoteRepr(name), t)
				}
				key = cqltype.QuoteIdent(name)
				val, err = fieldLiteral(t.Params[i], kv[1], opts, true)
			}
			if err != nil {
				return "", err
			}
			out = append(out, key+": "+val)
		}
		return "{" + strings.Join(out, ", ") + "}", nil
	}
	return strings.TrimSpace(v), nil
}

func convertParts(parts []string, typeOf func(int) *cqltype.Type, open, end string, opts *copyOptions) (string, error) {
	out := make([]string, len(parts))
	for i, p := range parts {
		lit, err := fieldLiteral(typeOf(i), p, opts, true)
		if err != nil {
			return "", err
		}
		out[i] = lit
	}
	return open + strings.Join(out, ", ") + end, nil
}

func fieldIndex(t *cqltype.Type, name string) int {
	for i, f := range t.FieldNames {
		if f == name {
			return i
		}
	}
	return -1
}

// splitComposite splits "[a, b]", "{a, b}" or "(a, b)" at sep outside
// quotes and nested brackets, as cqlsh's COPY FROM splits.
func splitComposite(v string, sep byte) ([]string, error) {
	v = strings.TrimSpace(v)
	if len(v) < 2 || !strings.Contains("[{(", v[:1]) || !strings.Contains("]})", v[len(v)-1:]) {
		return nil, fmt.Errorf("Invalid composite string, it should start and end with matching parentheses: %s", v)
	}
	var out []string
	last, level, quoted := 1, 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '[' || c == '{' || c == '(':
			level++
		case c == ']' || c == '}' || c == ')':
			level--
		case c == sep && level == 1:
			out = append(out, v[last:i])
			last = i + 1
		}
	}
	if last < len(v)-1 {
		out = append(out, v[last:len(v)-1])
	}
	return out, nil
}

// unquoteValue strips a value's single quotes, undoubling the quotes
// inside, as cqlsh's dequote_value does.
func unquoteValue(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// unquoteField reads a user type's field name as written: bare, or in
// double quotes.
func unquoteField(n string) string {
	if len(n) >= 2 && n[0] == '"' && n[len(n)-1] == '"' {
		return strings.ReplaceAll(n[1:len(n)-1], `""`, `"`)
	}
	return n
}

// unescapeDisplay undoes the escapes cqlsh's display form puts in text:
// a doubled backslash, \n, \t, \r and \xHH. Anything else stays as it is.
func unescapeDisplay(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 'x':
			if n, err := strconv.ParseUint(s[min(i+2, len(s)):min(i+4, len(s))], 16, 8); err == nil && i+4 <= len(s) {
				b.WriteRune(rune(n))
				i += 3
				continue
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func quoteCQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
