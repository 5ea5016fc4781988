package testutil

import (
	"fmt"
	"net"
	"testing"
)

// FreePort is a TCP port free on 127.0.0.1 a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ClusterPort is a port free a moment ago for both TCP and UDP on every
// address of a local cluster of nodes (127.0.0.1 to 127.0.0.nodes): what
// a port its nodes share (gossip's, the storage port) needs, when other
// tests' clusters bind the same addresses.
func ClusterPort(t testing.TB, nodes int) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if freeOnAll(port, nodes) {
			l.Close()
			return port
		}
		l.Close()
	}
	t.Fatalf("no port free for TCP and UDP on 127.0.0.1 to 127.0.0.%d in 100 tries", nodes)
	return 0
}

// freeOnAll reports whether port is free for UDP on 127.0.0.1 and for
// both TCP and UDP on 127.0.0.2 to .nodes (127.0.0.1's TCP port is the
// caller's listener).
func freeOnAll(port, nodes int) bool {
	var closers []interface{ Close() error }
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for k := 1; k <= nodes; k++ {
		addr := fmt.Sprintf("127.0.0.%d:%d", k, port)
		if k > 1 {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return false
			}
			closers = append(closers, l)
		}
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		closers = append(closers, u)
	}
	return true
}
