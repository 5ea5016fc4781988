package tlsconf

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// reloadCheckInterval is how often, at most, a new connection makes the
// server look at its files' modification times.
const reloadCheckInterval = time.Second

// handshakeTimeout bounds a client's TLS handshake.
const handshakeTimeout = 10 * time.Second

// Server is the TLS side of one listener: its options, and the
// configuration made from the files as they last loaded.
type Server struct {
	opts Options
	// OnReload, when set, hears of each reload of the files, and of each
	// failed one (the configuration before it stays).
	OnReload func(err error)
	// OnHandshakeFailure, when set, hears of each refused handshake.
	OnHandshakeFailure func(err *HandshakeError)

	mu        sync.Mutex
	cfg       *tls.Config
	stamps    []fileStamp
	lastCheck time.Time

	// HandshakeFailures counts the connections refused: a plaintext
	// client on a TLS-only port, a certificate not trusted, a protocol
	// or cipher not allowed.
	HandshakeFailures atomic.Int64
	// Reloads counts the times the files were read again.
	Reloads atomic.Int64
}

type fileStamp struct {
	path    string
	modTime time.Time
	size    int64
}

// NewServer loads the options' files; opts must be valid (Validate).
func NewServer(opts Options) (*Server, error) {
	s := &Server{opts: opts}
	cfg, stamps, err := s.load()
	if err != nil {
		return nil, err
	}
	s.cfg, s.stamps, s.lastCheck = cfg, stamps, time.Now()
	return s, nil
}

func (s *Server) files() []string {
	out := []string{s.opts.Keystore}
	for _, f := range []string{s.opts.KeystoreKey, s.opts.Truststore} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

func stampsOf(files []string) ([]fileStamp, error) {
	out := make([]fileStamp, len(files))
	for i, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		out[i] = fileStamp{path: f, modTime: fi.ModTime(), size: fi.Size()}
	}
	return out, nil
}

// load reads the files into a configuration.
func (s *Server) load() (*tls.Config, []fileStamp, error) {
	stamps, err := stampsOf(s.files())
	if err != nil {
		return nil, nil, err
	}
	pair, err := loadKeyPair(s.opts.Keystore, s.opts.KeystoreKey)
	if err != nil {
		return nil, nil, err
	}
	lo, hi, err := s.opts.versionRange()
	if err != nil {
		return nil, nil, err
	}
	suites, err := s.opts.suites()
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: lo, MaxVersion: hi, CipherSuites: suites}
	if s.opts.Truststore != "" {
		if cfg.ClientCAs, err = loadPool(s.opts.Truststore); err != nil {
			return nil, nil, err
		}
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if s.opts.RequireClientAuth {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, stamps, nil
}

// Config is the configuration a new connection handshakes with: the one
// last loaded, loaded again first when a file changed since.
func (s *Server) Config() *tls.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.lastCheck) < reloadCheckInterval {
		return s.cfg
	}
	s.lastCheck = time.Now()
	stamps, err := stampsOf(s.files())
	if err == nil && equalStamps(stamps, s.stamps) {
		return s.cfg
	}
	cfg, stamps, err := s.load()
	if err == nil {
		s.cfg, s.stamps = cfg, stamps
		s.Reloads.Add(1)
	}
	if s.OnReload != nil {
		s.OnReload(err)
	}
	return s.cfg
}

func equalStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].path != b[i].path || !a[i].modTime.Equal(b[i].modTime) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

// Listener wraps l: each connection it accepts does its TLS handshake
// (or, with optional set, is taken as plaintext when its first byte is
// not a TLS handshake record) on its first read or write, in the
// goroutine that serves it. A handshake that fails is counted and fails
// that read or write, which closes the connection.
func (s *Server) Listener(l net.Listener) net.Listener {
	return &listener{Listener: l, srv: s}
}

type listener struct {
	net.Listener
	srv *Server
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &serverConn{Conn: c, srv: l.srv}, nil
}

// serverConn decides, at its first read or write, what it carries.
type serverConn struct {
	net.Conn
	srv  *Server
	once sync.Once
	err  error
	// inner is the TLS connection, or the plaintext one with the byte
	// read to tell them apart put back.
	inner net.Conn

	// The deadlines its user set, which the handshake's must not undo.
	mu                          sync.Mutex
	readDeadline, writeDeadline time.Time
}

func (c *serverConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline, c.writeDeadline = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *serverConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *serverConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writeDeadline = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// earlier is the earlier of a deadline and a user's (zero: none).
func earlier(a, user time.Time) time.Time {
	if !user.IsZero() && user.Before(a) {
		return user
	}
	return a
}

func (c *serverConn) start() error {
	c.once.Do(func() {
		// The handshake has handshakeTimeout, or less if the user's
		// deadlines come first; theirs hold again once it is done.
		c.mu.Lock()
		read, write := c.readDeadline, c.writeDeadline
		c.mu.Unlock()
		limit := time.Now().Add(handshakeTimeout)
		_ = c.Conn.SetReadDeadline(earlier(limit, read))
		_ = c.Conn.SetWriteDeadline(earlier(limit, write))
		defer func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			_ = c.Conn.SetReadDeadline(c.readDeadline)
			_ = c.Conn.SetWriteDeadline(c.writeDeadline)
		}()
		var raw net.Conn = c.Conn
		if c.srv.opts.Optional {
			br := bufio.NewReaderSize(c.Conn, 1)
			first, err := br.Peek(1)
			if err != nil {
				c.err = err
				return
			}
			raw = &peekedConn{Conn: c.Conn, r: br}
			if first[0] != 0x16 { // not a TLS handshake record: plaintext
				c.setInner(raw)
				return
			}
		}
		tc := tls.Server(raw, c.srv.Config())
		if err := tc.Handshake(); err != nil {
			c.srv.HandshakeFailures.Add(1)
			he := &HandshakeError{Remote: c.Conn.RemoteAddr().String(), Err: err}
			if c.srv.OnHandshakeFailure != nil {
				c.srv.OnHandshakeFailure(he)
			}
			c.err = he
			return
		}
		c.setInner(tc)
	})
	return c.err
}

// setInner sets what the connection carries: under mu, as
// ConnectionState may ask from another goroutine.
func (c *serverConn) setInner(inner net.Conn) {
	c.mu.Lock()
	c.inner = inner
	c.mu.Unlock()
}

func (c *serverConn) Read(b []byte) (int, error) {
	if err := c.start(); err != nil {
		return 0, err
	}
	return c.inner.Read(b)
}

func (c *serverConn) Write(b []byte) (int, error) {
	if err := c.start(); err != nil {
		return 0, err
	}
	return c.inner.Write(b)
}

// ConnectionState is the TLS state of the connection, nil for plaintext
// or before the handshake.
func (c *serverConn) ConnectionState() *tls.ConnectionState {
	c.mu.Lock()
	inner := c.inner
	c.mu.Unlock()
	if tc, ok := inner.(*tls.Conn); ok {
		st := tc.ConnectionState()
		return &st
	}
	return nil
}

// HandshakeError is a refused TLS handshake.
type HandshakeError struct {
	Remote string
	Err    error
}

func (e *HandshakeError) Error() string {
	return "tls: handshake with " + e.Remote + " failed: " + e.Err.Error()
}
func (e *HandshakeError) Unwrap() error { return e.Err }

// peekedConn reads first what its reader holds.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// PeerConfig is the configuration this node dials its peers with, from
// the same files (reloaded as the server's): its keystore's certificate
// shown to them, and their certificates checked against the truststore,
// and against the address dialled when verifyName is set (Cassandra's
// require_endpoint_verification).
func (s *Server) PeerConfig(host string, verifyName bool) *tls.Config {
	cur := s.Config()
	cfg := &tls.Config{Certificates: cur.Certificates, MinVersion: cur.MinVersion, MaxVersion: cur.MaxVersion,
		CipherSuites: cur.CipherSuites, ServerName: host}
	if verifyName {
		cfg.RootCAs = cur.ClientCAs
		return cfg
	}
	// The chain is checked, the name is not: nodes' certificates seldom
	// name their addresses.
	roots := cur.ClientCAs
	cfg.InsecureSkipVerify = true
	cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("tls: the peer showed no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return err
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		return err
	}
	return cfg
}
