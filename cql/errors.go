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
// stream before t (hidden ones count) to t, t in square brackets,
// "..." for what is cut on either side, the lines joined without their
// line ends. "" for the end of input, whose token has no place.
func snippet(src string, stream []streamPos, t *token) string {
	if t.kind == tkEOF || t.line <= 0 {
		return ""
	}
	lines := strings.Split(src, "\n")
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // as Java's split drops them
	}
	from := stream[max(0, t.index-10)]
	if t.line > len(lines) || from.line > t.line {
		return ""
	}
	runes := make([][]rune, len(lines))
	for i, l := range lines {
		runes[i] = []rune(l)
	}
	end := t.col + utf8.RuneCountInString(t.text)
	last := runes[t.line-1]
	if end > len(last) || from.col > len(runes[from.line-1]) {
		return "" // where Cassandra's own cut fails, it shows none
	}
	includeStart := from.line == 1 && from.col == 0
	includeEnd := t.line == len(lines) && end == len(runes[len(runes)-1])
	highlighted := string(last[:t.col]) + "[" + string(last[t.col:end]) + "]"
	var b strings.Builder
	b.WriteString(" (")
	if !includeStart {
		b.WriteString("...")
	}
	for i := from.line - 1; i < t.line; i++ {
		line := string(runes[i])
		if i == t.line-1 {
			line = highlighted
		}
		if i == from.line-1 {
			line = string([]rune(line)[from.col:])
		}
		b.WriteString(line)
	}
	if !includeEnd {
		b.WriteString("...")
	}
	b.WriteString(")")
	return b.String()
}
