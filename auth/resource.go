package auth

import (
	"fmt"
	"strings"
)

// ResourceKind says what a resource names.
type ResourceKind uint8

// The resources permissions are granted on, as Cassandra names them.
const (
	AllKeyspaces      ResourceKind = iota // data
	Keyspace                              // data/ks
	AllTables                             // data/ks/*
	Table                                 // data/ks/t
	AllRoles                              // roles
	Role                                  // roles/r
	AllFunctions                          // functions
	KeyspaceFunctions                     // functions/ks
)

// Resource is what a permission is granted on. Keyspace is set for
// Keyspace, AllTables, Table and KeyspaceFunctions; Name is the table's or the
// role's name.
type Resource struct {
	Kind     ResourceKind
	Keyspace string
	Name     string
}

// DataRoot is every keyspace, ALL KEYSPACES.
var DataRoot = Resource{Kind: AllKeyspaces}

// KeyspaceResource is one keyspace and its tables.
func KeyspaceResource(ks string) Resource { return Resource{Kind: Keyspace, Keyspace: ks} }

// AllTablesResource is every table of a keyspace, present and to come:
// creating a table or a type needs CREATE on it.
func AllTablesResource(ks string) Resource { return Resource{Kind: AllTables, Keyspace: ks} }

// TableResource is one table.
func TableResource(ks, table string) Resource {
	return Resource{Kind: Table, Keyspace: ks, Name: table}
}

// RolesRoot is every role, ALL ROLES.
var RolesRoot = Resource{Kind: AllRoles}

// RoleResource is one role.
func RoleResource(name string) Resource { return Resource{Kind: Role, Name: name} }

// ID is the resource's name as system_auth stores it: data, data/ks,
// data/ks/t, roles, roles/r, functions, functions/ks.
func (r Resource) ID() string {
	switch r.Kind {
	case AllKeyspaces:
		return "data"
	case Keyspace:
		return "data/" + r.Keyspace
	case AllTables:
		return "data/" + r.Keyspace + "/*"
	case Table:
		return "data/" + r.Keyspace + "/" + r.Name
	case AllRoles:
		return "roles"
	case Role:
		return "roles/" + r.Name
	case AllFunctions:
		return "functions"
	case KeyspaceFunctions:
		return "functions/" + r.Keyspace
	}
	return fmt.Sprintf("resource %d", r.Kind)
}

// String is the resource as LIST PERMISSIONS and the refusals show it.
func (r Resource) String() string {
	switch r.Kind {
	case AllKeyspaces:
		return "<all keyspaces>"
	case Keyspace:
		return "<keyspace " + r.Keyspace + ">"
	case AllTables:
		return "<all tables in " + r.Keyspace + ">"
	case Table:
		return "<table " + r.Keyspace + "." + r.Name + ">"
	case AllRoles:
		return "<all roles>"
	case Role:
		return "<role " + r.Name + ">"
	case AllFunctions:
		return "<all functions>"
	case KeyspaceFunctions:
		return "<all functions in " + r.Keyspace + ">"
	}
	return r.ID()
}

// ParseResource is the resource a stored name names.
func ParseResource(id string) (Resource, error) {
	bad := fmt.Errorf("%s is not a valid resource name", id)
	if name, ok := strings.CutPrefix(id, "roles/"); ok {
		return RoleResource(name), nil // a role's name may hold a slash
	}
	parts := strings.Split(id, "/")
	switch parts[0] {
	case "data":
		switch len(parts) {
		case 1:
			return DataRoot, nil
		case 2:
			return KeyspaceResource(parts[1]), nil
		case 3:
			if parts[2] == "*" {
				return AllTablesResource(parts[1]), nil
			}
			return TableResource(parts[1], parts[2]), nil
		}
	case "roles":
		if len(parts) == 1 {
			return RolesRoot, nil
		}
	case "functions":
		switch len(parts) {
		case 1:
			return Resource{Kind: AllFunctions}, nil
		case 2:
			return Resource{Kind: KeyspaceFunctions, Keyspace: parts[1]}, nil
		}
	}
	return Resource{}, bad
}

// Parent is the resource that holds r, which a permission granted on
// covers r too; false for a root.
func (r Resource) Parent() (Resource, bool) {
	switch r.Kind {
	case Keyspace:
		return DataRoot, true
	case AllTables:
		return KeyspaceResource(r.Keyspace), true
	case Table:
		return AllTablesResource(r.Keyspace), true
	case Role:
		return RolesRoot, true
	case KeyspaceFunctions:
		return Resource{Kind: AllFunctions}, true
	}
	return Resource{}, false
}

// TypeName is the kind of resource as Cassandra's refusals name it.
func (r Resource) TypeName() string {
	switch r.Kind {
	case AllRoles, Role:
		return "RoleResource"
	case AllFunctions, KeyspaceFunctions:
		return "FunctionResource"
	}
	return "DataResource"
}

// Applicable are the permissions that can be granted on the resource.
func (r Resource) Applicable() Permissions {
	switch r.Kind {
	case AllKeyspaces, Keyspace, AllTables:
		return PermissionsOf(Create, Alter, Drop, Select, Modify, Authorize)
	case Table:
		return PermissionsOf(Alter, Drop, Select, Modify, Authorize)
	case AllRoles:
		return PermissionsOf(Create, Alter, Drop, Authorize, Describe)
	case Role:
		return PermissionsOf(Alter, Drop, Authorize, Describe)
	case AllFunctions, KeyspaceFunctions:
		return PermissionsOf(Create, Alter, Drop, Authorize, Execute)
	}
	return 0
}
