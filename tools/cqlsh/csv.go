package cqlsh

import (
	"bufio"
	"io"
	"strings"
)

// COPY's files are CSV as Python's csv module writes and reads them with
// the dialect cqlsh gives it: a delimiter, a quote character and an escape
// character (a quote inside a value is escaped, not doubled, unless QUOTE
// and ESCAPE are the same character), fields quoted only when they hold
// the delimiter or a line break, and records ended by "\r\n". Go's
// encoding/csv knows only doubled quotes, so neither shell could read the
// other's files through it.

// csvDialect is a COPY file's CSV dialect.
type csvDialect struct {
	delimiter rune
	quote     rune
	escape    rune // 0 when quotes are doubled (QUOTE equal to ESCAPE)
}

// csvWriter writes records as Python's csv.writer with QUOTE_MINIMAL.
type csvWriter struct {
	w io.Writer
	d csvDialect
	b strings.Builder
}

func (cw *csvWriter) write(record []string) error {
	cw.b.Reset()
	if len(record) == 1 && record[0] == "" {
		// A record of one empty field would read back as no field.
		cw.b.WriteRune(cw.d.quote)
		cw.b.WriteRune(cw.d.quote)
	}
	for i, field := range record {
		if i > 0 {
			cw.b.WriteRune(cw.d.delimiter)
		}
		cw.field(field)
	}
	cw.b.WriteString("\r\n")
	_, err := io.WriteString(cw.w, cw.b.String())
	return err
}

func (cw *csvWriter) field(s string) {
	var body strings.Builder
	quoted := false
	for _, c := range s {
		special := c == cw.d.delimiter || c == cw.d.quote || c == '\r' || c == '\n' || cw.d.escape != 0 && c == cw.d.escape
		if special {
			escape := false
			switch {
			case c == cw.d.quote && cw.d.escape == 0:
				body.WriteRune(cw.d.quote) // doubled
			case c == cw.d.quote, c == cw.d.escape:
				escape = true
			}
			if escape {
				body.WriteRune(cw.d.escape)
			} else {
				quoted = true
			}
		}
		body.WriteRune(c)
	}
	if quoted {
		cw.b.WriteRune(cw.d.quote)
	}
	cw.b.WriteString(body.String())
	if quoted {
		cw.b.WriteRune(cw.d.quote)
	}
}

// csvReader reads records as Python's csv.reader does with the same
// dialect (its state machine, not strict): a quote opens a quoted field
// only at a field's start, an escaped character is taken as it is, and a
// quoted field may span lines.
type csvReader struct {
	r    *bufio.Reader
	d    csvDialect
	line int // the line the last record ended on
}

// read returns the next record; io.EOF after the last. A blank line is a
// record of no fields, as Python reads it.
func (cr *csvReader) read() ([]string, error) {
	const (
		startField = iota
		inField
		inQuoted
		escaped
		escapedInQuoted
		quoteInQuoted
	)
	var fields []string
	var field strings.Builder
	state := startField
	started := false
	for {
		c, _, err := cr.r.ReadRune()
		if err == io.EOF {
			if !started {
				return nil, io.EOF
			}
			// Python's reader, not strict, keeps what an unterminated
			// quoted field or a final escape held.
			return append(fields, field.String()), nil
		}
		if err != nil {
			return nil, err
		}
		eol := c == '\n' || c == '\r'
		if !started && eol {
			cr.endLine(c)
			return []string{}, nil
		}
		started = true
		switch state {
		case startField, inField:
			switch {
			case eol:
				cr.endLine(c)
				return append(fields, field.String()), nil
			case state == startField && c == cr.d.quote:
				state = inQuoted
			case cr.d.escape != 0 && c == cr.d.escape:
				state = escaped
			case c == cr.d.delimiter:
				fields = append(fields, field.String())
				field.Reset()
				state = startField
			default:
				field.WriteRune(c)
				state = inField
			}
		case escaped:
			field.WriteRune(c)
			state = inField
		case inQuoted:
			switch {
			case cr.d.escape != 0 && c == cr.d.escape:
				state = escapedInQuoted
			case c == cr.d.quote && cr.d.escape == 0:
				state = quoteInQuoted
			case c == cr.d.quote:
				state = inField
			default:
				if c == '\n' {
					cr.line++
				}
				field.WriteRune(c)
			}
		case escapedInQuoted:
			field.WriteRune(c)
			state = inQuoted
		case quoteInQuoted:
			switch {
			case c == cr.d.quote:
				field.WriteRune(c)
				state = inQuoted
			case c == cr.d.delimiter:
				fields = append(fields, field.String())
				field.Reset()
				state = startField
			case eol:
				cr.endLine(c)
				return append(fields, field.String()), nil
			default:
				field.WriteRune(c)
				state = inField
			}
		}
	}
}

// endLine counts a line and eats the "\n" of a "\r\n".
func (cr *csvReader) endLine(c rune) {
	cr.line++
	if c == '\r' {
		if next, _, err := cr.r.ReadRune(); err == nil && next != '\n' {
			_ = cr.r.UnreadRune()
		}
	}
}
