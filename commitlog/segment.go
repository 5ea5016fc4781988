package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/vfs"
)

const (
	segmentMagic      = "SIBYLCL1"
	segmentHeaderSize = 8 + 8 + 4
	recordHeaderSize  = 8
	segmentPrefix     = "CommitLog-1-"
	segmentSuffix     = ".log"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Position is a place in the commit log: the end of a record. Positions
// compare by segment id, then offset (INVARIANT C2).
type Position struct {
	Segment uint64
	Offset  uint32
}

// Compare orders positions.
func (p Position) Compare(o Position) int {
	switch {
	case p.Segment != o.Segment:
		if p.Segment < o.Segment {
			return -1
		}
		return 1
	case p.Offset != o.Offset:
		if p.Offset < o.Offset {
			return -1
		}
		return 1
	}
	return 0
}

// Less reports whether p comes before o.
func (p Position) Less(o Position) bool { return p.Compare(o) < 0 }

func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Segment, p.Offset) }

// SegmentFileName is the file name of segment id.
func SegmentFileName(id uint64) string {
	return segmentPrefix + strconv.FormatUint(id, 10) + segmentSuffix
}

func parseSegmentFileName(name string) (uint64, bool) {
	if !strings.HasPrefix(name, segmentPrefix) || !strings.HasSuffix(name, segmentSuffix) {
		return 0, false
	}
	id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, segmentPrefix), segmentSuffix), 10, 64)
	return id, err == nil
}

// listSegments returns the ids of the segment files in dir, in order.
func listSegments(fs vfs.FS, dir string) ([]uint64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("commitlog: list %s: %w", dir, err)
	}
	var ids []uint64
	for _, name := range names {
		if id, ok := parseSegmentFileName(name); ok {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func appendSegmentHeader(dst []byte, id uint64) []byte {
	dst = append(dst, segmentMagic...)
	dst = binary.BigEndian.AppendUint64(dst, id)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[len(dst)-8:], crcTable))
}

// recordSize is the bytes a record of a payload takes: the header, the
// payload, and zeros up to a multiple of 4, so that every record's length
// field is aligned for the atomic store that publishes it in a mapped
// segment.
func recordSize(payloadLen int) int { return recordHeaderSize + (payloadLen+3)&^3 }

// recordCRC is the checksum of a record: over its length field and payload.
func recordCRC(lengthField, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(lengthField, crcTable), crcTable, payload)
}

// recordHeader is the header of a payload's record; it depends on nothing
// but the payload, so appenders build it before taking the log's lock.
func recordHeader(payload []byte) [recordHeaderSize]byte {
	var hdr [recordHeaderSize]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(hdr[4:8], recordCRC(hdr[0:4], payload))
	return hdr
}

// appendRecord frames a payload.
func appendRecord(dst, payload []byte) []byte {
	return appendFramed(dst, recordHeader(payload), payload)
}

// appendFramed appends a record with its header already built.
func appendFramed(dst []byte, hdr [recordHeaderSize]byte, payload []byte) []byte {
	dst = append(dst, hdr[:]...)
	dst = append(dst, payload...)
	var pad [3]byte
	return append(dst, pad[:recordSize(len(payload))-recordHeaderSize-len(payload)]...)
}

// markDirty records that table's last record here ends at pos.
func (s *segment) markDirty(table [16]byte, pos Position) {
	if s.hotEnd != nil && s.hotTable == table {
		*s.hotEnd = pos
		return
	}
	end := s.dirty[table]
	if end == nil {
		end = new(Position)
		s.dirty[table] = end
	}
	*end = pos
	s.hotTable, s.hotEnd = table, end
}

// markClean forgets table if its last record here ends at or before upTo.
func (s *segment) markClean(table [16]byte, upTo Position) {
	if end, ok := s.dirty[table]; ok && !upTo.Less(*end) {
		delete(s.dirty, table)
		if s.hotEnd == end {
			s.hotEnd = nil
		}
	}
}

// release unmaps and closes the segment's file, whichever of those it has.
func (s *segment) release() error {
	var errs []error
	if s.mapped != nil {
		errs = append(errs, unmapFile(s.mapped))
		s.mapped = nil
	}
	if s.file != nil {
		errs = append(errs, s.file.Close())
		s.file = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release %s: %w", s.name, err)
	}
	return nil
}

// segment is one file of the log.
type segment struct {
	id   uint64
	name string // path
	file vfs.File
	// dirty maps each table with records in this segment to the end of its
	// last record here; the segment may go once every table has flushed past.
	dirty map[[16]byte]*Position
	// hotTable and hotEnd short-cut dirty for the table appended last, the
	// common case of one busy table: no map hashing under the log's lock.
	hotTable [16]byte
	hotEnd   *Position
	// replayed segments come from an earlier run: they stay until storage has
	// flushed what replay put in memtables.
	replayed bool
	// mapped is the file's memory mapping, nil in write mode.
	mapped []byte
	// closed is set, under the log's lock, once no leader will touch the
	// file again: its data is fsynced and the file closed (or it is a
	// replayed segment, never opened for writing).
	closed bool
}
