package cluster

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/tlsconf"
)

// A cluster made with PasswordAuth, SSL or both runs every node with the
// sibyl.yaml its directory holds: logins and permissions, and TLS on
// every port (client, internode, admin) with gossip sealed, under an
// authority made in its pki/ directory. The tool itself, and the cqlshrc
// it leaves there, connect as the default superuser with a certificate
// of that authority.

func (c *Cluster) secured() bool      { return c.PasswordAuth || c.SSL }
func (c *Cluster) configFile() string { return filepath.Join(c.Dir, "sibyl.yaml") }
func (c *Cluster) pkiDir() string     { return filepath.Join(c.Dir, "pki") }
func (c *Cluster) caFile() string     { return filepath.Join(c.pkiDir(), "cluster-ca.crt") }
func (c *Cluster) clientCert() (string, string) {
	return filepath.Join(c.pkiDir(), "client.crt"), filepath.Join(c.pkiDir(), "client.key")
}

// writeSecurity makes, once, the authority, the nodes' and the client's
// certificates, the gossip key, the nodes' sibyl.yaml and a cqlshrc.
func (c *Cluster) writeSecurity() error {
	if !c.secured() {
		return nil
	}
	if _, err := os.Stat(c.configFile()); err == nil {
		return nil // made by an earlier up: the nodes keep their keys
	}
	q := strconv.Quote
	var yaml, rc strings.Builder
	if c.PasswordAuth {
		yaml.WriteString("authenticator: PasswordAuthenticator\nauthorizer: CassandraAuthorizer\nsuperuser_setup_delay: 0s\n")
		rc.WriteString("[authentication]\nusername = cassandra\npassword = cassandra\n\n")
	}
	if c.SSL {
		// Two authorities: the nodes' (which the storage port trusts) and
		// the clients' (which the native port trusts), so that a client's
		// certificate does not pass for a node's.
		a, err := tlsconf.NewAuthority(c.pkiDir(), "cluster")
		if err != nil {
			return err
		}
		cert, key, err := a.Issue("node")
		if err != nil {
			return err
		}
		clients, err := tlsconf.NewAuthority(c.pkiDir(), "clients")
		if err != nil {
			return err
		}
		clientCert, clientKey, err := clients.Issue("client")
		if err != nil {
			return err
		}
		var gossipKey [32]byte
		_, _ = rand.Read(gossipKey[:])
		keystore := fmt.Sprintf("  keystore: %s\n  keystore_key: %s\n", q(cert), q(key))
		fmt.Fprintf(&yaml, "client_encryption_options:\n  enabled: true\n  require_client_auth: %t\n%s  truststore: %s\n",
			c.RequireClientAuth, keystore, q(clients.CAFile))
		fmt.Fprintf(&yaml, "server_encryption_options:\n  internode_encryption: all\n  require_client_auth: true\n%s  truststore: %s\n",
			keystore, q(a.CAFile))
		fmt.Fprintf(&yaml, "admin_encryption_options:\n  enabled: true\n%s", keystore)
		fmt.Fprintf(&yaml, "gossip_encryption_keys:\n  - %s\n", q(base64.StdEncoding.EncodeToString(gossipKey[:])))
		fmt.Fprintf(&rc, "[connection]\nssl = true\n\n[ssl]\ncertfile = %s\nvalidate = true\nusercert = %s\nuserkey = %s\n",
			a.CAFile, clientCert, clientKey)
	}
	if err := os.WriteFile(c.configFile(), []byte(yaml.String()), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.Dir, "cqlshrc"), []byte(rc.String()), 0o600)
}

// nodeArgs are the server flags of the cluster's security.
func (c *Cluster) nodeArgs() []string {
	if !c.secured() {
		return nil
	}
	return []string{"--config", c.configFile()}
}

// clientTLS is the tool's TLS: the cluster's authority trusted, its
// client certificate shown.
func (c *Cluster) clientTLS() (*tls.Config, error) {
	cert, key := c.clientCert()
	return tlsconf.ClientSettings{CAFile: c.caFile(), VerifyServer: true, CertFile: cert, KeyFile: key}.ClientConfig()
}

// secureSession sets a gocql configuration up to reach the cluster's
// nodes: credentials and TLS as the cluster runs them.
func (c *Cluster) secureSession(cluster *gocql.ClusterConfig) error {
	if c.PasswordAuth {
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
	}
	if c.SSL {
		cfg, err := c.clientTLS()
		if err != nil {
			return err
		}
		cluster.SslOpts = &gocql.SslOptions{Config: cfg, EnableHostVerification: true}
	}
	return nil
}

// adminClient reaches the nodes' admin API: over TLS for a cluster with
// SSL.
func (c *Cluster) adminClient() (*http.Client, string, error) {
	if !c.SSL {
		return &http.Client{Timeout: 2 * time.Second}, "http://", nil
	}
	cfg, err := c.clientTLS()
	if err != nil {
		return nil, "", err
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}, "https://", nil
}

// nodetoolArgs are nodetool's flags to reach node k's admin API.
func (c *Cluster) nodetoolArgs(k int) []string {
	args := []string{"-h", Address(k), "-p", strconv.Itoa(c.AdminPort)}
	if c.SSL {
		args = append(args, "--ssl", "--truststore", c.caFile())
	}
	return args
}
