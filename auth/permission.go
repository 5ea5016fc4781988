package auth

import (
	"fmt"
	"strings"
)

// Permission is one of Cassandra's permissions.
type Permission uint8

// The permissions, in Cassandra's order (LIST PERMISSIONS lists them so).
const (
	Create Permission = iota
	Alter
	Drop
	Select
	Modify
	Authorize
	Describe
	Execute
	numPermissions
)

var permissionNames = [numPermissions]string{"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE", "DESCRIBE", "EXECUTE"}

func (p Permission) String() string {
	if p < numPermissions {
		return permissionNames[p]
	}
	return fmt.Sprintf("permission %d", uint8(p))
}

// ParsePermission is the permission of a name, in any case.
func ParsePermission(name string) (Permission, bool) {
	for i, n := range permissionNames {
		if strings.EqualFold(n, name) {
			return Permission(i), true
		}
	}
	return 0, false
}

// Permissions is a set of permissions.
type Permissions uint16

// PermissionsOf is the set of ps.
func PermissionsOf(ps ...Permission) Permissions {
	var s Permissions
	for _, p := range ps {
		s |= 1 << p
	}
	return s
}

// Has reports whether p is in the set.
func (s Permissions) Has(p Permission) bool { return s&(1<<p) != 0 }

// List is the set's permissions in order.
func (s Permissions) List() []Permission {
	var out []Permission
	for p := range numPermissions {
		if s.Has(p) {
			out = append(out, p)
		}
	}
	return out
}

// Names are the set's permission names in order, as system_auth stores
// them.
func (s Permissions) Names() []string {
	var out []string
	for _, p := range s.List() {
		out = append(out, p.String())
	}
	return out
}

// parsePermissionNames is the set of stored names; an unknown name (a
// later version's) is left out.
func parsePermissionNames(names []string) Permissions {
	var s Permissions
	for _, n := range names {
		if p, ok := ParsePermission(n); ok {
			s |= 1 << p
		}
	}
	return s
}
