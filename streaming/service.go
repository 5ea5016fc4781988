package streaming

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/storage"
	"golang.org/x/time/rate"
)

// Network is the messaging a Service sends over.
type Network interface {
	Request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error)
}

// Tables is the local engine's tables.
type Tables interface {
	Table(id mutation.TableID) (*storage.Table, error)
}

// Options configure a Service.
type Options struct {
	Network     Network
	Tables      Tables
	Partitioner partitioner.Partitioner
	// Throughput is stream_throughput_outbound in bytes a second, over
	// every session this node sends; 0 for no bound. It bounds the
	// sections sent as entries.
	Throughput int64
	// EntireSSTableThroughput is entire_sstable_stream_throughput_outbound:
	// the same for the sections whose SSTable files go as they are.
	EntireSSTableThroughput int64
	// ChunkSize is the most bytes one STREAM_CHUNK answer carries.
	ChunkSize int
	// IdleTimeout drops a sending session no chunk was asked of for this
	// long (its receiver is gone), letting its SSTables go.
	IdleTimeout time.Duration
	// RequestTimeout bounds one request; Tries is how often a request is
	// tried before the session fails, the first retry after Backoff and
	// each later one after twice the wait before.
	RequestTimeout time.Duration
	Tries          int
	Backoff        time.Duration
	Now            func() time.Time
}

// DefaultThroughput is stream_throughput_outbound's default: 24 MiB/s.
const DefaultThroughput = 24 << 20

// EnsureDefaults fills in what was left out.
func (o *Options) EnsureDefaults() {
	if o.ChunkSize == 0 {
		o.ChunkSize = 1 << 20
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = time.Minute
	}
	if o.Tries == 0 {
		o.Tries = 8
	}
	if o.Backoff == 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate refuses options a Service cannot run with.
func (o *Options) Validate() error {
	switch {
	case o.Network == nil:
		return errors.New("streaming: no Network")
	case o.Tables == nil:
		return errors.New("streaming: no Tables")
	case o.Partitioner == nil:
		return errors.New("streaming: no Partitioner")
	case o.Throughput < 0:
		return fmt.Errorf("streaming: throughput %d is negative", o.Throughput)
	case o.EntireSSTableThroughput < 0:
		return fmt.Errorf("streaming: entire SSTable throughput %d is negative", o.EntireSSTableThroughput)
	case o.ChunkSize < 0 || o.ChunkSize > messaging.MaxPayload/2:
		return fmt.Errorf("streaming: chunk size %d is not between 1 and %d", o.ChunkSize, messaging.MaxPayload/2)
	case o.Tries < 0:
		return fmt.Errorf("streaming: %d tries", o.Tries)
	}
	return nil
}

// Service sends and receives sessions.
type Service struct {
	opts Options
	// entries and whole bound the bytes sent of entries sections and of
	// whole ones, as Cassandra bounds its two kinds of streaming apart.
	entries, whole *rate.Limiter
	nextID         atomic.Uint64
	mu             sync.Mutex
	sending        map[string]*sendingSession // by peer and session id
	recving        map[string]*Progress       // the receiving sessions under way
	// life ends at Close: the pulls another node asked for stop with it.
	life context.Context
	end  context.CancelFunc
	// IncomingBytes and OutgoingBytes count the data streamed in and out
	// since the start (Cassandra's Streaming TotalIncomingBytes and
	// TotalOutgoingBytes).
	IncomingBytes, OutgoingBytes atomic.Int64
}

// New makes a Service; its Handlers go on the node's messaging.
func New(opts Options) (*Service, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Service{opts: opts, sending: map[string]*sendingSession{}, recving: map[string]*Progress{}}
	s.life, s.end = context.WithCancel(context.Background())
	s.entries = rate.NewLimiter(rate.Inf, opts.ChunkSize)
	s.whole = rate.NewLimiter(rate.Inf, opts.ChunkSize)
	s.SetThroughput(opts.Throughput)
	s.SetEntireSSTableThroughput(opts.EntireSSTableThroughput)
	return s, nil
}

// SetThroughput changes stream_throughput_outbound (bytes a second, 0 for
// no bound) while the node runs.
func (s *Service) SetThroughput(bps int64) { setLimit(s.entries, bps) }

// SetEntireSSTableThroughput changes
// entire_sstable_stream_throughput_outbound likewise.
func (s *Service) SetEntireSSTableThroughput(bps int64) { setLimit(s.whole, bps) }

func setLimit(l *rate.Limiter, bps int64) {
	if bps <= 0 {
		l.SetLimit(rate.Inf)
		return
	}
	l.SetLimit(rate.Limit(bps))
}

// Handlers are the verbs a source answers, and STREAM_PULL, which a
// receiver answers.
func (s *Service) Handlers() map[messaging.Verb]messaging.Handler {
	return map[messaging.Verb]messaging.Handler{
		messaging.VerbStreamPrepare:  s.prepare,
		messaging.VerbStreamChunk:    s.chunk,
		messaging.VerbStreamComplete: s.complete,
		messaging.VerbStreamPull:     s.pull,
	}
}

// pull fetches what another node asked this one to, and answers when the
// session is over.
func (s *Service) pull(_ context.Context, _ string, payload []byte) ([]byte, error) {
	req, err := decodePull(payload)
	if err != nil {
		return nil, err
	}
	res, err := s.Fetch(s.life, req.operation, req.source, req.tables)
	if err != nil {
		return nil, err
	}
	return res.encode(), nil
}

// Progress is one session as nodetool netstats shows it.
type Progress struct {
	Operation string `json:"operation"`
	// Session is the session's id, which its receiver chose.
	Session   string `json:"session"`
	Peer      string `json:"peer"`
	Receiving bool   `json:"receiving"`
	Sections  int    `json:"sections"`
	Done      int    `json:"sections_done"`
	// Bytes is the data the sections hold: exact for whole SSTables, the
	// size of the SSTables that were cut for the others (at least what
	// they send); BytesDone is what went.
	Bytes     int64 `json:"bytes"`
	BytesDone int64 `json:"bytes_done"`
}

// Sessions are the sessions under way, sending and receiving.
func (s *Service) Sessions() []Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Progress{}
	for _, p := range s.recving {
		out = append(out, *p)
	}
	for _, ss := range s.sending {
		ss.mu.Lock()
		out = append(out, ss.progress)
		ss.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out
}

// sendingSession is a session this node is the source of.
type sendingSession struct {
	mu       sync.Mutex
	outs     []*storage.Outgoing
	sections []*sendingSection
	lastUsed time.Time
	progress Progress
}

// sendingSection serves one section's bytes.
type sendingSection struct {
	sec  *storage.OutgoingSection
	data storage.SectionData // a whole section's Data file, once opened
	// An entries section is encoded as it is asked for: produced is the
	// bytes handed out so far, pending what is encoded and not yet.
	next     func() (*mutation.Entry, bool)
	stop     func()
	err      error
	drained  bool
	produced int64
	pending  []byte
	// last is the chunk handed out last, sent again if its answer was lost.
	last      chunk
	haveLast  bool
	delivered bool // its last chunk was handed out
}

func sessionKey(peer string, id uint64) string { return fmt.Sprintf("%s/%d", peer, id) }

func (s *Service) prepare(_ context.Context, from string, payload []byte) ([]byte, error) {
	s.Reap()
	req, err := decodePrepare(payload)
	if err != nil {
		return nil, err
	}
	ss := &sendingSession{lastUsed: s.opts.Now(), progress: Progress{Operation: req.operation, Session: strconv.FormatUint(req.session, 10), Peer: from}}
	var infos []sectionInfo
	for _, ts := range req.tables {
		t, err := s.opts.Tables.Table(ts.Table)
		if err != nil {
			ss.release()
			return nil, err
		}
		out, err := t.StreamOut(ts.Spans)
		if err != nil {
			ss.release()
			return nil, err
		}
		ss.outs = append(ss.outs, out)
		for _, sec := range out.Sections {
			info := sectionInfo{table: ts.Table, whole: sec.Whole(), size: sec.Size()}
			if sec.Whole() {
				info.meta = sec.Metadata()
				if info.filter, err = sec.Filter(); err != nil {
					ss.release()
					return nil, err
				}
			}
			infos = append(infos, info)
			ss.sections = append(ss.sections, &sendingSection{sec: sec})
			ss.progress.Sections++
			ss.progress.Bytes += sec.Size()
		}
	}
	body, err := encodeSections(infos)
	if err != nil {
		ss.release()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.life.Err() != nil {
		// Close has released the sessions it found: one made after it
		// would hold the tables' files past the engine's close.
		ss.release()
		return nil, errClosed
	}
	key := sessionKey(from, req.session)
	if old := s.sending[key]; old != nil {
		old.release()
	}
	s.sending[key] = ss
	return body, nil
}

func (s *Service) chunk(_ context.Context, from string, payload []byte) ([]byte, error) {
	req, err := decodeChunkRequest(payload)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	ss := s.sending[sessionKey(from, req.session)]
	s.mu.Unlock()
	if ss == nil {
		return nil, fmt.Errorf("streaming: no session %d of %s here (it ended, or this node restarted)", req.session, from)
	}
	ss.mu.Lock()
	if req.section >= len(ss.sections) {
		ss.mu.Unlock()
		return nil, fmt.Errorf("streaming: session %d has %d sections, not %d", req.session, len(ss.sections), req.section+1)
	}
	sec := ss.sections[req.section]
	c, err := sec.read(req.offset, s.opts.ChunkSize)
	ss.lastUsed = s.opts.Now()
	if err == nil {
		ss.progress.BytesDone += int64(len(c.data))
		s.OutgoingBytes.Add(int64(len(c.data)))
		if c.last && !sec.delivered {
			sec.delivered = true
			ss.progress.Done++
		}
	}
	ss.mu.Unlock()
	if err != nil {
		return nil, err
	}
	limiter := s.entries
	if sec.sec.Whole() {
		limiter = s.whole
	}
	if err := limiter.WaitN(context.Background(), max(len(c.data), 1)); err != nil {
		return nil, err
	}
	return c.encode(), nil
}

func (s *Service) complete(_ context.Context, from string, payload []byte) ([]byte, error) {
	req, err := decodeChunkRequest(payload)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	key := sessionKey(from, req.session)
	ss := s.sending[key]
	delete(s.sending, key)
	s.mu.Unlock()
	if ss != nil {
		ss.release()
	}
	return nil, nil
}

// Reap drops the sending sessions idle for IdleTimeout.
func (s *Service) Reap() {
	now := s.opts.Now()
	s.mu.Lock()
	var idle []*sendingSession
	for k, ss := range s.sending {
		ss.mu.Lock()
		if now.Sub(ss.lastUsed) >= s.opts.IdleTimeout {
			idle = append(idle, ss)
			delete(s.sending, k)
		}
		ss.mu.Unlock()
	}
	s.mu.Unlock()
	for _, ss := range idle {
		ss.release()
	}
}

// Close drops every sending session and ends the pulls under way.
func (s *Service) Close() {
	s.mu.Lock()
	s.end()
	all := s.sending
	s.sending = map[string]*sendingSession{}
	s.mu.Unlock()
	for _, ss := range all {
		ss.release()
	}
}

func (ss *sendingSession) release() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, sec := range ss.sections {
		sec.close()
	}
	for _, o := range ss.outs {
		o.Release()
	}
	ss.sections, ss.outs = nil, nil
}

func (sec *sendingSection) close() {
	if sec.data != nil {
		sec.data.Close()
		sec.data = nil
	}
	if sec.stop != nil {
		sec.stop()
		sec.next, sec.stop = nil, nil
	}
}

// read is the chunk of the section's bytes at offset.
func (sec *sendingSection) read(offset int64, size int) (chunk, error) {
	if sec.haveLast && offset == sec.last.offset {
		return sec.last, nil // its answer was lost
	}
	var c chunk
	var err error
	if sec.sec.Whole() {
		c, err = sec.readWhole(offset, size)
	} else {
		c, err = sec.readEntries(offset, size)
	}
	if err != nil {
		return chunk{}, err
	}
	sec.last, sec.haveLast = c, true
	return c, nil
}

func (sec *sendingSection) readWhole(offset int64, size int) (chunk, error) {
	total := sec.sec.Size()
	if offset > total {
		return chunk{}, fmt.Errorf("streaming: offset %d is past the section's %d bytes", offset, total)
	}
	if sec.data == nil {
		f, err := sec.sec.OpenData()
		if err != nil {
			return chunk{}, err
		}
		sec.data = f
	}
	buf := make([]byte, min(int64(size), total-offset))
	if _, err := sec.data.ReadAt(buf, offset); err != nil {
		return chunk{}, err
	}
	return chunk{offset: offset, data: buf, last: offset+int64(len(buf)) == total}, nil
}

// errClosed answers a session asked for once the service has closed.
var errClosed = errors.New("streaming: the node is shutting down")

// errStopped ends an entries section's iteration early.
var errStopped = errors.New("streaming: stopped")

func (sec *sendingSection) restart() {
	sec.close()
	seq := func(yield func(*mutation.Entry) bool) {
		err := sec.sec.Entries(func(e *mutation.Entry) error {
			if !yield(e) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			sec.err = err
		}
	}
	var next iter.Seq[*mutation.Entry] = seq
	sec.next, sec.stop = iter.Pull(next)
	sec.err, sec.drained, sec.produced, sec.pending = nil, false, 0, nil
}

// fill encodes entries until pending holds n bytes or the section ends.
func (sec *sendingSection) fill(n int) error {
	for !sec.drained && len(sec.pending) < n {
		e, ok := sec.next()
		if !ok {
			sec.drained = true
			break
		}
		sec.pending = appendEntry(sec.pending, e)
	}
	return sec.err
}

func (sec *sendingSection) readEntries(offset int64, size int) (chunk, error) {
	if sec.next == nil || offset != sec.produced {
		// A receiver that lost more than the last chunk starts over
		// from where it has the section: the entries are encoded again
		// up to there.
		sec.restart()
		for sec.produced < offset {
			if err := sec.fill(size); err != nil {
				return chunk{}, err
			}
			skip := min(int64(len(sec.pending)), offset-sec.produced)
			if skip == 0 {
				return chunk{}, fmt.Errorf("streaming: offset %d is past the section's %d bytes", offset, sec.produced)
			}
			sec.pending = sec.pending[skip:]
			sec.produced += skip
		}
	}
	if err := sec.fill(size); err != nil {
		return chunk{}, err
	}
	n := min(len(sec.pending), size)
	data := append([]byte(nil), sec.pending[:n]...)
	sec.pending = sec.pending[n:]
	sec.produced += int64(n)
	return chunk{offset: offset, data: data, last: sec.drained && len(sec.pending) == 0}, nil
}
