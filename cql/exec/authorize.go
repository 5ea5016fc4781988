package exec

import (
	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/schema"
)

// A session's statements run as the role its connection logged in as,
// and each is checked before it runs (before it is validated, as
// Cassandra checks: a missing permission is reported before a missing
// role or resource), except that a statement on a table that does not
// exist reports that first, as Cassandra prepares a statement before it
// authorizes it.

// SetAuth makes the session check its statements with svc (nil: allow
// everything, as AllowAllAuthenticator and AllowAllAuthorizer).
func (s *Session) SetAuth(svc *auth.Service) { s.auth = svc }

// SetUser is the role the session's statements run as; "" before a login,
// and with AllowAllAuthenticator (anonymous).
func (s *Session) SetUser(user string) { s.user = user }

// readableSystemTable reports the tables any logged-in client may read: the
// drivers read them to find the cluster and its schema.
func readableSystemTable(ks, table string) bool {
	switch ks {
	case schema.SystemSchemaKeyspace, "system_virtual_schema":
		return true
	case schema.SystemKeyspace:
		return table == "local" || table == "peers" || table == "peers_v2"
	}
	return false
}

// validateLogin refuses a session that must log in and has not.
func (s *Session) validateLogin() error {
	if s.auth.Authenticating() && s.user == "" {
		return unauthorizedf("You have not logged in")
	}
	return nil
}

// ensureNotAnonymous refuses what only a logged-in role may do.
func (s *Session) ensureNotAnonymous() error {
	if err := s.validateLogin(); err != nil {
		return err
	}
	if s.user == "" {
		return unauthorizedf("You have to be logged in and not anonymous to perform this request")
	}
	return nil
}

// isSuper reports whether the session runs as a superuser: always when
// no one logs in.
func (s *Session) isSuper() bool {
	return !s.auth.Authenticating() || s.auth.Roles().IsSuperuser(s.user)
}

// hasPermission reports whether the session's role may do p on r.
func (s *Session) hasPermission(p auth.Permission, r auth.Resource) bool {
	return !s.auth.Authorizing() || s.auth.Roles().Permissions(s.user, r).Has(p)
}

// ensurePermission refuses the statement unless the session's role may
// do p on r.
func (s *Session) ensurePermission(p auth.Permission, r auth.Resource) error {
	if err := s.validateLogin(); err != nil {
		return err
	}
	if s.hasPermission(p, r) {
		return nil
	}
	s.auth.Refusals.Add(1)
	return unauthorizedf("User %s has no %s permission on %s or any of its parents", s.user, p, r)
}

// checkRolePermission is ensurePermission with the refusal of the role
// statements.
func (s *Session) checkRolePermission(p auth.Permission, r auth.Resource) error {
	if err := s.validateLogin(); err != nil {
		return err
	}
	if s.hasPermission(p, r) {
		return nil
	}
	s.auth.Refusals.Add(1)
	return unauthorizedf("User %s does not have sufficient privileges to perform the requested operation", s.user)
}

// nameKeyspace is the keyspace of a possibly unqualified name ("" when
// it has none and the session none either).
func nameKeyspace(n cql.QualifiedName, keyspace string) string {
	if n.Keyspace != "" {
		return n.Keyspace
	}
	return keyspace
}

// authorize checks that the session may run st, with keyspace the one
// its unqualified names are in.
func (s *Session) authorize(st cql.Statement, keyspace string) error {
	if s.auth == nil {
		return nil
	}
	if err := refuseAuthWrites(st, keyspace); err != nil {
		return err
	}
	if !s.auth.Authenticating() && !s.auth.Authorizing() {
		return nil // anyone may do anything else: no table lookups on every request's way
	}
	tableOf := func(n cql.QualifiedName) (string, string, bool) {
		ks := nameKeyspace(n, keyspace)
		k := s.schema().Keyspace(ks)
		if k == nil || k.Tables[n.Name] == nil {
			return "", "", false // the statement reports it
		}
		return ks, n.Name, true
	}
	keyspaceOf := func(n cql.QualifiedName) string { return nameKeyspace(n, keyspace) }
	modify := func(n cql.QualifiedName, conditional bool) error {
		ks, t, ok := tableOf(n)
		if !ok {
			return s.validateLogin()
		}
		if err := s.ensurePermission(auth.Modify, auth.TableResource(ks, t)); err != nil {
			return err
		}
		if conditional {
			return s.ensurePermission(auth.Select, auth.TableResource(ks, t))
		}
		return nil
	}
	switch st := st.(type) {
	case *cql.Select:
		ks, t, ok := tableOf(st.Table)
		if !ok || readableSystemTable(ks, t) {
			return s.validateLogin()
		}
		return s.ensurePermission(auth.Select, auth.TableResource(ks, t))
	case *cql.Insert:
		return modify(st.Table, st.IfNotExists)
	case *cql.Update:
		return modify(st.Table, st.IfExists || len(st.Conditions) > 0)
	case *cql.Delete:
		return modify(st.Table, st.IfExists || len(st.Conditions) > 0)
	case *cql.Batch:
		for _, m := range st.Statements {
			if err := s.authorize(m, keyspace); err != nil {
				return err
			}
		}
		return nil
	case *cql.Truncate:
		return modify(st.Table, false)
	case *cql.CreateKeyspace:
		return s.ensurePermission(auth.Create, auth.DataRoot)
	case *cql.AlterKeyspace:
		return s.ensurePermission(auth.Alter, auth.KeyspaceResource(st.Name))
	case *cql.DropKeyspace:
		return s.ensurePermission(auth.Drop, auth.KeyspaceResource(st.Name))
	case *cql.CreateTable:
		return s.ensurePermission(auth.Create, auth.AllTablesResource(keyspaceOf(st.Name)))
	case *cql.AlterTable:
		// On the table named, whether or not it is there yet (as
		// Cassandra checks): the statement reads the schema again as it
		// runs, and a table made meanwhile must not escape the check.
		if ks := keyspaceOf(st.Name); ks != "" {
			return s.ensurePermission(auth.Alter, auth.TableResource(ks, st.Name.Name))
		}
	case *cql.DropTable:
		if ks := keyspaceOf(st.Name); ks != "" {
			return s.ensurePermission(auth.Drop, auth.TableResource(ks, st.Name.Name))
		}
	case *cql.CreateType:
		return s.ensurePermission(auth.Create, auth.AllTablesResource(keyspaceOf(st.Name)))
	case *cql.AlterType:
		return s.ensurePermission(auth.Alter, auth.AllTablesResource(keyspaceOf(st.Name)))
	case *cql.DropType:
		return s.ensurePermission(auth.Drop, auth.AllTablesResource(keyspaceOf(st.Name)))
	case *cql.CreateIndex:
		if ks := nameKeyspace(st.Table, keyspaceOf(st.Name)); ks != "" {
			return s.ensurePermission(auth.Alter, auth.TableResource(ks, st.Table.Name))
		}
	case *cql.DropIndex:
		if ks := s.schema().Keyspace(keyspaceOf(st.Name)); ks != nil {
			if t, _ := ks.FindIndex(st.Name.Name); t != nil {
				return s.ensurePermission(auth.Alter, auth.TableResource(ks.Name, t.Name))
			}
		}
	}
	// USE, DESCRIBE, and the role and permission statements, which check
	// as they run.
	return s.validateLogin()
}

// refuseAuthWrites refuses a write to system_auth, which only the role
// and permission statements change (they carry their changes to every
// node through the metadata log).
func refuseAuthWrites(st cql.Statement, keyspace string) error {
	var target cql.QualifiedName
	switch st := st.(type) {
	case *cql.Insert:
		target = st.Table
	case *cql.Update:
		target = st.Table
	case *cql.Delete:
		target = st.Table
	case *cql.Truncate:
		target = st.Table
	case *cql.Batch:
		for _, m := range st.Statements {
			if err := refuseAuthWrites(m, keyspace); err != nil {
				return err
			}
		}
		return nil
	default:
		return nil
	}
	if ks := nameKeyspace(target, keyspace); ks == schema.SystemAuthKeyspace {
		return unauthorizedf("%s keyspace is not user-modifiable.", ks)
	}
	return nil
}
