package clients

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/node"
)

// startTLSNode starts a node whose native port takes TLS alone, with
// client certificates of pki's authority required.
func startTLSNode(t *testing.T, pki *testutil.PKI) (nativePort, adminPort int) {
	t.Helper()
	cert, key := pki.Issue(t, "node")
	_, nativePort, adminPort = serveNode(t, node.Config{ClientEncryptionOptions: tlsOptions(cert, key, pki.CAFile)})
	return nativePort, adminPort
}

func tlsCluster(port int, cfg *tls.Config) *gocql.ClusterConfig {
	cluster := gocqlCluster(port)
	cluster.DisableInitialHostLookup = true
	if cfg != nil {
		cluster.SslOpts = &gocql.SslOptions{Config: cfg, EnableHostVerification: true}
	}
	return cluster
}

// TestClientTLS: gocql with a certificate of the cluster's authority
// connects over TLS and works; plaintext, no certificate, and a
// certificate of another authority are each refused and counted.
func TestClientTLS(t *testing.T) {
	pki, other := testutil.NewPKI(t, "cluster"), testutil.NewPKI(t, "elsewhere")
	port, adminPort := startTLSNode(t, pki)
	clientCert, clientKey := pki.Issue(t, "app")
	strangerCert, strangerKey := other.Issue(t, "stranger")
	config := func(cert, key string) *tls.Config {
		cfg, err := tlsClientConfig(pki.CAFile, cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	s, err := tlsCluster(port, config(clientCert, clientKey)).CreateSession()
	if err != nil {
		t.Fatalf("TLS with the right certificate: %v", err)
	}
	var v string
	if err := s.Query("SELECT release_version FROM system.local").Scan(&v); err != nil || v != node.ReleaseVersion {
		t.Fatalf("over TLS: %q, %v", v, err)
	}
	// system_views.clients shows the connection's TLS.
	var enabled bool
	var protocol, suite string
	if err := s.Query("SELECT ssl_enabled, ssl_protocol, ssl_cipher_suite FROM system_views.clients LIMIT 1").Scan(&enabled, &protocol, &suite); err != nil ||
		!enabled || protocol != "TLSv1.3" || !strings.HasPrefix(suite, "TLS_") {
		t.Errorf("clients over TLS: ssl_enabled %v, ssl_protocol %q, ssl_cipher_suite %q, %v", enabled, protocol, suite, err)
	}
	s.Close()
	for name, cfg := range map[string]*tls.Config{
		"plaintext":                   nil,
		"no client certificate":       config("", ""),
		"a certificate of another CA": config(strangerCert, strangerKey),
	} {
		before := metric(t, adminPort, `sibyl_tls_handshake_failures_total{listener="native"}`)
		cluster := tlsCluster(port, cfg)
		cluster.ConnectTimeout, cluster.Timeout = 2*time.Second, 2*time.Second
		if s, err := cluster.CreateSession(); err == nil {
			s.Close()
			t.Fatalf("%s: got in", name)
		}
		// With TLS 1.3 the client is done with its handshake before the
		// server has checked its certificate: the refusal may be counted
		// a moment after the client saw it.
		deadline := time.Now().Add(5 * time.Second)
		for metric(t, adminPort, `sibyl_tls_handshake_failures_total{listener="native"}`) <= before {
			if time.Now().After(deadline) {
				t.Fatalf("%s: refused handshakes stayed at %v", name, before)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func tlsOptions(cert, key, ca string) tlsconf.Options {
	return tlsconf.Options{Enabled: true, Keystore: cert, KeystoreKey: key, RequireClientAuth: true, Truststore: ca}
}

func tlsClientConfig(ca, cert, key string) (*tls.Config, error) {
	return tlsconf.ClientSettings{CAFile: ca, VerifyServer: true, CertFile: cert, KeyFile: key}.ClientConfig()
}
