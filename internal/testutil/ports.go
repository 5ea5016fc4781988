package testutil

import (
	"net"
	"testing"
)

// FreePort is a TCP port free on 127.0.0.1 a moment ago (and, in practice,
// on the other loopback addresses a local cluster binds).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
