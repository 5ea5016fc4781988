package clients

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// TestAdminAPIAuthentication: with admin_authentication roles and TLS on
// the admin port, nodetool gets in with a superuser's credentials over
// TLS alone; no credentials, a wrong password, a role that is not a
// superuser and plaintext are each refused, and the refusals counted.
// With password_file, the file's users get in.
func TestAdminAPIAuthentication(t *testing.T) {
	pki := testutil.NewPKI(t, "admin")
	cert, key := pki.Issue(t, "node")
	noDelay := node.Duration(0)
	_, nativePort, adminPort := serveNode(t, node.Config{Authenticator: "PasswordAuthenticator", SuperuserSetupDelay: &noDelay,
		AdminAuthentication: node.AdminAuthRoles, AdminEncryptionOptions: tlsconf.Options{Enabled: true, Keystore: cert, KeystoreKey: key}})
	run := func(args ...string) (int, string) {
		var out, errs bytes.Buffer
		code := nodetool.Run(append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(adminPort)}, args...), &out, &errs)
		return code, out.String() + errs.String()
	}
	tlsArgs := []string{"--ssl", "--truststore", pki.CAFile}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, out := run(append(tlsArgs, "-u", "cassandra", "-pw", "cassandra", "version")...)
		if code == 0 && strings.Contains(out, "ReleaseVersion: "+node.ReleaseVersion) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the default superuser never got in: %d %s", code, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	admin := mustLogin(t, nativePort, "cassandra", "cassandra")
	if err := admin.Query("CREATE ROLE ops WITH PASSWORD = 'ops-pw' AND LOGIN = true").Exec(); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(adminPort)
	for _, c := range []struct {
		args []string
		want string
	}{
		{tlsArgs, "nodetool: Failed to connect to '127.0.0.1:" + port + "' - SecurityException: 'Authentication failed! Credentials required'."},
		{append(tlsArgs, "-u", "cassandra", "-pw", "wrong"), "SecurityException: 'Authentication failed! Invalid username or password'."},
		{append(tlsArgs, "-u", "ops", "-pw", "ops-pw"), "SecurityException: 'Authentication failed! ops is not a superuser'."},
		{[]string{"-u", "cassandra", "-pw", "cassandra"}, "ConnectException"},
	} {
		code, out := run(append(c.args, "flush")...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("nodetool %v flush: %d %q, want %q", c.args, code, out, c.want)
		}
	}
	code, out := run(append(tlsArgs, "-u", "cassandra", "-pw", "cassandra", "flush")...)
	if code != 0 {
		t.Fatalf("flush as a superuser: %d %s", code, out)
	}

	// password_file, readable by its owner alone.
	dir := t.TempDir()
	file := filepath.Join(dir, "jmxremote.password")
	if err := os.WriteFile(file, []byte("# JMX's format\nmonitor s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := node.Config{DataDir: t.TempDir(), AdminAuthentication: node.AdminAuthPasswordFile, AdminPasswordFile: file}
	if _, err := node.Open(cfg); err == nil || !strings.Contains(err.Error(), "admin_password_file: "+file+" may be read by others than its owner") {
		t.Fatalf("a password file others may read: %v", err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.AdminPort = testutil.FreePort(t)
	n2, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n2.Close() })
	if _, err := n2.StartAdmin(); err != nil {
		t.Fatal(err)
	}
	pwf := filepath.Join(dir, "nodetool.password")
	if err := os.WriteFile(pwf, []byte("monitor s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if code := nodetool.Run([]string{"-p", strconv.Itoa(cfg.AdminPort), "-u", "monitor", "-pwf", pwf, "version"}, &buf, &buf); code != 0 {
		t.Fatalf("with the password file's user: %d %s", code, buf.String())
	}
	buf.Reset()
	if code := nodetool.Run([]string{"-p", strconv.Itoa(cfg.AdminPort), "version"}, &buf, &buf); code != 1 || !strings.Contains(buf.String(), "Credentials required") {
		t.Fatalf("without credentials: %d %s", code, buf.String())
	}
	req, err := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(cfg.AdminPort)+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("monitor", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "\nsibyl_admin_auth_failures_total 1\n") {
		t.Fatalf("the refusal is not counted: %s", body)
	}
}
