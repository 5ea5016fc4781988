package clients

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/sibyldb/sibyl/node"
)

// TestRequestsPastTheBoundsWait: with the node's bounds on request data in
// flight far below what a client sends at once, a driver that did not ask
// to be refused (gocql sends no THROW_ON_OVERLOAD) has every request
// answered: past the bounds, its connection is not read until what it has
// in flight is answered, and no request fails or is lost.
func TestRequestsPastTheBoundsWait(t *testing.T) {
	_, port, _ := serveNode(t, node.Config{NativeMaxRequestDataInFlight: 1 << 10, NativeMaxRequestDataInFlightPerIP: 1 << 10,
		NativeRateLimitingEnabled: true, NativeMaxRequestsPerSecond: 1000})
	cluster := gocqlCluster(port)
	cluster.NumConns = 1
	s := session(t, cluster)
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.blobs (k int PRIMARY KEY, v blob)")
	// 24 requests of 600 KiB at once on one connection: 14 MiB against
	// its own MiB and a KiB of reserves.
	const writers, rows = 8, 3
	value := bytes.Repeat([]byte{0xB7}, 600<<10)
	var wg sync.WaitGroup
	errs := make(chan error, writers*rows)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rows {
				errs <- s.Query("INSERT INTO ks.blobs (k, v) VALUES (?, ?)", w*rows+r, value).Exec()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a write past the bounds: %v", err)
		}
	}
	for k := range writers * rows {
		var v []byte
		if err := s.Query("SELECT v FROM ks.blobs WHERE k = ?", k).Scan(&v); err != nil || !bytes.Equal(v, value) {
			t.Fatalf("row %d: %d bytes, %v", k, len(v), err)
		}
	}
}

// TestOverloadedWhenAsked: a client that asked at STARTUP to be told
// (THROW_ON_OVERLOAD "1") gets Overloaded, in Cassandra's v4 words with
// the figures, for a request past its address's bound, on that request's
// stream; the connection stays open and a request within the bound is
// answered.
func TestOverloadedWhenAsked(t *testing.T) {
	_, port, adminPort := serveNode(t, node.Config{NativeMaxRequestDataInFlight: 1 << 20, NativeMaxRequestDataInFlightPerIP: 1 << 10})
	c := dialRaw(t, port)
	c.send(4, 0, 0x01, startupBody("THROW_ON_OVERLOAD", "1"))
	if r := c.recv(); r.op != 0x02 {
		t.Fatalf("STARTUP answered with opcode %d", r.op)
	}
	big := queryBody("SELECT release_version FROM system.local WHERE key = '" + strings.Repeat("x", 2<<10) + "'")
	c.send(4, 7, 0x07, big)
	r := c.recv()
	code, msg := r.errorText()
	const want = "Request breached limit on bytes in flight. (Using 0/1024 bytes of endpoint limit and 0/1048576 bytes of global limit.)) " +
		"Server is currently in an overloaded state and cannot accept more requests."
	if r.stream != 7 || code != 0x1001 || msg != want {
		t.Fatalf("a request of %d bytes past a bound of 1024: stream %d, code %#x, %q; want stream 7, 0x1001, %q", len(big), r.stream, code, msg, want)
	}
	c.send(4, 8, 0x07, queryBody("SELECT release_version FROM system.local WHERE key = 'local'"))
	if r := c.recv(); r.stream != 8 || r.op != 0x08 {
		code, msg := r.errorText()
		t.Fatalf("a request within the bound after a refusal: stream %d opcode %d (%#x %s)", r.stream, r.op, code, msg)
	}
	if n := metric(t, adminPort, `sibyl_native_requests_refused_total{reason="bytes_in_flight"}`); n != 1 {
		t.Fatalf("/metrics counts %v requests refused for bytes in flight, want 1", n)
	}
}
