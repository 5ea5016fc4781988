package cql

// selectStatement parses SELECT.
func (p *parser) selectStatement() Statement {
	p.expectKw("select")
	s := &Select{}
	// json and distinct are also column names: they are keywords only when
	// a whole select list follows them, as Cassandra's predicates decide.
	if p.isKw("json") && p.try(func() { p.next(); p.selectClause(&Select{}) }) {
		p.next()
		s.JSON = true
	}
	p.selectClause(s)
	p.expectKw("from")
	s.Table = p.qualifiedName()
	if p.acceptKw("where") {
		s.Where = p.whereClause()
	}
	if p.isKw("group") {
		p.next()
		p.expectKw("by")
		for {
			s.GroupBy = append(s.GroupBy, p.selectorExpr())
			if p.err != nil || !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptKw("order") {
		p.expectKw("by")
		for {
			o := Ordering{Column: p.ident()}
			if p.isKw("ann") && isKeyword(p.peekAt(1), "of") {
				p.next()
				p.next()
				o.ANN = p.term()
			}
			if !p.acceptKw("asc") {
				o.Descending = p.acceptKw("desc")
			}
			s.OrderBy = append(s.OrderBy, o)
			if p.err != nil || !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.isKw("per") {
		p.next()
		p.expectKw("partition")
		p.expectKw("limit")
		s.PerPartitionLimit = p.intValue()
	}
	if p.acceptKw("limit") {
		s.Limit = p.intValue()
	}
	if p.acceptKw("allow") {
		p.expectKw("filtering")
		s.AllowFiltering = true
	}
	if p.err != nil {
		return nil
	}
	return s
}

// selectClause parses [DISTINCT] (* | selector, ...).
func (p *parser) selectClause(s *Select) {
	if p.isKw("distinct") && p.try(func() { p.next(); p.selectors(&Select{}) }) {
		p.next()
		s.Distinct = true
	}
	p.selectors(s)
}

func (p *parser) selectors(s *Select) {
	if p.acceptPunct("*") {
		return
	}
	for {
		sel := Selector{Expr: p.selectorExpr()}
		if p.acceptKw("as") {
			sel.Alias = p.ident()
		}
		s.Selectors = append(s.Selectors, sel)
		if p.err != nil || !p.acceptPunct(",") {
			return
		}
	}
}

// whereClause parses relation (AND relation)*.
func (p *parser) whereClause() []Relation {
	var rels []Relation
	for {
		rels = append(rels, p.relation())
		if p.err != nil || !p.acceptKw("and") {
			return rels
		}
	}
}

var comparisonOps = map[string]Operator{"=": OpEq, "<": OpLt, "<=": OpLte, ">": OpGt, ">=": OpGte, "!=": OpNeq}

// comparison parses =, <, <=, >, >= or !=.
func (p *parser) comparison() Operator {
	t := p.peek()
	if t.kind == tkPunct {
		if op, ok := comparisonOps[t.text]; ok {
			p.next()
			return op
		}
	}
	p.noViable(t)
	return OpEq
}

func (p *parser) isComparison() bool {
	t := p.peek()
	_, ok := comparisonOps[t.text]
	return t.kind == tkPunct && ok
}

func (p *parser) relation() Relation {
	t := p.peek()
	switch {
	case isKeyword(t, "token") && isPunctTok(p.peekAt(1), "("):
		p.next()
		r := Relation{Kind: TokenRelation, Columns: p.identTuple()}
		r.Op = p.comparison()
		r.Value = p.term()
		return r
	case isPunctTok(t, "("):
		r := Relation{Kind: MultiColumnRelation, Columns: p.identTuple()}
		if p.acceptKw("in") {
			r.Op = OpIn
			if p.startsMarker() {
				r.Value = p.marker()
				return r
			}
			p.expectPunct("(")
			if p.acceptPunct(")") {
				return r
			}
			for {
				r.Values = append(r.Values, p.tupleOrMarker())
				if p.err != nil || !p.acceptPunct(",") {
					break
				}
			}
			p.expectPunct(")")
			return r
		}
		r.Op = p.comparison()
		r.Value = p.tupleOrMarker()
		return r
	}
	r := Relation{Kind: ColumnRelation, Columns: []string{p.ident()}}
	if p.acceptPunct("[") {
		r.Kind = ElementRelation
		r.Key = p.term()
		p.expectPunct("]")
		r.Op = p.comparison()
		r.Value = p.term()
		return r
	}
	switch {
	case p.isComparison():
		r.Op = p.comparison()
		r.Value = p.term()
	case p.acceptKw("in"):
		r.Op = OpIn
		r.Value, r.Values = p.inValues()
	case p.acceptKw("contains"):
		r.Op = OpContains
		if p.acceptKw("key") {
			r.Op = OpContainsKey
		}
		r.Value = p.term()
	case p.acceptKw("like"):
		r.Op = OpLike
		r.Value = p.term()
	case p.acceptKw("is"):
		p.expectKw("not")
		p.expectKw("null")
		r.Op = OpIsNotNull
	default:
		p.noViable(p.peek())
	}
	return r
}

func (p *parser) startsMarker() bool { return p.isPunct("?") || p.isPunct(":") }

// inValues parses what follows IN for one column: a marker, or a
// parenthesized and possibly empty list of terms.
func (p *parser) inValues() (Expr, []Expr) {
	if p.startsMarker() {
		return p.marker(), nil
	}
	if !p.acceptPunct("(") {
		p.noViable(p.peek())
		return nil, nil
	}
	return nil, p.exprsUntil(false, ")")
}

// tupleOrMarker parses a tuple literal or a bind marker, the values of
// multi-column relations.
func (p *parser) tupleOrMarker() Expr {
	if p.startsMarker() {
		return p.marker()
	}
	t := p.peek()
	if !p.acceptPunct("(") {
		p.noViable(t)
		return nil
	}
	es := p.exprsUntil(false, ")")
	if p.err == nil && len(es) == 0 {
		p.noViable(t)
	}
	return &TupleLiteral{Elements: es}
}

// ifClause parses an optional IF EXISTS or IF conditions of UPDATE and
// DELETE.
func (p *parser) ifClause() (exists bool, conds []Condition) {
	if !p.acceptKw("if") {
		return false, nil
	}
	// A column may be called exists; it is one when a comparison follows.
	if p.isKw("exists") {
		n := p.peekAt(1)
		_, cmp := comparisonOps[n.text]
		if !(n.kind == tkPunct && (cmp || n.text == "[" || n.text == ".") || isKeyword(n, "in") || isKeyword(n, "contains")) {
			p.next()
			return true, nil
		}
	}
	for {
		conds = append(conds, p.condition())
		if p.err != nil || !p.acceptKw("and") {
			return false, conds
		}
	}
}

func (p *parser) condition() Condition {
	c := Condition{Column: p.ident()}
	switch {
	case p.acceptPunct("["):
		c.Key = p.term()
		p.expectPunct("]")
	case p.acceptPunct("."):
		c.Field = p.ident()
	}
	switch {
	case p.isComparison():
		c.Op = p.comparison()
		c.Value = p.term()
	case p.acceptKw("in"):
		c.Op = OpIn
		c.Value, c.Values = p.inValues()
	case c.Key == nil && c.Field == "" && p.acceptKw("contains"):
		c.Op = OpContains
		if p.acceptKw("key") {
			c.Op = OpContainsKey
		}
		c.Value = p.term()
	default:
		p.noViable(p.peek())
	}
	return c
}
