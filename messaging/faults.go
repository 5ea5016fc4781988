package messaging

import (
	"context"
	"errors"
	"sync"
	"time"
)

// FaultyTransport wraps a Transport so that tests can drop, delay or cut
// the messages from one node to another. One FaultyTransport may serve
// every node of a test; rules name the sending and receiving nodes.
type FaultyTransport struct {
	Inner Transport

	mu    sync.Mutex
	rules map[[2]string]fault
}

type fault struct {
	drop  bool
	cut   bool
	delay time.Duration
}

// ErrCut is what sending over a cut link reports.
var ErrCut = errors.New("messaging: link cut (test)")

// NewFaultyTransport wraps inner (TCP when nil).
func NewFaultyTransport(inner Transport) *FaultyTransport {
	if inner == nil {
		inner = TCP{}
	}
	return &FaultyTransport{Inner: inner, rules: map[[2]string]fault{}}
}

// Drop loses every message from one node to another from now on, as a
// network that drops packets would: the sender sees no error.
func (t *FaultyTransport) Drop(from, to string) { t.set(from, to, fault{drop: true}) }

// Delay holds each message from one node to another for d.
func (t *FaultyTransport) Delay(from, to string, d time.Duration) { t.set(from, to, fault{delay: d}) }

// Cut fails every send from one node to another, and its dials, as a
// broken link would.
func (t *FaultyTransport) Cut(from, to string) { t.set(from, to, fault{cut: true}) }

// Heal removes the rule from one node to another.
func (t *FaultyTransport) Heal(from, to string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.rules, [2]string{from, to})
}

// HealAll removes every rule.
func (t *FaultyTransport) HealAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.rules)
}

func (t *FaultyTransport) set(from, to string, f fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules[[2]string{from, to}] = f
}

func (t *FaultyTransport) rule(from, to string) fault {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rules[[2]string{from, to}]
}

func (t *FaultyTransport) Listen(local, addr string) (Listener, error) {
	l, err := t.Inner.Listen(local, addr)
	if err != nil {
		return nil, err
	}
	return &faultyListener{Listener: l, t: t, local: local}, nil
}

func (t *FaultyTransport) Dial(ctx context.Context, local, addr string) (Conn, error) {
	c, err := t.Inner.Dial(ctx, local, addr)
	if err != nil {
		return nil, err
	}
	if t.rule(local, c.Peer()).cut {
		c.Close()
		return nil, ErrCut
	}
	return &faultyConn{Conn: c, t: t, local: local}, nil
}

type faultyListener struct {
	Listener
	t     *FaultyTransport
	local string
}

func (l *faultyListener) Accept() (Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &faultyConn{Conn: c, t: l.t, local: l.local}, nil
}

// faultyConn applies the rule from this node to the peer to each frame it
// sends.
type faultyConn struct {
	Conn
	t     *FaultyTransport
	local string
}

func (c *faultyConn) Send(f Frame) error {
	r := c.t.rule(c.local, c.Peer())
	switch {
	case r.cut:
		return ErrCut
	case r.drop:
		return nil
	case r.delay > 0:
		time.Sleep(r.delay)
	}
	return c.Conn.Send(f)
}
