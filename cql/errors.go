package cql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is a statement Cassandra's grammar rejects. Line counts from 1
// and Column, in characters, from 0, as Cassandra prints them; they point at
// the offending token (for a missing token at the end, just past the input).
// Message follows ANTLR's wording where the grammar is the same:
//
//	no viable alternative at input 'FRO'
//	mismatched input 'x' expecting K_FROM
//
// and Cassandra's own wording for the checks its parser makes besides the
// grammar (repeated properties, X = X + <value> forms, ...), which
// Cassandra reports without a place (Unplaced).
type SyntaxError struct {
	Line    int
	Column  int
	Message string
	// Snippet is the query around the offending token, as Cassandra
	// appends it to its grammar's messages: " (SELECT * [FORM] t)".
	Snippet string
	// Unplaced marks a message Cassandra gives alone: Error() is then
	// the message only (Line and Column still say where).
	Unplaced bool
}

// Error renders the error as Cassandra does: "line 1:14 <message>
// (<snippet>)". An error at the end of the input is at line 0:-1, as
// Cassandra's end-of-input token has no place.
func (e *SyntaxError) Error() string {
	if e.Unplaced {
		return e.Message
	}
	return "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + " " + e.Message + e.Snippet
}

// snippet is the part of src around token t that Cassandra's parser shows
// after a grammar error (its ErrorCollector): from ten tokens of the
// stream before t (hidden ones count) to t, t in square brackets (as
// long as its text, which for a string is its content), "..." for what
// is cut on either side, the lines joined without their line ends. ""
// for the end of input, whose token has no place, and where Cassandra's
// own cut would fail. Only the lines shown are looked at closely, so a
// long query costs one scan.
func snippet(src string, stream []streamPos, t *token) string {
	if t.kind == tkEOF || t.line <= 0 {
		return ""
	}
	from := stream[max(0, t.index-10)]
	if from.line > t.line {
		return ""
	}
	// The byte offset where line n (from 1) starts.
	offset, line := 0, 1
	for line < from.line {
		i := strings.IndexByte(src[offset:], '\n')
		if i < 0 {
			return ""
		}
		offset, line = offset+i+1, line+1
	}
	var b strings.Builder
	b.WriteString(" (")
	if from.line != 1 || from.col != 0 {
		b.WriteString("...")
	}
	for ; line <= t.line; line++ {
		end := strings.IndexByte(src[offset:], '\n')
		if end < 0 {
			end = len(src) - offset
		}
		text := src[offset : offset+end]
		cut := 0
		if line == from.line {
			if cut = byteOffset(text, from.col); cut < 0 {
				return ""
			}
		}
		if line < t.line {
			b.WriteString(text[cut:])
			offset += end + 1
			continue
		}
		startB := byteOffset(text, t.col)
		endB := byteOffset(text, t.col+utf8.RuneCountInString(t.text))
		if startB < 0 || endB < 0 || startB < cut {
			return ""
		}
		b.WriteString(text[cut:startB] + "[" + text[startB:endB] + "]")
		if rest := src[offset+endB:]; strings.Trim(rest, "\n") != "" {
			b.WriteString("...") // Java's split drops only trailing empty lines
		}
	}
	b.WriteString(")")
	return b.String()
}

// byteOffset is the byte offset of rune col of s (len(s) for just past
// its end), or -1 past that.
func byteOffset(s string, col int) int {
	for i := range s {
		if col == 0 {
			return i
		}
		col--
	}
	if col == 0 {
		return len(s)
	}
	return -1
}
