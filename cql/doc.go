// Package cql reads the Cassandra Query Language: a hand-written lexer and
// recursive-descent parser that turn statement text into a syntax tree for
// cql/exec to validate against the schema and execute.
//
// Owns: the lexer (Cassandra's token rules: identifier case folding,
// comments, string, number, uuid, blob and duration literals, bind markers),
// the syntax tree (Statement and its node types, Expr, Relation, Condition,
// TypeRef), Parse and ParseAll, SyntaxError with Cassandra's line:column
// messages, the canonical rendering of every node (String), and walking a
// statement's expressions (WalkExprs, BindMarkers).
// Does not own: what the statements mean. Schema lookups, type checking of
// terms, the values of literals, the rejection of lightweight transactions
// and everything else that needs a schema or a clock belong to cql/exec.
// CQL types themselves (and resolving a TypeRef) belong to cqltype.
// May import: the standard library, cqltype, internal/invariants.
// Must not import: any other Sibyl package (schema, storage, mutation, cql/exec,
// cql/native all sit above or beside it).
//
// Conventions: identifiers in the tree are already normalized (unquoted
// names folded to lower case, quoted ones as written), so a name compares
// with a schema name by plain string equality. Literals keep their source
// text (strings unescaped) and are typed later, when the receiving column is
// known. A bind marker carries its position among the statement's markers.
//
// Invariants (checked by the tests and the fuzz target):
//
//	P1. Parse never panics and runs in time linear in its input (up to the
//	    small constant factor of its bounded look-ahead).
//	P2. For every statement s that Parse returns, Parse(s.String()) returns
//	    a tree equal to s, and rendering that tree gives s.String() again.
//	P3. Bad input gives a *SyntaxError naming the line and column of the
//	    offending token.
package cql
