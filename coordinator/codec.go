package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
)

// The payloads of the READ and RANGE_READ verbs and of their answers:
// fields one after another, byte strings with a uvarint length, numbers
// as varints. Rows travel in the commit log's row encoding.

type msgWriter struct{ b []byte }

func (w *msgWriter) bytes(v []byte) {
	w.b = binary.AppendUvarint(w.b, uint64(len(v)))
	w.b = append(w.b, v...)
}
func (w *msgWriter) int(v int64) { w.b = binary.AppendVarint(w.b, v) }
func (w *msgWriter) bool(v bool) {
	if v {
		w.int(1)
	} else {
		w.int(0)
	}
}

// optional writes a value that may be absent (nil) as a flag and the
// value.
func (w *msgWriter) optional(v []byte) {
	w.bool(v != nil)
	if v != nil {
		w.bytes(v)
	}
}

type msgReader struct {
	b   []byte
	err error
}

var errShortMessage = errors.New("coordinator: a message ends too soon")

func (r *msgReader) bytes() []byte {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || uint64(len(r.b)-k) < n {
		r.err, r.b = errShortMessage, nil
		return nil
	}
	v := r.b[k : k+int(n)]
	r.b = r.b[k+int(n):]
	return v
}

func (r *msgReader) int() int64 {
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.err, r.b = errShortMessage, nil
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *msgReader) bool() bool { return r.int() != 0 }

// tableID reads a table's id, refusing one of the wrong length.
func (r *msgReader) tableID() mutation.TableID {
	b := r.bytes()
	if r.err != nil {
		return mutation.TableID{}
	}
	id, err := tableIDFrom(b)
	if err != nil {
		r.err, r.b = err, nil
	}
	return id
}

// tableIDFrom is a table's id from its bytes, refused at the wrong
// length.
func tableIDFrom(b []byte) (id mutation.TableID, err error) {
	if len(b) != len(id) {
		return id, fmt.Errorf("coordinator: a table id of %d bytes", len(b))
	}
	copy(id[:], b)
	return id, nil
}

// count reads the length of a list, refusing one longer than the bytes
// left could hold (every element takes at least one), so that a corrupt
// length cannot size an allocation.
func (r *msgReader) count() int {
	n := r.int()
	if n < 0 || n > int64(len(r.b)) {
		r.err, r.b = errShortMessage, nil
		return 0
	}
	return int(n)
}

func (r *msgReader) optional() []byte {
	if !r.bool() {
		return nil
	}
	if v := r.bytes(); v != nil {
		return v
	}
	return []byte{}
}

// encodeRead asks a replica for its entries of a partition, or with digest
// set for only their digest.
func encodeRead(table mutation.TableID, q request.PartitionRead, digest bool) []byte {
	var w msgWriter
	w.bool(digest)
	w.bytes(table[:])
	w.bytes(q.Key)
	w.optional(q.Start)
	w.optional(q.End)
	w.bool(q.Reverse)
	w.int(int64(q.Limit))
	w.int(q.Now)
	return w.b
}

func decodeRead(b []byte) (table mutation.TableID, q request.PartitionRead, digest bool, err error) {
	r := msgReader{b: b}
	digest = r.bool()
	table = r.tableID()
	q.Key = r.bytes()
	q.Start, q.End = r.optional(), r.optional()
	q.Reverse = r.bool()
	q.Limit = int(r.int())
	q.Now = r.int()
	return table, q, digest, r.err
}

func encodeScan(table mutation.TableID, q request.RangeRead) []byte {
	var w msgWriter
	w.bytes(table[:])
	w.int(int64(q.Limit))
	w.int(int64(q.PerPartitionLimit))
	w.int(q.Now)
	w.optional(q.After)
	for _, t := range []*partitioner.Token{q.From, q.To} {
		if t == nil {
			w.optional(nil)
		} else {
			w.optional(t.AppendBytes(nil))
		}
	}
	return w.b
}

func decodeScan(b []byte, p partitioner.Partitioner) (table mutation.TableID, q request.RangeRead, err error) {
	r := msgReader{b: b}
	table = r.tableID()
	q.Limit = int(r.int())
	q.PerPartitionLimit = int(r.int())
	q.Now = r.int()
	q.After = r.optional()
	for _, t := range []**partitioner.Token{&q.From, &q.To} {
		if raw := r.optional(); raw != nil {
			tok, err := p.TokenFromBytes(raw)
			if err != nil {
				return table, q, err
			}
			*t = &tok
		}
	}
	return table, q, r.err
}

// encodeEntries carries a replica's raw entries of a partition (READ's
// answer): each one's key, kind and value in the engine's encodings.
func encodeEntries(es []mutation.Entry) []byte {
	var w msgWriter
	w.int(int64(len(es)))
	var value []byte // one buffer for every entry's value
	for i := range es {
		w.bytes(es[i].Key)
		w.int(int64(es[i].Kind))
		value = mutation.AppendEntryValue(value[:0], &es[i])
		w.bytes(value)
	}
	return w.b
}

func decodeEntries(b []byte) ([]mutation.Entry, error) {
	r := msgReader{b: b}
	n := r.count()
	out := make([]mutation.Entry, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		key := r.bytes()
		kind := mutation.EntryKind(r.int())
		e, err := mutation.DecodeEntry(key, kind, r.bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, r.err
}

// encodeRawPartitions carries a replica's raw partitions (RANGE_READ's
// answer): each one's key and its entries.
func encodeRawPartitions(ps []request.RawPartition) []byte {
	var w msgWriter
	w.int(int64(len(ps)))
	for _, p := range ps {
		w.bytes(p.Key)
		w.bytes(encodeEntries(p.Entries))
	}
	return w.b
}

func decodeRawPartitions(b []byte) ([]request.RawPartition, error) {
	r := msgReader{b: b}
	n := r.count()
	out := make([]request.RawPartition, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		key := r.bytes()
		es, err := decodeEntries(r.bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, request.RawPartition{Key: key, Entries: es})
	}
	return out, r.err
}

// EncodeMutations frames mutations for a message: each one's length, then
// its encoding (mutation.AppendMutation, the commit log's).
func EncodeMutations(ms []*mutation.Mutation) []byte {
	var b []byte
	for _, m := range ms {
		at := len(b)
		b = binary.BigEndian.AppendUint32(b, 0)
		b = mutation.AppendMutation(b, m)
		binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	return b
}

// DecodeMutations reads what EncodeMutations wrote.
func DecodeMutations(b []byte) ([]*mutation.Mutation, error) {
	var out []*mutation.Mutation
	for len(b) > 0 {
		if len(b) < 4 || int(binary.BigEndian.Uint32(b)) > len(b)-4 {
			return nil, errors.New("coordinator: a truncated mutation in a message")
		}
		n := int(binary.BigEndian.Uint32(b))
		m, err := mutation.DecodeMutation(b[4 : 4+n])
		if err != nil {
			return nil, fmt.Errorf("coordinator: a mutation in a message: %w", err)
		}
		out = append(out, m)
		b = b[4+n:]
	}
	return out, nil
}
