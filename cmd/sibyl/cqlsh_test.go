package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/node"
)

// TestCqlshSSL: sibyl cqlsh --ssl connects as its cqlshrc's [ssl] section
// says (the node's authority, the shell's own certificate for a node that
// requires one) and runs statements; the cqlshrc's credentials log in.
func TestCqlshSSL(t *testing.T) {
	pki := testutil.NewPKI(t, "cluster")
	cert, key := pki.Issue(t, "node")
	userCert, userKey := pki.Issue(t, "cqlsh")
	port := testutil.FreePort(t)
	noDelay := node.Duration(0)
	n, err := node.Open(node.Config{DataDir: t.TempDir(), NativePort: port, AdminPort: testutil.FreePort(t),
		Authenticator: "PasswordAuthenticator", SuperuserSetupDelay: &noDelay,
		ClientEncryptionOptions: tlsconf.Options{Enabled: true, Keystore: cert, KeystoreKey: key, RequireClientAuth: true, Truststore: pki.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.StartNative(); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "cqlshrc")
	text := "[authentication]\nusername = cassandra\npassword = cassandra\n[connection]\nhostname = 127.0.0.1\nport = " +
		strconv.Itoa(port) + "\n[ssl]\ncertfile = " + pki.CAFile + "\nvalidate = true\nusercert = " + userCert + "\nuserkey = " + userKey + "\n"
	if err := os.WriteFile(rc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// The default superuser is made as the node starts: wait for it (a
	// refused login ends the shell's process).
	tlsCfg, err := tlsconf.ClientSettings{CAFile: pki.CAFile, VerifyServer: true, CertFile: userCert, KeyFile: userKey}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port, cluster.DisableInitialHostLookup = port, true
	cluster.SslOpts = &gocql.SslOptions{Config: tlsCfg, EnableHostVerification: true}
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := cluster.CreateSession()
		if err == nil {
			s.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the default superuser never logged in: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var out bytes.Buffer
	cmd := newCqlshCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--cqlshrc", rc, "--ssl", "-e", "LIST USERS"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cassandra |  True |         ALL") {
		t.Fatalf("cqlsh --ssl printed %q", out.String())
	}
}
