package clients

import (
	"bytes"
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
	for _, q := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.blobs (k int PRIMARY KEY, v blob)",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
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
