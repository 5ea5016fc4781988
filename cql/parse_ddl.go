package cql

// createStatement parses CREATE KEYSPACE, CREATE TABLE and CREATE TYPE.
func (p *parser) createStatement() Statement {
	p.expectKw("create")
	t := p.peek()
	switch {
	case isKeyword(t, "keyspace"):
		p.next()
		s := &CreateKeyspace{IfNotExists: p.ifNotExists(), Name: p.ident()}
		p.expectKw("with")
		s.Options = p.options(nil)
		return stmtOrNil(p, s)
	case isKeyword(t, "table"), isKeyword(t, "columnfamily"):
		p.next()
		return p.createTable()
	case isKeyword(t, "role"), isKeyword(t, "user"):
		p.next()
		return p.createRole(isKeyword(t, "user"))
	case isKeyword(t, "or"):
		p.next()
		p.expectKw("replace")
		switch u := p.peek(); {
		case isKeyword(u, "function"):
			p.next()
			return p.createFunction(true)
		case isKeyword(u, "aggregate"):
			p.next()
			return p.createAggregate(true)
		default:
			p.noViable(u)
			return nil
		}
	case isKeyword(t, "function"):
		p.next()
		return p.createFunction(false)
	case isKeyword(t, "aggregate"):
		p.next()
		return p.createAggregate(false)
	case isKeyword(t, "materialized"):
		p.next()
		p.expectKw("view")
		return p.createView()
	case isKeyword(t, "index"):
		p.next()
		return p.createIndex(false)
	case isKeyword(t, "custom") && isKeyword(p.peekAt(1), "index"):
		p.next()
		p.next()
		return p.createIndex(true)
	case isKeyword(t, "type"):
		p.next()
		s := &CreateType{IfNotExists: p.ifNotExists(), Name: p.typeName()}
		p.expectPunct("(")
		for {
			s.Fields = append(s.Fields, FieldDef{Name: p.ident(), Type: p.typeRef()})
			if p.err != nil || !p.acceptPunct(",") || p.isPunct(")") {
				break
			}
		}
		p.expectPunct(")")
		return stmtOrNil(p, s)
	}
	p.noViable(t)
	return nil
}

func (p *parser) createIndex(custom bool) Statement {
	s := &CreateIndex{Custom: custom, IfNotExists: p.ifNotExists()}
	if !p.isKw("on") {
		s.Name = p.qualifiedName()
	}
	p.expectKw("on")
	s.Table = p.qualifiedName()
	p.expectPunct("(")
	for p.err == nil && !p.isPunct(")") {
		s.Targets = append(s.Targets, p.indexTarget())
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(")")
	if p.acceptKw("using") {
		s.Using, s.HasUsing = p.expectString(), true
	}
	if p.acceptKw("with") {
		s.Options = p.options(nil)
	}
	return stmtOrNil(p, s)
}

var indexTargetKinds = map[string]IndexTargetKind{"values": IndexValues, "keys": IndexKeys, "entries": IndexEntries, "full": IndexFull}

func (p *parser) indexTarget() IndexTarget {
	t := p.peek()
	if kind, ok := indexTargetKinds[t.lower]; ok && t.kind == tkIdent && isPunctTok(p.peekAt(1), "(") {
		p.next()
		p.next()
		target := IndexTarget{Column: p.ident(), Kind: kind}
		p.expectPunct(")")
		return target
	}
	return IndexTarget{Column: p.ident()}
}

func (p *parser) createFunction(orReplace bool) Statement {
	s := &CreateFunction{OrReplace: orReplace, IfNotExists: p.ifNotExists(), Name: p.functionRef()}
	p.expectPunct("(")
	for p.err == nil && !p.isPunct(")") {
		s.ArgNames = append(s.ArgNames, p.ident())
		s.ArgTypes = append(s.ArgTypes, p.typeRef())
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(")")
	if p.acceptKw("called") {
		s.CalledOnNull = true
	} else {
		p.expectKw("returns")
		p.expectKw("null")
	}
	p.expectKw("on")
	p.expectKw("null")
	p.expectKw("input")
	p.expectKw("returns")
	s.Returns = p.typeRef()
	p.expectKw("language")
	if t := p.peek(); t.kind == tkIdent {
		p.next()
		s.Language = t.lower
	} else {
		p.failGrammar(t, "mismatched input "+t.display()+" expecting IDENT")
	}
	p.expectKw("as")
	s.Body = p.expectString()
	return stmtOrNil(p, s)
}

func (p *parser) createAggregate(orReplace bool) Statement {
	s := &CreateAggregate{OrReplace: orReplace, IfNotExists: p.ifNotExists(), Name: p.functionRef()}
	p.expectPunct("(")
	s.ArgTypes = p.typeRefsUntil(")")
	p.expectKw("sfunc")
	s.StateFunc = p.ident()
	p.expectKw("stype")
	s.StateType = p.typeRef()
	if p.acceptKw("finalfunc") {
		s.FinalFunc = p.ident()
	}
	if p.acceptKw("initcond") {
		s.InitCond = p.term()
	}
	return stmtOrNil(p, s)
}

func (p *parser) createView() Statement {
	s := &CreateView{IfNotExists: p.ifNotExists(), Name: p.qualifiedName()}
	p.expectKw("as")
	p.expectKw("select")
	s.Select = &Select{}
	p.selectors(s.Select)
	p.expectKw("from")
	s.Select.Table = p.qualifiedName()
	if p.acceptKw("where") {
		s.Select.Where = p.whereClause()
	}
	p.expectKw("primary")
	p.expectKw("key")
	s.PrimaryKey = p.primaryKeySpec()
	if p.acceptKw("with") {
		s.ClusteringOrder, s.Options = p.tableProperties()
	}
	return stmtOrNil(p, s)
}

// functionRef parses a function's name, [keyspace.]name.
func (p *parser) functionRef() QualifiedName {
	if isNameTok(p.peek()) && isPunctTok(p.peekAt(1), ".") {
		ks := p.ident()
		p.next()
		return QualifiedName{Keyspace: ks, Name: p.ident()}
	}
	return QualifiedName{Name: p.ident()}
}

// typeRefsUntil parses types separated by commas up to the closing
// punctuation, which it consumes.
func (p *parser) typeRefsUntil(end string) []*TypeRef {
	var out []*TypeRef
	for p.err == nil && !p.isPunct(end) {
		out = append(out, p.typeRef())
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(end)
	return out
}

// expectString parses a string constant where the grammar has nothing
// else.
func (p *parser) expectString() string {
	t := p.peek()
	if t.kind != tkString {
		p.failGrammar(t, "mismatched input "+t.display()+" expecting STRING_LITERAL")
		return ""
	}
	p.next()
	return t.text
}

// stmtOrNil returns s, or nil once the parse has failed, so that no
// half-built statement escapes.
func stmtOrNil(p *parser, s Statement) Statement {
	if p.err != nil {
		return nil
	}
	return s
}

func (p *parser) createTable() Statement {
	s := &CreateTable{IfNotExists: p.ifNotExists(), Name: p.qualifiedName()}
	p.expectPunct("(")
	seenKey := false
	for p.err == nil {
		t := p.peek()
		if p.acceptKw("primary") {
			p.expectKw("key")
			if seenKey {
				p.fail(t, "Multiple PRIMARY KEYs specified (exactly one required)")
			}
			seenKey = true
			s.PrimaryKey = p.primaryKeySpec()
		} else {
			c := p.columnDef()
			s.Columns = append(s.Columns, c)
			if k := p.peek(); p.acceptKw("primary") {
				p.expectKw("key")
				if seenKey {
					p.fail(k, "Multiple PRIMARY KEYs specified (exactly one required)")
				}
				seenKey = true
				s.PrimaryKey.PartitionKey = []string{c.Name}
			}
		}
		// Cassandra accepts a comma before the closing parenthesis.
		if !p.acceptPunct(",") || p.isPunct(")") {
			break
		}
	}
	p.expectPunct(")")
	if p.acceptKw("with") {
		s.ClusteringOrder, s.Options = p.tableProperties()
	}
	return stmtOrNil(p, s)
}

// primaryKeySpec parses the parenthesized key after PRIMARY KEY.
func (p *parser) primaryKeySpec() PrimaryKey {
	var k PrimaryKey
	p.expectPunct("(")
	if p.acceptPunct("(") {
		k.PartitionKey = p.identList()
		p.expectPunct(")")
	} else {
		k.PartitionKey = []string{p.ident()}
	}
	for p.err == nil && p.acceptPunct(",") {
		k.Clustering = append(k.Clustering, p.ident())
	}
	p.expectPunct(")")
	return k
}

// tableProperties parses what follows WITH in CREATE TABLE and CREATE
// MATERIALIZED VIEW: CLUSTERING ORDER BY and options, joined by AND.
func (p *parser) tableProperties() (order []ClusteringOrder, opts []Option) {
	for p.err == nil {
		t := p.peek()
		switch {
		case isKeyword(t, "clustering") && isKeyword(p.peekAt(1), "order"):
			p.next()
			p.next()
			p.expectKw("by")
			p.expectPunct("(")
			for p.err == nil {
				o := ClusteringOrder{Column: p.ident()}
				if !p.acceptKw("asc") {
					if !p.isKw("desc") {
						p.noViable(p.peek())
					}
					p.next()
					o.Descending = true
				}
				order = append(order, o)
				if !p.acceptPunct(",") {
					break
				}
			}
			p.expectPunct(")")
		case isKeyword(t, "compact") && isKeyword(p.peekAt(1), "storage"):
			p.fail(t, "Compact tables are not allowed in Cassandra starting with 4.0 version.")
		default:
			opts = p.option(opts)
		}
		if !p.acceptKw("and") {
			break
		}
	}
	return order, opts
}

// columnDef parses name type [STATIC].
func (p *parser) columnDef() ColumnDef {
	c := ColumnDef{Name: p.ident(), Type: p.typeRef()}
	c.Static = p.acceptKw("static")
	return c
}

// alterStatement parses ALTER KEYSPACE, ALTER TABLE, ALTER TYPE and
// ALTER ROLE.
func (p *parser) alterStatement() Statement {
	p.expectKw("alter")
	t := p.peek()
	switch {
	case isKeyword(t, "keyspace"):
		p.next()
		s := &AlterKeyspace{IfExists: p.ifExists(), Name: p.ident()}
		p.expectKw("with")
		s.Options = p.options(nil)
		return stmtOrNil(p, s)
	case isKeyword(t, "table"), isKeyword(t, "columnfamily"):
		p.next()
		return p.alterTable()
	case isKeyword(t, "type"):
		p.next()
		return p.alterType()
	case isKeyword(t, "materialized"):
		p.next()
		p.expectKw("view")
		s := &AlterView{IfExists: p.ifExists(), Name: p.qualifiedName()}
		p.expectKw("with")
		s.Options = p.options(nil)
		return stmtOrNil(p, s)
	case isKeyword(t, "role"), isKeyword(t, "user"):
		p.next()
		return p.alterRole(isKeyword(t, "user"))
	}
	p.noViable(t)
	return nil
}

func (p *parser) alterType() Statement {
	s := &AlterType{IfExists: p.ifExists(), Name: p.typeName()}
	t := p.peek()
	switch {
	case p.acceptKw("add"):
		s.Action = AddField
		s.IfFieldNotExists = p.ifNotExists()
		s.Add = FieldDef{Name: p.ident(), Type: p.typeRef()}
	case p.acceptKw("alter"):
		s.Action = AlterFieldType
		s.Add.Name = p.ident()
		p.expectKw("type")
		s.Add.Type = p.typeRef()
	case p.acceptKw("rename"):
		s.Action = RenameFields
		s.IfFieldExists = p.ifExists()
		s.Rename = p.renames()
	default:
		p.noViable(t)
	}
	return stmtOrNil(p, s)
}

// renames parses "a TO b [AND c TO d ...]".
func (p *parser) renames() []ColumnRename {
	var out []ColumnRename
	for {
		r := ColumnRename{From: p.ident()}
		p.expectKw("to")
		r.To = p.ident()
		out = append(out, r)
		if p.err != nil || !p.acceptKw("and") {
			return out
		}
	}
}

func (p *parser) alterTable() Statement {
	s := &AlterTable{IfExists: p.ifExists(), Name: p.qualifiedName()}
	t := p.peek()
	switch {
	case p.acceptKw("add"):
		s.Action = AddColumns
		s.IfColumnNotExists = p.ifNotExists()
		if !p.acceptPunct("(") {
			s.Add = []ColumnDef{p.columnDef()}
			break
		}
		for {
			s.Add = append(s.Add, p.columnDef())
			if p.err != nil || !p.acceptPunct(",") {
				break
			}
		}
		p.expectPunct(")")
	case p.acceptKw("drop"):
		s.Action = DropColumns
		s.IfColumnExists = p.ifExists()
		if p.isPunct("(") {
			s.Drop = p.identTuple()
		} else {
			s.Drop = []string{p.ident()}
		}
	case p.acceptKw("rename"):
		s.Action = RenameColumns
		s.IfColumnExists = p.ifExists()
		s.Rename = p.renames()
	case p.acceptKw("with"):
		s.Action = SetOptions
		s.Options = p.options(nil)
	default:
		p.noViable(t)
	}
	return stmtOrNil(p, s)
}

// dropStatement parses DROP KEYSPACE, DROP TABLE and DROP TYPE.
func (p *parser) dropStatement() Statement {
	p.expectKw("drop")
	t := p.peek()
	switch {
	case isKeyword(t, "keyspace"):
		p.next()
		return stmtOrNil(p, &DropKeyspace{IfExists: p.ifExists(), Name: p.ident()})
	case isKeyword(t, "table"), isKeyword(t, "columnfamily"):
		p.next()
		return stmtOrNil(p, &DropTable{IfExists: p.ifExists(), Name: p.qualifiedName()})
	case isKeyword(t, "type"):
		p.next()
		return stmtOrNil(p, &DropType{IfExists: p.ifExists(), Name: p.typeName()})
	case isKeyword(t, "index"):
		p.next()
		return stmtOrNil(p, &DropIndex{IfExists: p.ifExists(), Name: p.qualifiedName()})
	case isKeyword(t, "function"), isKeyword(t, "aggregate"):
		p.next()
		s := &DropFunction{Aggregate: isKeyword(t, "aggregate"), IfExists: p.ifExists(), Name: p.functionRef()}
		if p.acceptPunct("(") {
			s.ArgsGiven = true
			s.ArgTypes = p.typeRefsUntil(")")
		}
		return stmtOrNil(p, s)
	case isKeyword(t, "materialized"):
		p.next()
		p.expectKw("view")
		return stmtOrNil(p, &DropView{IfExists: p.ifExists(), Name: p.qualifiedName()})
	case isKeyword(t, "role"), isKeyword(t, "user"):
		p.next()
		return p.dropRole(isKeyword(t, "user"))
	}
	p.noViable(t)
	return nil
}
