package node

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
)

// TestSecureInternode: with internode_encryption all (client
// certificates required) and a gossip key, three nodes form a cluster
// and replicate; a stranger's internode connection (plaintext, or TLS
// with a certificate of another authority) is refused at the handshake
// and counted, and its gossip (another key) is dropped and counted:
// nothing it sends speaks for a member.
func TestSecureInternode(t *testing.T) {
	pki, other := testutil.NewPKI(t, "cluster"), testutil.NewPKI(t, "elsewhere")
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	certs := map[int][2]string{}
	for k := 1; k <= 3; k++ {
		c, kf := pki.Issue(t, fmt.Sprintf("node%d", k))
		certs[k] = [2]string{c, kf}
	}
	passwords := filepath.Join(t.TempDir(), "jmxremote.password")
	if err := os.WriteFile(passwords, []byte("ops secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes, _, gossipPort := startThreeWith(t, func(k int) Config {
		return Config{AdminAuthentication: AdminAuthPasswordFile, AdminPasswordFile: passwords,
			GossipEncryptionKeys: []string{key}, ServerEncryptionOptions: ServerEncryptionOptions{
				Options:             tlsconf.Options{Keystore: certs[k][0], KeystoreKey: certs[k][1], RequireClientAuth: true, Truststore: pki.CAFile},
				InternodeEncryption: InternodeAll}}
	})
	waitAllUp(t, nodes)
	for _, q := range []string{
		"CREATE KEYSPACE sec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sec.t (k int PRIMARY KEY, v text)",
	} {
		if _, err := runAt(t, nodes[0], request.One, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runAt(t, nodes[1], request.All, "INSERT INTO sec.t (k, v) VALUES (1, 'sealed')"); err != nil {
		t.Fatalf("a write at ALL over internode TLS: %v", err)
	}
	if res, err := runAt(t, nodes[2], request.All, "SELECT v FROM sec.t WHERE k = 1"); err != nil || len(res.Rows) != 1 {
		t.Fatalf("a read at ALL over internode TLS: %v, %v", res, err)
	}

	storage := fmt.Sprintf("127.0.0.1:%d", storagePortOf(t, gossipPort))
	strangerCert, strangerKey := other.Issue(t, "stranger")
	strangerTLS, err := tlsconf.ClientSettings{CertFile: strangerCert, KeyFile: strangerKey}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	for name, tr := range map[string]messaging.TCP{
		"plaintext":                       {},
		"another authority's certificate": {TLS: &messaging.TCPTLS{Dial: func(string) *tls.Config { return strangerTLS }}},
	} {
		before := nodes[0].internodeTLS.HandshakeFailures.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := tr.Dial(ctx, "127.0.0.9", storage)
		if err == nil {
			// TLS 1.3 reports a refused client certificate at the first read.
			_, err = c.Recv()
			c.Close()
		}
		cancel()
		if err == nil {
			t.Fatalf("%s: a stranger's internode connection was taken", name)
		}
		waitUntil(t, name+" counted", func() (bool, string) {
			n := nodes[0].internodeTLS.HandshakeFailures.Load()
			return n > before, fmt.Sprint(n)
		})
	}

	// The gossip keys, at run time, through the admin API's handler (the
	// password file's authentication is the wrapper's, not run here).
	newRaw := []byte(strings.Repeat("n", 32))
	newKey := base64.StdEncoding.EncodeToString(newRaw)
	post := func(n *Node, action string) error {
		r := httptest.NewRequest("POST", "/gossipkeys", strings.NewReader(url.Values{"action": {action}, "key": {newKey}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		_, err := n.adminGossipKeys(r)
		return err
	}
	for _, action := range []string{"install", "use"} {
		for _, n := range nodes {
			if err := post(n, action); err != nil {
				t.Fatalf("%s on %s: %v", action, n.cfg.ListenAddress, err)
			}
		}
	}
	keys, err := nodes[0].adminGossipKeys(httptest.NewRequest("GET", "/gossipkeys", nil))
	oldRaw, _ := base64.StdEncoding.DecodeString(key)
	if err != nil || fmt.Sprint(keys) != fmt.Sprint([]string{KeyFingerprint(newRaw), KeyFingerprint(oldRaw)}) {
		t.Fatalf("keys after install and use: %v, %v", keys, err)
	}
	if err := post(nodes[0], "remove"); err == nil {
		t.Fatal("the sealing key was removed")
	}
	// An admin API anyone may use changes no key.
	nodes[2].cfg.AdminAuthentication = AdminAuthNone
	if err := post(nodes[2], "use"); err == nil || !strings.Contains(err.Error(), "admin_authentication") {
		t.Fatalf("a key change through an open admin API: %v", err)
	}
	nodes[2].cfg.AdminAuthentication = AdminAuthPasswordFile
	waitAllUp(t, nodes)

	refused := nodes[0].gossip.Refused()
	stranger, err := gossip.Start(gossip.Options{Name: "127.0.0.9", Seeds: []string{fmt.Sprintf("127.0.0.1:%d", gossipPort)},
		ClusterName: clusterNameOf(gossipPort), ReconnectInterval: 100 * time.Millisecond,
		EncryptionKeys: [][]byte{[]byte(strings.Repeat("x", 32))}, States: map[gossip.ApplicationState]string{gossip.Status: "NORMAL,0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	waitUntil(t, "the stranger's gossip dropped", func() (bool, string) {
		n := nodes[0].gossip.Refused()
		return n > refused, fmt.Sprint(n)
	})
	for _, n := range nodes {
		if s := n.gossip.Endpoint("127.0.0.9"); s != nil {
			t.Fatalf("%s knows the stranger: %+v", n.cfg.ListenAddress, s)
		}
	}
}
