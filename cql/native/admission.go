package native

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sibyldb/sibyl/cql/exec"
)

// connectionReserve is how many bytes of requests a protocol v5
// connection may have in flight of its own before it borrows from the
// reserves its client address and the node share (Cassandra's
// native_transport_receive_queue_capacity). Earlier versions have none:
// every byte counts against the shared reserves, as in Cassandra.
const connectionReserve = 1 << 20

// admission bounds what the node takes in from clients, as Cassandra 4.1
// does: the bytes of requests in flight (a request's body from when it is
// read until its answer is queued) within a reserve per client address
// and one for the node, and, when set, the requests started per second.
// A request past a bound is refused with Overloaded when its client asked
// for that at STARTUP (THROW_ON_OVERLOAD "1"). Otherwise it runs, and its
// connection is then not read until it is back under the bounds (or, past
// the rate, until its turn): TCP holds the client back.
type admission struct {
	global, perIP int64         // limits; 0: none
	rate          *rate.Limiter // nil: no limit on requests per second

	mu       sync.Mutex
	used     int64            // taken from the node's reserve
	byIP     map[string]int64 // taken from each address's reserve
	waiters  int              // readers waiting for bytes to come back
	returned chan struct{}    // closed, and replaced, when bytes come back to a waiter
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

// admitted is what one request holds, and what its reader must do once
// the request is on its way.
type admitted struct {
	bytes, borrowed int64
	// overBytes: the request took its bytes past a reserve's bound; the
	// connection is read again once its requests are all answered or the
	// reserves are back under their bounds.
	overBytes bool
	// rateDelay: the request ran ahead of its turn; the connection is read
	// again after it.
	rateDelay time.Duration
}

// fits says whether n more bytes stay within both reserves of ip.
// REQUIRES: a.mu held.
func (a *admission) fits(ip string, n int64) bool {
	within := func(used, limit int64) bool { return limit <= 0 || used+n <= limit }
	return within(a.used, a.global) && within(a.byIP[ip], a.perIP)
}

// below says whether both reserves of ip are under their bounds, where a
// connection held back for bytes is read again. REQUIRES: a.mu held.
func (a *admission) below(ip string) bool {
	under := func(used, limit int64) bool { return limit <= 0 || used < limit }
	return under(a.used, a.global) && under(a.byIP[ip], a.perIP)
}

// borrow takes n bytes from ip's reserve and the node's: only if they fit
// unless forced. It says whether they fit.
func (a *admission) borrow(ip string, n int64, force bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	fit := a.fits(ip, n)
	if fit || force {
		a.used += n
		a.byIP[ip] += n
	}
	return fit
}

func (a *admission) giveBack(ip string, n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used -= n
	if a.byIP[ip] -= n; a.byIP[ip] == 0 {
		delete(a.byIP, ip)
	}
	if a.waiters > 0 {
		close(a.returned)
		a.returned = make(chan struct{})
	}
}

// overloaded is the error a request refused for bytes in flight gets,
// with the figures, in the words Cassandra uses for the connection's
// protocol version.
func (a *admission) overloaded(ip string, version byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var msg string
	if version >= 5 {
		msg = fmt.Sprintf("Request breached limit on bytes in flight. (Endpoint: %d/%d bytes, Global: %d/%d bytes.) "+
			"Server is currently in an overloaded state and cannot accept more requests.", a.byIP[ip], a.perIP, a.used, a.global)
	} else {
		// The doubled parenthesis is Cassandra's.
		msg = fmt.Sprintf("Request breached limit on bytes in flight. (Using %d/%d bytes of endpoint limit and %d/%d bytes of global limit.)) "+
			"Server is currently in an overloaded state and cannot accept more requests.", a.byIP[ip], a.perIP, a.used, a.global)
	}
	return &exec.Error{Code: exec.Overloaded, Message: msg}
}

// admit takes in a request with a body of n bytes on connection c, or
// refuses it with an Overloaded error when it is past a bound and c throws
// on overload.
func (a *admission) admit(c *conn, n int64) (admitted, error) {
	held := admitted{bytes: n}
	excess := n
	if c.version >= 5 {
		excess = max(0, min(c.inFlightBytes.Load()+n-connectionReserve, n))
	}
	if excess > 0 {
		held.borrowed = excess
		if !a.borrow(c.clientIP, excess, !c.throwOnOverload) {
			if c.throwOnOverload {
				return admitted{}, a.overloaded(c.clientIP, c.version)
			}
			held.overBytes = true
		}
	}
	c.inFlightBytes.Add(n)
	if a.rate == nil {
		return held, nil
	}
	if c.throwOnOverload {
		if !a.rate.Allow() {
			a.release(c, held)
			return admitted{}, &exec.Error{Code: exec.Overloaded, Message: fmt.Sprintf("Request breached global limit of %d requests/second. "+
				"Server is currently in an overloaded state and cannot accept more requests.", a.rate.Burst())}
		}
		return held, nil
	}
	// A turn is taken even when the bytes already hold the reader back.
	if d := a.rate.Reserve().Delay(); d > 0 && !held.overBytes {
		held.rateDelay = d
	}
	return held, nil
}

// hold keeps c's reader from reading on after a request that passed a
// bound, until the connection may be read again or it closes.
func (a *admission) hold(c *conn, held admitted) {
	switch {
	case held.overBytes:
		c.held.Store(true)
		defer c.held.Store(false)
		for {
			a.mu.Lock()
			if c.inFlightBytes.Load() == 0 || a.below(c.clientIP) {
				a.mu.Unlock()
				return
			}
			a.waiters++
			returned := a.returned
			a.mu.Unlock()
			select {
			case <-returned:
			case <-c.drained:
			case <-c.done:
			}
			a.mu.Lock()
			a.waiters--
			a.mu.Unlock()
			select {
			case <-c.done:
				return
			default:
			}
		}
	case held.rateDelay > 0:
		t := time.NewTimer(held.rateDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.done:
		}
	}
}

// release gives back what a request held, once its answer is queued.
func (a *admission) release(c *conn, held admitted) {
	if c.inFlightBytes.Add(-held.bytes) == 0 && c.held.Load() {
		select {
		case c.drained <- struct{}{}:
		default:
		}
	}
	if held.borrowed > 0 {
		a.giveBack(c.clientIP, held.borrowed)
	}
}
