package commitlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/sibyldb/sibyl/internal/durable"
)

// ReplayStats says what Replay found.
type ReplayStats struct {
	Segments       int
	Records        int
	TruncatedBytes int // bytes of a torn tail that were cut off
}

// Replay calls fn for every record of the segments found at Open, oldest
// first, with the record's end position. A torn tail of the newest such
// segment (the last record cut short by a crash) is truncated with a
// warning; any other bad record stops replay with an error naming the file
// and offset (INVARIANT C3). The payload is only valid during the call.
func (l *Log) Replay(fn func(pos Position, payload []byte) error) (ReplayStats, error) {
	l.mu.Lock()
	var old []*segment
	for _, seg := range l.mu.segments {
		if seg.replayed {
			old = append(old, seg)
		}
	}
	l.mu.Unlock()
	var stats ReplayStats
	// The newest segment that holds records is the one a crash can have cut
	// a record short in; segments after it were prepared ahead of need and
	// never written.
	newest := len(old) - 1
	for ; newest > 0; newest-- {
		empty, err := l.holdsNoRecords(old[newest])
		if err != nil {
			return stats, err
		}
		if !empty {
			break
		}
	}
	for i, seg := range old {
		stats.Segments++
		data, err := l.readFile(seg.name)
		if err != nil {
			return stats, err
		}
		valid, records, err := scanSegment(seg, data, i >= newest, fn)
		stats.Records += records
		if err != nil {
			return stats, err
		}
		if valid == 0 {
			l.opts.Logger.Warn().Str("file", seg.name).Msg("commit log segment has no complete header; removing it")
			if err := l.opts.FS.Remove(seg.name); err != nil {
				return stats, fmt.Errorf("commitlog: remove %s: %w", seg.name, err)
			}
			l.forget(seg)
			continue
		}
		if valid < len(data) {
			stats.TruncatedBytes += len(data) - valid
			l.opts.Logger.Warn().Str("file", seg.name).Int("offset", valid).Int("bytes", len(data)-valid).
				Msg("commit log segment ends with a torn record; truncating it")
			if err := l.rewritePrefix(seg.name, data[:valid]); err != nil {
				return stats, err
			}
		}
	}
	return stats, nil
}

// scanSegment walks the records of one segment and returns the length of
// its valid prefix. A zero length where a record header belongs ends the
// records: a mapped segment is allocated whole and zero-filled, a record's
// length is stored last (its checksum and payload may be there without
// it), and no record is empty.
func scanSegment(seg *segment, data []byte, newest bool, fn func(Position, []byte) error) (valid, records int, err error) {
	if len(data) < segmentHeaderSize {
		// The process died between creating the file and writing its first
		// batch, which always starts with the header: nothing was
		// acknowledged here.
		return 0, 0, nil
	}
	if !validSegmentHeader(seg, data) {
		if allZero(data[segmentHeaderSize:]) {
			// A mapped segment the process died in before it had stored all
			// of its header (a store the scheduler can interrupt anywhere):
			// records go to a segment only once its header is there, so none
			// was acknowledged here.
			return 0, 0, nil
		}
		return 0, 0, fmt.Errorf("commitlog: %s: bad segment header at offset 0", seg.name)
	}
	off := segmentHeaderSize
	for off < len(data) {
		rest := data[off:]
		torn := func(why string) (int, int, error) {
			if newest && tailIsTorn(rest) {
				return off, records, nil
			}
			return off, records, fmt.Errorf("commitlog: %s: %s at offset %d", seg.name, why, off)
		}
		if len(rest) < recordHeaderSize {
			if allZero(rest) {
				return len(data), records, nil // the unused end of a mapped segment
			}
			return torn("record header cut short")
		}
		n := int(binary.BigEndian.Uint32(rest[0:4]))
		if n == 0 { // no record is empty: nothing was published here
			switch {
			case allZero(rest):
				return len(data), records, nil // the unused end of a mapped segment
			case newest:
				return off, records, nil // a record whose length was never stored: not acknowledged
			}
			return off, records, fmt.Errorf("commitlog: %s: data after the end of the records at offset %d", seg.name, off)
		}
		size := recordSize(n)
		if n > len(rest)-recordHeaderSize {
			return torn(fmt.Sprintf("record of %d bytes runs past the end of the file", n))
		}
		payload := rest[recordHeaderSize : recordHeaderSize+n]
		if recordCRC(rest[0:4], payload) != binary.BigEndian.Uint32(rest[4:8]) {
			if newest && (size >= len(rest) || allZero(rest[size:])) {
				return off, records, nil
			}
			return off, records, fmt.Errorf("commitlog: %s: checksum mismatch at offset %d", seg.name, off)
		}
		off += min(size, len(rest))
		records++
		if err := fn(Position{Segment: seg.id, Offset: uint32(off)}, payload); err != nil {
			return off, records, fmt.Errorf("commitlog: %s: record ending at offset %d: %w", seg.name, off, err)
		}
	}
	return off, records, nil
}

// validSegmentHeader reports whether data starts with seg's header.
func validSegmentHeader(seg *segment, data []byte) bool {
	return string(data[:8]) == segmentMagic && binary.BigEndian.Uint64(data[8:16]) == seg.id &&
		binary.BigEndian.Uint32(data[16:20]) == crc32.Checksum(data[8:16], crcTable)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// tailIsTorn reports whether the bytes left at the end of the newest
// segment can only be a record cut short: a header that runs past the end,
// or nothing but zeros.
func tailIsTorn(rest []byte) bool {
	if len(rest) < recordHeaderSize {
		return true
	}
	n := int(binary.BigEndian.Uint32(rest[0:4]))
	if n > len(rest)-recordHeaderSize {
		return true
	}
	return allZero(rest)
}

// holdsNoRecords reports whether a segment has nothing past its header but
// zeros.
func (l *Log) holdsNoRecords(seg *segment) (bool, error) {
	data, err := l.readFile(seg.name)
	if err != nil {
		return false, err
	}
	return len(data) <= segmentHeaderSize || allZero(data[segmentHeaderSize:]), nil
}

func (l *Log) readFile(name string) ([]byte, error) {
	f, err := l.opts.FS.Open(name)
	if err != nil {
		return nil, fmt.Errorf("commitlog: open %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("commitlog: read %s: %w", name, err)
	}
	return data, nil
}

// rewritePrefix replaces a file by its first bytes, atomically: a later
// replay must not meet the torn record again once newer segments follow it.
func (l *Log) rewritePrefix(name string, prefix []byte) error {
	if err := durable.ReplaceFile(l.opts.FS, name, append([]byte(nil), prefix...)); err != nil {
		return fmt.Errorf("commitlog: truncate: %w", err)
	}
	return nil
}

// forget drops a segment that no longer exists from the list.
func (l *Log) forget(seg *segment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.mu.segments[:0]
	for _, s := range l.mu.segments {
		if s != seg {
			kept = append(kept, s)
		}
	}
	l.mu.segments = kept
	l.updateSizeLocked()
}
