package native

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
)

func testConn(ip string, throwOnOverload bool) *conn {
	return &conn{clientIP: ip, throwOnOverload: throwOnOverload, done: make(chan struct{})}
}

// overloaded checks that err is Overloaded with message msg.
func overloaded(t *testing.T, err error, msg string) {
	t.Helper()
	var e *exec.Error
	if !errors.As(err, &e) || e.Code != exec.Overloaded || e.Message != msg {
		t.Fatalf("got %v, want Overloaded %q", err, msg)
	}
}

// TestAdmission: past its connection's own MiB, a request borrows from its
// client address's reserve and the node's. One that finds either spent is
// refused with Overloaded (with the figures, as Cassandra words it) when
// its connection asked for that at STARTUP, and otherwise waits until
// bytes come back, or until its connection closes.
func TestAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(Options{MaxRequestDataInFlight: 3 << 20, MaxRequestDataInFlightPerIP: 2 << 20})
		admit := func(c *conn, n int64) admitted {
			t.Helper()
			held, ok, err := a.admit(c, n)
			if err != nil || !ok {
				t.Fatalf("a request of %d bytes with %d in flight on its connection: %v, %v", n, c.inFlightBytes.Load(), ok, err)
			}
			return held
		}
		first := testConn("10.0.0.1", true)
		if held := admit(first, 512<<10); held.borrowed != 0 {
			t.Fatalf("within the connection's own MiB, %d bytes borrowed", held.borrowed)
		}
		big := admit(first, 5<<19) // 3 MiB in flight: 2 past its own, the address's whole reserve
		if big.borrowed != 2<<20 {
			t.Fatalf("borrowed %d, want %d", big.borrowed, 2<<20)
		}
		second := testConn("10.0.0.1", true)
		admit(second, 1<<20) // its own MiB
		_, _, err := a.admit(second, 1)
		overloaded(t, err, "Request breached limit on bytes in flight. (Endpoint: 2097152/2097152 bytes, Global: 2097152/3145728 bytes.) "+
			"Server is currently in an overloaded state and cannot accept more requests.")
		if n := second.inFlightBytes.Load(); n != 1<<20 {
			t.Fatalf("after a refusal the connection counts %d bytes in flight, want %d", n, 1<<20)
		}
		// Another address has its own reserve, and the node's last MiB.
		other := testConn("10.0.0.2", true)
		admit(other, 1<<20)
		admit(other, 1<<20)
		_, _, err = a.admit(other, 1)
		overloaded(t, err, "Request breached limit on bytes in flight. (Endpoint: 1048576/2097152 bytes, Global: 3145728/3145728 bytes.) "+
			"Server is currently in an overloaded state and cannot accept more requests.")

		// Without THROW_ON_OVERLOAD the request waits, its reader with it.
		waiting := testConn("10.0.0.3", false)
		admit(waiting, 1<<20)
		result := make(chan admitted, 1)
		go func() { result <- admit(waiting, 1<<20) }()
		synctest.Wait()
		select {
		case <-result:
			t.Fatal("a request past the node's bound was admitted at once")
		default:
		}
		a.release(first, big)
		synctest.Wait()
		select {
		case held := <-result:
			if held.borrowed != 1<<20 {
				t.Fatalf("the request that waited borrowed %d, want %d", held.borrowed, 1<<20)
			}
		default:
			t.Fatal("the request still waits after 2 MiB came back")
		}
		// A request still waiting when its connection closes gives up.
		closing := testConn("10.0.0.4", false)
		admit(closing, 1<<20)
		gaveUp := make(chan bool, 1)
		go func() {
			_, ok, err := a.admit(closing, 2<<20)
			gaveUp <- !ok && err == nil
		}()
		synctest.Wait()
		close(closing.done)
		if gave := <-gaveUp; !gave || closing.inFlightBytes.Load() != 1<<20 {
			t.Fatalf("a wait ended by its connection's close: gave up %v, %d bytes in flight", gave, closing.inFlightBytes.Load())
		}
		// A request larger than a whole reserve goes through once nothing
		// else holds it.
		alone := newAdmission(Options{MaxRequestDataInFlight: 1 << 10, MaxRequestDataInFlightPerIP: 1 << 10})
		if held, ok, err := alone.admit(testConn("10.0.0.5", true), 4<<20); err != nil || !ok || held.borrowed != 3<<20 {
			t.Fatalf("a request larger than the reserves with nothing in flight: %+v, %v, %v", held, ok, err)
		}
	})
}

// TestAdmissionRate: with a bound on requests a second, a burst of a
// second's worth goes through; past it, a connection that throws on
// overload is refused, and another waits for its turn.
func TestAdmissionRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(Options{MaxRequestsPerSecond: 2})
		throws := testConn("10.0.0.1", true)
		for range 2 {
			if _, ok, err := a.admit(throws, 100); !ok || err != nil {
				t.Fatalf("within the burst: %v, %v", ok, err)
			}
		}
		_, _, err := a.admit(throws, 100)
		overloaded(t, err, "Request breached global limit of 2 requests/second. Server is currently in an overloaded state and cannot accept more requests.")
		if n := throws.inFlightBytes.Load(); n != 200 {
			t.Fatalf("after a refusal the connection counts %d bytes in flight, want 200", n)
		}
		waits := testConn("10.0.0.2", false)
		start := time.Now()
		if _, ok, err := a.admit(waits, 100); !ok || err != nil {
			t.Fatalf("waiting for the rate: %v, %v", ok, err)
		}
		if waited := time.Since(start); waited != 500*time.Millisecond {
			t.Fatalf("waited %v for a turn at 2 a second after the burst, want 500ms", waited)
		}
	})
}

// TestStartupThrowOnOverload: STARTUP's THROW_ON_OVERLOAD "1" makes the
// connection refuse rather than wait; without it, the connection waits.
func TestStartupThrowOnOverload(t *testing.T) {
	srv, err := NewServer(Options{NewSession: func() *exec.Session { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	for value, throws := range map[string]bool{"1": true, "0": false, "": false} {
		c := &conn{srv: srv, out: make(chan outgoing, 4), done: make(chan struct{})}
		var w writer
		opts := map[string]string{"CQL_VERSION": "3.0.0"}
		if value != "" {
			opts["THROW_ON_OVERLOAD"] = value
		}
		w.short(uint16(len(opts)))
		for k, v := range opts {
			w.string(k)
			w.string(v)
		}
		if err := c.dispatch(frame{header: header{version: 4, opcode: opStartup}, body: w.b}); err != nil {
			t.Fatal(err)
		}
		if c.throwOnOverload != throws {
			t.Errorf("THROW_ON_OVERLOAD %q: throws on overload %v, want %v", value, c.throwOnOverload, throws)
		}
	}
}
