package native

import (
	"fmt"
	"sync"
	"sync/atomic"
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
	global reserve
	perIP  int64         // each address's limit; 0: none
	rate   *rate.Limiter // nil: no limit on requests per second

	mu       sync.Mutex
	byIP     map[string]*ipReserve // the addresses with connections
	returned chan struct{}         // closed, and replaced, when bytes come back while readers wait
	waiters  atomic.Int32          // readers waiting for bytes to come back

	counts OverloadCounts
}

// OverloadCounts are what admission did with requests past its bounds
// (Cassandra's ClientMetrics: discarded requests, paused connections).
type OverloadCounts struct {
	// RefusedBytes and RefusedRate count the requests answered Overloaded
	// for bytes in flight and for the rate.
	RefusedBytes, RefusedRate atomic.Int64
	// Paused counts the times a connection's reader stopped reading after
	// a request past a bound.
	Paused atomic.Int64
}

// reserve is bytes in flight against a limit, taken and given back
// without a lock: every request of a v3 or v4 connection takes from two.
type reserve struct {
	used  atomic.Int64
	limit int64 // 0: none
}

func (r *reserve) tryTake(n int64) bool {
	for {
		u := r.used.Load()
		if r.limit > 0 && u+n > r.limit {
			return false
		}
		if r.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// below says whether the reserve is under its bound, where a connection
// held back for bytes may be read again.
func (r *reserve) below() bool { return r.limit <= 0 || r.used.Load() < r.limit }

// ipReserve is one client address's reserve, kept while it has
// connections.
type ipReserve struct {
	reserve
	conns int // under admission.mu
}

func newAdmission(o Options) *admission {
	a := &admission{global: reserve{limit: o.MaxRequestDataInFlight}, perIP: o.MaxRequestDataInFlightPerIP,
		byIP: map[string]*ipReserve{}, returned: make(chan struct{})}
	if o.MaxRequestsPerSecond > 0 {
		// A second's worth may come at once, as Cassandra's limiter allows.
		a.rate = rate.NewLimiter(rate.Limit(o.MaxRequestsPerSecond), o.MaxRequestsPerSecond)
	}
	return a
}

// join is a new connection from ip: the reserve it shares.
func (a *admission) join(ip string) *ipReserve {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.byIP[ip]
	if r == nil {
		r = &ipReserve{reserve: reserve{limit: a.perIP}}
		a.byIP[ip] = r
	}
	r.conns++
	return r
}

// leave is the end of a connection from ip, whose requests are all
// answered.
func (a *admission) leave(ip string, r *ipReserve) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.conns--; r.conns == 0 {
		delete(a.byIP, ip)
	}
}

// admitted is what one request holds, and what its reader must do once
// the request is on its way.
type admitted struct {
	bytes int64
	// overBytes: the request took its bytes past a reserve's bound; the
	// connection is read again once its requests are all answered or the
	// reserves are back under their bounds.
	overBytes bool
	// turn: the request ran ahead of its turn at the rate; the connection
	// is read again then. Zero: no wait.
	turn time.Time
}

// ownReserve is what connection c holds of its own before it borrows.
func ownReserve(c *conn) int64 {
	if c.version >= 5 {
		return connectionReserve
	}
	return 0
}

// borrowedAt is what a connection with inFlight bytes of requests and an
// own reserve of own has borrowed: what the shared reserves hold of it,
// whatever the order its requests came and go in.
func borrowedAt(inFlight, own int64) int64 { return max(0, inFlight-own) }

// borrow takes n bytes from ip's reserve and the node's, only if both
// have them unless forced (then past their bounds). It says whether they
// had them.
func (a *admission) borrow(ip *ipReserve, n int64, force bool) bool {
	if a.global.tryTake(n) {
		if ip.tryTake(n) {
			return true
		}
		if force {
			ip.used.Add(n)
		} else {
			a.giveBack(ip, n, false)
		}
		return false
	}
	if force {
		a.global.used.Add(n)
		ip.used.Add(n)
	}
	return false
}

// giveBack returns n bytes to ip's reserve (if whole) and the node's, and
// wakes the readers waiting for them.
func (a *admission) giveBack(ip *ipReserve, n int64, whole bool) {
	a.global.used.Add(-n)
	if whole {
		ip.used.Add(-n)
	}
	if a.waiters.Load() > 0 {
		a.mu.Lock()
		close(a.returned)
		a.returned = make(chan struct{})
		a.mu.Unlock()
	}
}

// overloaded is the error a request refused for bytes in flight gets,
// with the figures, in the words Cassandra uses for the connection's
// protocol version.
func (a *admission) overloaded(ip *ipReserve, version byte) error {
	format := "Request breached limit on bytes in flight. (Endpoint: %d/%d bytes, Global: %d/%d bytes.) " +
		"Server is currently in an overloaded state and cannot accept more requests."
	if version < 5 {
		// The doubled parenthesis is Cassandra's.
		format = "Request breached limit on bytes in flight. (Using %d/%d bytes of endpoint limit and %d/%d bytes of global limit.)) " +
			"Server is currently in an overloaded state and cannot accept more requests."
	}
	return &exec.Error{Code: exec.Overloaded, Message: fmt.Sprintf(format, ip.used.Load(), ip.limit, a.global.used.Load(), a.global.limit)}
}

// admit takes in a request with a body of n bytes on connection c, or
// refuses it with an Overloaded error when it is past a bound and c throws
// on overload.
func (a *admission) admit(c *conn, n int64) (admitted, error) {
	held := admitted{bytes: n}
	own := ownReserve(c)
	// Only c's reader admits; its requests' answers may lower inFlight
	// meanwhile, and what was borrowed past the need goes back below.
	before := c.inFlightBytes.Load()
	excess := borrowedAt(before+n, own) - borrowedAt(before, own)
	if excess > 0 && !a.borrow(c.ipReserve, excess, !c.throwOnOverload) {
		if c.throwOnOverload {
			a.counts.RefusedBytes.Add(1)
			return admitted{}, a.overloaded(c.ipReserve, c.version)
		}
		held.overBytes = true
	}
	after := c.inFlightBytes.Add(n)
	if over := excess - (borrowedAt(after, own) - borrowedAt(after-n, own)); over > 0 {
		a.giveBack(c.ipReserve, over, true)
	}
	if a.rate == nil {
		return held, nil
	}
	if c.throwOnOverload {
		if !a.rate.Allow() {
			a.counts.RefusedRate.Add(1)
			a.release(c, held)
			return admitted{}, &exec.Error{Code: exec.Overloaded, Message: fmt.Sprintf("Request breached global limit of %d requests/second. "+
				"Server is currently in an overloaded state and cannot accept more requests.", a.rate.Burst())}
		}
		return held, nil
	}
	// A turn is taken even when the bytes already hold the reader back.
	if d := a.rate.Reserve().Delay(); d > 0 && !held.overBytes {
		held.turn = time.Now().Add(d)
	}
	return held, nil
}

// hold keeps c's reader from reading on after a request that passed a
// bound, until the connection may be read again or it closes.
func (a *admission) hold(c *conn, held admitted) {
	if held.overBytes || !held.turn.IsZero() {
		a.counts.Paused.Add(1)
	}
	switch {
	case held.overBytes:
		c.held.Store(true)
		defer c.held.Store(false)
		for {
			// Counted as waiting before the check, so that bytes given
			// back after it wake this reader.
			a.mu.Lock()
			a.waiters.Add(1)
			returned := a.returned
			a.mu.Unlock()
			if c.inFlightBytes.Load() == 0 || a.global.below() && c.ipReserve.below() {
				a.waiters.Add(-1)
				return
			}
			select {
			case <-returned:
			case <-c.drained:
			case <-c.done:
			}
			a.waiters.Add(-1)
			select {
			case <-c.done:
				return
			default:
			}
		}
	case !held.turn.IsZero():
		t := time.NewTimer(time.Until(held.turn))
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.done:
		}
	}
}

// release gives back what a request held, once its answer is queued: the
// bytes its connection no longer needs to borrow.
func (a *admission) release(c *conn, held admitted) {
	after := c.inFlightBytes.Add(-held.bytes)
	if after == 0 && c.held.Load() {
		select {
		case c.drained <- struct{}{}:
		default:
		}
	}
	own := ownReserve(c)
	if back := borrowedAt(after+held.bytes, own) - borrowedAt(after, own); back > 0 {
		a.giveBack(c.ipReserve, back, true)
	}
}
