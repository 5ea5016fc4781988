package simulation

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/sibyldb/sibyl/ring"
)

// gossipTransport is memberlist's transport for one start of a node, over
// the simulated network: packets are dropped on a cut link or to a node
// that is down (as UDP's are), late on a delayed one; a stream is a pipe
// to the target's memberlist, refused by a node that is down and, on a
// cut link, a dial that times out.
type gossipTransport struct {
	n       *Node
	packets chan *memberlist.Packet
	streams chan net.Conn

	mu     sync.Mutex
	closed bool
	done   chan struct{}
}

func newGossipTransport(n *Node) *gossipTransport {
	return &gossipTransport{n: n, packets: make(chan *memberlist.Packet, 256), streams: make(chan net.Conn),
		done: make(chan struct{})}
}

var _ memberlist.Transport = (*gossipTransport)(nil)

func (t *gossipTransport) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	return net.ParseIP(string(t.n.Name)), gossipPort, nil
}

// target is the transport of the node at addr as it runs now, or nil.
func (t *gossipTransport) target(addr string) (*Node, *gossipTransport) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil
	}
	o := t.n.c.byName[ring.Endpoint(host)]
	if o == nil {
		return nil, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.up {
		return o, nil
	}
	return o, o.inbox
}

func (t *gossipTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	now := time.Now()
	o, _ := t.target(addr)
	if o == nil || !t.live() {
		return now, nil // a node off the network sends nothing
	}
	p := &memberlist.Packet{Buf: append([]byte(nil), b...), From: &net.UDPAddr{IP: net.ParseIP(string(t.n.Name)), Port: gossipPort}}
	c := t.n.c
	send := func() {
		if c.cut(t.n.Name, o.Name) {
			return
		}
		if _, to := t.target(addr); to != nil {
			p.Timestamp = time.Now()
			to.receive(p)
		}
	}
	if d := c.delay(t.n.Name, o.Name); d > 0 {
		c.inFlight.Add(1)
		go func() {
			defer c.inFlight.Done()
			time.Sleep(d)
			send()
		}()
		return now, nil
	}
	send()
	return now, nil
}

// receive queues a packet for memberlist, or drops it when the queue is
// full or the transport shut, as a socket's buffer would.
// live reports whether t is the transport of its node's current start,
// the node up.
func (t *gossipTransport) live() bool {
	t.n.mu.Lock()
	defer t.n.mu.Unlock()
	return t.n.up && t.n.inbox == t
}

func (t *gossipTransport) receive(p *memberlist.Packet) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	select {
	case t.packets <- p:
	default:
	}
}

func (t *gossipTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }

func (t *gossipTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	o, to := t.target(addr)
	if o == nil || to == nil || !t.live() {
		return nil, fmt.Errorf("dial %s: connection refused", addr)
	}
	c := t.n.c
	if c.cut(t.n.Name, o.Name) {
		time.Sleep(timeout) // a cut link answers nothing, not even a refusal
		return nil, fmt.Errorf("dial %s: i/o timeout", addr)
	}
	time.Sleep(c.delay(t.n.Name, o.Name))
	local, remote := net.Pipe()
	self := &net.TCPAddr{IP: net.ParseIP(string(t.n.Name)), Port: gossipPort}
	peer := &net.TCPAddr{IP: net.ParseIP(string(o.Name)), Port: gossipPort}
	select {
	case to.streams <- addressedConn{remote, peer, self}:
		return addressedConn{local, self, peer}, nil
	case <-to.done:
		local.Close()
		return nil, fmt.Errorf("dial %s: connection refused", addr)
	case <-time.After(timeout):
		local.Close()
		return nil, fmt.Errorf("dial %s: i/o timeout", addr)
	}
}

func (t *gossipTransport) StreamCh() <-chan net.Conn { return t.streams }

func (t *gossipTransport) Shutdown() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("gossip transport: already shut down")
	}
	t.closed = true
	close(t.done)
	return nil
}

// addressedConn is a pipe end that names the nodes at its ends, as a TCP
// connection would.
type addressedConn struct {
	net.Conn
	local, remote net.Addr
}

func (c addressedConn) LocalAddr() net.Addr  { return c.local }
func (c addressedConn) RemoteAddr() net.Addr { return c.remote }
