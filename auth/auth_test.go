package auth

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

func TestResourceNamesRoundTrip(t *testing.T) {
	for _, r := range []Resource{DataRoot, KeyspaceResource("ks"), AllTablesResource("ks"), TableResource("ks", "t"),
		RolesRoot, RoleResource("alice"), RoleResource("a/b"), {Kind: AllFunctions}, {Kind: KeyspaceFunctions, Keyspace: "ks"}} {
		got, err := ParseResource(r.ID())
		if err != nil || got != r {
			t.Errorf("ParseResource(%q) = %v, %v; want %v", r.ID(), got, err, r)
		}
	}
	for _, bad := range []string{"", "datas", "data/a/b/c", "functions/a/b", "mbean"} {
		if _, err := ParseResource(bad); err == nil {
			t.Errorf("ParseResource(%q) took it", bad)
		}
	}
	var chain []string
	for r, ok := TableResource("ks", "t"), true; ok; r, ok = r.Parent() {
		chain = append(chain, r.String())
	}
	if want := []string{"<table ks.t>", "<all tables in ks>", "<keyspace ks>", "<all keyspaces>"}; !slices.Equal(chain, want) {
		t.Fatalf("chain %v, want %v", chain, want)
	}
}

// store applies system_auth mutations and reads Roles back, as a node's
// engine does.
type store struct {
	t  *testing.T
	m  *testutil.MemStore
	ts int64
}

func (s *store) writer() *schema.CellWriter {
	s.ts++
	return &schema.CellWriter{Timestamp: s.ts, Now: 1_700_000_000}
}

func (s *store) apply(ms []*mutation.Mutation, err error) *Roles {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
	s.m.Apply(ms...)
	r, err := LoadRoles(func(def *schema.Table) ([]map[string]schema.Cell, error) {
		parts, err := s.m.Partitions(def.ID, 1_700_000_000)
		if err != nil {
			return nil, err
		}
		var rows []map[string]schema.Cell
		for _, p := range parts {
			for _, r := range p.Rows {
				cells, err := def.RowCells(p.Key, r.Clustering, r.Row, p.Static, 1_700_000_000)
				if err != nil {
					return nil, err
				}
				rows = append(rows, cells)
			}
		}
		return rows, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// TestRolesGrantsAndDrops: permissions come through the roles a role
// holds and through the parents of a resource; a superuser holds every
// applicable one; dropping a role removes it from its members and its
// grants; dropping a keyspace's resource removes the grants on its
// tables.
func TestRolesGrantsAndDrops(t *testing.T) {
	s := &store{t: t, m: testutil.NewMemStore()}
	yes := true
	s.apply(CreateRole(s.writer(), "admin", RoleChange{Superuser: &yes}))
	s.apply(CreateRole(s.writer(), "reader", RoleChange{}))
	s.apply(CreateRole(s.writer(), "team", RoleChange{}))
	r := s.apply(CreateRole(s.writer(), "alice", RoleChange{Login: &yes}))
	s.apply(GrantRole(s.writer(), "reader", "team"))
	r = s.apply(GrantRole(s.writer(), "team", "alice"))
	if got := r.Held("alice"); !slices.Equal(got, []string{"alice", "reader", "team"}) {
		t.Fatalf("alice holds %v", got)
	}
	r = s.apply(GrantPermissions(s.writer(), "reader", KeyspaceResource("ks"), PermissionsOf(Select)))
	if !r.Permissions("alice", TableResource("ks", "t")).Has(Select) {
		t.Fatal("SELECT on the keyspace, through two roles, does not reach a table")
	}
	if r.Permissions("alice", TableResource("other", "t")).Has(Select) || r.Permissions("alice", TableResource("ks", "t")).Has(Modify) {
		t.Fatal("a permission reached what it was not granted on")
	}
	if got := r.Permissions("admin", RoleResource("x")); got != RoleResource("x").Applicable() {
		t.Fatalf("a superuser holds %v on a role", got.Names())
	}
	r = s.apply(GrantPermissions(s.writer(), "team", TableResource("ks", "t"), PermissionsOf(Modify, Alter)))
	r = s.apply(RevokePermissions(s.writer(), r, "team", TableResource("ks", "t"), PermissionsOf(Alter)))
	if got := r.GrantedDirectly("team", TableResource("ks", "t")); got != PermissionsOf(Modify) {
		t.Fatalf("after revoking ALTER, team holds %v", got.Names())
	}
	r = s.apply(DropRole(s.writer(), r, "reader"))
	if r.Role("reader") != nil || slices.Contains(r.Role("team").MemberOf, "reader") {
		t.Fatal("a dropped role stays, or stays a member")
	}
	if r.Permissions("alice", KeyspaceResource("ks")).Has(Select) {
		t.Fatal("a dropped role's grant still reaches its members")
	}
	r = s.apply(RevokeAllOn(s.writer(), r, KeyspaceResource("ks")))
	if len(r.Grants()) != 0 {
		t.Fatalf("grants on a dropped keyspace's table stay: %v", r.Grants())
	}
	r = s.apply(RevokeRole(s.writer(), "team", "alice"))
	if got := r.Held("alice"); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("alice holds %v after the revoke", got)
	}
}

// TestCredentialsCache: a login repeated within credentials_validity is
// taken without bcrypt; after it, or once the password changed, bcrypt
// checks again, and the old password is refused at once.
func TestCredentialsCache(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	svc := NewService(Config{Authenticator: PasswordAuthenticator, BcryptCost: 4, CredentialsValidity: 2 * time.Second,
		Now: func() time.Time { return now }})
	s := &store{t: t, m: testutil.NewMemStore()}
	yes, no := true, false
	hash := func(pw string) *string {
		h, err := svc.HashPassword(pw)
		if err != nil {
			t.Fatal(err)
		}
		return &h
	}
	svc.SetRoles(s.apply(CreateRole(s.writer(), "alice", RoleChange{Login: &yes, SaltedHash: hash("one")})))
	login := func(pw string, wantErr string, wantChecks int64) {
		t.Helper()
		before := svc.hashChecks.Load()
		err := svc.Authenticate("alice", pw)
		if (err == nil) != (wantErr == "") || err != nil && err.Error() != wantErr {
			t.Fatalf("login with %q: %v, want %q", pw, err, wantErr)
		}
		if got := svc.hashChecks.Load() - before; got != wantChecks {
			t.Fatalf("login with %q checked %d hashes, want %d", pw, got, wantChecks)
		}
	}
	login("one", "", 1)
	login("one", "", 0) // cached
	login("two", "Provided username alice and/or password are incorrect", 1)
	now = now.Add(3 * time.Second)
	login("one", "", 1) // expired
	svc.SetRoles(s.apply(AlterRole(s.writer(), "alice", RoleChange{SaltedHash: hash("two")})))
	login("one", "Provided username alice and/or password are incorrect", 1)
	login("two", "", 1)
	svc.SetRoles(s.apply(AlterRole(s.writer(), "alice", RoleChange{Login: &no})))
	login("two", "alice is not permitted to log in", 0)
	if svc.Failures.Load() != 3 {
		t.Fatalf("%d failures counted, want 3", svc.Failures.Load())
	}
}

// TestPermissionsCacheBounded: a client naming resource after resource
// (most of which do not exist) grows no cache past its bound, and every
// answer stays right.
func TestPermissionsCacheBounded(t *testing.T) {
	s := &store{t: t, m: testutil.NewMemStore()}
	s.apply(CreateRole(s.writer(), "r", RoleChange{}))
	r := s.apply(GrantPermissions(s.writer(), "r", KeyspaceResource("ks"), PermissionsOf(Select)))
	for i := range maxCachedPermissions + 500 {
		ks := "ks"
		if i%2 == 1 {
			ks = fmt.Sprintf("other%d", i)
		}
		if got := r.Permissions("r", TableResource(ks, "t")).Has(Select); got != (ks == "ks") {
			t.Fatalf("SELECT on %s.t: %v", ks, got)
		}
	}
	n := 0
	r.permissions.Range(func(any, any) bool { n++; return true })
	if n > maxCachedPermissions {
		t.Fatalf("%d answers cached, past the bound of %d", n, maxCachedPermissions)
	}
}
