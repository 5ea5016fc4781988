package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
)

// Test ports come from below the kernel's ephemeral range (32768 on
// Linux), where the local ports of outgoing connections are chosen: a port
// the kernel handed out as free (port 0) can be taken by a connection
// between the test choosing it and its server binding it.
const (
	lowestTestPort  = 10000
	highestTestPort = 32767
)

// listenTestPort listens on a free port of 127.0.0.1 below the ephemeral
// range.
func listenTestPort(t testing.TB) net.Listener {
	t.Helper()
	for range 1000 {
		port := lowestTestPort + rand.IntN(highestTestPort-lowestTestPort+1)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return l
		}
	}
	t.Fatal("no free port on 127.0.0.1 between 10000 and 32767 in 1000 tries")
	return nil
}

// FreePort is a TCP port free on 127.0.0.1 a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l := listenTestPort(t)
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
		l := listenTestPort(t)
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
