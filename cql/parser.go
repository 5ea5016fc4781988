package cql

import (
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// Parse parses one CQL statement, optionally followed by semicolons. A
// second statement is an error (use ParseAll for scripts). Errors are
// *SyntaxError.
func Parse(text string) (Statement, error) {
	toks, stream, lerr := lex(text)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{src: text, toks: toks, stream: stream}
	st := p.statement()
	for p.acceptPunct(";") {
	}
	if t := p.peek(); p.err == nil && t.kind != tkEOF {
		// Cassandra's parser does not recover from a mismatched token
		// (no "missing" or "extraneous" messages): it reports it.
		p.failGrammar(t, "mismatched input "+t.display()+" expecting EOF")
	}
	if p.err != nil {
		return nil, p.err
	}
	return st, nil
}

// ParseAll parses a script: statements separated by semicolons (empty
// statements and a missing final semicolon are fine). Bind marker indexes
// start again from 0 in each statement. Errors are *SyntaxError.
func ParseAll(text string) ([]Statement, error) {
	toks, stream, lerr := lex(text)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{src: text, toks: toks, stream: stream}
	var out []Statement
	for {
		for p.acceptPunct(";") {
		}
		if p.err != nil || p.peek().kind == tkEOF {
			break
		}
		p.markers = 0
		st := p.statement()
		if t := p.peek(); p.err == nil && t.kind != tkEOF && !p.isPunct(";") {
			p.failGrammar(t, "missing ';' at "+t.display())
		}
		out = append(out, st)
	}
	if p.err != nil {
		return nil, p.err
	}
	return out, nil
}

// maxDepth bounds the nesting of literals, calls and types, so that hostile
// input cannot exhaust the stack; real statements nest a few levels.
const maxDepth = 100

// parser is a recursive-descent parser over the whole token list. Errors are
// sticky: the first one is kept, and from then on peek sees only the end of
// input, so every loop stops and the callers unwind without checks at each
// step. Only the first error matters, as in Cassandra.
type parser struct {
	src     string
	stream  []streamPos
	toks    []token
	pos     int
	err     *SyntaxError
	markers int // bind markers so far in the statement
	depth   int
}

func (p *parser) eof() *token { return &p.toks[len(p.toks)-1] }

func (p *parser) peek() *token {
	if p.err != nil {
		return p.eof()
	}
	return &p.toks[p.pos]
}

// peekAt looks n tokens ahead (0 is peek).
func (p *parser) peekAt(n int) *token {
	if p.err != nil || p.pos+n >= len(p.toks) {
		return p.eof()
	}
	return &p.toks[p.pos+n]
}

func (p *parser) next() *token {
	t := p.peek()
	if t.kind != tkEOF {
		p.pos++
	}
	return t
}

// fail reports what Cassandra's parser checks besides its grammar: those
// messages come alone, without a place (its addRecognitionError, or an
// exception from a rule's action).
func (p *parser) fail(t *token, msg string) {
	if p.err == nil {
		p.err = &SyntaxError{Line: t.line, Column: t.col, Message: msg, Unplaced: true}
	}
}

// failGrammar reports what Cassandra's grammar (ANTLR) rejects: the
// message comes after the token's place, and with the snippet of the
// query around it.
func (p *parser) failGrammar(t *token, msg string) {
	if p.err == nil {
		p.err = &SyntaxError{Line: t.line, Column: t.col, Message: msg, Snippet: snippet(p.src, p.stream, t)}
	}
}

// noViable reports a token that starts none of the alternatives allowed at
// this point.
func (p *parser) noViable(t *token) {
	p.failGrammar(t, "no viable alternative at input "+t.display())
}

func isKeyword(t *token, word string) bool { return t.kind == tkIdent && t.lower == word }

func isPunctTok(t *token, s string) bool { return t.kind == tkPunct && t.text == s }

func (p *parser) isKw(word string) bool { return isKeyword(p.peek(), word) }

func (p *parser) isPunct(s string) bool { return isPunctTok(p.peek(), s) }

func (p *parser) acceptKw(word string) bool {
	if p.isKw(word) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectKw(word string) {
	if !p.acceptKw(word) {
		t := p.peek()
		p.failGrammar(t, "mismatched input "+t.display()+" expecting "+keywordName(word))
	}
}

func (p *parser) expectPunct(s string) {
	if !p.acceptPunct(s) {
		t := p.peek()
		p.failGrammar(t, "mismatched input "+t.display()+" expecting '"+s+"'")
	}
}

// try runs f as a look-ahead: it reports whether f parsed without error and
// then rewinds, leaving no trace. Cassandra's grammar uses such syntactic
// predicates for SELECT JSON, SELECT DISTINCT and type hints.
func (p *parser) try(f func()) bool {
	if p.err != nil {
		return false
	}
	pos, markers, depth := p.pos, p.markers, p.depth
	f()
	ok := p.err == nil
	p.pos, p.markers, p.depth, p.err = pos, markers, depth, nil
	return ok
}

// enter guards recursion; callers defer p.leave().
func (p *parser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		if p.err == nil {
			// A limit of ours: where it was reached helps.
			t := p.peek()
			p.err = &SyntaxError{Line: t.line, Column: t.col, Message: "statement nested more than " + strconv.Itoa(maxDepth) + " levels deep"}
		}
		return false
	}
	return true
}

func (p *parser) leave() { p.depth-- }

// isNameTok reports whether t can be a name: an unquoted word that is not
// reserved, or a non-empty quoted name.
func isNameTok(t *token) bool {
	switch t.kind {
	case tkIdent:
		return !reserved[t.lower]
	case tkQuotedIdent:
		return t.text != ""
	}
	return false
}

// nameOf is the normalized name of a name token: unquoted names fold to
// lower case.
func nameOf(t *token) string {
	if t.kind == tkIdent {
		return t.lower
	}
	return t.text
}

// ident parses a name.
func (p *parser) ident() string {
	t := p.peek()
	if !isNameTok(t) {
		if isPunctTok(t, "?") || isPunctTok(t, ":") {
			p.fail(t, "Bind variables cannot be used for names")
			return ""
		}
		p.noViable(t)
		return ""
	}
	p.next()
	return nameOf(t)
}

// qualifiedName parses [keyspace.]name for tables.
func (p *parser) qualifiedName() QualifiedName {
	t := p.peek()
	if isPunctTok(t, "?") || isPunctTok(t, ":") {
		p.fail(t, "Bind variables cannot be used for table names")
		return QualifiedName{}
	}
	first := p.ident()
	if p.acceptPunct(".") {
		return QualifiedName{Keyspace: first, Name: p.ident()}
	}
	return QualifiedName{Name: first}
}

// typeName parses [keyspace.]name for user types, whose names may not be
// native type names.
func (p *parser) typeName() QualifiedName {
	var n QualifiedName
	if isNameTok(p.peek()) && isPunctTok(p.peekAt(1), ".") {
		n.Keyspace = p.ident()
		p.next()
	}
	t := p.peek()
	if t.kind == tkIdent {
		if _, native := nativeKinds[t.lower]; native {
			p.fail(t, "Invalid (reserved) user type name "+t.text)
			return n
		}
	}
	n.Name = p.ident()
	return n
}

// identList parses name (, name)*.
func (p *parser) identList() []string {
	names := []string{p.ident()}
	for p.acceptPunct(",") {
		names = append(names, p.ident())
	}
	return names
}

// identTuple parses ( name, ... ).
func (p *parser) identTuple() []string {
	p.expectPunct("(")
	names := p.identList()
	p.expectPunct(")")
	return names
}

// statement dispatches on the first word.
func (p *parser) statement() Statement {
	t := p.peek()
	if t.kind == tkIdent {
		switch t.lower {
		case "select":
			return p.selectStatement()
		case "insert":
			return p.insertStatement()
		case "update":
			return p.updateStatement()
		case "delete":
			return p.deleteStatement()
		case "begin":
			return p.batchStatement()
		case "use":
			p.next()
			return &Use{Keyspace: p.ident()}
		case "truncate":
			p.next()
			if !p.acceptKw("table") {
				p.acceptKw("columnfamily")
			}
			return &Truncate{Table: p.qualifiedName()}
		case "create":
			return p.createStatement()
		case "alter":
			return p.alterStatement()
		case "drop":
			return p.dropStatement()
		case "describe", "desc":
			return p.describeStatement()
		case "grant", "revoke":
			return p.grantStatement(t.lower == "revoke")
		case "list":
			return p.listStatement()
		}
	}
	p.noViable(t)
	return nil
}

// ifNotExists parses an optional IF NOT EXISTS.
func (p *parser) ifNotExists() bool {
	if !p.acceptKw("if") {
		return false
	}
	p.expectKw("not")
	p.expectKw("exists")
	return true
}

// ifExists parses an optional IF EXISTS.
func (p *parser) ifExists() bool {
	if !p.acceptKw("if") {
		return false
	}
	p.expectKw("exists")
	return true
}

// typeRef parses a CQL type.
func (p *parser) typeRef() *TypeRef {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	t := p.peek()
	switch t.kind {
	case tkString:
		p.next()
		return &TypeRef{Kind: cqltype.Custom, Name: t.text}
	case tkQuotedIdent:
		return p.udtRef()
	case tkIdent:
		if k, ok := nativeKinds[t.lower]; ok {
			p.next()
			return &TypeRef{Kind: k}
		}
		if !isPunctTok(p.peekAt(1), "<") {
			if reserved[t.lower] {
				break
			}
			return p.udtRef()
		}
		switch t.lower {
		case "frozen":
			p.next()
			p.expectPunct("<")
			inner := p.typeRef()
			p.expectPunct(">")
			if inner == nil {
				return nil
			}
			inner.Frozen = true
			return inner
		case "vector":
			p.next()
			p.expectPunct("<")
			ref := &TypeRef{Kind: cqltype.Vector, Params: []*TypeRef{p.typeRef()}}
			p.expectPunct(",")
			if n := p.peek(); n.kind == tkInteger {
				p.next()
				ref.Dimension = n.text
			} else {
				p.noViable(n)
			}
			p.expectPunct(">")
			if p.err != nil {
				return nil
			}
			return ref
		case "list", "set", "map", "tuple":
			p.next()
			p.expectPunct("<")
			ref := &TypeRef{Params: []*TypeRef{p.typeRef()}}
			switch t.lower {
			case "list":
				ref.Kind = cqltype.List
			case "set":
				ref.Kind = cqltype.Set
			case "map":
				ref.Kind = cqltype.Map
				p.expectPunct(",")
				ref.Params = append(ref.Params, p.typeRef())
			case "tuple":
				ref.Kind = cqltype.Tuple
				for p.acceptPunct(",") {
					ref.Params = append(ref.Params, p.typeRef())
				}
			}
			p.expectPunct(">")
			if p.err != nil {
				return nil
			}
			return ref
		}
	}
	p.noViable(t)
	return nil
}

func (p *parser) udtRef() *TypeRef {
	n := p.typeName()
	if p.err != nil {
		return nil
	}
	return &TypeRef{Kind: cqltype.UDT, Keyspace: n.Keyspace, Name: n.Name}
}

// nativeType parses a native type keyword (the target of CAST).
func (p *parser) nativeType() cqltype.Kind {
	t := p.peek()
	if t.kind == tkIdent {
		if k, ok := nativeKinds[t.lower]; ok {
			p.next()
			return k
		}
	}
	p.noViable(t)
	return cqltype.Custom
}

// options parses name = value (AND name = value)*, the properties of WITH.
func (p *parser) options(opts []Option) []Option {
	for {
		opts = p.option(opts)
		if p.err != nil || !p.acceptKw("and") {
			return opts
		}
	}
}

func (p *parser) option(opts []Option) []Option {
	t := p.peek()
	name := p.ident()
	p.expectPunct("=")
	value := p.optionValue()
	if p.err != nil {
		return opts
	}
	for _, o := range opts {
		if o.Name == name {
			p.fail(t, "Multiple definition for property "+quoteString(name))
			return opts
		}
	}
	return append(opts, Option{Name: name, Value: value})
}

// optionValue parses a constant or a map of constants.
func (p *parser) optionValue() Expr {
	if !p.acceptPunct("{") {
		return p.constant()
	}
	m := &MapLiteral{}
	if p.acceptPunct("}") {
		return m
	}
	for {
		k := p.constant()
		p.expectPunct(":")
		v := p.constant()
		if p.err != nil {
			return nil
		}
		m.Entries = append(m.Entries, MapEntry{Key: k, Value: v})
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct("}")
	return m
}

// constant parses a literal constant, folding a leading '-' into numbers.
func (p *parser) constant() Expr {
	t := p.peek()
	if c := constantOf(t); c != nil {
		p.next()
		return c
	}
	if isPunctTok(t, "-") {
		if c := negate(constantOf(p.peekAt(1))); c != nil {
			p.next()
			p.next()
			return c
		}
	}
	p.noViable(t)
	return nil
}

// constantOf returns the constant that t is, or nil.
func constantOf(t *token) *Constant {
	switch t.kind {
	case tkString:
		return &Constant{Kind: StringConstant, Text: t.text}
	case tkInteger:
		return &Constant{Kind: IntegerConstant, Text: t.text}
	case tkFloat:
		switch {
		case strings.EqualFold(t.text, "-nan"):
			return &Constant{Kind: FloatConstant, Text: "NaN"} // -NaN is NaN
		case strings.EqualFold(t.text, "-infinity"):
			return &Constant{Kind: FloatConstant, Text: "-Infinity"}
		}
		return &Constant{Kind: FloatConstant, Text: t.text}
	case tkDuration:
		return &Constant{Kind: DurationConstant, Text: t.text}
	case tkUUID:
		return &Constant{Kind: UUIDConstant, Text: t.text}
	case tkHex:
		return &Constant{Kind: HexConstant, Text: t.text}
	case tkIdent:
		switch t.lower {
		case "true", "false":
			return &Constant{Kind: BooleanConstant, Text: t.lower}
		case "nan":
			return &Constant{Kind: FloatConstant, Text: "NaN"}
		case "infinity":
			return &Constant{Kind: FloatConstant, Text: "Infinity"}
		}
	}
	return nil
}

// negate applies unary minus to a numeric constant (nil for anything else).
func negate(c *Constant) *Constant {
	if c == nil {
		return nil
	}
	switch c.Kind {
	case IntegerConstant, FloatConstant, DurationConstant:
	default:
		return nil
	}
	switch {
	case c.Text == "NaN":
	case c.Text == "":
		panic(invariants.Failf("empty numeric constant"))
	case c.Text[0] == '-':
		c.Text = c.Text[1:]
	default:
		c.Text = "-" + c.Text
	}
	return c
}

// intValue parses an integer or a bind marker (LIMIT, TTL, TIMESTAMP).
func (p *parser) intValue() Expr {
	t := p.peek()
	if t.kind == tkInteger {
		p.next()
		return &Constant{Kind: IntegerConstant, Text: t.text}
	}
	if isPunctTok(t, "?") || isPunctTok(t, ":") {
		return p.marker()
	}
	p.noViable(t)
	return nil
}

// marker parses ? or :name.
func (p *parser) marker() Expr {
	t := p.next()
	m := &BindMarker{Index: p.markers}
	if isPunctTok(t, ":") {
		m.Name = p.ident()
	} else if !isPunctTok(t, "?") {
		panic(invariants.Failf("marker called at %s", t.display()))
	}
	p.markers++
	return m
}

// using parses an optional USING clause; timestampOnly is DELETE's form.
func (p *parser) using(timestampOnly bool) Using {
	var u Using
	if !p.acceptKw("using") {
		return u
	}
	for {
		t := p.peek()
		switch {
		case p.acceptKw("timestamp"):
			v := p.intValue()
			if u.Timestamp != nil {
				p.fail(t, "Multiple definition for TIMESTAMP in USING")
			}
			u.Timestamp = v
		case !timestampOnly && p.acceptKw("ttl"):
			v := p.intValue()
			if u.TTL != nil {
				p.fail(t, "Multiple definition for TTL in USING")
			}
			u.TTL = v
		case timestampOnly:
			p.failGrammar(t, "mismatched input "+t.display()+" expecting K_TIMESTAMP")
		default:
			p.noViable(t)
		}
		if timestampOnly || p.err != nil || !p.acceptKw("and") {
			return u
		}
	}
}
