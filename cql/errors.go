package cql

import "strconv"

// SyntaxError is a statement Cassandra's grammar rejects. Line counts from 1
// and Column, in characters, from 0, as Cassandra prints them; they point at
// the offending token (for a missing token at the end, just past the input).
// Message follows ANTLR's wording where the grammar is the same:
//
//	no viable alternative at input 'FRO'
//	mismatched input 'x' expecting K_FROM
//	missing EOF at 'foo'
//
// and Cassandra's own wording for the checks its parser makes besides the
// grammar (repeated properties, X = X + <value> forms, ...).
type SyntaxError struct {
	Line    int
	Column  int
	Message string
}

// Error renders the error as Cassandra does: "line 1:14 <message>".
func (e *SyntaxError) Error() string {
	return "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + " " + e.Message
}
