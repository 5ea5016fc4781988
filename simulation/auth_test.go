package simulation

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/ring"
)

// TestRoleChangesThroughTheLog: on three whole nodes with
// PasswordAuthenticator, the default superuser is made once though every
// node sets out to make it; two nodes creating the same role at once
// make it once (the other is told it exists), and every node then logs
// it in with the winner's password; a password changed while a node is
// cut off reaches it once the partition heals, and its old password no
// longer logs in there.
func TestRoleChangesThroughTheLog(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c, err := New(Config{Seed: 19, Whole: true, Authenticator: "PasswordAuthenticator", Authorizer: "CassandraAuthorizer",
			Nodes: []NodeConfig{{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"},
				{Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		nodes := c.Nodes()
		eventuallyLogsIn := func(n *Node, user, password string) *exec.Session {
			t.Helper()
			var err error
			for range 600 {
				var s *exec.Session
				if s, err = n.Whole().Login(user, password); err == nil {
					return s
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Fatalf("%s never logged %s in: %v", n.Name, user, err)
			return nil
		}
		var admins []*exec.Session
		for _, n := range nodes {
			admins = append(admins, eventuallyLogsIn(n, "cassandra", "cassandra"))
		}
		res, err := admins[2].Run("LIST ROLES")
		if err != nil || len(res[0].Rows) != 1 {
			t.Fatalf("LIST ROLES after the default superuser: %v, %v", res, err)
		}

		errs := make(chan error, 2)
		for i, pw := range []string{"one", "two"} {
			go func() {
				_, err := admins[i].Run(fmt.Sprintf("CREATE ROLE alice WITH PASSWORD = '%s' AND LOGIN = true", pw))
				errs <- err
			}()
		}
		var won, lost int
		for range 2 {
			err := <-errs
			var e *exec.Error
			switch {
			case err == nil:
				won++
			case errors.As(err, &e) && e.Message == "alice already exists":
				lost++
			default:
				t.Fatalf("a concurrent CREATE ROLE: %v", err)
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("%d CREATE ROLEs won, %d lost", won, lost)
		}
		c.Settle()
		winner := ""
		for _, pw := range []string{"one", "two"} {
			if _, err := nodes[0].Whole().Login("alice", pw); err == nil {
				winner = pw
			}
		}
		for _, n := range nodes {
			if _, err := n.Whole().Login("alice", winner); err != nil || winner == "" {
				t.Fatalf("alice with %q on %s: %v", winner, n.Name, err)
			}
		}

		cut := nodes[2]
		c.Partition(ring.Endpoint(cut.Name))
		if _, err := admins[0].Run("ALTER ROLE alice WITH PASSWORD = 'three'"); err != nil {
			t.Fatalf("ALTER ROLE with a node cut off: %v", err)
		}
		if _, err := cut.Whole().Login("alice", winner); err != nil {
			t.Fatalf("the cut-off node lost the old password before it heard of the change: %v", err)
		}
		c.Heal()
		eventuallyLogsIn(cut, "alice", "three")
		if _, err := cut.Whole().Login("alice", winner); err == nil {
			t.Fatal("the old password still logs in on the healed node")
		}
	})
}
