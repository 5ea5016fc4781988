package native

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
)

func testConn(a *admission, version byte, ip string, throwOnOverload bool) *conn {
	return &conn{version: version, clientIP: ip, ipReserve: a.join(ip), throwOnOverload: throwOnOverload,
		done: make(chan struct{}), drained: make(chan struct{}, 1)}
}

// overloaded checks that err is Overloaded with message msg.
func overloaded(t *testing.T, err error, msg string) {
	t.Helper()
	var e *exec.Error
	if !errors.As(err, &e) || e.Code != exec.Overloaded || e.Message != msg {
		t.Fatalf("got %v, want Overloaded %q", err, msg)
	}
}

// TestAdmission: a request's body takes its bytes from its client
// address's reserve and the node's (in protocol v5 past its connection's
// own MiB). One that does not fit is refused with Overloaded, with the
// figures in Cassandra's words for the version, when its connection asked
// for that at STARTUP; otherwise it runs and its connection is not read
// again until its requests are all answered or the reserves are back
// under their bounds, or it closes.
func TestAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(Options{MaxRequestDataInFlight: 3 << 20, MaxRequestDataInFlightPerIP: 2 << 20})
		admit := func(c *conn, n int64) admitted {
			t.Helper()
			held, err := a.admit(c, n)
			if err != nil {
				t.Fatalf("a request of %d bytes with %d in flight on its connection: %v", n, c.inFlightBytes.Load(), err)
			}
			return held
		}
		first := testConn(a, 4, "10.0.0.1", true)
		big := admit(first, 3<<19)
		admit(first, 1<<19)
		_, err := a.admit(first, 1)
		overloaded(t, err, "Request breached limit on bytes in flight. (Using 2097152/2097152 bytes of endpoint limit and 2097152/3145728 bytes of global limit.)) "+
			"Server is currently in an overloaded state and cannot accept more requests.")
		if n := first.inFlightBytes.Load(); n != 2<<20 {
			t.Fatalf("after a refusal the connection counts %d bytes in flight, want %d", n, 2<<20)
		}
		second := testConn(a, 4, "10.0.0.2", true)
		other := admit(second, 1<<20)
		_, err = a.admit(second, 1)
		overloaded(t, err, "Request breached limit on bytes in flight. (Using 1048576/2097152 bytes of endpoint limit and 3145728/3145728 bytes of global limit.)) "+
			"Server is currently in an overloaded state and cannot accept more requests.")
		roomy := newAdmission(Options{MaxRequestDataInFlight: 8 << 20, MaxRequestDataInFlightPerIP: 2 << 20})
		_, err = roomy.admit(testConn(roomy, 4, "10.0.0.3", true), 3<<20)
		overloaded(t, err, "Request breached limit on bytes in flight. (Using 0/2097152 bytes of endpoint limit and 0/8388608 bytes of global limit.)) "+
			"Server is currently in an overloaded state and cannot accept more requests.")

		// Without THROW_ON_OVERLOAD the request runs, and its reader waits.
		waiting := testConn(a, 4, "10.0.0.2", false)
		held := admit(waiting, 1<<20)
		if !held.overBytes {
			t.Fatal("a request past the node's bound holds nothing back")
		}
		resumed := make(chan struct{})
		go func() { a.hold(waiting, held); close(resumed) }()
		synctest.Wait()
		a.release(first, big) // the node's reserve is under its bound; 10.0.0.2's is not
		synctest.Wait()
		select {
		case <-resumed:
			t.Fatal("the reader read on with its address's reserve at its bound")
		default:
		}
		a.release(second, other)
		synctest.Wait()
		select {
		case <-resumed:
		default:
			t.Fatal("the reader still waits with both reserves under their bounds")
		}
		if refused, paused := a.counts.RefusedBytes.Load(), a.counts.Paused.Load(); refused != 2 || paused != 1 {
			t.Fatalf("counted %d refusals and %d pauses, want 2 and 1", refused, paused)
		}
		// An address's reserve is kept while it has connections.
		a.release(waiting, held)
		a.leave("10.0.0.2", second.ipReserve)
		if _, ok := a.byIP["10.0.0.2"]; !ok {
			t.Fatal("an address's reserve went while it had a connection")
		}
		a.leave("10.0.0.2", waiting.ipReserve)
		if _, ok := a.byIP["10.0.0.2"]; ok {
			t.Fatal("an address's reserve outlived its connections")
		}

		// A connection whose requests are all answered is read again,
		// whatever the reserves hold.
		hog := testConn(a, 4, "10.0.0.5", false)
		hogHeld := admit(hog, 4<<20)
		alone := testConn(a, 4, "10.0.0.6", false)
		aloneHeld := admit(alone, 1<<20)
		resumed = make(chan struct{})
		go func() { a.hold(alone, aloneHeld); close(resumed) }()
		synctest.Wait()
		a.release(alone, aloneHeld)
		synctest.Wait()
		select {
		case <-resumed:
		default:
			t.Fatal("a reader whose requests were all answered still waits")
		}
		// A held reader whose connection closes stops waiting.
		resumed = make(chan struct{})
		go func() { a.hold(hog, hogHeld); close(resumed) }()
		synctest.Wait()
		close(hog.done)
		<-resumed

		// Protocol v5: the connection's own MiB first, and v5's words.
		v5 := newAdmission(Options{MaxRequestDataInFlight: 1 << 20, MaxRequestDataInFlightPerIP: 1 << 20})
		c := testConn(v5, 5, "10.0.0.7", true)
		// What the reserves hold of a connection is what it has in flight
		// past its own MiB, whichever of its requests are answered first.
		v5admit := func(n, borrowed int64) admitted {
			t.Helper()
			held, err := v5.admit(c, n)
			if err != nil || v5.global.used.Load() != borrowed || c.ipReserve.used.Load() != borrowed {
				t.Fatalf("a v5 request of %d bytes with %d in flight: %v; the reserves hold %d and %d, want %d",
					n, c.inFlightBytes.Load(), err, v5.global.used.Load(), c.ipReserve.used.Load(), borrowed)
			}
			return held
		}
		early := v5admit(1<<20, 0)
		v5admit(1<<19, 1<<19)
		v5.release(c, early) // half a MiB in flight, within its own
		if v5.global.used.Load() != 0 {
			t.Fatalf("with half a MiB in flight the reserves hold %d of the connection", v5.global.used.Load())
		}
		v5admit(1<<20, 1<<19)
		v5admit(1<<19, 1<<20)
		_, err = v5.admit(c, 1)
		overloaded(t, err, "Request breached limit on bytes in flight. (Endpoint: 1048576/1048576 bytes, Global: 1048576/1048576 bytes.) "+
			"Server is currently in an overloaded state and cannot accept more requests.")

		// A held v5 reader whose last request borrowed nothing wakes when
		// that one is answered, though the reserves stay past their bounds.
		tight := newAdmission(Options{MaxRequestDataInFlight: 1 << 20, MaxRequestDataInFlightPerIP: 1 << 20})
		if _, err := tight.admit(testConn(tight, 4, "10.0.0.9", false), 2<<20); err != nil {
			t.Fatal(err)
		}
		v := testConn(tight, 5, "10.0.0.8", false)
		own, _ := tight.admit(v, 1<<20)
		over, _ := tight.admit(v, 1<<19)
		if own.overBytes || !over.overBytes {
			t.Fatalf("within its own MiB held back %v; past the bound held back %v", own.overBytes, over.overBytes)
		}
		resumed = make(chan struct{})
		go func() { tight.hold(v, over); close(resumed) }()
		synctest.Wait()
		tight.release(v, own) // gives back the half MiB borrowed; the node's reserve is still over
		synctest.Wait()
		select {
		case <-resumed:
			t.Fatal("the reader read on with requests in flight and the node's reserve past its bound")
		default:
		}
		tight.release(v, over)
		synctest.Wait()
		select {
		case <-resumed:
		default:
			t.Fatal("the reader still waits with none of its requests in flight")
		}
	})
}

// TestAdmissionRate: with a bound on requests a second, a burst of a
// second's worth goes through; past it, a connection that throws on
// overload is refused, and another's reader waits for the request's turn.
func TestAdmissionRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(Options{MaxRequestsPerSecond: 2})
		throws := testConn(a, 4, "10.0.0.1", true)
		for range 2 {
			if _, err := a.admit(throws, 100); err != nil {
				t.Fatalf("within the burst: %v", err)
			}
		}
		_, err := a.admit(throws, 100)
		overloaded(t, err, "Request breached global limit of 2 requests/second. Server is currently in an overloaded state and cannot accept more requests.")
		if n := throws.inFlightBytes.Load(); n != 200 {
			t.Fatalf("after a refusal the connection counts %d bytes in flight, want 200", n)
		}
		waits := testConn(a, 4, "10.0.0.2", false)
		start := time.Now()
		held, err := a.admit(waits, 100)
		if err != nil {
			t.Fatal(err)
		}
		a.hold(waits, held)
		if waited := time.Since(start); waited != 500*time.Millisecond {
			t.Fatalf("the reader waited %v for the next turn at 2 a second after the burst, want 500ms", waited)
		}
		if refused, paused := a.counts.RefusedRate.Load(), a.counts.Paused.Load(); refused != 1 || paused != 1 {
			t.Fatalf("counted %d refusals and %d pauses, want 1 and 1", refused, paused)
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
