package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
)

// The payloads of the READ and RANGE_READ verbs and of their answers:
// fields one after another, byte strings with a uvarint length, numbers
// as varints. Rows travel in the commit log's row encoding.

var errShortMessage = wire.ErrShort

// readTableID reads a table's id, refusing one of the wrong length.
func readTableID(r *wire.Reader) mutation.TableID {
	b := r.Bytes()
	if r.Err != nil {
		return mutation.TableID{}
	}
	id, err := tableIDFrom(b)
	if err != nil {
		r.Fail(err)
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

// encodeRead asks a replica for its entries of a partition, or with digest
// set for only their digest.
func encodeRead(table mutation.TableID, q request.PartitionRead, digest bool) []byte {
	return appendRead(nil, table, q, digest)
}

// appendRead is encodeRead appending to dst (a fenced request's epoch).
func appendRead(dst []byte, table mutation.TableID, q request.PartitionRead, digest bool) []byte {
	w := wire.Writer{B: dst}
	w.Bool(digest)
	w.Bytes(table[:])
	w.Bytes(q.Key)
	writeSlice(&w, q.Slice)
	return w.B
}

func decodeRead(b []byte) (table mutation.TableID, q request.PartitionRead, digest bool, err error) {
	r := wire.Reader{B: b}
	digest = r.Bool()
	table = readTableID(&r)
	q.Key = r.Bytes()
	q.Slice = readSlice(&r)
	return table, q, digest, r.Err
}

// writeSlice and readSlice are a partition read's slice.
func writeSlice(w *wire.Writer, s request.Slice) {
	w.Optional(s.Start)
	w.Optional(s.End)
	w.Bool(s.Reverse)
	w.Int(int64(s.Limit))
	w.Int(s.Now)
}

func readSlice(r *wire.Reader) (s request.Slice) {
	s.Start, s.End = r.Optional(), r.Optional()
	s.Reverse = r.Bool()
	s.Limit = int(r.Int())
	s.Now = r.Int()
	return s
}

func encodeScan(table mutation.TableID, q request.RangeRead) []byte {
	var w wire.Writer
	w.Bytes(table[:])
	w.Int(int64(q.Limit))
	w.Int(int64(q.PerPartitionLimit))
	w.Int(q.Now)
	w.Optional(q.After)
	for _, t := range []*partitioner.Token{q.From, q.To} {
		if t == nil {
			w.Optional(nil)
		} else {
			w.Optional(t.AppendBytes(nil))
		}
	}
	// Last, so that a node of an earlier build reads the rest and, with
	// nothing after, a plain scan (it filters nothing out, only reads more).
	if ix := q.Index; ix != nil {
		w.String(ix.Index)
		w.Optional(ix.Lo)
		w.Optional(ix.Hi)
		w.Bool(ix.LoInclusive)
		w.Bool(ix.HiInclusive)
		if ix.Vector != nil {
			w.Optional(ix.Vector)
			w.Int(int64(ix.Nearest))
		}
	}
	return w.B
}

func decodeScan(b []byte, p partitioner.Partitioner) (table mutation.TableID, q request.RangeRead, err error) {
	r := wire.Reader{B: b}
	table = readTableID(&r)
	q.Limit = int(r.Int())
	q.PerPartitionLimit = int(r.Int())
	q.Now = r.Int()
	q.After = r.Optional()
	for _, t := range []**partitioner.Token{&q.From, &q.To} {
		if raw := r.Optional(); raw != nil {
			tok, err := p.TokenFromBytes(raw)
			if err != nil {
				return table, q, err
			}
			*t = &tok
		}
	}
	if len(r.B) > 0 {
		q.Index = &request.IndexRead{Index: r.String(), Lo: r.Optional(), Hi: r.Optional(), LoInclusive: r.Bool(), HiInclusive: r.Bool()}
		if len(r.B) > 0 {
			q.Index.Vector = r.Optional()
			q.Index.Nearest = int(r.Int())
		}
	}
	return table, q, r.Done()
}

// encodeEntries carries a replica's raw entries of a partition (READ's
// answer): each one's key, kind and value in the engine's encodings.
func encodeEntries(es []mutation.Entry) []byte {
	var w wire.Writer
	w.Int(int64(len(es)))
	var value []byte // one buffer for every entry's value
	for i := range es {
		w.Bytes(es[i].Key)
		w.Int(int64(es[i].Kind))
		value = mutation.AppendEntryValue(value[:0], &es[i])
		w.Bytes(value)
	}
	return w.B
}

func decodeEntries(b []byte) ([]mutation.Entry, error) {
	r := wire.Reader{B: b}
	n := r.Count()
	out := make([]mutation.Entry, 0, n)
	for i := 0; i < n && r.Err == nil; i++ {
		key := r.Bytes()
		kind := mutation.EntryKind(r.Int())
		e, err := mutation.DecodeEntry(key, kind, r.Bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, r.Err
}

// encodeRawPartitions carries a replica's raw partitions (RANGE_READ's
// answer): each one's key and its entries.
func encodeRawPartitions(ps []request.RawPartition) []byte {
	var w wire.Writer
	w.Int(int64(len(ps)))
	for _, p := range ps {
		w.Bytes(p.Key)
		w.Bytes(encodeEntries(p.Entries))
	}
	return w.B
}

func decodeRawPartitions(b []byte) ([]request.RawPartition, error) {
	r := wire.Reader{B: b}
	n := r.Count()
	out := make([]request.RawPartition, 0, n)
	for i := 0; i < n && r.Err == nil; i++ {
		key := r.Bytes()
		es, err := decodeEntries(r.Bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, request.RawPartition{Key: key, Entries: es})
	}
	return out, r.Err
}

// EncodeMutations frames mutations for a message: each one's length, then
// its encoding (mutation.AppendMutation, the commit log's).
func EncodeMutations(ms []*mutation.Mutation) []byte { return appendMutations(nil, ms) }

// appendMutations is EncodeMutations appending to b (a fenced request's
// epoch).
func appendMutations(b []byte, ms []*mutation.Mutation) []byte {
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
