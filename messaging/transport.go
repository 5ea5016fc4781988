package messaging

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/internal/tlsconf"
)

// Conn carries frames both ways between this node and a peer.
type Conn interface {
	Send(Frame) error
	Recv() (Frame, error)
	Close() error
	// Peer is the node at the other end, as its handshake named it.
	Peer() string
}

// Listener accepts the connections peers dial.
type Listener interface {
	Accept() (Conn, error)
	Close() error
	// Port is the port it listens on.
	Port() int
}

// Transport makes connections between nodes. local names this node in
// handshakes; addr is "host:port".
type Transport interface {
	Listen(local, addr string) (Listener, error)
	Dial(ctx context.Context, local, addr string) (Conn, error)
}

// TCP is the default Transport: frames over TCP, after a handshake of
// "SBYL", the version and the dialler's name, answered with the version.
// With TLS set, connections go under TLS first (server_encryption_options).
type TCP struct {
	TLS *TCPTLS
}

// TCPTLS is the TLS of internode connections.
type TCPTLS struct {
	// Server handshakes the connections peers dial; with its Optional
	// set it also takes plaintext ones (internode_encryption dc or rack:
	// peers of the same data centre or rack dial in plaintext).
	Server *tlsconf.Server
	// Dial is the configuration to dial a peer ("host:port") with; nil
	// for plaintext.
	Dial func(addr string) *tls.Config
	// AllowPlaintext, with an optional Server, says whether a peer at
	// this address may speak plaintext: one of the nodes that need no
	// TLS (the same data centre or rack), not anyone.
	AllowPlaintext func(host string) bool
}

var handshakeMagic = [4]byte{'S', 'B', 'Y', 'L'}

// handshakeTimeout bounds the exchange of names on a new connection.
const handshakeTimeout = 5 * time.Second

func (t TCP) Listen(local, addr string) (Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	tl := &tcpListener{l: l, ready: make(chan Conn), closed: make(chan struct{})}
	if t.TLS != nil {
		tl.l = t.TLS.Server.Listener(l)
		tl.allowPlaintext = t.TLS.AllowPlaintext
	}
	go tl.acceptLoop()
	return tl, nil
}

// Dial connects from this node's own address (local, when it is an IP),
// so that a peer, and a firewall rule on the node's address, sees the
// connection come from the node rather than from whichever address the
// system picks.
func (t TCP) Dial(ctx context.Context, local, addr string) (Conn, error) {
	var d net.Dialer
	if ip := net.ParseIP(local); ip != nil {
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if t.TLS != nil {
		if cfg := t.TLS.Dial(addr); cfg != nil {
			tc := tls.Client(nc, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				nc.Close()
				return nil, fmt.Errorf("messaging: TLS handshake with %s: %w", addr, err)
			}
			nc = tc
		}
	}
	hello := append(handshakeMagic[:], Version, byte(len(local)))
	hello = append(hello, local...)
	var reply [1]byte
	if _, err := nc.Write(hello); err == nil {
		_, err = io.ReadFull(nc, reply[:])
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("messaging: handshake with %s: %w", addr, err)
	}
	if reply[0] != Version {
		nc.Close()
		return nil, fmt.Errorf("messaging: %s speaks version %d, this node %d", addr, reply[0], Version)
	}
	_ = nc.SetDeadline(time.Time{})
	host, _, _ := net.SplitHostPort(addr)
	return newTCPConn(nc, host), nil
}

// tcpListener accepts connections on one goroutine and runs each one's
// handshake on its own, so that a peer slow to say who it is (or a
// stranger that says nothing) holds up no other connection.
type tcpListener struct {
	l net.Listener
	// allowPlaintext, when set, decides whether a connection that came
	// without TLS (an optional TLS listener's) is taken.
	allowPlaintext func(host string) bool
	ready          chan Conn // connections whose handshake succeeded
	closed         chan struct{}
	once           sync.Once
	err            error // what ended the accept loop
}

func (l *tcpListener) Port() int { return l.l.Addr().(*net.TCPAddr).Port }

func (l *tcpListener) Close() error { return l.closeWith(nil) }

// closeWith closes the listener once; cause, the accept loop's error,
// is what Accept returns from then on.
func (l *tcpListener) closeWith(cause error) error {
	var err error
	l.once.Do(func() {
		l.err = cause
		close(l.closed)
		err = l.l.Close()
	})
	return err
}

func (l *tcpListener) acceptLoop() {
	for {
		nc, err := l.l.Accept()
		if err != nil {
			l.closeWith(err)
			return
		}
		go func() {
			c, err := acceptHandshake(nc, l.allowPlaintext)
			if err != nil {
				return // closed by acceptHandshake
			}
			select {
			case l.ready <- c:
			case <-l.closed:
				c.Close()
			}
		}()
	}
}

// Accept returns the next connection whose handshake succeeded; one that
// fails is closed and skipped.
func (l *tcpListener) Accept() (Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.closed:
		if l.err != nil {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

func acceptHandshake(nc net.Conn, allowPlaintext func(host string) bool) (Conn, error) {
	_ = nc.SetDeadline(time.Now().Add(handshakeTimeout))
	var h [6]byte
	if _, err := io.ReadFull(nc, h[:]); err != nil || [4]byte(h[:4]) != handshakeMagic {
		nc.Close()
		return nil, errors.New("messaging: not a Sibyl node")
	}
	if st, ok := nc.(interface{ ConnectionState() *tls.ConnectionState }); ok && allowPlaintext != nil && st.ConnectionState() == nil {
		host, _, _ := net.SplitHostPort(nc.RemoteAddr().String())
		if !allowPlaintext(host) {
			nc.Close()
			return nil, fmt.Errorf("messaging: %s spoke plaintext, which only peers that need no TLS may", host)
		}
	}
	name := make([]byte, h[5])
	if _, err := io.ReadFull(nc, name); err != nil {
		nc.Close()
		return nil, err
	}
	if h[4] != Version {
		// Say which version this node speaks, and hang up.
		_, _ = nc.Write([]byte{Version})
		nc.Close()
		return nil, fmt.Errorf("messaging: %s speaks version %d", name, h[4])
	}
	if _, err := nc.Write([]byte{Version}); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return newTCPConn(nc, string(name)), nil
}

// tcpConn sends through one writer goroutine: frames sent while it
// writes wait in a buffer and go out together in the next write, so many
// requests in flight cost few system calls.
type tcpConn struct {
	nc   net.Conn
	peer string
	r    *bufio.Reader

	mu      sync.Mutex
	pending []byte // frames waiting for the writer
	spare   []byte // the writer's last buffer, for reuse
	err     error  // the first write error: later sends fail with it
	wake    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newTCPConn(nc net.Conn, peer string) *tcpConn {
	c := &tcpConn{nc: nc, peer: peer, r: bufio.NewReaderSize(nc, 64<<10), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.writeLoop()
	return c
}

func (c *tcpConn) Peer() string         { return c.peer }
func (c *tcpConn) Recv() (Frame, error) { return ReadFrame(c.r) }

func (c *tcpConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.done)
		err = c.nc.Close()
	})
	return err
}

// Send queues a frame for the writer. A write that failed earlier fails
// every send after it; the connection is then closed.
func (c *tcpConn) Send(f Frame) error {
	if len(f.Payload) > MaxPayload {
		return fmt.Errorf("messaging: a %s payload of %d bytes is over the limit of %d", f.Verb, len(f.Payload), MaxPayload)
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.pending = AppendFrame(c.pending, f)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // the writer is already due
	}
	return nil
}

func (c *tcpConn) writeLoop() {
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		// Senders about to queue a frame get to run first, so one write
		// carries theirs too (a write costs a system call on each side).
		runtime.Gosched()
		c.mu.Lock()
		buf := c.pending
		// The spare buffer becomes the pending one, and is no longer
		// spare: handing it out twice would let senders write into a
		// buffer being written to the socket.
		c.pending, c.spare = c.spare[:0], nil
		c.mu.Unlock()
		if len(buf) == 0 {
			continue
		}
		if _, err := c.nc.Write(buf); err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			c.Close()
			return
		}
		c.mu.Lock()
		c.spare = buf
		c.mu.Unlock()
	}
}
