package simulation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/ring"
)

// messagingTransport is messaging's Transport over the simulated network:
// a connection is a pair of frame queues between two nodes. A dial to a
// node that is down is refused; one across a cut link gets no answer (it
// waits out the request's context). A frame sent across a cut link is
// lost, as TCP's are behind a firewall that drops them; one on a delayed
// link arrives that much later, in order with the others of its
// connection. A node's crash closes its connections, which its peers see
// as their peer's system closing the sockets.
type messagingTransport struct{ c *Cluster }

var errConnRefused = errors.New("connection refused")

func (t messagingTransport) Listen(local, _ string) (messaging.Listener, error) {
	n := t.c.byName[ring.Endpoint(local)]
	if n == nil {
		return nil, fmt.Errorf("no simulated node %s", local)
	}
	l := &frameListener{conns: make(chan messaging.Conn), done: make(chan struct{})}
	n.mu.Lock()
	n.listener = l
	n.mu.Unlock()
	return l, nil
}

func (t messagingTransport) Dial(ctx context.Context, local, addr string) (messaging.Conn, error) {
	from := t.c.byName[ring.Endpoint(local)]
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	to := t.c.byName[ring.Endpoint(host)]
	if from == nil || to == nil || !from.Up() {
		return nil, fmt.Errorf("dial %s: %w", addr, errConnRefused)
	}
	if t.c.cut(from.Name, to.Name) {
		<-ctx.Done()
		return nil, fmt.Errorf("dial %s: %w", addr, ctx.Err())
	}
	to.mu.Lock()
	l, up := to.listener, to.up
	to.mu.Unlock()
	if !up || l == nil {
		return nil, fmt.Errorf("dial %s: %w", addr, errConnRefused)
	}
	mine, theirs := newFrameConnPair(t.c, from, to)
	select {
	case l.conns <- theirs:
		return mine, nil
	case <-l.done:
	case <-ctx.Done():
	}
	mine.Close()
	return nil, fmt.Errorf("dial %s: %w", addr, errConnRefused)
}

// frameListener hands a node's service the connections dialled to it.
type frameListener struct {
	conns chan messaging.Conn
	once  sync.Once
	done  chan struct{}
}

func (l *frameListener) Accept() (messaging.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *frameListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *frameListener) Port() int { return storagePort }

// frameConn is one end of a connection between two simulated nodes.
type frameConn struct {
	c          *Cluster
	self, peer ring.Endpoint
	inbox      chan messaging.Frame // frames that arrived
	outbox     chan timedFrame      // frames on their way to the peer, in order
	other      *frameConn
	once       sync.Once
	closed     chan struct{}
}

type timedFrame struct {
	f   messaging.Frame
	due time.Time
}

// queueDepth bounds the frames waiting at either end of a connection.
const queueDepth = 4096

// newFrameConnPair connects a and b; both ends are registered with their
// nodes, whose crash closes them.
func newFrameConnPair(c *Cluster, a, b *Node) (*frameConn, *frameConn) {
	end := func(self, peer *Node) *frameConn {
		return &frameConn{c: c, self: self.Name, peer: peer.Name, inbox: make(chan messaging.Frame, queueDepth),
			outbox: make(chan timedFrame, queueDepth), closed: make(chan struct{})}
	}
	x, y := end(a, b), end(b, a)
	x.other, y.other = y, x
	for _, e := range []*frameConn{x, y} {
		c.inFlight.Add(1)
		go e.deliver()
	}
	a.addConn(x)
	b.addConn(y)
	return x, y
}

// deliver moves the frames sent on this end to the other's inbox as they
// come due, in the order they were sent.
func (e *frameConn) deliver() {
	defer e.c.inFlight.Done()
	for {
		select {
		case tf := <-e.outbox:
			if d := time.Until(tf.due); d > 0 {
				time.Sleep(d)
			}
			if to := e.c.byName[e.peer]; to.crashesOn(tf.f) || to.crashesOnAnswer(tf.f) {
				return
			}
			select {
			case e.other.inbox <- tf.f:
				e.c.delivered(tf.f)
			case <-e.other.closed:
				return
			case <-e.closed:
				return
			}
		case <-e.closed:
			return
		}
	}
}

func (e *frameConn) Send(f messaging.Frame) error {
	select {
	case <-e.closed:
		return net.ErrClosed
	case <-e.other.closed:
		return fmt.Errorf("writing to %s: connection reset by peer", e.peer)
	default:
	}
	if e.c.cut(e.self, e.peer) {
		return nil // lost on the way
	}
	// A socket takes a copy of what is written: the sender may reuse its
	// buffer once Send returns.
	f.Payload = append([]byte(nil), f.Payload...)
	select {
	case e.outbox <- timedFrame{f, time.Now().Add(e.c.delay(e.self, e.peer))}:
		return nil
	case <-e.closed:
		return net.ErrClosed
	case <-e.other.closed:
		return fmt.Errorf("writing to %s: connection reset by peer", e.peer)
	}
}

func (e *frameConn) Recv() (messaging.Frame, error) {
	select {
	case f := <-e.inbox:
		return f, nil
	case <-e.closed:
		return messaging.Frame{}, net.ErrClosed
	case <-e.other.closed:
		// What arrived before the peer closed is still read.
		select {
		case f := <-e.inbox:
			return f, nil
		default:
			return messaging.Frame{}, io.EOF
		}
	}
}

func (e *frameConn) Close() error {
	e.once.Do(func() { close(e.closed) })
	return nil
}

func (e *frameConn) Peer() string { return string(e.peer) }
