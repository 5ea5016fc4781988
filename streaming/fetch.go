package streaming

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/storage"
)

// Result is what a Fetch received.
type Result struct {
	Sections, Whole int   // sections received, and how many of them whole
	Bytes           int64 // their bytes
}

// Fetch pulls the spans of tables from the node at from into the local
// tables, as one session named operation in Sessions. A request that
// fails is tried again (Options.Tries), from the offset it asked for, so
// a dropped connection costs the chunk it dropped; a failure that lasts
// ends the session with what was received so far kept (data received
// twice is the same data).
func (s *Service) Fetch(ctx context.Context, operation, from string, tables []TableSpans) (Result, error) {
	id := uint64(s.opts.Now().UnixNano()) + s.nextID.Add(1)
	spans := map[mutation.TableID][]storage.KeySpan{}
	for _, t := range tables {
		spans[t.Table] = t.Spans
	}
	prog := &Progress{Operation: operation, Session: strconv.FormatUint(id, 10), Peer: from, Receiving: true}
	var res Result
	answer, err := s.request(ctx, from, messaging.VerbStreamPrepare, prepareRequest{session: id, operation: operation, tables: tables}.encode())
	if err != nil {
		return res, fmt.Errorf("streaming: preparing a session with %s: %w", from, err)
	}
	s.mu.Lock()
	s.recving[sessionKey(from, id)] = prog
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.recving, sessionKey(from, id))
		s.mu.Unlock()
		// The source lets the session's SSTables go; if this is lost,
		// its idle timeout does.
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
		defer cancel()
		_, _ = s.opts.Network.Request(ctx, from, messaging.VerbStreamComplete, chunkRequest{session: id}.encode())
	}()
	secs, err := decodeSections(answer)
	if err != nil {
		return res, err
	}
	for _, sec := range secs {
		if _, ok := spans[sec.table]; !ok {
			return res, fmt.Errorf("streaming: %s offers a section of table %s, which was not asked for", from, sec.table)
		}
		prog.Sections++
		prog.Bytes += sec.size
	}
	pull := &puller{s: s, ctx: ctx, from: from, session: id, prog: prog}
	for i, sec := range secs {
		t, err := s.opts.Tables.Table(sec.table)
		if err != nil {
			return res, err
		}
		pull.section = i
		if sec.whole {
			err = pull.whole(t, spans[sec.table], sec)
			res.Whole++
		} else {
			err = pull.entries(t, spans[sec.table])
		}
		if err != nil {
			return res, fmt.Errorf("streaming: section %d of %d from %s: %w", i+1, len(secs), from, err)
		}
		res.Sections++
		s.mu.Lock()
		prog.Done++
		s.mu.Unlock()
	}
	res.Bytes = pull.bytes
	return res, nil
}

// Pull asks the node at receiver to fetch tables from the node at source
// (a node handing its ranges to others asks each of them to pull), and
// waits until that session is over, however long it takes: the session's
// own requests are bounded, not the pull. A pull whose answer is lost
// (the receiver restarted) is asked again, as Options.Tries says; the
// receiver then fetches again what it has (data received twice is the
// same data).
func (s *Service) Pull(ctx context.Context, receiver, operation, source string, tables []TableSpans) (Result, error) {
	payload := pullRequest{operation: operation, source: source, tables: tables}.encode()
	answer, err := s.retry(ctx, receiver, messaging.VerbStreamPull, payload, 0)
	if err != nil {
		return Result{}, fmt.Errorf("streaming: %s pulling from %s: %w", receiver, source, err)
	}
	return decodeResult(answer)
}

// request sends one request, each try bounded by Options.RequestTimeout
// and tried again as Options says.
func (s *Service) request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error) {
	return s.retry(ctx, to, verb, payload, s.opts.RequestTimeout)
}

// retry sends one request, each try bounded by timeout (0: by ctx
// alone), trying again as Options says.
func (s *Service) retry(ctx context.Context, to string, verb messaging.Verb, payload []byte, timeout time.Duration) ([]byte, error) {
	wait := s.opts.Backoff
	var err error
	for try := 1; ; try++ {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			rctx, cancel = context.WithTimeout(ctx, timeout)
		}
		var answer []byte
		answer, err = s.opts.Network.Request(rctx, to, verb, payload)
		cancel()
		var remote *messaging.RemoteError
		if err == nil || errors.As(err, &remote) || errors.Is(err, messaging.ErrClosed) || ctx.Err() != nil || try >= s.opts.Tries {
			// What the source refused, it refuses again; a closed
			// messaging service is this node stopping.
			return answer, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		wait *= 2
	}
}

// puller pulls one session's sections.
type puller struct {
	s       *Service
	ctx     context.Context
	from    string
	session uint64
	section int
	prog    *Progress
	bytes   int64
}

// next is the section's chunk at offset.
func (p *puller) next(offset int64) (chunk, error) {
	for try := 1; ; try++ {
		answer, err := p.s.request(p.ctx, p.from, messaging.VerbStreamChunk, chunkRequest{session: p.session, section: p.section, offset: offset}.encode())
		if err != nil {
			return chunk{}, err
		}
		c, err := decodeChunk(answer)
		if errors.Is(err, errChunkChecksum) && try < p.s.opts.Tries {
			continue
		}
		if err != nil {
			return chunk{}, err
		}
		if c.offset != offset {
			return chunk{}, fmt.Errorf("asked for offset %d, got %d", offset, c.offset)
		}
		if !c.last && len(c.data) == 0 {
			return chunk{}, errors.New("an empty chunk before the last")
		}
		p.bytes += int64(len(c.data))
		p.s.mu.Lock()
		p.prog.BytesDone += int64(len(c.data))
		p.s.mu.Unlock()
		p.s.IncomingBytes.Add(int64(len(c.data)))
		return c, nil
	}
}

// whole receives a section sent as a whole SSTable.
func (p *puller) whole(t *storage.Table, spans []storage.KeySpan, sec sectionInfo) error {
	pr, pw := io.Pipe()
	imported := make(chan error, 1)
	go func() {
		err := t.ImportWhole(spans, sec.meta, pr, sec.filter)
		pr.CloseWithError(errors.Join(err, errors.New("streaming: the import stopped reading")))
		imported <- err
	}()
	var offset int64
	for {
		c, err := p.next(offset)
		if err == nil {
			_, err = pw.Write(c.data)
		}
		if err != nil {
			pw.CloseWithError(err)
			return errors.Join(err, <-imported)
		}
		offset += int64(len(c.data))
		if c.last {
			break
		}
	}
	pw.Close()
	return <-imported
}

// entries receives a section sent as entries, checking each: its key
// must parse, carry the token its partition key hashes to and fall in
// the spans (NewImport checks that), and its value must decode.
func (p *puller) entries(t *storage.Table, spans []storage.KeySpan) error {
	imp, err := t.NewImport(spans)
	if err != nil {
		return err
	}
	tokenLen := p.s.opts.Partitioner.TokenBytesLen()
	var buf []byte
	var offset int64
	for {
		c, err := p.next(offset)
		if err != nil {
			imp.Abort()
			return err
		}
		offset += int64(len(c.data))
		buf = append(buf, c.data...)
		for {
			key, value, rest, ok, err := nextEntry(buf)
			if err != nil {
				imp.Abort()
				return err
			}
			if !ok {
				break
			}
			buf = rest
			if err := p.add(imp, tokenLen, key, value); err != nil {
				imp.Abort()
				return err
			}
		}
		if c.last {
			break
		}
	}
	if len(buf) != 0 {
		imp.Abort()
		return fmt.Errorf("the section ends inside an entry (%d bytes left)", len(buf))
	}
	return imp.Finish()
}

// add checks one received entry and adds it.
func (p *puller) add(imp *storage.Import, tokenLen int, key, value []byte) error {
	parts, err := mutation.ParseKey(key, tokenLen)
	if err != nil {
		return fmt.Errorf("an entry's key: %w", err)
	}
	if own := p.s.opts.Partitioner.Token(parts.PartitionKey).AppendBytes(nil); !bytes.Equal(own, parts.Token) {
		return fmt.Errorf("an entry of partition %x carries token %x, not its own %x", parts.PartitionKey, parts.Token, own)
	}
	// The writer copies what it is given: key and value may alias the
	// chunks' buffer.
	e, err := mutation.DecodeEntry(key, parts.Kind, value)
	if err != nil {
		return fmt.Errorf("an entry's value: %w", err)
	}
	return imp.Add(&e)
}
