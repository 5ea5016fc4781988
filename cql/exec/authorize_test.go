package exec

import (
	"errors"
	"testing"

	"github.com/sibyldb/sibyl/auth"
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
