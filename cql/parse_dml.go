package cql

// insertStatement parses INSERT INTO ... VALUES and INSERT INTO ... JSON.
func (p *parser) insertStatement() Statement {
	p.expectKw("insert")
	p.expectKw("into")
	s := &Insert{Table: p.qualifiedName()}
	switch {
	case p.acceptKw("json"):
		t := p.peek()
		switch {
		case t.kind == tkString:
			p.next()
			s.JSON = &Constant{Kind: StringConstant, Text: t.text}
		case p.startsMarker():
			s.JSON = p.marker()
		default:
			p.noViable(t)
		}
		if p.acceptKw("default") {
			if !p.acceptKw("null") {
				if p.isKw("unset") {
					p.next()
					s.DefaultUnset = true
				} else {
					p.noViable(p.peek())
				}
			}
		}
	case !p.isPunct("("):
		p.noViable(p.peek())
	default:
		s.Columns = p.identTuple()
		p.expectKw("values")
		p.expectPunct("(")
		for {
			s.Values = append(s.Values, p.term())
			if p.err != nil || !p.acceptPunct(",") {
				break
			}
		}
		p.expectPunct(")")
	}
	s.IfNotExists = p.ifNotExists()
	s.Using = p.using(false)
	if p.err != nil {
		return nil
	}
	return s
}

// updateStatement parses UPDATE.
func (p *parser) updateStatement() Statement {
	p.expectKw("update")
	s := &Update{Table: p.qualifiedName()}
	s.Using = p.using(false)
	p.expectKw("set")
	for {
		s.Assignments = append(s.Assignments, p.assignment())
		if p.err != nil || !p.acceptPunct(",") {
			break
		}
	}
	p.expectKw("where")
	s.Where = p.whereClause()
	s.IfExists, s.Conditions = p.ifClause()
	if p.err != nil {
		return nil
	}
	return s
}

// assignment parses one SET item.
func (p *parser) assignment() Assignment {
	a := Assignment{Column: p.ident()}
	switch {
	case p.acceptPunct("["):
		a.Kind = AssignElement
		a.Key = p.term()
		p.expectPunct("]")
		p.expectPunct("=")
		a.Value = p.term()
	case p.acceptPunct("."):
		a.Kind = AssignField
		a.Field = p.ident()
		p.expectPunct("=")
		a.Value = p.term()
	case p.acceptPunct("+="):
		a.Kind = AssignAdd
		a.Value = p.term()
	case p.acceptPunct("-="):
		a.Kind = AssignSubtract
		a.Value = p.term()
	default:
		p.expectPunct("=")
		p.assignedValue(&a)
	}
	return a
}

// assignedValue parses the right side of "c = ...": c + v, c - v, v + c or
// a plain value. A name there is the column itself unless it is called.
func (p *parser) assignedValue(a *Assignment) {
	t := p.peek()
	next := p.peekAt(1)
	if isNameTok(t) && !isPunctTok(next, "(") && !isPunctTok(next, ".") {
		p.next()
		switch {
		case p.acceptPunct("+"):
			a.Kind = AssignAdd
			a.Value = p.term()
		case p.acceptPunct("-"):
			a.Kind = AssignSubtract
			a.Value = p.term()
		case p.peek().kind == tkInteger && p.peek().text[0] == '-':
			// "c = c -3" lexes as c, =, c, -3: Cassandra reads it as c + -3.
			a.Kind = AssignAdd
			a.Value = constantOf(p.next())
		default:
			p.noViable(p.peek())
			return
		}
		if nameOf(t) != a.Column {
			op := "+"
			if a.Kind == AssignSubtract {
				op = "-"
			}
			p.fail(t, "Only expressions of the form X = X "+op+" <value> are supported.")
		}
		return
	}
	a.Value = p.term()
	if !p.acceptPunct("+") {
		a.Kind = AssignValue
		return
	}
	c := p.peek()
	if name := p.ident(); p.err == nil && name != a.Column {
		p.fail(c, "Only expressions of the form X = <value> + X are supported.")
	}
	a.Kind = AssignPrepend
}

// deleteStatement parses DELETE.
func (p *parser) deleteStatement() Statement {
	p.expectKw("delete")
	s := &Delete{}
	if !p.isKw("from") {
		for {
			d := DeleteSelector{Column: p.ident()}
			switch {
			case p.acceptPunct("["):
				d.Key = p.term()
				p.expectPunct("]")
			case p.acceptPunct("."):
				d.Field = p.ident()
			}
			s.Columns = append(s.Columns, d)
			if p.err != nil || !p.acceptPunct(",") {
				break
			}
		}
	}
	p.expectKw("from")
	s.Table = p.qualifiedName()
	s.Using = p.using(true)
	p.expectKw("where")
	s.Where = p.whereClause()
	s.IfExists, s.Conditions = p.ifClause()
	if p.err != nil {
		return nil
	}
	return s
}

// batchStatement parses BEGIN ... BATCH ... APPLY BATCH.
func (p *parser) batchStatement() Statement {
	p.expectKw("begin")
	s := &Batch{}
	switch {
	case p.acceptKw("unlogged"):
		s.Kind = UnloggedBatch
	case p.acceptKw("counter"):
		s.Kind = CounterBatch
	}
	p.expectKw("batch")
	s.Using = p.using(false)
	for p.err == nil {
		var st Statement
		switch {
		case p.isKw("insert"):
			st = p.insertStatement()
		case p.isKw("update"):
			st = p.updateStatement()
		case p.isKw("delete"):
			st = p.deleteStatement()
		}
		m, ok := st.(Modification)
		if !ok {
			break
		}
		s.Statements = append(s.Statements, m)
		p.acceptPunct(";")
	}
	p.expectKw("apply")
	p.expectKw("batch")
	if p.err != nil {
		return nil
	}
	return s
}
