package node

import (
	"testing"

	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/mutation/request"
)

// runAs runs one statement through n as a role.
func runAs(t *testing.T, n *Node, user, text string) {
	t.Helper()
	s := n.newSession()
	s.SetUser(user)
	if _, err := s.QueryText(text, exec.QueryParams{Consistency: request.One}); err != nil {
		t.Fatalf("%s as %s: %v", text, user, err)
	}
}

// TestRolesReachEveryNode: system_auth is the metadata log's, so a role
// and a grant made through one node hold on every node once the statement
// returns; the default superuser, which every node sets out to create at
// once, is made once; and a node that was down when a password changed
// has the new one, and not the old, once it is back.
func TestRolesReachEveryNode(t *testing.T) {
	noDelay := Duration(0)
	configure := func(int) Config {
		return Config{Authenticator: auth.PasswordAuthenticator, Authorizer: auth.CassandraAuthorizer, SuperuserSetupDelay: &noDelay}
	}
	nodes, dirs, gossipPort := startThreeWith(t, configure)
	waitAllUp(t, nodes)
	for _, n := range nodes {
		waitUntil(t, "the default superuser on "+n.cfg.ListenAddress, func() (bool, string) {
			return n.auth.Authenticate("cassandra", "cassandra") == nil, ""
		})
	}
	runAs(t, nodes[0], "cassandra", "CREATE ROLE alice WITH PASSWORD = 'pw1' AND LOGIN = true")
	runAs(t, nodes[0], "cassandra", "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
	runAs(t, nodes[1], "cassandra", "GRANT SELECT ON KEYSPACE ks TO alice")
	for _, n := range nodes {
		if err := n.auth.Authenticate("alice", "pw1"); err != nil {
			t.Fatalf("alice on %s right after CREATE ROLE: %v", n.cfg.ListenAddress, err)
		}
		if !n.auth.Roles().Permissions("alice", auth.TableResource("ks", "t")).Has(auth.Select) {
			t.Fatalf("alice's SELECT has not reached %s", n.cfg.ListenAddress)
		}
		if got := n.auth.Roles().Names(); len(got) != 2 {
			t.Fatalf("roles on %s: %v", n.cfg.ListenAddress, got)
		}
	}

	third := nodes[2]
	if err := third.Close(); err != nil {
		t.Fatal(err)
	}
	runAs(t, nodes[0], "cassandra", "ALTER ROLE alice WITH PASSWORD = 'pw2'")
	runAs(t, nodes[0], "cassandra", "REVOKE SELECT ON KEYSPACE ks FROM alice")
	cfg := configure(3)
	cfg.DataDir, cfg.NativePort = dirs[2], freePort(t)
	nodes[2] = clusterNodeWith(t, 3, cfg, gossipPort)
	waitUntil(t, "the new password on the restarted node", func() (bool, string) {
		return nodes[2].auth.Authenticate("alice", "pw2") == nil, ""
	})
	if err := nodes[2].auth.Authenticate("alice", "pw1"); err == nil {
		t.Fatal("the old password still logs in on the restarted node")
	}
	if nodes[2].auth.Roles().Permissions("alice", auth.KeyspaceResource("ks")).Has(auth.Select) {
		t.Fatal("the revoked SELECT is still granted on the restarted node")
	}
}
