package native

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/internal/workers"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/tracing"
)

// Options configure a Server.
type Options struct {
	// NewSession returns a session on the node's coordinator; each
	// connection takes as many as it has requests in flight.
	NewSession func() *exec.Session
	// MaxFrameSize bounds a request's body; a bigger one is refused with a
	// protocol error and the connection closed. Default 16 MiB, as
	// Cassandra's native_transport_max_frame_size.
	MaxFrameSize int
	// MaxPrepared bounds the prepared statement cache; default 10,000.
	// A statement dropped from it answers Unprepared, and drivers prepare
	// it again.
	MaxPrepared int
	// Authenticator, when set, makes every connection authenticate after
	// STARTUP (AUTHENTICATE, AUTH_RESPONSE, AUTH_SUCCESS); nil lets every
	// connection in, as Cassandra's AllowAllAuthenticator.
	Authenticator Authenticator
	// Logger receives connection events; default none.
	Logger *zerolog.Logger
	// Tracer traces the requests whose clients ask (the tracing flag) and
	// a sample of the others (its probability); nil traces none.
	Tracer *tracing.Tracer
	// SlowQueryTimeout logs a request that takes longer (Cassandra's
	// slow_query_log_timeout), with its statement; 0 logs none.
	SlowQueryTimeout time.Duration
	// MaxRequestDataInFlight and MaxRequestDataInFlightPerIP bound the
	// bytes of request bodies in flight (past a v5 connection's own MiB)
	// on the node and from one client address (Cassandra's
	// native_transport_max_request_data_in_flight and _per_ip).
	// MaxRequestsPerSecond bounds the requests started each second
	// (native_transport_max_requests_per_second, when
	// native_transport_rate_limiting_enabled). Zero or less: no bound; the
	// node's configuration refuses negative values by their keys. A
	// request past a bound gets Overloaded if its connection asked for
	// that at STARTUP (THROW_ON_OVERLOAD "1"); otherwise it runs, and its
	// connection is not read until it is back under the bounds.
	MaxRequestDataInFlight      int64
	MaxRequestDataInFlightPerIP int64
	MaxRequestsPerSecond        int
}

// Authenticator checks the credentials clients send.
type Authenticator interface {
	// Class is the authenticator's Cassandra class name, sent in
	// AUTHENTICATE: drivers choose how to answer by it.
	Class() string
	// Authenticate checks an AUTH_RESPONSE token and returns the role
	// the connection logs in as; its error is what the client is told.
	Authenticate(token []byte) (user string, err error)
}

// PasswordAuthenticator takes SASL PLAIN tokens (authorization id, NUL,
// user, NUL, password) as Cassandra's PasswordAuthenticator does, and asks
// Check about them.
type PasswordAuthenticator struct {
	Check func(user, password string) error
}

// Class names Cassandra's PasswordAuthenticator: gocql answers only
// authenticators it knows by name.
func (PasswordAuthenticator) Class() string { return "org.apache.cassandra.auth.PasswordAuthenticator" }

// Authenticate checks one PLAIN token.
func (a PasswordAuthenticator) Authenticate(token []byte) (string, error) {
	user, password, err := DecodePlain(token)
	if err != nil {
		return "", err
	}
	if a.Check == nil {
		return "", fmt.Errorf("Provided username %s and/or password are incorrect", user)
	}
	if err := a.Check(user, password); err != nil {
		return "", err
	}
	return user, nil
}

// DecodePlain reads a SASL PLAIN token as Cassandra does: from the end,
// the password after the last NUL and the user between it and the one
// before; what comes before that (an authorization id) is ignored, and a
// third NUL is refused.
func DecodePlain(token []byte) (user, password string, err error) {
	end := len(token)
	var fields [][]byte
	for i := len(token) - 1; i >= 0; i-- {
		if token[i] != 0 {
			continue
		}
		if len(fields) == 2 {
			return "", "", errors.New(`Credential format error: username or password is empty or contains NUL(\0) character`)
		}
		fields = append(fields, token[i+1:end])
		end = i
	}
	if len(fields) < 1 || len(fields[0]) == 0 {
		return "", "", errors.New("Password must not be null")
	}
	if len(fields) < 2 || len(fields[1]) == 0 {
		return "", "", errors.New("Authentication ID must not be null")
	}
	return string(fields[1]), string(fields[0]), nil
}

// authError is a failed authentication (error code 0x0100).
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.MaxFrameSize == 0 {
		o.MaxFrameSize = 16 << 20
	}
	if o.MaxPrepared == 0 {
		o.MaxPrepared = 10_000
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
}

// Validate reports what is wrong with the options.
func (o *Options) Validate() error {
	var errs []error
	if o.NewSession == nil {
		errs = append(errs, errors.New("native: Options.NewSession is required"))
	}
	if o.MaxFrameSize < 0 {
		errs = append(errs, fmt.Errorf("native_transport_max_frame_size: %d is negative", o.MaxFrameSize))
	}
	if o.MaxPrepared < 0 {
		errs = append(errs, fmt.Errorf("native: MaxPrepared %d is negative", o.MaxPrepared))
	}
	return errors.Join(errs...)
}

// The CQL version and protocol versions the server announces in SUPPORTED.
const cqlVersion = "3.4.6"

const (
	// maxInFlight bounds the requests one connection runs at once; the
	// connection reads no more until one finishes.
	maxInFlight = 1024
	// writeTimeout bounds a write to a client: one that stops reading is
	// disconnected rather than holding its responses, and the events of
	// every schema change, forever.
	writeTimeout = 30 * time.Second
	// handshakeFrameLimit bounds the frames of a connection not yet
	// started (or authenticated).
	handshakeFrameLimit = 64 << 10
)

// Server serves the native protocol on the listeners given to Serve.
type Server struct {
	opts     Options
	prepared preparedCache

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*conn]bool
	closing   bool
	requests  sync.WaitGroup // requests being answered, for a drain
	workers   *workers.Pool  // requests run on reused goroutines, their stacks already grown
	admission *admission
	// slowQueries counts the requests logged as slow.
	slowQueries atomic.Int64
	// stage counts the requests: waiting for a slot of their connection,
	// running, answered (Cassandra's Native-Transport-Requests pool).
	stage workers.Stage
}

// Stage are the server's request counts.
func (s *Server) Stage() workers.StageCounts { return s.stage.Counts() }

// Client is one connected client, as system_views.clients shows it.
type Client struct {
	Address net.IP
	Port    int
	// Username is the role it logged in as ("" for none).
	Username string
	// Stage is "established" before STARTUP, "authenticating" during a
	// login, then "ready".
	Stage           string
	ProtocolVersion int
	// Options are its STARTUP options (DRIVER_NAME and DRIVER_VERSION
	// among them); nil before STARTUP.
	Options map[string]string
	// Requests is how many requests it has sent.
	Requests int64
	// TLS is its TLS state; nil for a plaintext connection.
	TLS *tls.ConnectionState
}

// Clients returns the connected clients.
func (s *Server) Clients() []Client {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	out := make([]Client, 0, len(conns))
	for _, c := range conns {
		cl := Client{Requests: c.requests.Load()}
		if a, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
			cl.Address, cl.Port = a.IP, a.Port
		}
		c.mu.Lock()
		cl.Username, cl.Stage, cl.Options = c.user, c.stage, c.startup
		cl.ProtocolVersion = int(c.startedVersion)
		c.mu.Unlock()
		if st, ok := c.nc.(interface{ ConnectionState() *tls.ConnectionState }); ok {
			cl.TLS = st.ConnectionState()
		}
		out = append(out, cl)
	}
	return out
}

// SlowQueries is how many requests took longer than SlowQueryTimeout.
func (s *Server) SlowQueries() int64 { return s.slowQueries.Load() }

// Overloads counts what admission did with the requests past its bounds.
func (s *Server) Overloads() *OverloadCounts { return &s.admission.counts }

// NewServer returns a server; Serve starts it on a listener.
func NewServer(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	return &Server{opts: opts, listeners: map[net.Listener]bool{}, conns: map[*conn]bool{}, admission: newAdmission(opts),
		workers: workers.New(workers.IdleTimeout), prepared: preparedCache{max: opts.MaxPrepared, byID: map[string]*exec.Prepared{}}}, nil
}

// ErrServerClosed is what Serve returns once Shutdown has begun.
var ErrServerClosed = errors.New("native: server closed")

// Serve accepts connections on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = true
	s.mu.Unlock()
	backoff := 5 * time.Millisecond
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors and the like pass: wait and accept again.
			c := s.opts.Logger
			c.Warn().Err(err).Dur("retry_in", backoff).Msg("native: accept failed")
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		c := s.newConn(nc)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			s.admission.leave(c.clientIP, c.ipReserve)
			return ErrServerClosed
		}
		s.conns[c] = true
		s.mu.Unlock()
		go c.serve()
	}
}

// Shutdown drains the server: it stops accepting connections and
// requests, waits for the requests being answered (or for ctx), then
// closes every connection.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for l := range s.listeners {
		l.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.stopReading()
	}
	done := make(chan struct{})
	go func() {
		s.requests.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
		for _, c := range conns {
			c.close()
		}
	case <-ctx.Done():
		err = ctx.Err()
		for _, c := range conns {
			c.abort()
		}
	}
	return err
}

// beginRequest counts a request in, unless a drain has begun: Shutdown
// sets closing under the same lock before it waits, so no request joins
// after the wait started.
func (s *Server) beginRequest() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.requests.Add(1)
	return true
}

// NodeEvent tells the clients registered for it of a change in the
// cluster: event TOPOLOGY_CHANGE (change NEW_NODE or REMOVED_NODE) or
// STATUS_CHANGE (UP or DOWN), about the node whose native protocol is at
// ip:port.
func (s *Server) NodeEvent(event, change string, ip net.IP, port int) {
	var w writer
	w.string(event)
	w.string(change)
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	w.byte(byte(len(ip)))
	w.b = append(w.b, ip...)
	w.int(int32(port))
	s.broadcast(event, w.b)
}

// SchemaEvent tells the clients registered for SCHEMA_CHANGE of a schema
// change this node took from another (its own clients' DDL is announced
// as it runs).
func (s *Server) SchemaEvent(c *exec.SchemaChange) {
	var w writer
	w.string("SCHEMA_CHANGE")
	w.schemaChange(c)
	s.broadcast("SCHEMA_CHANGE", w.b)
}

// broadcast sends an event to every connection registered for it.
func (s *Server) broadcast(event string, body []byte) {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		if c.registeredFor(event) {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		// A connection whose responses back up is not waited for: it is
		// closed, and its driver reconnects and reads the schema afresh.
		select {
		case c.out <- outgoing{envelope: c.frame(0, eventStream, opEvent, body)}:
		case <-c.done:
		default:
			c.log().Warn().Str("client", c.nc.RemoteAddr().String()).Msg("native: a client does not read its responses; closing it")
			c.abort()
		}
	}
}

// forget is the end of a connection whose requests are all answered.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.admission.leave(c.clientIP, c.ipReserve)
}

// preparedCache holds prepared statements by id, shared by all
// connections: a driver prepares once and executes on any connection.
type preparedCache struct {
	mu   sync.RWMutex
	max  int
	byID map[string]*exec.Prepared
}

// preparedID is Cassandra's id of a prepared statement: the MD5 of the
// keyspace the connection was in (if any) followed by the query text, so
// that ids are the same on every node and across restarts.
func preparedID(keyspace, query string) []byte {
	sum := md5.Sum([]byte(keyspace + query))
	return sum[:]
}

func (p *preparedCache) get(id []byte) *exec.Prepared {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.byID[string(id)]
}

func (p *preparedCache) drop(id []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byID, string(id))
}

func (p *preparedCache) put(id []byte, st *exec.Prepared) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.byID[string(id)]; !ok && len(p.byID) >= p.max {
		for k := range p.byID { // drop one at random: its users re-prepare
			delete(p.byID, k)
			break
		}
	}
	p.byID[string(id)] = st
}

// conn is one client connection.
type conn struct {
	srv *Server
	nc  net.Conn

	// Set by the reader before any request runs concurrently.
	version    byte
	started    bool
	compressor compressor // envelope compression (v3, v4) from STARTUP; nil: none
	segmented  bool       // v5: envelopes travel in segments after READY
	// authenticated says requests may run: at STARTUP without an
	// authenticator, else once AUTH_RESPONSE is accepted.
	authenticated bool
	segmentLZ4    bool // v5: segments are LZ4-compressed
	// throwOnOverload: STARTUP asked for Overloaded rather than waiting
	// when a request is past the admission bounds.
	throwOnOverload bool
	clientIP        string // the client's address, whose reserve it shares
	ipReserve       *ipReserve
	inFlightBytes   atomic.Int64  // the bytes of its requests admitted and not yet answered
	held            atomic.Bool   // the reader waits for bytes to come back
	drained         chan struct{} // a request answered left none in flight while held

	mu       sync.Mutex
	keyspace string
	user     string            // the role it logged in as; "" for none
	startup  map[string]string // the STARTUP options
	// startedVersion is the protocol version STARTUP fixed (0 before).
	startedVersion byte
	stage          string          // "established", "authenticating" or "ready"
	requests       atomic.Int64    // requests read
	sessions       []*exec.Session // idle sessions
	registered     []string        // event types

	out      chan outgoing
	slots    chan struct{} // one per request running
	done     chan struct{} // closed when the connection closes
	closed   atomic.Bool
	stopRead atomic.Bool
	inflight sync.WaitGroup
}

func (s *Server) newConn(nc net.Conn) *conn {
	ip, _, _ := net.SplitHostPort(nc.RemoteAddr().String())
	return &conn{srv: s, nc: nc, out: make(chan outgoing, 128), slots: make(chan struct{}, maxInFlight), done: make(chan struct{}),
		drained: make(chan struct{}, 1), stage: "established", clientIP: ip, ipReserve: s.admission.join(ip)}
}

func (c *conn) log() *zerolog.Logger { return c.srv.opts.Logger }

// serve reads requests until the client goes or the server drains.
func (c *conn) serve() {
	defer c.srv.forget(c)
	go c.writeLoop()
	buffered := bufio.NewReaderSize(c.nc, 64<<10)
	var r io.Reader = buffered
	var hdr [headerSize]byte
	for !c.stopRead.Load() {
		if c.segmented && r == io.Reader(buffered) {
			r = &segmentReader{r: buffered, lz4: c.segmentLZ4}
		}
		limit := c.srv.opts.MaxFrameSize
		if !c.authenticated {
			limit = min(limit, handshakeFrameLimit) // OPTIONS, STARTUP, AUTH_RESPONSE are small
		}
		f, err := readFrame(r, hdr[:], limit)
		if err != nil {
			var pe *protocolError
			if errors.As(err, &pe) {
				version := f.version
				if version < minVersion || version > maxVersion {
					version = maxVersion
				}
				if c.started {
					version = c.version
				}
				c.sendError(version, f.stream, err, nil)
				c.log().Debug().Str("client", c.nc.RemoteAddr().String()).Str("error", pe.msg).Msg("native: protocol error")
			}
			break
		}
		if err := c.dispatch(f); err != nil {
			version := f.version
			if c.started {
				version = c.version
			}
			c.sendError(version, f.stream, err, nil)
			var pe *protocolError
			if errors.As(err, &pe) && pe.fatal {
				break
			}
		}
	}
	c.inflight.Wait()
	c.close()
}

// stopReading makes the reader stop taking requests (a drain); the
// requests it took are still answered.
func (c *conn) stopReading() {
	c.stopRead.Store(true)
	// Wake a reader blocked in a read: close the read side.
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseRead()
	}
}

func (c *conn) close() {
	if c.closed.CompareAndSwap(false, true) {
		close(c.done)
		// The writer flushes what is queued, then closes the socket.
	}
}

// abort closes the connection at once, its socket included, whatever the
// writer is doing.
func (c *conn) abort() {
	c.close()
	c.nc.Close()
}

// outgoing is what the writer writes: an envelope, or the switch to
// version 5's segments, which follows the READY that starts the
// connection.
type outgoing struct {
	envelope      []byte
	startSegments bool
	segmentLZ4    bool
}

// writeLoop writes responses as they come, coalescing those that are
// ready into one write (in segments once version 5 framing starts); it
// flushes what is queued when the connection closes.
func (c *conn) writeLoop() {
	defer c.nc.Close()
	var buf []byte
	var ready [][]byte
	segmented, lz4 := false, false
	write := func() bool {
		if segmented {
			buf = appendSegments(buf[:0], ready, lz4)
		} else {
			buf = buf[:0]
			for _, e := range ready {
				buf = append(buf, e...)
			}
		}
		ready = ready[:0]
		if len(buf) == 0 {
			return true
		}
		c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := c.nc.Write(buf)
		return err == nil
	}
	take := func(o outgoing) {
		if o.startSegments {
			write() // what came before goes unframed
			segmented, lz4 = true, o.segmentLZ4
			return
		}
		ready = append(ready, o.envelope)
	}
	for {
		select {
		case o := <-c.out:
			take(o)
			size := len(o.envelope)
			yielded := false
		gather:
			for size < 1<<20 {
				select {
				case o := <-c.out:
					take(o)
					size += len(o.envelope)
				default:
					if yielded || len(c.slots) == 0 {
						break gather
					}
					// Requests still running may be a moment from their
					// answers: let them run first, and one write carries
					// them all (each write costs a system call here and a
					// read in the client).
					yielded = true
					runtime.Gosched()
				}
			}
			if !write() {
				c.close()
				return
			}
		case <-c.done:
			for {
				select {
				case o := <-c.out:
					take(o)
				default:
					write()
					return
				}
			}
		}
	}
}

// send queues a response envelope; dropped if the connection has closed.
func (c *conn) send(envelope []byte) { c.queue(outgoing{envelope: envelope}) }

func (c *conn) queue(o outgoing) {
	select {
	case c.out <- o:
	case <-c.done:
	}
}

func (c *conn) frame(version byte, stream int16, op byte, body []byte) []byte {
	return c.frameFlags(version, stream, op, 0, body)
}

// frameFlags is frame with header flags (flagWarning) set.
func (c *conn) frameFlags(version byte, stream int16, op, flags byte, body []byte) []byte {
	if version == 0 {
		version = c.version
	}
	if c.compressor != nil && len(body) > 0 {
		body, flags = c.compressor.compress(body), flags|flagCompression
	}
	return appendFrame(make([]byte, 0, headerSize+len(body)), version, flags, stream, op, body)
}

func (c *conn) sendError(version byte, stream int16, err error, unpreparedID []byte) {
	if version == 0 {
		version = c.version
	}
	var w writer
	w.writeError(err, unpreparedID, version)
	c.send(c.frame(version, stream, opError, w.b))
}

// dispatch handles one request: the handshake in order on the reader,
// statements each in a goroutine of their own.
func (c *conn) dispatch(f frame) error {
	c.requests.Add(1)
	if f.flags&flagCompression != 0 {
		if c.compressor == nil {
			return protocolErrorf(true, "Received a compressed frame, but no compression was negotiated")
		}
		body, err := c.compressor.decompress(f.body, c.srv.opts.MaxFrameSize)
		if err != nil {
			return protocolErrorf(true, "Invalid compressed frame: %v", err)
		}
		f.body = body
	}
	if c.started && f.version != c.version {
		return protocolErrorf(true, "Invalid message version. Got %d/v%d but previous messages on this connection had version %d/v%d",
			f.version, f.version, c.version, c.version)
	}
	switch f.opcode {
	case opOptions:
		if !c.started {
			c.version = f.version // fixed once STARTUP has run
		}
		c.send(c.frame(f.version, f.stream, opSupported, supportedBody()))
		return nil
	case opStartup:
		if c.started {
			return protocolErrorf(false, "Unexpected message STARTUP, the connection is already started")
		}
		r := &reader{b: f.body}
		opts := r.stringMap()
		if r.err != nil {
			return protocolErrorf(true, "Invalid STARTUP message: %v", r.err)
		}
		comp, err := checkStartup(opts)
		if err != nil {
			return err
		}
		if f.version >= 5 && comp != nil && comp.name() != "lz4" {
			// Compression moves into the segments, and only LZ4 is allowed.
			return protocolErrorf(true, "Compression %s is not supported with protocol version %d: only lz4 is", comp.name(), f.version)
		}
		c.version, c.started = f.version, true
		c.throwOnOverload = opts["THROW_ON_OVERLOAD"] == "1"
		c.mu.Lock()
		c.startup, c.stage, c.startedVersion = opts, "ready", f.version
		if c.srv.opts.Authenticator != nil {
			c.stage = "authenticating"
		}
		c.mu.Unlock()
		if auth := c.srv.opts.Authenticator; auth != nil {
			var w writer
			w.string(auth.Class())
			c.send(c.frame(f.version, f.stream, opAuthenticate, w.b))
		} else {
			c.authenticated = true
			c.send(c.frame(f.version, f.stream, opReady, nil))
		}
		if f.version >= 5 {
			c.segmented, c.segmentLZ4 = true, comp != nil
			c.queue(outgoing{startSegments: true, segmentLZ4: c.segmentLZ4})
			return nil
		}
		c.compressor = comp
		return nil
	}
	if !c.started {
		return protocolErrorf(true, "Unexpected message %s, expecting STARTUP or OPTIONS", opName(f.opcode))
	}
	if f.opcode == opAuthResponse {
		if c.authenticated || c.srv.opts.Authenticator == nil {
			return protocolErrorf(false, "Unexpected message AUTH_RESPONSE: the connection is not authenticating")
		}
		r := &reader{b: f.body}
		token := r.bytes()
		if r.err != nil {
			return protocolErrorf(true, "Invalid AUTH_RESPONSE message: %v", r.err)
		}
		user, err := c.srv.opts.Authenticator.Authenticate(token)
		if err != nil {
			c.log().Warn().Str("client", c.nc.RemoteAddr().String()).Str("error", err.Error()).Msg("native: a login was refused")
			return &authError{msg: err.Error()}
		}
		c.mu.Lock()
		c.user, c.stage = user, "ready"
		c.mu.Unlock()
		c.authenticated = true
		var w writer
		w.bytes(nil)
		c.send(c.frame(0, f.stream, opAuthSuccess, w.b))
		return nil
	}
	if !c.authenticated {
		return protocolErrorf(false, "Unexpected message %s, expecting SASL_RESPONSE", opName(f.opcode))
	}
	switch f.opcode {
	case opQuery, opPrepare, opExecute, opBatch:
		held, err := c.srv.admission.admit(c, int64(f.length))
		if err != nil {
			return err
		}
		if !c.srv.beginRequest() {
			c.srv.admission.release(c, held)
			return &exec.Error{Code: exec.Overloaded, Message: "The server is shutting down"}
		}
		c.srv.stage.Queued()
		c.slots <- struct{}{} // at most maxInFlight run at once: the reader waits
		c.inflight.Add(1)
		c.srv.workers.Go(func() {
			defer c.srv.requests.Done()
			defer c.inflight.Done()
			defer func() { <-c.slots }()
			defer c.srv.admission.release(c, held) // its answer is queued by then
			c.srv.stage.Started()
			defer c.srv.stage.Done()
			c.answer(f)
		})
		c.srv.admission.hold(c, held)
		return nil
	case opRegister:
		r := &reader{b: f.body}
		events := r.stringList()
		if r.err != nil {
			return protocolErrorf(false, "Invalid REGISTER message: %v", r.err)
		}
		for _, e := range events {
			switch e {
			case "TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE":
			default:
				return protocolErrorf(false, "Invalid value '%s' for Type", e)
			}
		}
		c.mu.Lock()
		c.registered = append(c.registered, events...)
		c.mu.Unlock()
		c.send(c.frame(0, f.stream, opReady, nil))
		return nil
	}
	return protocolErrorf(false, "Unexpected message %s", opName(f.opcode))
}

func supportedBody() []byte {
	var w writer
	w.stringMultimap([]string{"COMPRESSION", "CQL_VERSION", "PROTOCOL_VERSIONS"}, map[string][]string{
		"CQL_VERSION":       {cqlVersion},
		"COMPRESSION":       {"snappy", "lz4"},
		"PROTOCOL_VERSIONS": {"3/v3", "4/v4", "5/v5"},
	})
	return w.b
}

// checkStartup checks STARTUP's options as Cassandra does, and returns
// the compression asked for (nil for none).
func checkStartup(opts map[string]string) (compressor, error) {
	v, ok := opts["CQL_VERSION"]
	if !ok {
		return nil, protocolErrorf(true, "CQL_VERSION is mandatory")
	}
	if major, _, _ := strings.Cut(v, "."); major < "3" || len(major) != 1 {
		return nil, protocolErrorf(true, "Invalid or unsupported CQL version %s; supported version is %s", v, cqlVersion)
	}
	name, ok := opts["COMPRESSION"]
	if !ok || name == "" {
		return nil, nil
	}
	comp, ok := compressorNamed(name)
	if !ok {
		return nil, protocolErrorf(true, "Unknown compression algorithm: %s", name)
	}
	return comp, nil
}

func (c *conn) registeredFor(event string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.registered, event)
}

// session lends one of the connection's sessions, in its keyspace.
func (c *conn) session() *exec.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s *exec.Session
	if n := len(c.sessions); n > 0 {
		s, c.sessions = c.sessions[n-1], c.sessions[:n-1]
	} else {
		s = c.srv.opts.NewSession()
	}
	s.SetKeyspace(c.keyspace)
	s.SetUser(c.user)
	return s
}

func (c *conn) release(s *exec.Session) {
	c.mu.Lock()
	c.sessions = append(c.sessions, s)
	c.mu.Unlock()
}

// answer runs a QUERY, PREPARE, EXECUTE or BATCH and sends its response.
func (c *conn) answer(f frame) {
	defer func() {
		// A failure in a statement costs that request, not the node.
		if p := recover(); p != nil {
			c.log().Error().Interface("panic", p).Str("stack", string(debug.Stack())).Msg("native: a request failed")
			c.sendError(0, f.stream, fmt.Errorf("internal error: %v", p), nil)
		}
	}()
	r := &reader{b: f.body}
	if f.flags&flagCustomPayload != 0 {
		r.bytesMap() // nothing here reads custom payloads
	}
	s := c.session()
	defer c.release(s)
	requested := f.flags&flagTracing != 0
	var tr *tracing.Trace
	if t := c.srv.opts.Tracer; t != nil && (requested || t.Sampled()) {
		tr = t.New(tracing.StageNative)
		s.SetTrace(tr)
		defer s.SetTrace(nil)
	}
	if timeout := c.srv.opts.SlowQueryTimeout; timeout > 0 {
		start := time.Now()
		defer func() {
			if took := time.Since(start); took > timeout {
				c.logSlow(f, took, tr)
			}
		}()
	}
	w := bodyWriter()
	var err error
	var res *exec.Result
	var unprepared []byte
	switch f.opcode {
	case opQuery:
		res, err = c.query(s, r, &w)
	case opPrepare:
		err = c.prepare(s, r, &w)
	case opExecute:
		res, unprepared, err = c.execute(s, r, &w)
	case opBatch:
		res, unprepared, err = c.batch(s, r, &w)
	}
	tr.End()
	if err != nil {
		// As Cassandra, an error carries no trace id: the trace is still
		// in system_traces.
		c.sendError(0, f.stream, err, unprepared)
		return
	}
	var head writer
	var flags byte
	if requested && tr != nil {
		id := tr.ID()
		head.b, flags = append(head.b, id[:]...), flags|flagTracing
	}
	if res != nil && len(res.Warnings) > 0 && c.version >= 4 {
		// Warnings arrived with version 4; they follow the trace id.
		head.stringList(res.Warnings)
		flags |= flagWarning
	}
	if flags != 0 {
		c.send(c.frameFlags(0, f.stream, opResult, flags, append(head.b, w.b[headerSize:]...)))
		return
	}
	c.send(c.framed(f.stream, opResult, &w))
}

// bodyWriter is a writer for a response body with room for the envelope's
// header in front, so that framed frames the usual answer where it was
// written rather than copying it.
func bodyWriter() writer { return writer{b: make([]byte, headerSize, 256)} }

// framed returns a bodyWriter's bytes framed as a response, in place
// unless the body is compressed.
func (c *conn) framed(stream int16, op byte, w *writer) []byte {
	body := w.b[headerSize:]
	if c.compressor != nil && len(body) > 0 {
		return c.frame(0, stream, op, body)
	}
	putHeader(w.b, c.version, 0, stream, op, len(body))
	return w.b
}

// logSlow logs a request that took longer than slow_query_log_timeout:
// its statement (read again from the request: a slow one can afford it),
// its time and, when it was traced, the trace to read.
func (c *conn) logSlow(f frame, took time.Duration, tr *tracing.Trace) {
	c.srv.slowQueries.Add(1)
	r := &reader{b: f.body}
	if f.flags&flagCustomPayload != 0 {
		r.bytesMap()
	}
	var statement string
	switch f.opcode {
	case opQuery, opPrepare:
		statement = r.longString()
	case opExecute:
		if prep := c.srv.prepared.get(r.shortBytes()); prep != nil {
			statement = prep.Statement.String()
		}
	case opBatch:
		statement = "BATCH"
	}
	ev := c.log().Warn().Str("statement", statement).Dur("took", took).Dur("slow_query_log_timeout", c.srv.opts.SlowQueryTimeout).
		Str("client", c.nc.RemoteAddr().String())
	if tr != nil {
		ev = ev.Str("trace_session", tr.ID().String())
	}
	ev.Msg("native: a slow query")
}

// traceParsing records the parse of a traced request's text; the nil
// check comes first, so that an untraced request does not pay for it.
func traceParsing(tr *tracing.Trace, text string) {
	if tr != nil {
		tr.Event("Parsing " + text)
	}
}

// beginTrace records the session of a traced request: what the client
// sent and its parameters, as Cassandra's messages name them.
func (c *conn) beginTrace(tr *tracing.Trace, what string, p *queryParams, query string) {
	if tr == nil {
		return
	}
	params := map[string]string{}
	if query != "" {
		params["query"] = query
	}
	if p != nil {
		if p.pageSize > 0 {
			params["page_size"] = strconv.Itoa(int(p.pageSize))
		}
		params["consistency_level"] = request.Consistency(p.consistency).String()
		serial := request.Serial
		if p.hasSerial {
			serial = request.Consistency(p.serial)
		}
		params["serial_consistency_level"] = serial.String()
	}
	client := ""
	if addr, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
		client = addr.IP.String()
	}
	tr.Begin(what, client, params)
}

func (c *conn) query(s *exec.Session, r *reader, w *writer) (*exec.Result, error) {
	text := r.longString()
	p := r.queryParams(c.version)
	if r.err != nil {
		return nil, protocolErrorf(false, "Invalid QUERY message: %v", r.err)
	}
	tr := s.Trace()
	c.beginTrace(tr, "Execute CQL3 query", &p, text)
	traceParsing(tr, text)
	st, err := parse(text)
	if err != nil {
		return nil, err
	}
	tr.Event("Preparing statement")
	opts, err := execParams(p, cql.BindMarkers(st), nil)
	if err != nil {
		return nil, err
	}
	if err := checkConsistency(st, opts.Consistency); err != nil {
		return nil, err
	}
	if p.keyspace != "" {
		s.SetKeyspace(p.keyspace)
	}
	res, err := s.Query(st, opts)
	if err != nil {
		return nil, err
	}
	c.after(res)
	w.writeResult(res, c.version, false)
	return res, nil
}

func (c *conn) prepare(s *exec.Session, r *reader, w *writer) error {
	text := r.longString()
	if c.version >= 5 {
		if flags := r.int(); flags&0x01 != 0 {
			s.SetKeyspace(r.string())
		}
	}
	if r.err != nil {
		return protocolErrorf(false, "Invalid PREPARE message: %v", r.err)
	}
	tr := s.Trace()
	c.beginTrace(tr, "Preparing CQL3 query", nil, text)
	traceParsing(tr, text)
	st, err := parse(text)
	if err != nil {
		return err
	}
	tr.Event("Preparing statement")
	p, err := s.Prepare(st)
	if err != nil {
		return err
	}
	id := preparedID(s.Keyspace(), text)
	c.srv.prepared.put(id, p)
	w.prepared(id, p, c.version)
	return nil
}

func (c *conn) execute(s *exec.Session, r *reader, w *writer) (res *exec.Result, unprepared []byte, err error) {
	id := r.shortBytes()
	var metadataID []byte
	if c.version >= 5 {
		metadataID = r.shortBytes()
	}
	p := r.queryParams(c.version)
	if r.err != nil {
		return nil, nil, protocolErrorf(false, "Invalid EXECUTE message: %v", r.err)
	}
	prep := c.srv.prepared.get(id)
	if prep == nil {
		return nil, id, notPrepared(id)
	}
	if tr := s.Trace(); tr != nil { // the statement's text only when traced: it costs a render
		c.beginTrace(tr, "Execute CQL3 prepared query", &p, prep.Statement.String())
	}
	opts, err := execParams(p, nil, prep.Markers)
	if err != nil {
		return nil, nil, err
	}
	if err := checkConsistency(prep.Statement, opts.Consistency); err != nil {
		return nil, nil, err
	}
	res, err = s.ExecutePrepared(prep, opts)
	if err != nil {
		return nil, nil, err
	}
	c.after(res)
	skip := p.flags&qfSkipMetadata != 0
	if exec.IsConditional(prep.Statement) {
		// A conditional write's columns depend on whether it applied:
		// they always come with it, and it stays prepared (Cassandra's
		// CASSANDRA-13992).
		w.writeResult(res, c.version, false)
		return res, nil, nil
	}
	if c.version < 5 && res.Kind == exec.RowsResult && !sameColumns(res.Columns, prep.Columns) {
		// The table changed since the statement was prepared: before v5 a
		// client would decode the rows with the old columns. Cassandra
		// drops such statements; the client prepares it again.
		c.srv.prepared.drop(id)
		return nil, id, fmt.Errorf("Prepared query with ID %x is out of date: its table changed since it was prepared", id)
	}
	if c.version >= 5 && res.Kind == exec.RowsResult {
		// The client decodes rows with the columns of the metadata id it
		// sent: if the columns have changed since, it gets them again.
		if current := resultMetadataID(res.Columns); !bytes.Equal(current, metadataID) {
			w.int(resultRows)
			w.rowsMetadataChanged(res.Columns, res.PagingState, current, c.version)
			w.rows(res.Rows)
			return res, nil, nil
		}
	}
	w.writeResult(res, c.version, skip)
	return res, nil, nil
}

// notPrepared is the Unprepared error's message, as Cassandra words it,
// for an id the server does not hold.
func notPrepared(id []byte) error {
	return fmt.Errorf("Prepared query with ID %x not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", id)
}

// batchKinds are the BATCH message's type bytes.
var batchKinds = [...]cql.BatchKind{0: cql.LoggedBatch, 1: cql.UnloggedBatch, 2: cql.CounterBatch}

func (c *conn) batch(s *exec.Session, r *reader, w *writer) (res *exec.Result, unprepared []byte, err error) {
	b := r.batch(c.version)
	if r.err != nil {
		return nil, nil, protocolErrorf(false, "Invalid BATCH message: %v", r.err)
	}
	if int(b.kind) >= len(batchKinds) {
		return nil, nil, protocolErrorf(false, "Invalid BATCH message: unknown batch type %d", b.kind)
	}
	c.beginTrace(s.Trace(), "Execute batch of CQL3 queries", &b.params, "")
	if b.params.keyspace != "" {
		s.SetKeyspace(b.params.keyspace)
	}
	stmts := make([]exec.BatchStatement, len(b.entries))
	for i, e := range b.entries {
		bs := exec.BatchStatement{Keyspace: s.Keyspace(), Values: e.values, Unset: e.unset}
		if e.id != nil {
			prep := c.srv.prepared.get(e.id)
			if prep == nil {
				return nil, e.id, notPrepared(e.id)
			}
			bs.Statement, bs.Keyspace = prep.Statement, prep.Keyspace
		} else {
			st, err := parse(e.query)
			if err != nil {
				return nil, nil, err
			}
			bs.Statement = st
		}
		switch bs.Statement.(type) {
		case *cql.Insert, *cql.Update, *cql.Delete:
		default:
			return nil, nil, &exec.Error{Code: exec.Invalid, Message: "Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed."}
		}
		stmts[i] = bs
	}
	opts, err := execParams(b.params, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	res, err = s.RunBatch(batchKinds[b.kind], stmts, opts)
	if err != nil {
		return nil, nil, err
	}
	w.writeResult(res, c.version, false)
	return res, nil, nil
}

// after applies what a result means for the connection and the server:
// USE changes the connection's keyspace; a schema change reaches every
// connection registered for SCHEMA_CHANGE.
func (c *conn) after(res *exec.Result) {
	switch {
	case res.Kind == exec.SetKeyspaceResult:
		c.mu.Lock()
		c.keyspace = res.Keyspace
		c.mu.Unlock()
	case res.Kind == exec.SchemaChangeResult && res.Change != nil:
		c.srv.SchemaEvent(res.Change)
	}
}

// checkConsistency refuses a level a statement cannot run at, as
// Cassandra does: ANY is for writes (the levels of writes, which depend on
// their tables, exec checks).
func checkConsistency(st cql.Statement, cl request.Consistency) error {
	if _, ok := st.(*cql.Select); ok && cl == request.Any {
		return &exec.Error{Code: exec.Invalid, Message: "ANY ConsistencyLevel is only supported for writes"}
	}
	return nil
}

// execParams turns the protocol's query parameters into the executor's.
// Named values are put in marker order: by the names of the markers of the
// statement (markers) or of the prepared one (specs).
func execParams(p queryParams, markers []*cql.BindMarker, specs []exec.ColumnSpec) (exec.QueryParams, error) {
	opts := exec.QueryParams{Values: p.values, Unset: p.unset, PageSize: int(p.pageSize), PagingState: p.pagingState,
		Consistency: request.Consistency(p.consistency)}
	if !opts.Consistency.Valid() {
		return opts, protocolErrorf(false, "Unknown code %d for a consistency level", p.consistency)
	}
	if p.hasTimestamp {
		ts := p.timestamp
		opts.DefaultTimestamp = &ts
	}
	if p.hasSerial {
		serial := request.Consistency(p.serial)
		if !serial.Valid() {
			return opts, protocolErrorf(false, "Unknown code %d for a consistency level", p.serial)
		}
		opts.SerialConsistency = &serial
	}
	if p.names == nil {
		return opts, nil
	}
	var names []string
	if specs != nil {
		for _, s := range specs {
			names = append(names, s.Name)
		}
	} else {
		for _, m := range markers {
			names = append(names, m.Name)
		}
	}
	opts.Values, opts.Unset = make([][]byte, len(names)), make([]bool, len(names))
	for i, name := range names {
		j := slices.Index(p.names, name)
		if j < 0 {
			return opts, &exec.Error{Code: exec.Invalid, Message: fmt.Sprintf("Invalid set of values: no value for %s", name)}
		}
		opts.Values[i], opts.Unset[i] = p.values[j], p.unset[j]
	}
	return opts, nil
}

// parse parses one statement; a syntax error is a CQL SyntaxError.
func parse(text string) (cql.Statement, error) {
	st, err := cql.Parse(text)
	var se *cql.SyntaxError
	if errors.As(err, &se) {
		return nil, &exec.Error{Code: exec.SyntaxError, Message: se.Error()}
	}
	return st, err
}
