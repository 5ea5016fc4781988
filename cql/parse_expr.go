package cql

// Terms and selectors share one parser: a selector is a term that may also
// name columns (and use WRITETIME, TTL, count(*) and field selection), so
// the sel flag widens what is accepted without a second copy of the literal
// and function-call rules.

// term parses a value: a constant, NULL, a bind marker, a collection, tuple
// or user type literal, a type hint, a function call or a CAST.
func (p *parser) term() Expr { return p.expr(false) }

// selectorExpr parses one selector of a SELECT list or GROUP BY.
func (p *parser) selectorExpr() Expr { return p.expr(true) }

func (p *parser) expr(sel bool) Expr {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	return p.additive(sel)
}

// Arithmetic (Cassandra 4's termAddition, termMultiplication and
// termGroup, and the selection clause's alike): + and - below *, / and %,
// all left to right, and unary minus. An operation is a call of its
// function (_add, _substract, _multiply, _divide, _modulo, _negate).
var operationFunctionNames = map[string]string{"+": "_add", "-": "_substract", "*": "_multiply", "/": "_divide", "%": "_modulo"}

func (p *parser) additive(sel bool) Expr {
	e := p.multiplicative(sel)
	for p.err == nil && (p.isPunct("+") || p.isPunct("-")) {
		if !sel && p.assignmentColumnFollows() {
			return e // "c = <value> + c": the column is the assignment's
		}
		op := p.next().text
		e = &FunctionCall{Name: QualifiedName{Name: operationFunctionNames[op]}, Args: []Expr{e, p.multiplicative(sel)}, Operator: op}
	}
	return e
}

// assignmentColumnFollows reports whether the operator ahead is followed
// by a bare name: in a term that is UPDATE's "SET c = <value> + c", not
// an operation.
func (p *parser) assignmentColumnFollows() bool {
	t, next := p.peekAt(1), p.peekAt(2)
	return isNameTok(t) && !isPunctTok(next, "(") && !isPunctTok(next, ".") && !isKeyword(t, "token") &&
		!isKeyword(t, "cast") && constantOf(t) == nil
}

func (p *parser) multiplicative(sel bool) Expr {
	e := p.unary(sel)
	for p.err == nil && (p.isPunct("*") || p.isPunct("/") || p.isPunct("%")) {
		op := p.next().text
		e = &FunctionCall{Name: QualifiedName{Name: operationFunctionNames[op]}, Args: []Expr{e, p.unary(sel)}, Operator: op}
	}
	return e
}

func (p *parser) unary(sel bool) Expr {
	// "- 12" is the constant -12 (primary folds it), as the lexer makes
	// "-12" one; a minus before anything else negates it.
	if p.isPunct("-") && negate(constantOf(p.peekAt(1))) == nil {
		p.next()
		return &FunctionCall{Name: QualifiedName{Name: "_negate"}, Args: []Expr{p.unary(sel)}, Operator: "-"}
	}
	return p.postfix(sel)
}

// postfix parses a primary and, in a selection, its field, element and
// slice selections.
func (p *parser) postfix(sel bool) Expr {
	e := p.primary(sel)
	if !sel {
		return e
	}
	// Field, element and slice selection: a.b, f(x).b, m['k'].c, s[1..3].
	for p.err == nil {
		switch e.(type) {
		case *ColumnRef, *FunctionCall, *FieldSelection, *ElementSelection, *SliceSelection:
		default:
			return e
		}
		switch {
		case p.acceptPunct("."):
			e = &FieldSelection{Value: e, Field: p.ident()}
		case p.acceptPunct("["):
			e = p.subSelection(e)
			p.expectPunct("]")
		default:
			return e
		}
	}
	return e
}

// subSelection parses what is between the brackets of value[...]: a key,
// or a slice with at least one bound.
func (p *parser) subSelection(value Expr) Expr {
	if p.acceptPunct("..") {
		return &SliceSelection{Value: value, To: p.term()}
	}
	key := p.term()
	if !p.acceptPunct("..") {
		return &ElementSelection{Value: value, Key: key}
	}
	s := &SliceSelection{Value: value, From: key}
	if !p.isPunct("]") {
		s.To = p.term()
	}
	return s
}

func (p *parser) primary(sel bool) Expr {
	t := p.peek()
	if c := constantOf(t); c != nil {
		p.next()
		return c
	}
	switch t.kind {
	case tkPunct:
		switch t.text {
		case "?", ":":
			return p.marker()
		case "[":
			p.next()
			return &ListLiteral{Elements: p.exprsUntil(sel, "]")}
		case "{":
			return p.braces(sel)
		case "(":
			return p.parenthesized(sel)
		case "-":
			if c := negate(constantOf(p.peekAt(1))); c != nil {
				p.next()
				p.next()
				return c
			}
		}
	case tkIdent:
		if t.lower == "null" {
			p.next()
			return &Null{}
		}
		if reserved[t.lower] && !(t.lower == "token" && isPunctTok(p.peekAt(1), "(")) {
			break
		}
		return p.named(sel)
	case tkQuotedIdent:
		return p.named(sel)
	}
	p.noViable(t)
	return nil
}

// exprsUntil parses a possibly empty comma-separated list and the closing
// punctuation.
func (p *parser) exprsUntil(sel bool, closing string) []Expr {
	var es []Expr
	if p.acceptPunct(closing) {
		return es
	}
	for {
		es = append(es, p.expr(sel))
		if p.err != nil || !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(closing)
	return es
}

// braces parses {} (an empty set), {k: v, ...} (a map), {e, ...} (a set) or
// {field: v, ...} (a user type: a bare name before the colon cannot be a
// term, so it must be a field).
func (p *parser) braces(sel bool) Expr {
	p.next() // {
	if p.acceptPunct("}") {
		return &SetLiteral{}
	}
	if isNameTok(p.peek()) && isPunctTok(p.peekAt(1), ":") {
		u := &UDTLiteral{}
		for {
			name := p.ident()
			p.expectPunct(":")
			u.Fields = append(u.Fields, UDTField{Name: name, Value: p.expr(sel)})
			if p.err != nil || !p.acceptPunct(",") {
				break
			}
		}
		p.expectPunct("}")
		return u
	}
	first := p.expr(sel)
	if !p.acceptPunct(":") {
		s := &SetLiteral{Elements: []Expr{first}}
		for p.err == nil && p.acceptPunct(",") {
			s.Elements = append(s.Elements, p.expr(sel))
		}
		p.expectPunct("}")
		return s
	}
	m := &MapLiteral{Entries: []MapEntry{{Key: first, Value: p.expr(sel)}}}
	for p.err == nil && p.acceptPunct(",") {
		k := p.expr(sel)
		p.expectPunct(":")
		m.Entries = append(m.Entries, MapEntry{Key: k, Value: p.expr(sel)})
	}
	p.expectPunct("}")
	return m
}

// parenthesized parses a type hint (type)value, a tuple literal, or in a
// selector a parenthesized selector.
func (p *parser) parenthesized(sel bool) Expr {
	if h := p.typeHint(sel); h != nil {
		return h
	}
	p.next() // (
	start := p.peek()
	es := p.exprsUntil(sel, ")")
	if p.err != nil {
		return nil
	}
	if len(es) == 0 {
		p.noViable(start)
		return nil
	}
	if sel && len(es) == 1 {
		return es[0]
	}
	return &TupleLiteral{Elements: es}
}

// typeHint parses (type)value when what follows the parenthesis is a type,
// a closing parenthesis and the start of a value; otherwise it consumes
// nothing and returns nil. A type starts with a name, and a term never
// starts with a bare name (a function call has a parenthesis after it), so
// in terms the look-ahead only decides between (int)? and (f(), 1).
func (p *parser) typeHint(sel bool) Expr {
	first := p.peekAt(1)
	if !isNameTok(first) && !isKeyword(first, "set") {
		return nil
	}
	isHint := p.try(func() {
		p.next()
		p.typeRef()
		p.expectPunct(")")
		if !p.startsExpr(sel) {
			p.noViable(p.peek())
		}
	})
	if !isHint {
		return nil
	}
	p.next()
	typ := p.typeRef()
	p.expectPunct(")")
	// A hint binds tighter than an operator: (int)? + 1 adds to the hinted
	// marker.
	if !p.enter() {
		return nil
	}
	v := p.postfix(sel)
	p.leave()
	if p.err != nil {
		return nil
	}
	return &TypeHint{Type: typ, Value: v}
}

// startsExpr reports whether the next token can begin a term (or selector).
func (p *parser) startsExpr(sel bool) bool {
	t := p.peek()
	if constantOf(t) != nil {
		return true
	}
	switch t.kind {
	case tkPunct:
		switch t.text {
		case "?", ":", "[", "{", "(":
			return true
		case "-":
			return constantOf(p.peekAt(1)) != nil
		}
	case tkIdent:
		if t.lower == "null" || t.lower == "token" {
			return true
		}
		// "(t) AS x" aliases a parenthesized selector; the renderer
		// quotes a column named as, so nothing is lost.
		if sel && t.lower == "as" {
			return false
		}
		return !reserved[t.lower]
	case tkQuotedIdent:
		return t.text != ""
	}
	return false
}

// named parses what starts with a name: a function call (maybe keyspace
// qualified), CAST, and in selectors count(*), WRITETIME/TTL and columns.
func (p *parser) named(sel bool) Expr {
	t := p.peek()
	open := isPunctTok(p.peekAt(1), "(")
	if t.kind == tkIdent && open {
		switch t.lower {
		case "cast":
			p.next()
			p.next()
			v := p.expr(sel)
			p.expectKw("as")
			k := p.nativeType()
			p.expectPunct(")")
			if p.err != nil {
				return nil
			}
			return &Cast{Value: v, To: k}
		case "count":
			if sel && isPunctTok(p.peekAt(2), "*") {
				p.next()
				p.next()
				p.next()
				p.expectPunct(")")
				return &CountRows{}
			}
		case "writetime", "maxwritetime", "ttl":
			if sel {
				kind := map[string]WritetimeKind{"writetime": Writetime, "maxwritetime": MaxWritetime, "ttl": TTL}[t.lower]
				p.next()
				p.next()
				col := p.ident()
				p.expectPunct(")")
				return &WritetimeOrTTL{Kind: kind, Column: col}
			}
		}
	}
	if open {
		p.next()
		return p.call(sel, QualifiedName{Name: nameOf(t)})
	}
	if isPunctTok(p.peekAt(1), ".") && isPunctTok(p.peekAt(3), "(") &&
		(isNameTok(p.peekAt(2)) || isKeyword(p.peekAt(2), "token")) {
		p.next()
		p.next()
		return p.call(sel, QualifiedName{Keyspace: nameOf(t), Name: nameOf(p.next())})
	}
	if sel && isNameTok(t) {
		p.next()
		return &ColumnRef{Name: nameOf(t)}
	}
	p.noViable(t)
	return nil
}

// call parses the argument list of a function call.
func (p *parser) call(sel bool, name QualifiedName) Expr {
	p.expectPunct("(")
	args := p.exprsUntil(sel, ")")
	return &FunctionCall{Name: name, Args: args}
}
