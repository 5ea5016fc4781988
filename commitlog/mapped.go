package commitlog

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/vfs"
)

// Mapped segments: creation, the preparer that makes the next one ahead of
// need, and their retirement.

// createMapped creates seg's file at its full size, maps it and writes the
// header; it reports false, with the file left for write mode, when the
// filesystem gives no file descriptor.
func (l *Log) createMapped(seg *segment) (bool, error) {
	f, err := l.opts.FS.Create(seg.name)
	if err != nil {
		return false, fmt.Errorf("create %s: %w", seg.name, err)
	}
	seg.file = f
	if f.Fd() == vfs.InvalidFd {
		return false, l.syncDir()
	}
	data, err := mapFile(f, l.opts.SegmentSize)
	if err == nil {
		seg.mapped = data
		appendSegmentHeader(data[:0], seg.id)
		if err = l.syncDir(); err == nil {
			return true, nil
		}
	}
	// Nothing went to the segment: it goes, so that a later attempt starts
	// afresh and no file of a segment never used is left behind.
	_ = seg.release()
	_ = l.opts.FS.Remove(seg.name)
	return false, fmt.Errorf("%s: %w", seg.name, err)
}

// takePreparedLocked returns the prepared segment to become the tail, if
// one is ready, and asks for the next; nil means the caller makes one.
// Append waits for a preparation in flight rather than come here, which
// keeps segment ids in the order segments become the tail, so positions
// only grow.
// REQUIRES: l.mu held.
func (l *Log) takePreparedLocked() *segment {
	seg := l.mu.prepared
	if seg == nil {
		return nil
	}
	l.mu.prepared = nil
	l.kickPreparer()
	return seg
}

func (l *Log) kickPreparer() {
	select {
	case l.prepare <- struct{}{}:
	default:
	}
}

// prepareSegments keeps one mapped segment ready: creating, allocating and
// prefaulting 32 MiB takes milliseconds that writers would otherwise wait
// under the lock.
func (l *Log) prepareSegments() {
	defer close(l.preparerDone)
	for {
		select {
		case <-l.stop:
			return
		case <-l.prepare:
		}
		l.mu.Lock()
		if l.mu.closed || l.mu.prepared != nil || !l.mapped {
			l.mu.Unlock()
			continue
		}
		seg := l.newSegmentLocked()
		l.mu.preparing = true
		l.mu.Unlock()
		mapped, err := l.createMapped(seg)
		if err == nil && mapped {
			prefault(seg.mapped)
		}
		l.mu.Lock()
		l.mu.preparing = false
		l.mu.cond.Broadcast()
		switch {
		case err == nil && !mapped:
			_ = l.discardPrepared(seg) // cannot happen once a segment was mapped
		case err != nil:
			// The tail's next rollover creates the segment itself and meets
			// the error there, where a writer hears of it.
			l.opts.Logger.Warn().Err(err).Msg("preparing a commit log segment")
		case l.mu.closed:
			l.mu.late = seg
		default:
			l.mu.prepared = seg
		}
		l.mu.Unlock()
	}
}

// takeLatePrepared returns a segment the preparer finished after Close took
// the prepared one.
func (l *Log) takeLatePrepared() *segment {
	l.mu.Lock()
	defer l.mu.Unlock()
	seg := l.mu.late
	l.mu.late = nil
	return seg
}

// discardPrepared removes a prepared segment no record went to.
func (l *Log) discardPrepared(seg *segment) error {
	if err := errors.Join(seg.release(), l.opts.FS.Remove(seg.name)); err != nil {
		return fmt.Errorf("commitlog: discard %s: %w", seg.name, err)
	}
	return nil
}

// closeRetiring fsyncs, unmaps and closes the segments the tail moved away
// from, once everything pending for them is written.
func (l *Log) closeRetiring(segs []*segment) error {
	for _, seg := range segs {
		if seg.file == nil {
			continue // closed by an earlier turn that then failed
		}
		if err := seg.file.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", seg.name, err)
		}
		if err := seg.release(); err != nil {
			return err
		}
	}
	return nil
}

// writeRecord frames a payload into dst, a zeroed span of a mapped
// segment of recordSize(len(payload)) bytes, publishing its length last.
func writeRecord(dst []byte, hdr [recordHeaderSize]byte, payload []byte) {
	copy(dst[recordHeaderSize:], payload)
	copy(dst[4:8], hdr[4:8])
	publishLength(dst[0:4], [4]byte(hdr[0:4]))
}

// dropRetiringLocked unmaps and closes seg if it waits in the retiring list,
// taking it out of the list.
// REQUIRES: l.mu held.
func (l *Log) dropRetiringLocked(seg *segment) error {
	if seg == l.mu.leaderTail {
		return nil // a leader may be fsyncing it; the next Discard gets it
	}
	for i, r := range l.mu.retiring {
		if r != seg {
			continue
		}
		l.mu.retiring = append(l.mu.retiring[:i], l.mu.retiring[i+1:]...)
		if err := seg.release(); err != nil {
			return fmt.Errorf("commitlog: %w", err)
		}
		seg.closed = true
		return nil
	}
	return nil
}
