package native

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sibyldb/sibyl/cql/exec"
)

// connectionReserve is how many bytes of requests a connection may have
// in flight of its own before it borrows from the reserves its client
// address and the node share (Cassandra's
// native_transport_receive_queue_capacity).
const connectionReserve = 1 << 20

// admission bounds what the node takes in from clients, as Cassandra 4.1
// does: the bytes of requests in flight (a request's from when it is read
// until its answer is queued), past each connection's own reserve, within
// a limit per client address and one for the node; and, when set, the
// requests started per second. A request over a bound is refused with
// Overloaded when its client asked for that at STARTUP (THROW_ON_OVERLOAD
// "1"); otherwise the connection stops reading until the request fits, so
// that TCP holds the client back, and the request then runs.
type admission struct {
	global, perIP int64         // limits; 0: none
	rate          *rate.Limiter // nil: no limit on requests per second

	mu       sync.Mutex
	used     int64            // borrowed from the node's reserve
	byIP     map[string]int64 // borrowed from each address's reserve
	returned chan struct{}    // closed, and replaced, when bytes come back
}

func newAdmission(o Options) *admission {
	a := &admission{global: o.MaxRequestDataInFlight, perIP: o.MaxRequestDataInFlightPerIP,
		byIP: map[string]int64{}, returned: make(chan struct{})}
	if o.MaxRequestsPerSecond > 0 {
		// A second's worth may come at once, as Cassandra's limiter allows.
		a.rate = rate.NewLimiter(rate.Limit(o.MaxRequestsPerSecond), o.MaxRequestsPerSecond)
	}
	return a
}

// admitted is what one request holds: the bytes it counts on its
// connection, and those it borrowed beyond the connection's reserve.
type admitted struct {
	bytes, borrowed int64
}

// tryBorrow takes n bytes from ip's reserve and the node's, if both have
// them; if not, it returns what to wait on for bytes to come back (taken
// under the same lock as the check, so that no return is missed). A
// request larger than a whole reserve gets it when that reserve is
// untouched: it could never fit otherwise.
func (a *admission) tryBorrow(ip string, n int64) (bool, <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fits := func(used, limit int64) bool { return limit <= 0 || used+n <= limit || used == 0 }
	if !fits(a.used, a.global) || !fits(a.byIP[ip], a.perIP) {
		return false, a.returned
	}
	a.used += n
	a.byIP[ip] += n
	return true, nil
}

func (a *admission) giveBack(ip string, n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used -= n
	if a.byIP[ip] -= n; a.byIP[ip] == 0 {
		delete(a.byIP, ip)
	}
	close(a.returned)
	a.returned = make(chan struct{})
}

// overloaded is the error a request refused for bytes in flight gets,
// with the figures Cassandra's message gives.
func (a *admission) overloaded(ip string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &exec.Error{Code: exec.Overloaded, Message: fmt.Sprintf("Request breached limit on bytes in flight. (Endpoint: %d/%d bytes, Global: %d/%d bytes.) "+
		"Server is currently in an overloaded state and cannot accept more requests.", a.byIP[ip], a.perIP, a.used, a.global)}
}

// admit takes in a request of n bytes on connection c: at once, refused
// (an Overloaded error, when c throws on overload), or once it fits, the
// reader waiting (false if the connection closed meanwhile).
func (a *admission) admit(c *conn, n int64) (admitted, bool, error) {
	held := admitted{bytes: n}
	if excess := min(c.inFlightBytes.Add(n)-connectionReserve, n); excess > 0 {
		for {
			ok, returned := a.tryBorrow(c.clientIP, excess)
			if ok {
				break
			}
			if c.throwOnOverload {
				c.inFlightBytes.Add(-n)
				return admitted{}, false, a.overloaded(c.clientIP)
			}
			select {
			case <-returned:
			case <-c.done:
				c.inFlightBytes.Add(-n)
				return admitted{}, false, nil
			}
		}
		held.borrowed = excess
	}
	if a.rate == nil {
		return held, true, nil
	}
	if c.throwOnOverload {
		if !a.rate.Allow() {
			a.release(c, held)
			return admitted{}, false, &exec.Error{Code: exec.Overloaded, Message: fmt.Sprintf("Request breached global limit of %d requests/second. "+
				"Server is currently in an overloaded state and cannot accept more requests.", a.rate.Burst())}
		}
		return held, true, nil
	}
	r := a.rate.Reserve()
	if d := r.Delay(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.done:
			r.Cancel()
			a.release(c, held)
			return admitted{}, false, nil
		}
	}
	return held, true, nil
}

// release gives back what a request held, once its answer is queued.
func (a *admission) release(c *conn, held admitted) {
	c.inFlightBytes.Add(-held.bytes)
	if held.borrowed > 0 {
		a.giveBack(c.clientIP, held.borrowed)
	}
}
