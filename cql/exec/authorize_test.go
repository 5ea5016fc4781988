package exec

import (
	"errors"
	"testing"

	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/mutation"
)

// TestAuthWritesRefusedWithoutLogins: with AllowAllAuthenticator and
// AllowAllAuthorizer every statement runs but a write of system_auth,
// directly or in a batch, which only the role statements change.
func TestAuthWritesRefusedWithoutLogins(t *testing.T) {
	s := NewSession(newMemCoordinator())
	s.SetAuth(auth.NewService(auth.Config{Authenticator: auth.AllowAllAuthenticator, Authorizer: auth.AllowAllAuthorizer}))
	for _, q := range []string{
		"INSERT INTO system_auth.roles (role, is_superuser) VALUES ('eve', true)",
		"UPDATE system_auth.roles SET is_superuser = true WHERE role = 'eve'",
		"DELETE FROM system_auth.roles WHERE role = 'cassandra'",
		"TRUNCATE system_auth.role_permissions",
		"BEGIN BATCH INSERT INTO system.local (key) VALUES ('x'); INSERT INTO system_auth.roles (role) VALUES ('eve'); APPLY BATCH",
		"USE system_auth; INSERT INTO roles (role) VALUES ('eve')",
	} {
		_, err := s.Run(q)
		var e *Error
		if !errors.As(err, &e) || e.Code != Unauthorized || e.Message != "system_auth keyspace is not user-modifiable." {
			t.Errorf("%s: %v", q, err)
		}
		s.SetKeyspace("")
	}
	if _, err := s.Run("SELECT role FROM system_auth.roles"); err != nil {
		t.Fatalf("reading system_auth: %v", err)
	}
}

// BenchmarkAuthorize is what checking a SELECT costs a request: with no
// auth, with AllowAll (a write check alone), and with
// CassandraAuthorizer for a role holding SELECT through a granted role.
func BenchmarkAuthorize(b *testing.B) {
	c := newMemCoordinator()
	setup := NewSession(c)
	if _, err := setup.Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE ks.t (k int PRIMARY KEY, v int)"); err != nil {
		b.Fatal(err)
	}
	st, err := cql.Parse("SELECT v FROM ks.t WHERE k = 1")
	if err != nil {
		b.Fatal(err)
	}
	authorizing := auth.NewService(auth.Config{Authenticator: auth.PasswordAuthenticator, Authorizer: auth.CassandraAuthorizer, BcryptCost: 4})
	c.auth = authorizing
	admin := NewSession(c)
	admin.SetAuth(authorizing)
	admin.SetUser("admin")
	w := admin.writer()
	yes := true
	for _, ms := range [][]*mutation.Mutation{
		must(auth.CreateRole(w, "admin", auth.RoleChange{Superuser: &yes, Login: &yes})),
		must(auth.CreateRole(w, "readers", auth.RoleChange{})),
		must(auth.CreateRole(w, "app", auth.RoleChange{Login: &yes})),
		must(auth.GrantPermissions(w, "readers", auth.KeyspaceResource("ks"), auth.PermissionsOf(auth.Select))),
		must(auth.GrantRole(w, "readers", "app")),
	} {
		if err := c.ApplySchema(nil, ms); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		svc  *auth.Service
		user string
	}{
		{"none", nil, ""},
		{"allow-all", auth.NewService(auth.Config{Authenticator: auth.AllowAllAuthenticator, Authorizer: auth.AllowAllAuthorizer}), ""},
		{"cassandra-authorizer", authorizing, "app"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := NewSession(c)
			s.SetAuth(bc.svc)
			s.SetUser(bc.user)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.authorize(st, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func must(ms []*mutation.Mutation, err error) []*mutation.Mutation {
	if err != nil {
		panic(err)
	}
	return ms
}
