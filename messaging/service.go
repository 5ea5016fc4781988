package messaging

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/internal/workers"
)

// Handler answers a request (or takes a one-way message) from a peer. An
// error goes back to the requester as a RemoteError. ctx carries the
// request's trace session, if it is traced (TraceOf).
type Handler func(ctx context.Context, from string, payload []byte) ([]byte, error)

type traceKey struct{}

// WithTrace makes the requests sent with the returned context part of
// trace session id: the peers that answer them record what they do there.
func WithTrace(ctx context.Context, id [16]byte) context.Context {
	return context.WithValue(ctx, traceKey{}, &id)
}

// TraceOf is the trace session a context carries (WithTrace, or a
// handler's for a traced request), or nil.
func TraceOf(ctx context.Context) *[16]byte {
	id, _ := ctx.Value(traceKey{}).(*[16]byte)
	return id
}

// ErrTimeout is a request that had no answer before its context ended.
var ErrTimeout = errors.New("messaging: timed out")

// ErrClosed is a request made on, or cut short by, a closed Service.
var ErrClosed = errors.New("messaging: closed")

// RemoteError is a handler's failure on the peer.
type RemoteError struct {
	Peer    string
	Verb    Verb
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("messaging: %s on %s failed: %s", e.Verb, e.Peer, e.Message)
}

// Options configure a Service.
type Options struct {
	// Name is this node's address; peers are named by theirs.
	Name string
	// Port is storage_port, the same on every node; 0 picks a free one
	// (a test's single node).
	Port int
	// Transport carries the frames; default TCP.
	Transport Transport
	// RedialAfter is how long a peer whose dial failed is not dialled
	// again: requests to it fail at once meanwhile. Default 100ms.
	RedialAfter time.Duration
	// Expiry, when set, says how long a message of a verb may wait for
	// its handler before it is dropped unanswered (its sender has given
	// up on it by then: Cassandra's dropped messages); 0 is never.
	Expiry func(Verb) time.Duration
	Logger *zerolog.Logger
}

// EnsureDefaults fills in what was left out.
func (o *Options) EnsureDefaults() {
	if o.Transport == nil {
		o.Transport = TCP{}
	}
	if o.RedialAfter == 0 {
		o.RedialAfter = 100 * time.Millisecond
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
}

// Validate refuses options a Service cannot start with.
func (o *Options) Validate() error {
	if net.ParseIP(o.Name) == nil {
		return fmt.Errorf("messaging: the node's name %q is not an IP address", o.Name)
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("messaging: port %d is out of range", o.Port)
	}
	return nil
}

// Service is one node's end of internode messaging.
type Service struct {
	opts Options
	ln   Listener
	port int

	handlersMu sync.RWMutex
	handlers   map[Verb]Handler

	mu      sync.Mutex
	peers   map[string]*outbound // by peer name
	inbound map[Conn]bool
	pending map[uint64]waiting // requests sent, by id
	closed  bool
	done    chan struct{} // closed by Close: requests waiting give up
	nextID  atomic.Uint64
	wg      sync.WaitGroup
	workers *workers.Pool // requests from peers run on reused goroutines
	// waits are, by verb, how long the messages from peers waited between
	// their arrival and their handler's start (microseconds).
	waits [maxVerb + 1]*histogram.Histogram
	// dropped counts, by verb, the messages that waited past their expiry.
	dropped [maxVerb + 1]atomic.Int64
}

// maxVerb is the highest verb number.
const maxVerb = VerbRepairPaxos

// QueueWait is how long messages of verb v waited for their handler, or
// nil for no such verb.
func (s *Service) QueueWait(v Verb) *histogram.Histogram {
	if v > maxVerb {
		return nil
	}
	return s.waits[v]
}

// Dropped is how many messages of verb v waited past their expiry and
// were dropped unanswered.
func (s *Service) Dropped(v Verb) int64 {
	if v > maxVerb {
		return 0
	}
	return s.dropped[v].Load()
}

// expired reports whether a message of verb v that waited this long is
// to be dropped, and counts it if so.
func (s *Service) expired(v Verb, waited time.Duration) bool {
	if s.opts.Expiry == nil || v > maxVerb {
		return false
	}
	if limit := s.opts.Expiry(v); limit > 0 && waited > limit {
		s.dropped[v].Add(1)
		return true
	}
	return false
}

// waiting is a request sent and not yet answered: the answer comes back
// on the connection it went out on, or never, once that one has ended.
type waiting struct {
	answer chan Frame // buffered: one answer, or a lost connection
	conn   Conn
}

// kindLost is no frame's kind on the wire: it tells a waiting request
// that its connection ended before the answer came.
const kindLost Kind = 0xff

// outbound is the connection this node dialled to a peer; nil conn with
// failedAt set is a dial that failed.
type outbound struct {
	// dialling is held (a token in it) by the one request dialling the
	// peer; the others wait for it, or for their own context to end.
	dialling chan struct{}
	mu       sync.Mutex // the fields below; never held while dialling
	conn     Conn
	failedAt time.Time
	dialErr  error
	// redials counts Redial's calls: a dial that began before the last
	// one does not record its failure.
	redials uint64
}

// Start listens on Name:Port and serves the peers that connect.
func Start(opts Options) (*Service, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	ln, err := opts.Transport.Listen(opts.Name, net.JoinHostPort(opts.Name, strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("messaging: cannot listen on %s: %w", net.JoinHostPort(opts.Name, strconv.Itoa(opts.Port)), err)
	}
	s := &Service{opts: opts, ln: ln, port: ln.Port(), handlers: map[Verb]Handler{}, peers: map[string]*outbound{},
		inbound: map[Conn]bool{}, pending: map[uint64]waiting{}, done: make(chan struct{}),
		workers: workers.New(workers.IdleTimeout)}
	for v := range s.waits {
		s.waits[v] = histogram.New(int64(time.Hour / time.Microsecond))
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Port is the port the service listens on.
func (s *Service) Port() int { return s.port }

// Handle sets the handler of a verb.
func (s *Service) Handle(v Verb, h Handler) {
	s.handlersMu.Lock()
	defer s.handlersMu.Unlock()
	s.handlers[v] = h
}

// Request sends a request to a peer and waits for its answer, until ctx
// ends (ErrTimeout). A request whose connection ends before the answer
// comes (the peer's process died, and its system closed the connection)
// fails at once: the answer can no longer come. A request to this node
// itself runs its handler here.
func (s *Service) Request(ctx context.Context, to string, v Verb, payload []byte) ([]byte, error) {
	if to == s.opts.Name {
		return s.local(ctx, v, payload)
	}
	c, err := s.conn(ctx, to)
	if err != nil {
		return nil, err
	}
	id := s.nextID.Add(1)
	w := waiting{answer: make(chan Frame, 1), conn: c}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.pending[id] = w
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	if err := s.sendOn(to, c, Frame{ID: id, Verb: v, Kind: KindRequest, Trace: TraceOf(ctx), Payload: payload}); err != nil {
		return nil, err
	}
	select {
	case f := <-w.answer:
		switch f.Kind {
		case KindFailure:
			return nil, &RemoteError{Peer: to, Verb: v, Message: string(f.Payload)}
		case kindLost:
			return nil, fmt.Errorf("messaging: %s unreachable: the connection ended with %s in flight", to, v)
		}
		return f.Payload, nil
	case <-s.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %s to %s: %v", ErrTimeout, v, to, ctx.Err())
	}
}

// connectionLost tells the requests waiting on c that it has ended.
func (s *Service) connectionLost(c Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.pending {
		if w.conn == c {
			select {
			case w.answer <- Frame{Kind: kindLost}:
			default: // its answer is in
			}
		}
	}
}

// Send sends a one-way message.
func (s *Service) Send(ctx context.Context, to string, v Verb, payload []byte) error {
	if to == s.opts.Name {
		_, err := s.local(ctx, v, payload)
		return err
	}
	return s.send(ctx, to, Frame{ID: s.nextID.Add(1), Verb: v, Kind: KindOneWay, Trace: TraceOf(ctx), Payload: payload})
}

func (s *Service) local(ctx context.Context, v Verb, payload []byte) ([]byte, error) {
	h := s.handler(v)
	if h == nil {
		return nil, &RemoteError{Peer: s.opts.Name, Verb: v, Message: "no handler"}
	}
	return h(ctx, s.opts.Name, payload)
}

func (s *Service) handler(v Verb) Handler {
	s.handlersMu.RLock()
	defer s.handlersMu.RUnlock()
	return s.handlers[v]
}

// send writes a frame on the connection to a peer, dialling it first if
// need be. A failed write closes the connection; the next send dials
// again.
func (s *Service) send(ctx context.Context, to string, f Frame) error {
	c, err := s.conn(ctx, to)
	if err != nil {
		return err
	}
	return s.sendOn(to, c, f)
}

// sendOn writes a frame on c, the connection to a peer; a failed write
// closes it.
func (s *Service) sendOn(to string, c Conn, f Frame) error {
	if err := c.Send(f); err != nil {
		s.drop(to, c)
		return fmt.Errorf("messaging: sending %s to %s: %w", f.Verb, to, err)
	}
	return nil
}

// conn is the connection to a peer, dialled if there is none, unless a
// dial failed a moment ago.
func (s *Service) conn(ctx context.Context, to string) (Conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	o := s.peers[to]
	if o == nil {
		o = &outbound{dialling: make(chan struct{}, 1)}
		s.peers[to] = o
	}
	s.mu.Unlock()
	if c, known, err := o.current(to, s.opts.RedialAfter); known {
		return c, err
	}
	select {
	case o.dialling <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting to dial %s: %v", ErrTimeout, to, ctx.Err())
	}
	defer func() { <-o.dialling }()
	if c, known, err := o.current(to, s.opts.RedialAfter); known {
		return c, err // another request dialled meanwhile
	}
	o.mu.Lock()
	redials := o.redials
	o.mu.Unlock()
	c, err := s.opts.Transport.Dial(ctx, s.opts.Name, net.JoinHostPort(to, strconv.Itoa(s.port)))
	if err != nil {
		o.mu.Lock()
		if o.redials == redials {
			o.failedAt, o.dialErr = time.Now(), err
		}
		o.mu.Unlock()
		if ctx.Err() != nil {
			// The request's time ran out while dialling (a peer behind a
			// partition answers nothing): a timeout, as for a request sent.
			return nil, fmt.Errorf("%w: dialling %s: %v", ErrTimeout, to, err)
		}
		return nil, fmt.Errorf("messaging: %s unreachable: %w", to, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return nil, ErrClosed
	}
	s.mu.Unlock()
	o.mu.Lock()
	o.conn, o.failedAt = c, time.Time{}
	o.mu.Unlock()
	s.wg.Add(1)
	go s.serve(c, func() { s.drop(to, c) })
	return c, nil
}

// current is the peer's connection, or the error of a dial that failed
// within redialAfter; known is false when a dial is due.
func (o *outbound) current(to string, redialAfter time.Duration) (c Conn, known bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.conn != nil {
		return o.conn, true, nil
	}
	if !o.failedAt.IsZero() && time.Since(o.failedAt) < redialAfter {
		return nil, true, fmt.Errorf("messaging: %s unreachable: %w", to, o.dialErr)
	}
	return nil, false, nil
}

// Redial forgets a failed dial to a peer (and the failure of one under
// way), so that the next request dials it at once rather than fail with
// that dial's error until RedialAfter passed: for a peer the failure
// detector sees come up again, whose listener may have come up just after
// the dial.
func (s *Service) Redial(to string) {
	s.mu.Lock()
	o := s.peers[to]
	s.mu.Unlock()
	if o == nil {
		return
	}
	o.mu.Lock()
	o.failedAt = time.Time{}
	o.redials++
	o.mu.Unlock()
}

// drop forgets a peer's connection (if it is still c) and closes it.
func (s *Service) drop(to string, c Conn) {
	s.mu.Lock()
	o := s.peers[to]
	s.mu.Unlock()
	if o != nil {
		o.mu.Lock()
		if o.conn == c {
			o.conn = nil
		}
		o.mu.Unlock()
	}
	c.Close()
}

func (s *Service) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.inbound[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c, func() {
			s.mu.Lock()
			delete(s.inbound, c)
			s.mu.Unlock()
			c.Close()
		})
	}
}

// serve reads a connection's frames until it fails: requests and one-way
// messages go to their handlers, answers to the requests waiting for them.
func (s *Service) serve(c Conn, done func()) {
	defer s.wg.Done()
	defer done()
	defer s.connectionLost(c)
	for {
		f, err := c.Recv()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.opts.Logger.Debug().Err(err).Str("peer", c.Peer()).Msg("messaging: connection ended")
			}
			return
		}
		switch f.Kind {
		case KindRequest, KindOneWay:
			s.wg.Add(1)
			arrived := time.Now()
			s.workers.Go(func() {
				waited := time.Since(arrived)
				if w := s.QueueWait(f.Verb); w != nil {
					w.Record(waited.Microseconds())
				}
				if s.expired(f.Verb, waited) {
					s.wg.Done() // what run would have done
					return
				}
				s.run(c, f)
			})
		case KindResponse, KindFailure:
			s.mu.Lock()
			if w, ok := s.pending[f.ID]; ok {
				select {
				case w.answer <- f: // buffered: one answer per request
				default:
				}
			}
			s.mu.Unlock()
		}
	}
}

// run answers one request (or takes a one-way message).
func (s *Service) run(c Conn, f Frame) {
	defer s.wg.Done()
	h := s.handler(f.Verb)
	var out []byte
	var err error
	if h == nil {
		err = fmt.Errorf("no handler for %s", f.Verb)
	} else {
		ctx := context.Background()
		if f.Trace != nil {
			ctx = WithTrace(ctx, *f.Trace)
		}
		out, err = h(ctx, c.Peer(), f.Payload)
	}
	if f.Kind == KindOneWay {
		return
	}
	answer := Frame{ID: f.ID, Verb: f.Verb, Kind: KindResponse, Payload: out}
	if err != nil {
		answer.Kind, answer.Payload = KindFailure, []byte(err.Error())
	}
	if err := c.Send(answer); err != nil {
		s.opts.Logger.Debug().Err(err).Str("peer", c.Peer()).Msg("messaging: an answer was lost")
	}
}

// Close stops listening, closes every connection (requests waiting fail)
// and waits for the handlers running.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var conns []Conn
	for c := range s.inbound {
		conns = append(conns, c)
	}
	peers := s.peers
	close(s.done)
	s.mu.Unlock()
	err := s.ln.Close()
	for _, o := range peers {
		o.mu.Lock()
		if o.conn != nil {
			conns = append(conns, o.conn)
		}
		o.mu.Unlock()
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	return err
}
