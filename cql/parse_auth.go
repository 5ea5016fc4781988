package cql

import "strings"

// The role and permission statements, as Cassandra 4.1's grammar has them.

// roleName parses a role's name: an identifier (folded to lower case),
// a quoted name or a string literal (kept as written).
func (p *parser) roleName() string {
	t := p.peek()
	switch {
	case t.kind == tkString:
		p.next()
		return t.text
	case t.kind == tkQuotedIdent && t.text != "":
		p.next()
		return t.text
	case t.kind == tkIdent && !reserved[t.lower]:
		p.next()
		return t.lower
	case isPunctTok(t, "?"), isPunctTok(t, ":"):
		p.fail(t, "Bind variables cannot be used for role names")
		return ""
	}
	p.noViable(t)
	return ""
}

// userName parses the name of the USER forms: an identifier or a string
// literal, both kept as written.
func (p *parser) userName() string {
	t := p.peek()
	switch {
	case t.kind == tkString:
		p.next()
		return t.text
	case t.kind == tkQuotedIdent:
		p.fail(t, "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE")
		return ""
	case t.kind == tkIdent && !reserved[t.lower]:
		p.next()
		return t.text
	}
	p.noViable(t)
	return ""
}

// roleOptions parses [WITH option (AND option)*].
func (p *parser) roleOptions() RoleSettings {
	var o RoleSettings
	if !p.acceptKw("with") {
		return o
	}
	for {
		p.roleOption(&o)
		if p.err != nil || !p.acceptKw("and") {
			break
		}
	}
	if o.Password != nil && o.HashedPassword != nil {
		p.fail(p.peek(), "Options 'password' and 'hashed password' are mutually exclusive")
	}
	return o
}

func (p *parser) roleOption(o *RoleSettings) {
	t := p.peek()
	twice := func(set bool, name string) bool {
		if set {
			p.fail(t, "Multiple definition for property '"+name+"'")
		}
		return set
	}
	switch {
	case p.acceptKw("password"):
		p.expectPunct("=")
		if s, ok := p.stringLiteral(); ok && !twice(o.Password != nil, "PASSWORD") {
			o.Password = &s
		}
	case p.acceptKw("hashed"):
		p.expectKw("password")
		p.expectPunct("=")
		if s, ok := p.stringLiteral(); ok && !twice(o.HashedPassword != nil, "HASHED_PASSWORD") {
			o.HashedPassword = &s
		}
	case p.acceptKw("superuser"):
		p.expectPunct("=")
		if b, ok := p.booleanLiteral(); ok && !twice(o.Superuser != nil, "SUPERUSER") {
			o.Superuser = &b
		}
	case p.acceptKw("login"):
		p.expectPunct("=")
		if b, ok := p.booleanLiteral(); ok && !twice(o.Login != nil, "LOGIN") {
			o.Login = &b
		}
	case p.acceptKw("options"):
		p.expectPunct("=")
		if !p.isPunct("{") {
			p.noViable(p.peek())
			return
		}
		if v := p.optionValue(); p.err == nil && !twice(o.Options != nil, "OPTIONS") {
			o.Options = v
		}
	case p.acceptKw("access"):
		p.expectKw("to")
		if p.acceptKw("all") {
			p.expectKw("datacenters")
			o.AllDatacenters = true
			return
		}
		p.expectKw("datacenters")
		p.expectPunct("{")
		dcs := []string{}
		for p.err == nil {
			s, ok := p.stringLiteral()
			if !ok {
				return
			}
			dcs = append(dcs, s)
			if !p.acceptPunct(",") {
				break
			}
		}
		p.expectPunct("}")
		o.Datacenters = dcs
	default:
		p.noViable(t)
	}
}

// stringLiteral parses a string constant.
func (p *parser) stringLiteral() (string, bool) {
	t := p.peek()
	if t.kind != tkString {
		p.noViable(t)
		return "", false
	}
	p.next()
	return t.text, true
}

// booleanLiteral parses true or false.
func (p *parser) booleanLiteral() (bool, bool) {
	t := p.peek()
	if t.kind == tkIdent && (t.lower == "true" || t.lower == "false") {
		p.next()
		return t.lower == "true", true
	}
	p.noViable(t)
	return false, false
}

// userOptions parses the USER forms' [WITH [HASHED] PASSWORD 'x']
// [SUPERUSER | NOSUPERUSER].
func (p *parser) userOptions() RoleSettings {
	var o RoleSettings
	if p.acceptKw("with") {
		hashed := p.acceptKw("hashed")
		p.expectKw("password")
		if s, ok := p.stringLiteral(); ok {
			if hashed {
				o.HashedPassword = &s
			} else {
				o.Password = &s
			}
		}
	}
	switch {
	case p.acceptKw("superuser"):
		b := true
		o.Superuser = &b
	case p.acceptKw("nosuperuser"):
		b := false
		o.Superuser = &b
	}
	return o
}

// createRole parses the rest of CREATE ROLE or CREATE USER.
func (p *parser) createRole(user bool) Statement {
	s := &CreateRole{User: user, IfNotExists: p.ifNotExists()}
	if user {
		s.Name = p.userName()
		s.Options = p.userOptions()
	} else {
		s.Name = p.roleName()
		s.Options = p.roleOptions()
	}
	return stmtOrNil(p, s)
}

// alterRole parses the rest of ALTER ROLE or ALTER USER.
func (p *parser) alterRole(user bool) Statement {
	s := &AlterRole{User: user, IfExists: p.ifExists()}
	if user {
		s.Name = p.userName()
		s.Options = p.userOptions()
	} else {
		s.Name = p.roleName()
		if !p.isKw("with") {
			p.noViable(p.peek())
		}
		s.Options = p.roleOptions()
	}
	return stmtOrNil(p, s)
}

// dropRole parses the rest of DROP ROLE or DROP USER.
func (p *parser) dropRole(user bool) Statement {
	s := &DropRole{User: user, IfExists: p.ifExists()}
	if user {
		s.Name = p.userName()
	} else {
		s.Name = p.roleName()
	}
	return stmtOrNil(p, s)
}

var permissionWords = []string{"create", "alter", "drop", "select", "modify", "authorize", "describe", "execute"}

func isPermissionWord(t *token) bool {
	if t.kind != tkIdent {
		return false
	}
	for _, w := range permissionWords {
		if t.lower == w {
			return true
		}
	}
	return false
}

// permissionsAhead reports whether GRANT or REVOKE is followed by
// permissions (rather than a role's name): ALL, or a permission word
// followed by PERMISSION, a comma or ON.
func (p *parser) permissionsAhead() bool {
	t := p.peek()
	if isKeyword(t, "all") {
		return true
	}
	if !isPermissionWord(t) {
		return false
	}
	n := p.peekAt(1)
	return isKeyword(n, "permission") || isKeyword(n, "on") || isPunctTok(n, ",")
}

// permissionList parses ALL [PERMISSIONS] (nil) or permission
// [PERMISSION] (, permission [PERMISSION])*, in upper case.
func (p *parser) permissionList() []string {
	if p.acceptKw("all") {
		p.acceptKw("permissions")
		return nil
	}
	var out []string
	for {
		t := p.peek()
		if !isPermissionWord(t) {
			p.noViable(t)
			return nil
		}
		p.next()
		p.acceptKw("permission")
		out = append(out, strings.ToUpper(t.lower))
		if !p.acceptPunct(",") {
			return out
		}
	}
}

// resource parses what a permission is granted on.
func (p *parser) resource() Resource {
	t := p.peek()
	switch {
	case p.acceptKw("all"):
		switch {
		case p.acceptKw("keyspaces"):
			return Resource{Kind: AllKeyspacesResource}
		case p.acceptKw("roles"):
			return Resource{Kind: AllRolesResource}
		case p.acceptKw("tables"), p.acceptKw("columnfamilies"):
			p.expectKw("in")
			if !p.acceptKw("schema") {
				p.expectKw("keyspace")
			}
			return Resource{Kind: AllTablesResource, Name: QualifiedName{Keyspace: p.ident()}}
		case p.acceptKw("functions"):
			if p.acceptKw("in") {
				if !p.acceptKw("schema") {
					p.expectKw("keyspace")
				}
				return Resource{Kind: KeyspaceFunctionsResource, Name: QualifiedName{Keyspace: p.ident()}}
			}
			return Resource{Kind: AllFunctionsResource}
		}
		p.noViable(p.peek())
	case p.acceptKw("keyspace"), p.acceptKw("schema"):
		return Resource{Kind: KeyspaceResource, Name: QualifiedName{Keyspace: p.ident()}}
	case p.acceptKw("role"):
		return Resource{Kind: RoleResource, Name: QualifiedName{Name: p.roleName()}}
	case p.acceptKw("table"), p.acceptKw("columnfamily"):
		return Resource{Kind: TableResource, Name: p.qualifiedName()}
	case isNameTok(t):
		return Resource{Kind: TableResource, Name: p.qualifiedName()}
	default:
		p.noViable(t)
	}
	return Resource{}
}

// grantStatement parses GRANT role TO role and GRANT permissions ON
// resource TO role, or with revoke their REVOKE ... FROM forms.
func (p *parser) grantStatement(revoke bool) Statement {
	verb, to := "grant", "to"
	if revoke {
		verb, to = "revoke", "from"
	}
	p.expectKw(verb)
	if !p.permissionsAhead() {
		s := &RoleGrant{Role: p.roleName(), Revoke: revoke}
		p.expectKw(to)
		s.Member = p.roleName()
		return stmtOrNil(p, s)
	}
	s := &PermissionGrant{Permissions: p.permissionList(), Revoke: revoke}
	p.expectKw("on")
	s.Resource = p.resource()
	p.expectKw(to)
	s.Role = p.roleName()
	return stmtOrNil(p, s)
}

// listStatement parses LIST ROLES, LIST USERS and LIST permissions.
func (p *parser) listStatement() Statement {
	p.expectKw("list")
	switch {
	case p.acceptKw("users"):
		return stmtOrNil(p, &ListRoles{Users: true})
	case p.acceptKw("roles"):
		s := &ListRoles{}
		if p.acceptKw("of") {
			s.Of = p.roleName()
		}
		s.NoRecursive = p.acceptKw("norecursive")
		return stmtOrNil(p, s)
	}
	s := &ListPermissions{Permissions: p.permissionList()}
	if p.acceptKw("on") {
		r := p.resource()
		s.Resource = &r
	}
	if p.acceptKw("of") {
		s.Of = p.roleName()
	}
	s.NoRecursive = p.acceptKw("norecursive")
	return stmtOrNil(p, s)
}
