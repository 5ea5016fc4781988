package cql

import (
	"strings"
)

// RoleSettings are the options of CREATE and ALTER ROLE (and USER): each
// is set only where the statement gives it.
type RoleSettings struct {
	Password       *string
	HashedPassword *string
	Superuser      *bool
	Login          *bool
	// Options is OPTIONS = {...}, a map literal (no role manager takes it).
	Options Expr
	// Datacenters is ACCESS TO DATACENTERS {...}; AllDatacenters ACCESS
	// TO ALL DATACENTERS.
	Datacenters    []string
	AllDatacenters bool
}

// Empty reports whether no option is given.
func (o RoleSettings) Empty() bool {
	return o.Password == nil && o.HashedPassword == nil && o.Superuser == nil && o.Login == nil && o.Options == nil &&
		o.Datacenters == nil && !o.AllDatacenters
}

func (o RoleSettings) String() string {
	var parts []string
	if o.Password != nil {
		parts = append(parts, "PASSWORD = "+quoteString(*o.Password))
	}
	if o.HashedPassword != nil {
		parts = append(parts, "HASHED PASSWORD = "+quoteString(*o.HashedPassword))
	}
	if o.Superuser != nil {
		parts = append(parts, "SUPERUSER = "+boolWord(*o.Superuser))
	}
	if o.Login != nil {
		parts = append(parts, "LOGIN = "+boolWord(*o.Login))
	}
	if o.Options != nil {
		parts = append(parts, "OPTIONS = "+o.Options.String())
	}
	if o.AllDatacenters {
		parts = append(parts, "ACCESS TO ALL DATACENTERS")
	}
	if o.Datacenters != nil {
		dcs := make([]string, len(o.Datacenters))
		for i, dc := range o.Datacenters {
			dcs[i] = quoteString(dc)
		}
		parts = append(parts, "ACCESS TO DATACENTERS {"+strings.Join(dcs, ", ")+"}")
	}
	if len(parts) == 0 {
		return ""
	}
	return " WITH " + strings.Join(parts, " AND ")
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// userOptions renders the options of the USER forms.
func (o RoleSettings) userOptions() string {
	var b strings.Builder
	switch {
	case o.Password != nil:
		b.WriteString(" WITH PASSWORD " + quoteString(*o.Password))
	case o.HashedPassword != nil:
		b.WriteString(" WITH HASHED PASSWORD " + quoteString(*o.HashedPassword))
	}
	if o.Superuser != nil {
		if *o.Superuser {
			b.WriteString(" SUPERUSER")
		} else {
			b.WriteString(" NOSUPERUSER")
		}
	}
	return b.String()
}

// CreateRole is CREATE ROLE [IF NOT EXISTS] name [WITH options], or with
// User set CREATE USER, which always may log in.
type CreateRole struct {
	Name        string
	IfNotExists bool
	User        bool
	Options     RoleSettings
}

func (s *CreateRole) String() string {
	if s.User {
		return "CREATE USER " + ifNotExistsWord(s.IfNotExists) + quoteString(s.Name) + s.Options.userOptions()
	}
	return "CREATE ROLE " + ifNotExistsWord(s.IfNotExists) + quoteString(s.Name) + s.Options.String()
}

func ifNotExistsWord(b bool) string {
	if b {
		return "IF NOT EXISTS "
	}
	return ""
}

// AlterRole is ALTER ROLE [IF EXISTS] name WITH options (ALTER USER with
// User set).
type AlterRole struct {
	Name     string
	IfExists bool
	User     bool
	Options  RoleSettings
}

func (s *AlterRole) String() string {
	if s.User {
		return "ALTER USER " + ifExists(s.IfExists) + quoteString(s.Name) + s.Options.userOptions()
	}
	return "ALTER ROLE " + ifExists(s.IfExists) + quoteString(s.Name) + s.Options.String()
}

// DropRole is DROP ROLE [IF EXISTS] name (DROP USER with User set).
type DropRole struct {
	Name     string
	IfExists bool
	User     bool
}

func (s *DropRole) String() string {
	word := "ROLE "
	if s.User {
		word = "USER "
	}
	return "DROP " + word + ifExists(s.IfExists) + quoteString(s.Name)
}

// RoleGrant is GRANT role TO member, or with Revoke set REVOKE role FROM
// member.
type RoleGrant struct {
	Role, Member string
	Revoke       bool
}

func (s *RoleGrant) String() string {
	if s.Revoke {
		return "REVOKE " + quoteString(s.Role) + " FROM " + quoteString(s.Member)
	}
	return "GRANT " + quoteString(s.Role) + " TO " + quoteString(s.Member)
}

// ResourceKind says what a permission statement's resource names.
type ResourceKind uint8

// The resources permission statements name.
const (
	AllKeyspacesResource      ResourceKind = iota // ALL KEYSPACES
	KeyspaceResource                              // KEYSPACE ks
	AllTablesResource                             // ALL TABLES IN KEYSPACE ks
	TableResource                                 // [TABLE] [ks.]t
	AllRolesResource                              // ALL ROLES
	RoleResource                                  // ROLE r
	AllFunctionsResource                          // ALL FUNCTIONS
	KeyspaceFunctionsResource                     // ALL FUNCTIONS IN KEYSPACE ks
)

// Resource is what a permission statement grants, revokes or lists on.
// Name holds the table ([keyspace.]table) or, in Name.Name, the role;
// Name.Keyspace the keyspace of the other kinds.
type Resource struct {
	Kind ResourceKind
	Name QualifiedName
}

func (r Resource) String() string {
	switch r.Kind {
	case AllKeyspacesResource:
		return "ALL KEYSPACES"
	case KeyspaceResource:
		return "KEYSPACE " + quoteIdent(r.Name.Keyspace)
	case AllTablesResource:
		return "ALL TABLES IN KEYSPACE " + quoteIdent(r.Name.Keyspace)
	case TableResource:
		return "TABLE " + r.Name.String()
	case AllRolesResource:
		return "ALL ROLES"
	case RoleResource:
		return "ROLE " + quoteString(r.Name.Name)
	case AllFunctionsResource:
		return "ALL FUNCTIONS"
	case KeyspaceFunctionsResource:
		return "ALL FUNCTIONS IN KEYSPACE " + quoteIdent(r.Name.Keyspace)
	}
	return "?"
}

// permissionsWord renders a permission list; nil is ALL PERMISSIONS.
func permissionsWord(ps []string) string {
	if ps == nil {
		return "ALL PERMISSIONS"
	}
	return strings.Join(ps, ", ")
}

// PermissionGrant is GRANT permissions ON resource TO role, or with
// Revoke set REVOKE ... FROM role. Permissions are upper-case names; nil
// is ALL.
type PermissionGrant struct {
	Permissions []string
	Resource    Resource
	Role        string
	Revoke      bool
}

func (s *PermissionGrant) String() string {
	if s.Revoke {
		return "REVOKE " + permissionsWord(s.Permissions) + " ON " + s.Resource.String() + " FROM " + quoteString(s.Role)
	}
	return "GRANT " + permissionsWord(s.Permissions) + " ON " + s.Resource.String() + " TO " + quoteString(s.Role)
}

// ListPermissions is LIST permissions [ON resource] [OF role]
// [NORECURSIVE]; Resource nil for every resource, Of "" for every role.
type ListPermissions struct {
	Permissions []string
	Resource    *Resource
	Of          string
	NoRecursive bool
}

func (s *ListPermissions) String() string {
	out := "LIST " + permissionsWord(s.Permissions)
	if s.Resource != nil {
		out += " ON " + s.Resource.String()
	}
	if s.Of != "" {
		out += " OF " + quoteString(s.Of)
	}
	if s.NoRecursive {
		out += " NORECURSIVE"
	}
	return out
}

// ListRoles is LIST ROLES [OF role] [NORECURSIVE], or with Users set
// LIST USERS.
type ListRoles struct {
	Users       bool
	Of          string
	NoRecursive bool
}

func (s *ListRoles) String() string {
	if s.Users {
		return "LIST USERS"
	}
	out := "LIST ROLES"
	if s.Of != "" {
		out += " OF " + quoteString(s.Of)
	}
	if s.NoRecursive {
		out += " NORECURSIVE"
	}
	return out
}

func (*CreateRole) statement()      {}
func (*AlterRole) statement()       {}
func (*DropRole) statement()        {}
func (*RoleGrant) statement()       {}
func (*PermissionGrant) statement() {}
func (*ListPermissions) statement() {}
func (*ListRoles) statement()       {}
