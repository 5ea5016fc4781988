package hints

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"golang.org/x/time/rate"

	"github.com/sibyldb/sibyl/mutation"
)

// ErrPaused ends a delivery that Delivery.Paused stopped.
var ErrPaused = errors.New("hints: delivery paused")

// Delivery says how hints reach their replica.
type Delivery struct {
	// Send hands the replica a page of hints; it returns once the replica
	// has applied them all, or with why not.
	Send func(ctx context.Context, ms []*mutation.Mutation) error
	// Limiter throttles the bytes sent (hinted_handoff_throttle); nil
	// sends as fast as the replica takes them.
	Limiter *rate.Limiter
	// PageBytes is about how many bytes of hints one Send carries;
	// default 64 KiB.
	PageBytes int
	// InFlight is how many pages may be on their way at once; default 4.
	InFlight int
	// Taken, when not nil, is told of each page the replica took: how
	// many hints it held.
	Taken func(n int64)
	// Paused, when it returns true, stops the delivery before its next
	// page (nodetool pausehandoff).
	Paused func() bool
}

// Result counts what a delivery did.
type Result struct {
	Delivered int64 // hints the replica took
	Expired   int64 // hints older than their gc grace, dropped
	// Torn is the bytes of files after a record that did not check (a
	// crash while it was written, or a damaged disk): dropped, since
	// nothing after it can be found.
	Torn int64
	// Undecodable counts records whose checksum held but whose mutation
	// did not decode: dropped.
	Undecodable int64
}

// Deliver sends host's hints, oldest first, until there are none or a
// page fails. A file is removed once its replica has taken all of it; a
// delivery that stops goes on next time from the end of the last page
// taken (hints are idempotent: a page sent twice does no harm). One
// delivery per host runs at a time.
func (s *Store) Deliver(ctx context.Context, host string, d Delivery) (Result, error) {
	if d.PageBytes <= 0 {
		d.PageBytes = 64 << 10
	}
	if d.InFlight <= 0 {
		d.InFlight = 4
	}
	var res Result
	for {
		f, offset, ok, err := s.nextFile(host)
		if err != nil || !ok {
			return res, err
		}
		if err := s.deliverFile(ctx, host, f, offset, d, &res); err != nil {
			return res, err
		}
	}
}

// nextFile is host's oldest file and where its delivery goes on from. A
// file still being written is closed first: the hints that come while it
// is delivered go to a new one.
func (s *Store) nextFile(host string) (*file, int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[host]
	if r == nil || len(r.files) == 0 {
		return nil, 0, false, nil
	}
	if len(r.files) == 1 {
		if err := s.closeWriting(r); err != nil {
			return nil, 0, false, err
		}
	}
	f := r.files[0]
	return f, r.resume[f.name], true, nil
}

type page struct {
	end   int64 // where the file's next page starts
	count int64
	done  chan error
}

func (s *Store) deliverFile(ctx context.Context, host string, f *file, offset int64, d Delivery, res *Result) error {
	in, err := s.opts.FS.Open(s.path(f.name))
	if err != nil {
		return fmt.Errorf("hints: %w", err)
	}
	defer in.Close()
	s.mu.Lock()
	size := f.size
	s.mu.Unlock()
	r := bufio.NewReaderSize(io.NewSectionReader(in, offset, size-offset), 64<<10)

	var (
		queue   []page
		sendErr error
	)
	// settle waits for the oldest page on its way; the resume point moves
	// past it only while every page before it was taken.
	settle := func() {
		p := queue[0]
		queue = queue[1:]
		err := <-p.done
		p.done <- err // for settled, which looks without taking
		if err == nil && sendErr == nil {
			res.Delivered += p.count
			s.setResume(host, f, p.end)
			if d.Taken != nil && p.count > 0 {
				d.Taken(p.count)
			}
		} else if sendErr == nil {
			sendErr = err
		}
	}
	defer func() {
		for len(queue) > 0 {
			settle()
		}
	}()

	pos := offset
	for {
		if d.Paused != nil && d.Paused() {
			return ErrPaused
		}
		if !s.holds(host, f) {
			return nil // truncated
		}
		batch, bytes, end, torn := s.readPage(r, f, pos, size, d.PageBytes, res)
		pos = end
		if len(batch) > 0 {
			if err := wait(ctx, d.Limiter, bytes); err != nil {
				return err
			}
			p := page{end: end, count: int64(len(batch)), done: make(chan error, 1)}
			go func() { p.done <- d.Send(ctx, batch) }()
			queue = append(queue, p)
		} else {
			done := make(chan error, 1)
			done <- nil
			queue = append(queue, page{end: end, done: done})
		}
		for len(queue) >= d.InFlight || (len(queue) > 0 && (torn || end >= size || settled(queue[0]))) {
			settle()
		}
		if sendErr != nil {
			return sendErr
		}
		if torn || end >= size {
			res.Torn += size - end
			return s.delivered(host, f)
		}
	}
}

// settled reports whether p's replica has answered.
func settled(p page) bool { return len(p.done) > 0 }

// readPage reads records from pos until about pageBytes of live hints
// are in hand, or the file ends. torn: a record that does not check
// ended it.
func (s *Store) readPage(r *bufio.Reader, f *file, pos, size int64, pageBytes int, res *Result) (batch []*mutation.Mutation, bytes int, end int64, torn bool) {
	end = pos
	now := s.opts.Now()
	var head [headerLen]byte
	for bytes < pageBytes && end < size {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return batch, bytes, end, true
		}
		n := int64(binary.BigEndian.Uint32(head[:4]))
		// No body is empty: a zero length is zeroed bytes of a torn tail.
		if n == 0 || n > size-end-headerLen {
			return batch, bytes, end, true
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || crc32.Checksum(body, crcTable) != binary.BigEndian.Uint32(head[4:]) {
			return batch, bytes, end, true
		}
		end += headerLen + n
		h, err := decodeBody(body, f.legacy)
		switch {
		case err != nil:
			res.Undecodable++
		case !h.Live(now):
			res.Expired++
		default:
			batch = append(batch, h.Mutation)
			bytes += int(n)
		}
	}
	return batch, bytes, end, false
}

// wait takes n bytes from the limiter, in pieces no larger than its
// burst.
func wait(ctx context.Context, l *rate.Limiter, n int) error {
	if l == nil || l.Limit() == rate.Inf {
		return nil
	}
	for n > 0 {
		take := min(n, max(l.Burst(), 1))
		if err := l.WaitN(ctx, take); err != nil {
			return err
		}
		n -= take
	}
	return nil
}

// holds reports whether f is still one of host's files.
func (s *Store) holds(host string, f *file) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[host]
	return r != nil && slices.Contains(r.files, f)
}

func (s *Store) setResume(host string, f *file, end int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.replicas[host]; r != nil {
		r.resume[f.name] = end
	}
}

// delivered removes a file its replica has taken whole (unless a
// truncate removed it first).
func (s *Store) delivered(host string, f *file) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[host]
	if r == nil {
		return nil
	}
	i := slices.Index(r.files, f)
	if i < 0 {
		return nil
	}
	r.files = append(r.files[:i], r.files[i+1:]...)
	r.size -= f.size
	delete(r.resume, f.name)
	if err := s.opts.FS.Remove(s.path(f.name)); err != nil {
		return fmt.Errorf("hints: %w", err)
	}
	return nil
}
