package exec

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
	"golang.org/x/crypto/bcrypt"
)

// The role and permission statements. Their changes are rows of the
// system_auth tables, committed through the metadata log as a schema
// change is (Coordinator.ApplySchema), so that every node applies them;
// each is checked against system_auth as of the schema epoch it proposes
// against, and checked again if another change commits first.

// roleManagerClass names the role manager in its refusals.
const roleManagerClass = "org.apache.cassandra.auth.CassandraRoleManager"

// roles is system_auth as the running statement sees it.
func (s *Session) roles() *auth.Roles {
	if s.auth == nil {
		return auth.NoRoles()
	}
	return s.auth.Roles()
}

// checkRoleSettings refuses the options the role manager does not take
// and values it cannot store.
func (s *Session) checkRoleSettings(o cql.RoleSettings) error {
	if o.Options != nil {
		return invalidf("%s doesn't support OPTIONS", roleManagerClass)
	}
	if !s.auth.Authenticating() {
		if o.Password != nil {
			return invalidf("%s doesn't support PASSWORD", roleManagerClass)
		}
		if o.HashedPassword != nil {
			return invalidf("%s doesn't support HASHED_PASSWORD", roleManagerClass)
		}
	}
	if o.HashedPassword != nil {
		if _, err := bcrypt.Cost([]byte(*o.HashedPassword)); err != nil {
			return invalidf("Invalid hashed password value. Please use jBcrypt.")
		}
	}
	if o.Datacenters != nil {
		var unknown []string
		known := s.dataCenters()
		for _, dc := range o.Datacenters {
			if known != nil && !slices.Contains(known, dc) {
				unknown = append(unknown, dc)
			}
		}
		if len(unknown) > 0 {
			return invalidf("Invalid value(s) for DATACENTERS '[%s]',All values must be valid datacenters", strings.Join(unknown, ", "))
		}
	}
	return nil
}

// roleChange is what options set, the password hashed.
func (s *Session) roleChange(o cql.RoleSettings) (auth.RoleChange, error) {
	c := auth.RoleChange{Superuser: o.Superuser, Login: o.Login, SaltedHash: o.HashedPassword}
	if o.Password != nil {
		h, err := s.auth.HashPassword(*o.Password)
		if err != nil {
			return c, invalidf("%s", err.Error())
		}
		c.SaltedHash = &h
	}
	return c, nil
}

func (s *Session) createRole(st *cql.CreateRole) (*Result, error) {
	if err := s.checkRolePermission(auth.Create, auth.RolesRoot); err != nil {
		return nil, err
	}
	if st.Options.Superuser != nil && *st.Options.Superuser && !s.isSuper() {
		return nil, unauthorizedf("Only superusers can create a role with superuser status")
	}
	if err := s.checkRoleSettings(st.Options); err != nil {
		return nil, err
	}
	if st.Name == "" {
		return nil, invalidf("Role name can't be an empty string")
	}
	if err := s.ensureNotAnonymous(); err != nil {
		return nil, err
	}
	if s.roles().Role(st.Name) != nil {
		if st.IfNotExists {
			return &Result{Kind: VoidResult}, nil
		}
		return nil, invalidf("%s already exists", st.Name)
	}
	o := st.Options
	if st.User {
		login := true
		o.Login = &login
	}
	c, err := s.roleChange(o)
	if err != nil {
		return nil, err
	}
	w := s.writer()
	ms, err := auth.CreateRole(w, st.Name, c)
	if err != nil {
		return nil, asInvalid(err)
	}
	grants, err := s.creatorGrants(w, auth.RoleResource(st.Name))
	if err != nil {
		return nil, err
	}
	if err := s.apply(append(ms, grants...)...); err != nil {
		return nil, err
	}
	return &Result{Kind: VoidResult}, nil
}

// checkOwnOptions refuses the options a role that is not a superuser may
// not set on itself.
func (s *Session) checkOwnOptions(o cql.RoleSettings) error {
	password := s.auth.Authenticating()
	switch {
	case o.Superuser != nil:
		return unauthorizedf("You aren't allowed to alter SUPERUSER")
	case o.Login != nil:
		return unauthorizedf("You aren't allowed to alter LOGIN")
	case o.Options != nil:
		return unauthorizedf("You aren't allowed to alter OPTIONS")
	case o.Password != nil && !password:
		return unauthorizedf("You aren't allowed to alter PASSWORD")
	case o.HashedPassword != nil && !password:
		return unauthorizedf("You aren't allowed to alter HASHED_PASSWORD")
	}
	return nil
}

func (s *Session) alterRole(st *cql.AlterRole) (*Result, error) {
	roles := s.roles()
	switch {
	case st.Options.Superuser != nil && s.user != "" && roles.Holds(s.user, st.Name):
		return nil, unauthorizedf("You aren't allowed to alter your own superuser status or that of a role granted to you")
	case st.Options.Superuser != nil && !s.isSuper():
		return nil, unauthorizedf("Only superusers are allowed to alter superuser status")
	case s.isSuper():
	case st.Name == s.user:
		if err := s.checkOwnOptions(st.Options); err != nil {
			return nil, err
		}
	default:
		if err := s.checkRolePermission(auth.Alter, auth.RoleResource(st.Name)); err != nil {
			return nil, err
		}
	}
	if err := s.checkRoleSettings(st.Options); err != nil {
		return nil, err
	}
	if st.Options.Empty() {
		return nil, invalidf("ALTER [ROLE|USER] can't be empty")
	}
	if err := s.ensureNotAnonymous(); err != nil {
		return nil, err
	}
	if roles.Role(st.Name) == nil {
		if st.IfExists {
			return &Result{Kind: VoidResult}, nil
		}
		return nil, invalidf("Role %s doesn't exist", st.Name)
	}
	if st.Options.Datacenters != nil || st.Options.AllDatacenters {
		return nil, invalidf("ACCESS TO DATACENTERS operations not supported by AllowAllNetworkAuthorizer")
	}
	c, err := s.roleChange(st.Options)
	if err != nil {
		return nil, err
	}
	ms, err := auth.AlterRole(s.writer(), st.Name, c)
	if err != nil {
		return nil, asInvalid(err)
	}
	if len(ms) > 0 {
		if err := s.apply(ms...); err != nil {
			return nil, err
		}
	}
	return &Result{Kind: VoidResult}, nil
}

func (s *Session) dropRole(st *cql.DropRole) (*Result, error) {
	roles := s.roles()
	if err := s.checkRolePermission(auth.Drop, auth.RoleResource(st.Name)); err != nil {
		return nil, err
	}
	if roles.Role(st.Name) != nil && roles.IsSuperuser(st.Name) && !s.isSuper() {
		return nil, unauthorizedf("Only superusers can drop a role with superuser status")
	}
	if err := s.ensureNotAnonymous(); err != nil {
		return nil, err
	}
	if roles.Role(st.Name) == nil {
		if st.IfExists {
			return &Result{Kind: VoidResult}, nil
		}
		return nil, invalidf("%s doesn't exist", st.Name)
	}
	if st.Name == s.user {
		return nil, invalidf("Cannot DROP primary role for current login")
	}
	ms, err := auth.DropRole(s.writer(), roles, st.Name)
	if err != nil {
		return nil, asInvalid(err)
	}
	if err := s.apply(ms...); err != nil {
		return nil, err
	}
	return &Result{Kind: VoidResult}, nil
}

// checkMembership checks GRANT and REVOKE of a role.
func (s *Session) checkMembership(role, member string) error {
	if err := s.checkRolePermission(auth.Authorize, auth.RoleResource(role)); err != nil {
		return err
	}
	if err := s.ensureNotAnonymous(); err != nil {
		return err
	}
	for _, r := range []string{role, member} {
		if s.roles().Role(r) == nil {
			return invalidf("%s doesn't exist", r)
		}
	}
	return nil
}

// roleGrant runs GRANT role TO member and REVOKE role FROM member.
func (s *Session) roleGrant(st *cql.RoleGrant) (*Result, error) {
	if err := s.checkMembership(st.Role, st.Member); err != nil {
		return nil, err
	}
	roles := s.roles()
	change := auth.GrantRole
	switch {
	case st.Revoke:
		if !slices.Contains(roles.Role(st.Member).MemberOf, st.Role) {
			return nil, invalidf("%s is not a member of %s", st.Member, st.Role)
		}
		change = auth.RevokeRole
	case roles.Holds(st.Member, st.Role):
		return nil, invalidf("%s is a member of %s", st.Member, st.Role)
	case roles.Holds(st.Role, st.Member):
		return nil, invalidf("%s is a member of %s", st.Role, st.Member)
	}
	ms, err := change(s.writer(), st.Role, st.Member)
	if err != nil {
		return nil, asInvalid(err)
	}
	if err := s.apply(ms...); err != nil {
		return nil, err
	}
	return &Result{Kind: VoidResult}, nil
}

// resource is the auth resource a statement names, its table's keyspace
// resolved against the session's.
func (s *Session) resource(r cql.Resource) (auth.Resource, error) {
	switch r.Kind {
	case cql.AllKeyspacesResource:
		return auth.DataRoot, nil
	case cql.KeyspaceResource:
		return auth.KeyspaceResource(r.Name.Keyspace), nil
	case cql.AllTablesResource:
		return auth.AllTablesResource(r.Name.Keyspace), nil
	case cql.TableResource:
		ks, err := s.keyspaceOf(r.Name)
		if err != nil {
			return auth.Resource{}, err
		}
		return auth.TableResource(ks, r.Name.Name), nil
	case cql.AllRolesResource:
		return auth.RolesRoot, nil
	case cql.RoleResource:
		return auth.RoleResource(r.Name.Name), nil
	case cql.AllFunctionsResource:
		return auth.Resource{Kind: auth.AllFunctions}, nil
	case cql.KeyspaceFunctionsResource:
		return auth.Resource{Kind: auth.KeyspaceFunctions, Keyspace: r.Name.Keyspace}, nil
	}
	return auth.Resource{}, invalidf("unknown resource %s", r)
}

// resourceExists reports whether a resource names something that is.
func (s *Session) resourceExists(r auth.Resource) bool {
	switch r.Kind {
	case auth.Keyspace, auth.AllTables, auth.KeyspaceFunctions:
		return s.schema().Keyspace(r.Keyspace) != nil
	case auth.Table:
		ks := s.schema().Keyspace(r.Keyspace)
		return ks != nil && ks.Tables[r.Name] != nil
	case auth.Role:
		return s.roles().Role(r.Name) != nil
	}
	return true
}

// requestedPermissions are the permissions a statement names (all, for
// nil), of those the resource takes.
func requestedPermissions(names []string, r auth.Resource, filter bool) (auth.Permissions, error) {
	var ps auth.Permissions
	if names == nil {
		ps = auth.PermissionsOf(auth.Create, auth.Alter, auth.Drop, auth.Select, auth.Modify, auth.Authorize, auth.Describe, auth.Execute)
	}
	for _, n := range names {
		p, _ := auth.ParsePermission(n)
		ps |= auth.PermissionsOf(p)
	}
	if !filter {
		return ps, nil
	}
	ps &= r.Applicable()
	if ps == 0 {
		return 0, syntaxf("Resource type %s does not support any of the requested permissions", r.TypeName())
	}
	return ps, nil
}

// permissionGrant runs GRANT and REVOKE of permissions: a warning names
// those already granted (or, revoked, not granted), and the others change.
func (s *Session) permissionGrant(st *cql.PermissionGrant) (*Result, error) {
	op := "GRANT"
	if st.Revoke {
		op = "REVOKE"
	}
	r, err := s.resource(st.Resource)
	if err != nil {
		return nil, err
	}
	ps, err := requestedPermissions(st.Permissions, r, true)
	if err != nil {
		return nil, err
	}
	if !s.auth.Authorizing() {
		return nil, &Error{Code: ServerError, Message: fmt.Sprintf("java.lang.UnsupportedOperationException: %s operation is not supported by AllowAllAuthorizer", op)}
	}
	if err := s.ensurePermission(auth.Authorize, r); err != nil {
		return nil, err
	}
	for _, p := range ps.List() {
		if err := s.ensurePermission(p, r); err != nil {
			return nil, err
		}
	}
	if err := s.ensureNotAnonymous(); err != nil {
		return nil, err
	}
	roles := s.roles()
	if roles.Role(st.Role) == nil {
		return nil, invalidf("Role %s doesn't exist", st.Role)
	}
	if !s.resourceExists(r) {
		return nil, invalidf("Resource %s doesn't exist", r)
	}
	had := roles.GrantedDirectly(st.Role, r)
	unchanged, change, warning := ps&had, ps&^had, "Role '%s' was already granted %s on %s"
	if st.Revoke {
		unchanged, change, warning = ps&^had, ps&had, "Role '%s' was not granted %s on %s"
	}
	res := &Result{Kind: VoidResult}
	if unchanged != 0 {
		res.Warnings = []string{fmt.Sprintf(warning, st.Role, strings.Join(unchanged.Names(), ", "), r)}
	}
	if change == 0 {
		return res, nil
	}
	var ms []*mutation.Mutation
	if w := s.writer(); st.Revoke {
		ms, err = auth.RevokePermissions(w, roles, st.Role, r, change)
	} else {
		ms, err = auth.GrantPermissions(w, st.Role, r, change)
	}
	if err != nil {
		return nil, asInvalid(err)
	}
	if err := s.apply(ms...); err != nil {
		return nil, err
	}
	return res, nil
}

// creatorGrants are the grants a logged-in role gets on what it creates:
// every permission the resource takes, as Cassandra grants them, written
// by w with the statement's other mutations.
func (s *Session) creatorGrants(w *schema.CellWriter, rs ...auth.Resource) ([]*mutation.Mutation, error) {
	if !s.auth.Authorizing() || s.user == "" {
		return nil, nil
	}
	var out []*mutation.Mutation
	for _, r := range rs {
		ms, err := auth.GrantPermissions(w, s.user, r, r.Applicable())
		if err != nil {
			return nil, asInvalid(err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// revokeAllOn are the deletions of every grant on a dropped resource,
// written by w with the statement's other mutations.
func (s *Session) revokeAllOn(w *schema.CellWriter, r auth.Resource) ([]*mutation.Mutation, error) {
	if s.auth == nil {
		return nil, nil
	}
	ms, err := auth.RevokeAllOn(w, s.roles(), r)
	return ms, asInvalid(err)
}

func (s *Session) listRoles(st *cql.ListRoles) (*Result, error) {
	if err := s.ensureNotAnonymous(); err != nil {
		return nil, err
	}
	roles := s.roles()
	if st.Of != "" && roles.Role(st.Of) == nil {
		return nil, invalidf("%s doesn't exist", auth.RoleResource(st.Of))
	}
	recursive := !st.NoRecursive && !st.Users
	of := func(name string) []string {
		if recursive {
			return roles.Held(name)
		}
		if rec := roles.Role(name); rec != nil {
			return append([]string{name}, rec.MemberOf...)
		}
		return nil
	}
	var names []string
	switch {
	case s.hasPermission(auth.Describe, auth.RolesRoot) || s.isSuper():
		if st.Of == "" {
			names = roles.Names()
		} else {
			names = of(st.Of)
		}
	case st.Of == "":
		names = of(s.user)
	case roles.Holds(s.user, st.Of):
		names = of(st.Of)
	default:
		return nil, unauthorizedf("You are not authorized to view roles granted to %s ", st.Of)
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	if len(names) == 0 {
		return &Result{Kind: VoidResult}, nil
	}
	if st.Users {
		res := &Result{Kind: RowsResult, Columns: []ColumnSpec{
			{Keyspace: "system_auth", Table: "users", Name: "name", Type: cqltype.TextType},
			{Keyspace: "system_auth", Table: "users", Name: "super", Type: cqltype.BooleanType},
			{Keyspace: "system_auth", Table: "users", Name: "datacenters", Type: cqltype.TextType}}}
		for _, n := range names {
			if roles.CanLogin(n) {
				res.Rows = append(res.Rows, [][]byte{[]byte(n), cqltype.EncodeBoolean(roles.IsSuperuser(n)), []byte("ALL")})
			}
		}
		return res, nil
	}
	res := &Result{Kind: RowsResult, Columns: []ColumnSpec{
		{Keyspace: "system_auth", Table: "roles", Name: "role", Type: cqltype.TextType},
		{Keyspace: "system_auth", Table: "roles", Name: "super", Type: cqltype.BooleanType},
		{Keyspace: "system_auth", Table: "roles", Name: "login", Type: cqltype.BooleanType},
		{Keyspace: "system_auth", Table: "roles", Name: "options", Type: cqltype.MapOf(cqltype.TextType, cqltype.TextType, false)},
		{Keyspace: "system_auth", Table: "roles", Name: "datacenters", Type: cqltype.TextType}}}
	for _, n := range names {
		rec := roles.Role(n)
		if rec == nil {
			continue
		}
		res.Rows = append(res.Rows, [][]byte{[]byte(n), cqltype.EncodeBoolean(rec.Superuser), cqltype.EncodeBoolean(rec.Login),
			cqltype.EncodeMap(nil, nil), []byte("ALL")})
	}
	return res, nil
}

func (s *Session) listPermissions(st *cql.ListPermissions) (*Result, error) {
	if err := s.ensureNotAnonymous(); err != nil {
		return nil, err
	}
	var target *auth.Resource
	if st.Resource != nil {
		r, err := s.resource(*st.Resource)
		if err != nil {
			return nil, err
		}
		if !s.resourceExists(r) {
			return nil, invalidf("%s doesn't exist", r)
		}
		target = &r
	}
	roles := s.roles()
	if st.Of != "" && roles.Role(st.Of) == nil {
		return nil, invalidf("%s doesn't exist", auth.RoleResource(st.Of))
	}
	if !s.auth.Authorizing() {
		return nil, invalidf("LIST PERMISSIONS operation is not supported by AllowAllAuthorizer")
	}
	allowed := s.isSuper() || (st.Of != "" && roles.Holds(s.user, st.Of)) || s.hasPermission(auth.Describe, auth.RolesRoot) ||
		(st.Of != "" && s.hasPermission(auth.Describe, auth.RoleResource(st.Of)))
	if !allowed {
		whose := st.Of
		if whose == "" {
			whose = "everyone"
		}
		return nil, unauthorizedf("You are not authorized to view %s's permissions", whose)
	}
	wanted, _ := requestedPermissions(st.Permissions, auth.Resource{}, false)
	resources := map[string]bool{}
	if target != nil {
		resources[target.ID()] = true
		if !st.NoRecursive {
			for p, ok := target.Parent(); ok; p, ok = p.Parent() {
				resources[p.ID()] = true
			}
		}
	}
	var holders map[string]bool
	if st.Of != "" {
		holders = map[string]bool{}
		for _, h := range roles.Held(st.Of) {
			holders[h] = true
		}
	}
	type row struct {
		role string
		res  auth.Resource
		p    auth.Permission
	}
	var rows []row
	for _, g := range roles.Grants() {
		if (holders != nil && !holders[g.Role]) || (target != nil && !resources[g.Resource.ID()]) {
			continue
		}
		for _, p := range (g.Permissions & wanted).List() {
			rows = append(rows, row{g.Role, g.Resource, p})
		}
	}
	if len(rows) == 0 {
		return &Result{Kind: VoidResult}, nil
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.role != b.role {
			return a.role < b.role
		}
		if a.res.ID() != b.res.ID() {
			return a.res.ID() < b.res.ID()
		}
		return a.p < b.p
	})
	res := &Result{Kind: RowsResult, Columns: []ColumnSpec{
		{Keyspace: "system_auth", Table: "permissions", Name: "role", Type: cqltype.TextType},
		{Keyspace: "system_auth", Table: "permissions", Name: "username", Type: cqltype.TextType},
		{Keyspace: "system_auth", Table: "permissions", Name: "resource", Type: cqltype.TextType},
		{Keyspace: "system_auth", Table: "permissions", Name: "permission", Type: cqltype.TextType}}}
	for _, r := range rows {
		res.Rows = append(res.Rows, [][]byte{[]byte(r.role), []byte(r.role), []byte(r.res.String()), []byte(r.p.String())})
	}
	return res, nil
}
