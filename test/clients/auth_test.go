package clients

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
)

// startAuthNode starts a node with PasswordAuthenticator and
// CassandraAuthorizer whose default superuser is set up at once, and
// waits until cassandra/cassandra logs in. It returns the native and the
// admin ports.
func startAuthNode(t testing.TB) (n *node.Node, nativePort, adminPort int) {
	t.Helper()
	noDelay := node.Duration(0)
	n, nativePort, adminPort = serveNode(t, node.Config{Authenticator: "PasswordAuthenticator",
		Authorizer: "org.apache.cassandra.auth.CassandraAuthorizer", SuperuserSetupDelay: &noDelay})
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := loginAs(nativePort, "cassandra", "cassandra")
		if err == nil {
			s.Close()
			return n, nativePort, adminPort
		}
		if time.Now().After(deadline) {
			t.Fatalf("the default superuser never logged in: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serveNode opens a node of cfg on a fresh directory and free ports and
// serves its native protocol and admin API until the test ends.
func serveNode(t testing.TB, cfg node.Config) (n *node.Node, nativePort, adminPort int) {
	t.Helper()
	cfg.DataDir, cfg.NativePort, cfg.AdminPort = t.TempDir(), testutil.FreePort(t), testutil.FreePort(t)
	n, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("closing the node: %v", err)
		}
	})
	if _, err := n.StartNative(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.StartAdmin(); err != nil {
		t.Fatal(err)
	}
	return n, cfg.NativePort, cfg.AdminPort
}

func loginAs(port int, user, password string) (*gocql.Session, error) {
	cluster := gocqlCluster(port)
	cluster.DisableInitialHostLookup = true
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	return cluster.CreateSession()
}

func mustLogin(t *testing.T, port int, user, password string) *gocql.Session {
	t.Helper()
	s, err := loginAs(port, user, password)
	if err != nil {
		t.Fatalf("logging in as %s: %v", user, err)
	}
	t.Cleanup(s.Close)
	return s
}

// metric reads one series of the node's admin API: a name, with its
// labels as the text format writes them when it has any.
func metric(t *testing.T, adminPort int, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(adminPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestPasswordAuthenticationAndPermissions runs the login refusals and
// the permission checks through gocql: a wrong password, an unknown role
// and a role that may not log in are each refused with Cassandra's
// message and counted; a role sees a table only once SELECT is granted,
// and not once it is revoked, at once.
func TestPasswordAuthenticationAndPermissions(t *testing.T) {
	_, port, adminPort := startAuthNode(t)
	admin := mustLogin(t, port, "cassandra", "cassandra")
	for _, q := range []string{
		"CREATE ROLE alice WITH PASSWORD = 'alice-pw' AND LOGIN = true",
		"CREATE ROLE locked WITH PASSWORD = 'locked-pw' AND LOGIN = false",
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.t (k int PRIMARY KEY, v text)",
		"INSERT INTO ks.t (k, v) VALUES (1, 'secret')",
	} {
		if err := admin.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// system_views.clients names the role each connection logged in as.
	iter := admin.Query("SELECT username, connection_stage FROM system_views.clients").Iter()
	for user, stage, rows := "", "", 0; ; rows++ {
		if !iter.Scan(&user, &stage) {
			if rows == 0 {
				t.Error("no clients listed")
			}
			break
		}
		if user != "cassandra" || stage != "ready" {
			t.Errorf("a client of role %q in stage %q, want cassandra, ready", user, stage)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	before := metric(t, adminPort, "sibyl_auth_failures_total")
	for _, c := range []struct{ user, password, want string }{
		{"alice", "wrong", "Provided username alice and/or password are incorrect"},
		{"nobody", "alice-pw", "Provided username nobody and/or password are incorrect"},
		{"locked", "locked-pw", "locked is not permitted to log in"},
	} {
		s, err := loginAs(port, c.user, c.password)
		if err == nil {
			s.Close()
			t.Fatalf("%s/%s logged in", c.user, c.password)
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.password) {
			t.Fatalf("%s/%s: %v, want %q and no password", c.user, c.password, err, c.want)
		}
	}
	if after := metric(t, adminPort, "sibyl_auth_failures_total"); after < before+3 {
		t.Fatalf("sibyl_auth_failures_total went from %v to %v, want 3 more at least", before, after)
	}

	alice := mustLogin(t, port, "alice", "alice-pw")
	var v string
	refusedBefore := metric(t, adminPort, "sibyl_auth_unauthorized_total")
	err := alice.Query("SELECT v FROM ks.t WHERE k = 1").Scan(&v)
	var re gocql.RequestError
	if !errors.As(err, &re) || re.Code() != 0x2100 || re.Message() != "User alice has no SELECT permission on <table ks.t> or any of its parents" {
		t.Fatalf("SELECT without the permission: %v", err)
	}
	if v != "" {
		t.Fatalf("the refusal leaked %q", v)
	}
	if after := metric(t, adminPort, "sibyl_auth_unauthorized_total"); after != refusedBefore+1 {
		t.Fatalf("sibyl_auth_unauthorized_total went from %v to %v", refusedBefore, after)
	}
	if err := admin.Query("GRANT SELECT ON KEYSPACE ks TO alice").Exec(); err != nil {
		t.Fatal(err)
	}
	if err := alice.Query("SELECT v FROM ks.t WHERE k = 1").Scan(&v); err != nil || v != "secret" {
		t.Fatalf("SELECT once granted: %q, %v", v, err)
	}
	if err := alice.Query("INSERT INTO ks.t (k, v) VALUES (2, 'x')").Exec(); err == nil {
		t.Fatal("INSERT with SELECT alone was taken")
	}
	if err := admin.Query("REVOKE SELECT ON KEYSPACE ks FROM alice").Exec(); err != nil {
		t.Fatal(err)
	}
	if err := alice.Query("SELECT v FROM ks.t WHERE k = 1").Scan(&v); !errors.As(err, &re) || re.Code() != 0x2100 {
		t.Fatalf("SELECT once revoked: %v", err)
	}
	// A changed password holds for the next login at once: the
	// credentials cache keeps a login only for the hash it checked.
	if err := admin.Query("ALTER ROLE alice WITH PASSWORD = 'new-pw'").Exec(); err != nil {
		t.Fatal(err)
	}
	if s, err := loginAs(port, "alice", "alice-pw"); err == nil {
		s.Close()
		t.Fatal("the old password still logs in")
	}
	mustLogin(t, port, "alice", "new-pw")
}

// authResponse is an AUTH_RESPONSE body carrying token.
func authResponse(token string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(token)))
	return append(b, token...)
}

const (
	opErrorCode    = 0x00
	opAuthenticate = 0x03
	opQuery        = 0x07
	opResult       = 0x08
	opAuthResponse = 0x0F
	opAuthSuccess  = 0x10
)

// TestSASLCannotBeSkipped speaks the exchange by hand: a QUERY before
// AUTH_SUCCESS is refused, a malformed token and a wrong password are
// authentication errors after which the connection may try again, and
// only a right one lets queries run.
func TestSASLCannotBeSkipped(t *testing.T) {
	_, port, _ := startAuthNode(t)
	c := dialRaw(t, port)
	c.send(4, 1, 0x01, startupBody())
	if r := c.recv(); r.op != opAuthenticate || !strings.Contains(string(r.body), "org.apache.cassandra.auth.PasswordAuthenticator") {
		t.Fatalf("STARTUP answered %#x %q", r.op, r.body)
	}
	c.send(4, 2, opQuery, queryBody("SELECT * FROM system_auth.roles"))
	if code, msg := c.recv().errorText(); code != 0x000A || msg != "Unexpected message QUERY, expecting SASL_RESPONSE" {
		t.Fatalf("QUERY before authenticating: %#x %q", code, msg)
	}
	for _, c2 := range []struct{ token, want string }{
		{"", "Password must not be null"},
		{"\x00cassandra\x00", "Password must not be null"},
		{"cassandra", "Password must not be null"},
		{"\x00\x00cassandra", "Authentication ID must not be null"},
		{"a\x00b\x00cassandra\x00cassandra", `Credential format error: username or password is empty or contains NUL(\0) character`},
		{"\x00cassandra\x00wrong", "Provided username cassandra and/or password are incorrect"},
	} {
		c.send(4, 3, opAuthResponse, authResponse(c2.token))
		if code, msg := c.recv().errorText(); code != 0x0100 || msg != c2.want {
			t.Fatalf("token %q: %#x %q, want %q", c2.token, code, msg, c2.want)
		}
		c.send(4, 4, opQuery, queryBody("SELECT * FROM system_auth.roles"))
		if code, _ := c.recv().errorText(); code != 0x000A {
			t.Fatalf("QUERY after a refused token %q: %#x", c2.token, code)
		}
	}
	// An authorization id before the user is ignored, as Cassandra does.
	c.send(4, 5, opAuthResponse, authResponse("someone\x00cassandra\x00cassandra"))
	if r := c.recv(); r.op != opAuthSuccess {
		t.Fatalf("the right password: %#x %q", r.op, r.body)
	}
	c.send(4, 6, opQuery, queryBody("SELECT role FROM system_auth.roles"))
	if r := c.recv(); r.op != opResult {
		t.Fatalf("QUERY once authenticated: %#x %q", r.op, r.body)
	}
	c.send(4, 7, opAuthResponse, authResponse("\x00cassandra\x00cassandra"))
	if code, _ := c.recv().errorText(); code != 0x000A {
		t.Fatalf("AUTH_RESPONSE once authenticated: %#x", code)
	}
}

// FuzzAuthExchange sends any token as AUTH_RESPONSE: the node answers an
// authentication error or (for the right credentials alone) AUTH_SUCCESS,
// never anything else, and until AUTH_SUCCESS a QUERY is refused.
func FuzzAuthExchange(f *testing.F) {
	for _, s := range []string{"", "\x00", "\x00\x00", "\x00cassandra\x00cassandra", "x\x00cassandra\x00cassandra",
		"\x00cassandra\x00cassandrA", "\x00\xff\xfe\x00\x00", strings.Repeat("\x00", 300), "\x00" + strings.Repeat("a", 70000) + "\x00b"} {
		f.Add([]byte(s))
	}
	_, port, _ := startAuthNode(f)
	f.Fuzz(func(t *testing.T, token []byte) {
		c := dialRaw(t, port)
		c.send(4, 1, 0x01, startupBody())
		if r := c.recv(); r.op != opAuthenticate {
			t.Fatalf("STARTUP answered %#x", r.op)
		}
		c.send(4, 2, opAuthResponse, authResponse(string(token)))
		r := c.recv()
		right := strings.HasSuffix(string(token), "\x00cassandra\x00cassandra") && strings.Count(string(token), "\x00") == 2
		switch {
		case r.op == opAuthSuccess && right:
			return
		case right:
			t.Fatalf("token %.40q, the right credentials: answered %#x", token, r.op)
		case r.op == opErrorCode:
			if code, _ := r.errorText(); code != 0x0100 && code != 0x000A {
				t.Fatalf("token %.40q: error %#x", token, code)
			}
		default:
			t.Fatalf("token %.40q: answered %#x", token, r.op)
		}
		if code, _ := r.errorText(); code == 0x000A {
			// Too big a frame for a handshake: the connection closes
			// (with a reset when the rest of the frame is unread).
			var b [1]byte
			if _, err := c.nc.Read(b[:]); err == nil {
				t.Fatalf("token %.40q: a protocol error left the connection open", token)
			}
			return
		}
		c.send(4, 3, opQuery, queryBody("SELECT role FROM system_auth.roles"))
		if code, _ := c.recv().errorText(); code != 0x000A {
			t.Fatalf("token %.40q: QUERY after a refused login answered %#x", token, code)
		}
	})
}
