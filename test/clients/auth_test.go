package clients

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cql/native"
	"github.com/sibyldb/sibyl/node"
)

// TestAuthenticationFlow serves a node with a password authenticator:
// gocql answers AUTHENTICATE with its credentials and gets in; wrong ones
// get the authentication error.
func TestAuthenticationFlow(t *testing.T) {
	n, err := node.Open(node.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	srv, err := native.NewServer(native.Options{
		NewSession:    func() *exec.Session { return exec.NewSession(n) },
		Authenticator: native.PasswordAuthenticator{Check: func(u, p string) bool { return u == "ann" && p == "s3cret" }},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())
	connect := func(user, password string) (*gocql.Session, error) {
		cluster := gocql.NewCluster("127.0.0.1")
		cluster.Port = l.Addr().(*net.TCPAddr).Port
		cluster.Timeout = 5 * time.Second
		cluster.DisableInitialHostLookup = true
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
		return cluster.CreateSession()
	}
	s, err := connect("ann", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := s.Query("SELECT release_version FROM system.local").Scan(&v); err != nil || v != node.ReleaseVersion {
		t.Fatalf("after authenticating: %q, %v", v, err)
	}
	s.Close()
	if _, err := connect("ann", "wrong"); err == nil || !strings.Contains(err.Error(), "Provided username ann and/or password are incorrect") {
		t.Fatalf("wrong password: %v", err)
	}
}
