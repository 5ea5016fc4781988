package auth

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/schema"
)

// RoleRecord is one row of system_auth.roles.
type RoleRecord struct {
	Name       string
	Superuser  bool
	Login      bool
	MemberOf   []string // the roles granted to this one, sorted
	SaltedHash string   // bcrypt; "" for a role with no password
}

// Roles is system_auth as of one change: the roles, who is a member of
// whom, and the permissions granted. It is read-only; a change makes a
// new one. What it derives (the roles a role holds through grants, a
// role's permissions) it computes once per role and keeps.
type Roles struct {
	roles map[string]*RoleRecord
	// granted[role][resource id] are the permissions granted to role
	// itself on the resource.
	granted map[string]map[string]Permissions

	mu     sync.Mutex
	closed map[string][]string // role -> the roles it holds, itself first
	// permissions caches Permissions by role and resource: this Roles
	// never changes, so neither does an answer (the permissions cache;
	// a change makes a new Roles, and with it an empty cache).
	permissions sync.Map // permissionsKey -> Permissions
	// cached counts the answers kept, which stop at maxCachedPermissions:
	// statements may name resources that do not exist, and a client
	// naming new ones must not grow the cache for ever.
	cached atomic.Int64
}

// maxCachedPermissions bounds each Roles' cache of answers.
const maxCachedPermissions = 10_000

type permissionsKey struct {
	role string
	res  Resource
}

// NoRoles is an empty system_auth.
func NoRoles() *Roles {
	return &Roles{roles: map[string]*RoleRecord{}, granted: map[string]map[string]Permissions{}, closed: map[string][]string{}}
}

// LoadRoles reads system_auth through read.
func LoadRoles(read schema.RowReader) (*Roles, error) {
	r := NoRoles()
	rows, err := read(schema.RolesTable)
	if err != nil {
		return nil, fmt.Errorf("auth: reading %s: %w", schema.RolesTable, err)
	}
	for _, row := range rows {
		rec := &RoleRecord{Name: string(row["role"].Value), SaltedHash: string(row["salted_hash"].Value)}
		rec.Superuser, _ = cqltype.DecodeBoolean(row["is_superuser"].Value) // absent: false
		rec.Login, _ = cqltype.DecodeBoolean(row["can_login"].Value)
		if rec.MemberOf, err = textSet(row["member_of"].Value); err != nil {
			return nil, fmt.Errorf("auth: role %s: member_of: %w", rec.Name, err)
		}
		r.roles[rec.Name] = rec
	}
	rows, err = read(schema.RolePermissionsTable)
	if err != nil {
		return nil, fmt.Errorf("auth: reading %s: %w", schema.RolePermissionsTable, err)
	}
	for _, row := range rows {
		role, resource := string(row["role"].Value), string(row["resource"].Value)
		names, err := textSet(row["permissions"].Value)
		if err != nil {
			return nil, fmt.Errorf("auth: permissions of %s on %s: %w", role, resource, err)
		}
		if ps := parsePermissionNames(names); ps != 0 {
			if r.granted[role] == nil {
				r.granted[role] = map[string]Permissions{}
			}
			r.granted[role][resource] = ps
		}
	}
	return r, nil
}

// textSet reads a set<text> value (nil: empty), in order.
func textSet(v []byte) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	out, err := schema.DecodeTextList(v)
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// Role is a role's record, or nil when there is no such role.
func (r *Roles) Role(name string) *RoleRecord { return r.roles[name] }

// Names are every role's name, in order.
func (r *Roles) Names() []string { return slices.Sorted(maps.Keys(r.roles)) }

// Held are the roles a role holds: itself, and every role granted to it
// directly or through another, itself first and then in order of name.
// A role that does not exist holds nothing.
func (r *Roles) Held(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if out, ok := r.closed[name]; ok {
		return out
	}
	var out []string
	if r.roles[name] != nil {
		seen := map[string]bool{name: true}
		queue := []string{name}
		for len(queue) > 0 {
			rec := r.roles[queue[0]]
			queue = queue[1:]
			if rec == nil {
				continue
			}
			for _, m := range rec.MemberOf {
				if !seen[m] {
					seen[m] = true
					queue = append(queue, m)
				}
			}
		}
		delete(seen, name)
		out = append([]string{name}, slices.Sorted(maps.Keys(seen))...)
	}
	r.closed[name] = out
	return out
}

// Holds reports whether role holds other (is it, or has it granted
// directly or through others).
func (r *Roles) Holds(role, other string) bool { return slices.Contains(r.Held(role), other) }

// IsSuperuser reports whether a role is a superuser or holds one.
func (r *Roles) IsSuperuser(name string) bool {
	for _, h := range r.Held(name) {
		if rec := r.roles[h]; rec != nil && rec.Superuser {
			return true
		}
	}
	return false
}

// CanLogin reports whether a role exists and may log in.
func (r *Roles) CanLogin(name string) bool {
	rec := r.roles[name]
	return rec != nil && rec.Login
}

// GrantedDirectly are the permissions granted to the role itself on a
// resource (not through other roles, nor on its parents).
func (r *Roles) GrantedDirectly(role string, res Resource) Permissions {
	return r.granted[role][res.ID()]
}

// Permissions are what a role may do on a resource: what was granted on
// it or any of its parents to the role or any role it holds. A superuser
// may do everything applicable.
func (r *Roles) Permissions(role string, res Resource) Permissions {
	key := permissionsKey{role, res}
	if p, ok := r.permissions.Load(key); ok {
		return p.(Permissions)
	}
	p := r.permissionsOf(role, res)
	if r.cached.Add(1) <= maxCachedPermissions {
		r.permissions.Store(key, p)
	}
	return p
}

func (r *Roles) permissionsOf(role string, res Resource) Permissions {
	if r.IsSuperuser(role) {
		return res.Applicable()
	}
	var out Permissions
	for _, h := range r.Held(role) {
		grants := r.granted[h]
		if len(grants) == 0 {
			continue
		}
		for c, ok := res, true; ok; c, ok = c.Parent() {
			out |= grants[c.ID()]
		}
	}
	return out
}

// Grant is one row of system_auth.role_permissions.
type Grant struct {
	Role        string
	Resource    Resource
	Permissions Permissions
}

// Grants are the permissions granted, to any role on any resource, in
// order of role and then of resource id. A stored resource that cannot
// be read is left out.
func (r *Roles) Grants() []Grant {
	var out []Grant
	for _, role := range slices.Sorted(maps.Keys(r.granted)) {
		for _, id := range slices.Sorted(maps.Keys(r.granted[role])) {
			res, err := ParseResource(id)
			if err != nil {
				continue
			}
			out = append(out, Grant{Role: role, Resource: res, Permissions: r.granted[role][id]})
		}
	}
	return out
}
