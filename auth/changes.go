package auth

import (
	"slices"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// The mutations of the role and permission statements, as rows of the
// system_auth tables laid out as Cassandra's. A statement's mutations
// commit together through the metadata log.

// rowWrite is a write of one row of a system_auth table, by its key.
type rowWrite struct {
	m   *mutation.Mutation
	row *mutation.Row
	t   *schema.Table
	w   *schema.CellWriter
}

// newRowWrite starts the write of a row, its key checked as a
// statement's (a role name, or a resource naming one, may be too long
// for a key).
func newRowWrite(t *schema.Table, w *schema.CellWriter, partition string, clustering ...string) (*rowWrite, error) {
	key, err := t.StatementKey([][]byte{[]byte(partition)})
	if err != nil {
		return nil, err
	}
	ck := make([][]byte, len(clustering))
	for i, c := range clustering {
		ck[i] = []byte(c)
	}
	enc, err := t.ClusteringLayout().Encode(nil, ck)
	if err == nil {
		err = t.CheckClustering(enc)
	}
	if err != nil {
		return nil, err
	}
	m := mutation.NewMutation(t.ID, key)
	row := mutation.NewRow()
	m.Rows = []mutation.RowUpdate{{Clustering: enc, Row: row}}
	return &rowWrite{m: m, row: row, t: t, w: w}, nil
}

// marker gives the row a live marker, as an INSERT does.
func (r *rowWrite) marker() {
	r.row.Liveness = mutation.LivenessInfo{Timestamp: r.w.Timestamp, ExpiresAt: mutation.NoDeletionTime}
}

// set writes a simple column.
func (r *rowWrite) set(column string, value []byte) {
	r.row.Cells = append(r.row.Cells, r.w.Cell(r.t.Column(column), nil, value))
}

// elements adds (or with remove, deletes) elements of a set<text> column.
func (r *rowWrite) elements(column string, items []string, remove bool) error {
	c := r.t.Column(column)
	for _, it := range items {
		path, err := c.Type.Params[0].AppendComparable(nil, []byte(it))
		if err != nil {
			return err
		}
		if remove {
			r.row.Cells = append(r.row.Cells, r.w.Tombstone(c, path))
		} else {
			r.row.Cells = append(r.row.Cells, r.w.Cell(c, path, []byte{}))
		}
	}
	return nil
}

// deleteRow deletes the whole row.
func (r *rowWrite) deleteRow() {
	r.row.Deletion = mutation.DeletionTime{MarkedForDeleteAt: r.w.Timestamp, LocalDeletionTime: r.w.Now}
}

func (r *rowWrite) done() *mutation.Mutation {
	r.row.Normalize()
	return r.m
}

// deletePartition deletes a partition of a system_auth table.
func deletePartition(t *schema.Table, w *schema.CellWriter, partition string) (*mutation.Mutation, error) {
	key, err := t.StatementKey([][]byte{[]byte(partition)})
	if err != nil {
		return nil, err
	}
	m := mutation.NewMutation(t.ID, key)
	m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
	return m, nil
}

// RoleChange is what CREATE or ALTER ROLE sets; nil fields stay as they
// are (CREATE: false, no password).
type RoleChange struct {
	Superuser *bool
	Login     *bool
	// SaltedHash is the bcrypt hash of the new password.
	SaltedHash *string
}

// CreateRole writes a new role's row.
func CreateRole(w *schema.CellWriter, name string, c RoleChange) ([]*mutation.Mutation, error) {
	r, err := newRowWrite(schema.RolesTable, w, name)
	if err != nil {
		return nil, err
	}
	r.marker()
	r.set("is_superuser", cqltype.EncodeBoolean(c.Superuser != nil && *c.Superuser))
	r.set("can_login", cqltype.EncodeBoolean(c.Login != nil && *c.Login))
	if c.SaltedHash != nil {
		r.set("salted_hash", []byte(*c.SaltedHash))
	}
	return []*mutation.Mutation{r.done()}, nil
}

// AlterRole changes what c sets of a role's row.
func AlterRole(w *schema.CellWriter, name string, c RoleChange) ([]*mutation.Mutation, error) {
	r, err := newRowWrite(schema.RolesTable, w, name)
	if err != nil {
		return nil, err
	}
	if c.Superuser != nil {
		r.set("is_superuser", cqltype.EncodeBoolean(*c.Superuser))
	}
	if c.Login != nil {
		r.set("can_login", cqltype.EncodeBoolean(*c.Login))
	}
	if c.SaltedHash != nil {
		r.set("salted_hash", []byte(*c.SaltedHash))
	}
	if len(r.row.Cells) == 0 {
		return nil, nil
	}
	return []*mutation.Mutation{r.done()}, nil
}

// GrantRole grants role to grantee: role joins grantee's member_of, and
// grantee role's members.
func GrantRole(w *schema.CellWriter, role, grantee string) ([]*mutation.Mutation, error) {
	return roleMembership(w, role, grantee, false)
}

// RevokeRole revokes role from revokee.
func RevokeRole(w *schema.CellWriter, role, revokee string) ([]*mutation.Mutation, error) {
	return roleMembership(w, role, revokee, true)
}

func roleMembership(w *schema.CellWriter, role, member string, revoke bool) ([]*mutation.Mutation, error) {
	r, err := newRowWrite(schema.RolesTable, w, member)
	if err != nil {
		return nil, err
	}
	if err := r.elements("member_of", []string{role}, revoke); err != nil {
		return nil, err
	}
	m, err := newRowWrite(schema.RoleMembersTable, w, role, member)
	if err != nil {
		return nil, err
	}
	if revoke {
		m.deleteRow()
	} else {
		m.marker()
	}
	return []*mutation.Mutation{r.done(), m.done()}, nil
}

// GrantPermissions grants ps on res to role, and records the role in the
// resource's index.
func GrantPermissions(w *schema.CellWriter, role string, res Resource, ps Permissions) ([]*mutation.Mutation, error) {
	r, err := newRowWrite(schema.RolePermissionsTable, w, role, res.ID())
	if err != nil {
		return nil, err
	}
	if err := r.elements("permissions", ps.Names(), false); err != nil {
		return nil, err
	}
	ix, err := newRowWrite(schema.ResourceRolePermissionsIndexTable, w, res.ID(), role)
	if err != nil {
		return nil, err
	}
	ix.marker()
	return []*mutation.Mutation{r.done(), ix.done()}, nil
}

// RevokePermissions revokes ps on res from role; when none remain of
// what roles granted, the role leaves the resource's index.
func RevokePermissions(w *schema.CellWriter, roles *Roles, role string, res Resource, ps Permissions) ([]*mutation.Mutation, error) {
	r, err := newRowWrite(schema.RolePermissionsTable, w, role, res.ID())
	if err != nil {
		return nil, err
	}
	if err := r.elements("permissions", ps.Names(), true); err != nil {
		return nil, err
	}
	out := []*mutation.Mutation{r.done()}
	if roles.GrantedDirectly(role, res)&^ps == 0 {
		ix, err := newRowWrite(schema.ResourceRolePermissionsIndexTable, w, res.ID(), role)
		if err != nil {
			return nil, err
		}
		ix.deleteRow()
		out = append(out, ix.done())
	}
	return out, nil
}

// RevokeAllOn removes every permission granted on res and on what it
// holds (a dropped keyspace's tables), as dropping it does: a resource
// made again later under the same name starts with no grants.
func RevokeAllOn(w *schema.CellWriter, roles *Roles, res Resource) ([]*mutation.Mutation, error) {
	var out []*mutation.Mutation
	for _, g := range roles.Grants() {
		if g.Resource != res && !within(g.Resource, res) {
			continue
		}
		r, err := newRowWrite(schema.RolePermissionsTable, w, g.Role, g.Resource.ID())
		if err != nil {
			return nil, err
		}
		r.deleteRow()
		ix, err := newRowWrite(schema.ResourceRolePermissionsIndexTable, w, g.Resource.ID(), g.Role)
		if err != nil {
			return nil, err
		}
		ix.deleteRow()
		out = append(out, r.done(), ix.done())
	}
	return out, nil
}

// within reports whether r lies inside a keyspace that holder names (its
// table, or its functions).
func within(r, holder Resource) bool {
	if holder.Kind != Keyspace {
		return false
	}
	return (r.Kind == Table || r.Kind == AllTables || r.Kind == KeyspaceFunctions) && r.Keyspace == holder.Keyspace
}

// DropRole removes a role: its row, its memberships both ways, the
// permissions granted to it and those granted on it.
func DropRole(w *schema.CellWriter, roles *Roles, name string) ([]*mutation.Mutation, error) {
	var out []*mutation.Mutation
	// The roles it was granted: it leaves their members.
	if rec := roles.Role(name); rec != nil {
		for _, granted := range rec.MemberOf {
			m, err := newRowWrite(schema.RoleMembersTable, w, granted, name)
			if err != nil {
				return nil, err
			}
			m.deleteRow()
			out = append(out, m.done())
		}
	}
	// The roles it was granted to: it leaves their member_of.
	for _, other := range roles.Names() {
		if other == name || !slices.Contains(roles.Role(other).MemberOf, name) {
			continue
		}
		r, err := newRowWrite(schema.RolesTable, w, other)
		if err != nil {
			return nil, err
		}
		if err := r.elements("member_of", []string{name}, true); err != nil {
			return nil, err
		}
		out = append(out, r.done())
	}
	for _, t := range []*schema.Table{schema.RolesTable, schema.RoleMembersTable, schema.RolePermissionsTable} {
		m, err := deletePartition(t, w, name)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	for _, res := range roles.grantedOnBy(name) {
		ix, err := newRowWrite(schema.ResourceRolePermissionsIndexTable, w, res.ID(), name)
		if err != nil {
			return nil, err
		}
		ix.deleteRow()
		out = append(out, ix.done())
	}
	on, err := RevokeAllOn(w, roles, RoleResource(name))
	if err != nil {
		return nil, err
	}
	return append(out, on...), nil
}

// grantedOnBy are the resources a role has permissions granted on.
func (r *Roles) grantedOnBy(role string) []Resource {
	var out []Resource
	for _, g := range r.Grants() {
		if g.Role == role {
			out = append(out, g.Resource)
		}
	}
	return out
}
