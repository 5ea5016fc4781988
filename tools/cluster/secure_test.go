package cluster

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
)

// TestSecureCluster: a cluster made with --pwd-auth --ssl runs its nodes
// with logins and TLS everywhere: a write at ALL crosses internode TLS,
// status goes over the admin API's TLS, and a plaintext client, or one
// without credentials, is refused.
func TestSecureCluster(t *testing.T) {
	var out bytes.Buffer
	gossipPort := testutil.ClusterPort(t, 2)
	c := &Cluster{Dir: t.TempDir(), Out: &out, UpTimeout: time.Minute, Config: Config{Name: fmt.Sprintf("secure test %d", gossipPort),
		Nodes: 2, Binary: sibyl, NativePort: testutil.ClusterPort(t, 2), AdminPort: testutil.ClusterPort(t, 2), GossipPort: gossipPort,
		StoragePort: testutil.ClusterPort(t, 2), PasswordAuth: true, SSL: true, RequireClientAuth: true}}
	defer Down(c)
	if err := Up(c); err != nil {
		t.Fatalf("up: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "connect with: sibyl cqlsh --cqlshrc "+c.Dir+"/cqlshrc") {
		t.Fatalf("up printed:\n%s", out.String())
	}
	cluster := gocql.NewCluster(Address(1))
	cluster.Port, cluster.Timeout, cluster.ConnectTimeout = c.NativePort, 10*time.Second, 10*time.Second
	if err := c.secureSession(cluster); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{"CREATE KEYSPACE sec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE sec.t (k int PRIMARY KEY, v text)"} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Query("INSERT INTO sec.t (k, v) VALUES (1, 'x')").Consistency(gocql.All).Exec(); err != nil {
		t.Fatalf("a write at ALL: %v", err)
	}
	out.Reset()
	if err := Status(c, &out); err != nil || strings.Count(out.String(), "UN  127.0.0.") != 2 {
		t.Fatalf("status over the admin API's TLS: %v\n%s", err, out.String())
	}
	plain := gocql.NewCluster(Address(1))
	plain.Port, plain.ConnectTimeout, plain.DisableInitialHostLookup = c.NativePort, 2*time.Second, true
	if s, err := plain.CreateSession(); err == nil {
		s.Close()
		t.Fatal("a plaintext client got in")
	}
	noCredentials := *cluster
	noCredentials.Authenticator, noCredentials.DisableInitialHostLookup = nil, true
	if s, err := noCredentials.CreateSession(); err == nil || !strings.Contains(err.Error(), "authentication required") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("a client without credentials: %v", err)
	}
	// The clients' certificate is not a node's: the storage port refuses it.
	clientTLS, err := c.clientTLS()
	if err != nil {
		t.Fatal(err)
	}
	if tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp",
		net.JoinHostPort(Address(1), strconv.Itoa(c.StoragePort)), clientTLS); err == nil {
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = tc.Write([]byte("SBYL\x01\x09127.0.0.9"))
		var b [1]byte
		if n, _ := tc.Read(b[:]); n != 0 {
			t.Fatal("the storage port took a client's certificate for a node's")
		}
		tc.Close()
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort(Address(1), strconv.Itoa(c.StoragePort)), time.Second); err == nil {
		// The storage port takes TLS alone: a plaintext hello is cut off.
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write([]byte("SBYL\x01\x09127.0.0.9"))
		var b [1]byte
		if n, _ := conn.Read(b[:]); n != 0 {
			t.Fatal("the storage port answered a plaintext hello")
		}
		conn.Close()
	}
}
