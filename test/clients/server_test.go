package clients

import (
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
)

// startNode starts a node with its native protocol on a free port of
// 127.0.0.1 and returns a cluster config for it.
func startNode(t *testing.T) (*node.Node, *gocql.ClusterConfig) {
	t.Helper()
	port := testutil.FreePort(t)
	n, err := node.Open(node.Config{DataDir: t.TempDir(), NativePort: port})
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
	return n, gocqlCluster(port)
}

// gocqlCluster is a gocql configuration for a node on 127.0.0.1:port.
func gocqlCluster(port int) *gocql.ClusterConfig {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = port
	cluster.Timeout = 5 * time.Second
	cluster.ConnectTimeout = 5 * time.Second
	return cluster
}

func session(t *testing.T, cluster *gocql.ClusterConfig) *gocql.Session {
	t.Helper()
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConnectAndQuery(t *testing.T) {
	_, cluster := startNode(t)
	s := session(t, cluster)
	var release, clusterName string
	if err := s.Query("SELECT release_version, cluster_name FROM system.local WHERE key = 'local'").Scan(&release, &clusterName); err != nil {
		t.Fatal(err)
	}
	if release != node.ReleaseVersion || clusterName != "Test Cluster" {
		t.Fatalf("system.local: release %q cluster %q", release, clusterName)
	}
	for _, q := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.kv (k int PRIMARY KEY, v text)",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Query("INSERT INTO ks.kv (k, v) VALUES (?, ?)", 1, "one").Exec(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := s.Query("SELECT v FROM ks.kv WHERE k = ?", 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != "one" {
		t.Fatalf("read %q", v)
	}
}
