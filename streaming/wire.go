package streaming

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/sstable"
	"github.com/sibyldb/sibyl/storage"
)

// TableSpans is what a session moves of one table: the engine-key spans
// of its token ranges, in order.
type TableSpans struct {
	Table mutation.TableID
	Spans []storage.KeySpan
}

// prepareRequest is STREAM_PREPARE's payload.
type prepareRequest struct {
	session   uint64
	operation string // what the session is for: Rebuild, ...
	tables    []TableSpans
}

// sectionInfo is what the receiver learns of a section before pulling it.
type sectionInfo struct {
	table mutation.TableID
	whole bool
	// size is a whole section's Data bytes, and for entries an estimate
	// (their length is known once the last chunk comes).
	size int64
	// meta and filter are a whole section's Statistics and Filter file.
	meta   sstable.Metadata
	filter []byte
}

// chunkRequest is STREAM_CHUNK's payload.
type chunkRequest struct {
	session uint64
	section int
	offset  int64
}

// chunk is STREAM_CHUNK's answer.
type chunk struct {
	offset int64
	data   []byte
	last   bool // the section ends with it
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func appendSpan(w *wire.Writer, s storage.KeySpan) {
	w.Optional(s.From)
	w.Optional(s.To)
}

func (p prepareRequest) encode() []byte {
	var w wire.Writer
	w.Uint(p.session)
	w.String(p.operation)
	appendTables(&w, p.tables)
	return w.B
}

func appendTables(w *wire.Writer, tables []TableSpans) {
	w.Int(int64(len(tables)))
	for _, t := range tables {
		w.Bytes(t.Table[:])
		w.Int(int64(len(t.Spans)))
		for _, s := range t.Spans {
			appendSpan(w, s)
		}
	}
}

func decodeTables(r *wire.Reader) []TableSpans {
	var out []TableSpans
	n := r.Count()
	for range n {
		t := TableSpans{Table: decodeTableID(r)}
		spans := r.Count()
		for range spans {
			t.Spans = append(t.Spans, storage.KeySpan{From: r.Optional(), To: r.Optional()})
		}
		out = append(out, t)
	}
	return out
}

// pullRequest is STREAM_PULL's payload: the receiver is to fetch tables
// from source as a session named operation.
type pullRequest struct {
	operation, source string
	tables            []TableSpans
}

func (p pullRequest) encode() []byte {
	var w wire.Writer
	w.String(p.operation)
	w.String(p.source)
	appendTables(&w, p.tables)
	return w.B
}

func decodePull(b []byte) (pullRequest, error) {
	r := wire.Reader{B: b}
	p := pullRequest{operation: r.String(), source: r.String()}
	p.tables = decodeTables(&r)
	if err := r.Done(); err != nil {
		return pullRequest{}, fmt.Errorf("streaming: STREAM_PULL: %w", err)
	}
	return p, nil
}

func (res Result) encode() []byte {
	var w wire.Writer
	w.Int(int64(res.Sections))
	w.Int(int64(res.Whole))
	w.Int(res.Bytes)
	return w.B
}

func decodeResult(b []byte) (Result, error) {
	r := wire.Reader{B: b}
	res := Result{Sections: int(r.Int()), Whole: int(r.Int()), Bytes: r.Int()}
	if err := r.Done(); err != nil {
		return Result{}, fmt.Errorf("streaming: STREAM_PULL's answer: %w", err)
	}
	return res, nil
}

func decodeTableID(r *wire.Reader) mutation.TableID {
	var id mutation.TableID
	r.Fixed(id[:], "a table id")
	return id
}

func decodePrepare(b []byte) (prepareRequest, error) {
	r := wire.Reader{B: b}
	p := prepareRequest{session: r.Uint(), operation: r.String()}
	p.tables = decodeTables(&r)
	if err := r.Done(); err != nil {
		return prepareRequest{}, fmt.Errorf("streaming: STREAM_PREPARE: %w", err)
	}
	return p, nil
}

func encodeSections(secs []sectionInfo) ([]byte, error) {
	var w wire.Writer
	w.Int(int64(len(secs)))
	for _, s := range secs {
		w.Bytes(s.table[:])
		w.Bool(s.whole)
		w.Int(s.size)
		if s.whole {
			meta, err := json.Marshal(s.meta)
			if err != nil {
				return nil, err
			}
			w.Bytes(meta)
			w.Optional(s.filter)
		}
	}
	return w.B, nil
}

func decodeSections(b []byte) ([]sectionInfo, error) {
	r := wire.Reader{B: b}
	n := r.Count()
	var secs []sectionInfo
	for range n {
		s := sectionInfo{table: decodeTableID(&r), whole: r.Bool(), size: r.Int()}
		if r.Err == nil && s.size < 0 {
			r.Fail(fmt.Errorf("a section of %d bytes", s.size))
		}
		if s.whole {
			if err := json.Unmarshal(r.Bytes(), &s.meta); err != nil && r.Err == nil {
				r.Fail(fmt.Errorf("a section's statistics: %w", err))
			}
			s.filter = r.Optional()
			if r.Err == nil && s.size != s.meta.DataSize {
				r.Fail(fmt.Errorf("a section of %d bytes whose statistics say %d", s.size, s.meta.DataSize))
			}
		}
		secs = append(secs, s)
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("streaming: STREAM_PREPARE's answer: %w", err)
	}
	return secs, nil
}

func (c chunkRequest) encode() []byte {
	var w wire.Writer
	w.Uint(c.session)
	w.Int(int64(c.section))
	w.Int(c.offset)
	return w.B
}

func decodeChunkRequest(b []byte) (chunkRequest, error) {
	r := wire.Reader{B: b}
	c := chunkRequest{session: r.Uint(), section: int(r.Int()), offset: r.Int()}
	if err := r.Done(); err != nil {
		return chunkRequest{}, fmt.Errorf("streaming: STREAM_CHUNK: %w", err)
	}
	if c.section < 0 || c.offset < 0 {
		return chunkRequest{}, fmt.Errorf("streaming: STREAM_CHUNK: section %d, offset %d", c.section, c.offset)
	}
	return c, nil
}

func (c chunk) encode() []byte {
	var w wire.Writer
	w.Int(c.offset)
	w.Bool(c.last)
	w.B = binary.BigEndian.AppendUint32(w.B, crc32.Checksum(c.data, crcTable))
	w.Bytes(c.data)
	return w.B
}

// errChunkChecksum is a chunk whose bytes do not match their CRC32C.
var errChunkChecksum = errors.New("streaming: a chunk's checksum does not match its bytes")

func decodeChunk(b []byte) (chunk, error) {
	r := wire.Reader{B: b}
	c := chunk{offset: r.Int(), last: r.Bool()}
	if r.Err == nil && len(r.B) < 4 {
		r.Fail(wire.ErrShort)
	}
	var crc uint32
	if r.Err == nil {
		crc = binary.BigEndian.Uint32(r.B)
		r.B = r.B[4:]
	}
	c.data = r.Bytes()
	if err := r.Done(); err != nil {
		return chunk{}, fmt.Errorf("streaming: STREAM_CHUNK's answer: %w", err)
	}
	if crc32.Checksum(c.data, crcTable) != crc {
		return chunk{}, errChunkChecksum
	}
	return c, nil
}

// An entries section's bytes are records | key | value |, each a byte
// string (uvarint length), the value in the SSTables' encoding.
func appendEntry(dst []byte, e *mutation.Entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(e.Key)))
	dst = append(dst, e.Key...)
	value := mutation.AppendEntryValue(nil, e)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// maxEntryRecord bounds one entry record, so that a corrupt length cannot
// make the receiver buffer without end.
const maxEntryRecord = 256 << 20

// nextEntry takes the first whole record off b: ok is false when b holds
// only part of one.
func nextEntry(b []byte) (key, value, rest []byte, ok bool, err error) {
	kl, k := binary.Uvarint(b)
	if k == 0 {
		return nil, nil, b, false, nil
	}
	if k < 0 || kl > maxEntryRecord {
		return nil, nil, nil, false, errors.New("streaming: an entry's key length is out of bounds")
	}
	if uint64(len(b)-k) < kl {
		return nil, nil, b, false, nil
	}
	key, after := b[k:k+int(kl)], b[k+int(kl):]
	vl, k := binary.Uvarint(after)
	if k == 0 {
		return nil, nil, b, false, nil
	}
	if k < 0 || vl > maxEntryRecord {
		return nil, nil, nil, false, errors.New("streaming: an entry's value length is out of bounds")
	}
	if uint64(len(after)-k) < vl {
		return nil, nil, b, false, nil
	}
	return key, after[k : k+int(vl)], after[k+int(vl):], true, nil
}
