package mutation

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/sibyldb/sibyl/partitioner"
)

// TableID identifies a table for the life of the table (a UUID); a dropped
// and re-created table gets a new one.
type TableID [16]byte

func (id TableID) String() string { return hex.EncodeToString(id[:]) }

// RangeTombstone deletes the clustering rows in [Start, End) (bounds as made
// by StartBound and EndBound).
type RangeTombstone struct {
	Start, End []byte
	Deletion   DeletionTime
}

// Covers reports whether the row at an encoded clustering is in range.
func (rt *RangeTombstone) Covers(clustering []byte) bool {
	return bytes.Compare(rt.Start, clustering) <= 0 && bytes.Compare(clustering, rt.End) < 0
}

// RowUpdate is a write to one clustering row.
type RowUpdate struct {
	Clustering []byte
	Row        *Row
}

// Mutation is a write to one partition of one table: the unit the commit
// log records, the memtable applies and replicas exchange. It is applied
// atomically.
type Mutation struct {
	Table           TableID
	Key             []byte // the serialized partition key (composite-encoded when composite)
	Deletion        DeletionTime
	RangeTombstones []RangeTombstone
	Static          *Row // nil when the static row is untouched
	Rows            []RowUpdate
}

// NewMutation returns an empty mutation of a partition.
func NewMutation(table TableID, key []byte) *Mutation {
	return &Mutation{Table: table, Key: key, Deletion: Live}
}

// Entry is one keyed item of a table: a partition deletion, a range
// tombstone, a static row or a clustering row.
type Entry struct {
	Key      []byte       // engine key
	Kind     EntryKind    // from the key
	Deletion DeletionTime // partition deletions and range tombstones
	Row      *Row         // static and clustering rows
}

// maxTokenLen is the widest token encoding (RandomPartitioner's).
const maxTokenLen = 16

// AppendEntries appends the entries a mutation writes, keyed for token tok.
// All their keys share one allocation; each key's capacity ends at its
// length, so appending to one never overwrites the next.
func (m *Mutation) AppendEntries(dst []Entry, tok partitioner.Token) []Entry {
	var scratch [64]byte // most prefixes fit: no allocation for them
	prefix := AppendPartitionPrefix(scratch[:0], tok, m.Key)
	size := 0
	if !m.Deletion.IsLive() {
		size += len(prefix) + 1
	}
	for i := range m.RangeTombstones {
		rt := &m.RangeTombstones[i]
		size += len(prefix) + 1 + escapedLen(rt.Start) + len(rt.End)
	}
	if m.Static != nil {
		size += len(prefix) + 1
	}
	for _, ru := range m.Rows {
		size += len(prefix) + 1 + len(ru.Clustering)
	}
	keys := make([]byte, 0, size)
	if !m.Deletion.IsLive() {
		start := len(keys)
		keys = AppendEntryKey(keys, prefix, PartitionDeletionEntry, nil)
		dst = append(dst, Entry{Key: keys[start:len(keys):len(keys)], Kind: PartitionDeletionEntry, Deletion: m.Deletion})
	}
	for i := range m.RangeTombstones {
		rt := &m.RangeTombstones[i]
		start := len(keys)
		keys = AppendRangeTombstoneKey(keys, prefix, rt.Start, rt.End)
		dst = append(dst, Entry{Key: keys[start:len(keys):len(keys)], Kind: RangeTombstoneEntry, Deletion: rt.Deletion})
	}
	if m.Static != nil {
		start := len(keys)
		keys = AppendEntryKey(keys, prefix, StaticRowEntry, nil)
		dst = append(dst, Entry{Key: keys[start:len(keys):len(keys)], Kind: StaticRowEntry, Row: m.Static})
	}
	for _, ru := range m.Rows {
		start := len(keys)
		keys = AppendEntryKey(keys, prefix, RowEntry, ru.Clustering)
		dst = append(dst, Entry{Key: keys[start:len(keys):len(keys)], Kind: RowEntry, Row: ru.Row})
	}
	return dst
}

// MergeEntries merges two versions of the entry under one key. Inputs are
// not modified.
func MergeEntries(a, b *Entry) *Entry {
	out := &Entry{Key: a.Key, Kind: a.Kind}
	switch a.Kind {
	case PartitionDeletionEntry, RangeTombstoneEntry:
		out.Deletion = a.Deletion.Max(b.Deletion)
	default:
		out.Row = MergeRows(a.Row, b.Row)
	}
	return out
}

// MinTimestamp is the smallest write timestamp the entry holds.
func (e *Entry) MinTimestamp() int64 {
	if e.Row != nil {
		return e.Row.MinTimestamp()
	}
	return e.Deletion.MarkedForDeleteAt
}

// MaxTimestamp is the largest write timestamp the entry holds.
func (e *Entry) MaxTimestamp() int64 {
	if e.Row != nil {
		return e.Row.MaxTimestamp()
	}
	return e.Deletion.MarkedForDeleteAt
}

func (e *Entry) String() string {
	if e.Row != nil {
		return fmt.Sprintf("%s %x %s", e.Kind, e.Key, e.Row)
	}
	return fmt.Sprintf("%s %x %s", e.Kind, e.Key, e.Deletion)
}

// FromEntries is the mutation that writes entries of one partition (as
// AppendEntries makes them): the inverse of AppendEntries, for a
// coordinator repairing a replica with what it lacked.
func FromEntries(table TableID, key []byte, entries []Entry, tokenLen int) (*Mutation, error) {
	m := NewMutation(table, key)
	for i := range entries {
		e := &entries[i]
		parts, err := ParseKey(e.Key, tokenLen)
		if err != nil {
			return nil, err
		}
		switch e.Kind {
		case PartitionDeletionEntry:
			m.Deletion = m.Deletion.Max(e.Deletion)
		case RangeTombstoneEntry:
			m.RangeTombstones = append(m.RangeTombstones, RangeTombstone{Start: parts.Clustering, End: parts.End, Deletion: e.Deletion})
		case StaticRowEntry:
			m.Static = e.Row
		case RowEntry:
			m.Rows = append(m.Rows, RowUpdate{Clustering: parts.Clustering, Row: e.Row})
		}
	}
	return m, nil
}

// TimestampBounds are the smallest and largest write timestamps m
// carries (deletions' included); lo > hi when it carries none.
func (m *Mutation) TimestampBounds() (lo, hi int64) {
	lo, hi = NoDeletionTime, NoTimestamp
	see := func(ts int64) { lo, hi = min(lo, ts), max(hi, ts) }
	if !m.Deletion.IsLive() {
		see(m.Deletion.MarkedForDeleteAt)
	}
	for _, rt := range m.RangeTombstones {
		see(rt.Deletion.MarkedForDeleteAt)
	}
	for _, r := range m.allRows() {
		if rlo, rhi := r.timestampBounds(); rlo <= rhi {
			see(rlo)
			see(rhi)
		}
	}
	return lo, hi
}

// ShiftTimestamps moves every write timestamp of m (deletions' included)
// by d, keeping their order: a change whose place in an order is decided
// elsewhere (the metadata log) takes timestamps after those before it.
func (m *Mutation) ShiftTimestamps(d int64) {
	shift := func(dt *DeletionTime) {
		if !dt.IsLive() {
			dt.MarkedForDeleteAt += d
		}
	}
	shift(&m.Deletion)
	for i := range m.RangeTombstones {
		shift(&m.RangeTombstones[i].Deletion)
	}
	for _, r := range m.allRows() {
		if !r.Liveness.IsEmpty() {
			r.Liveness.Timestamp += d
		}
		shift(&r.Deletion)
		for i := range r.Columns {
			shift(&r.Columns[i].Deletion)
		}
		for i := range r.Cells {
			r.Cells[i].Timestamp += d
		}
	}
}

// allRows are m's static row (if any) and its clustering rows.
func (m *Mutation) allRows() []*Row {
	rows := make([]*Row, 0, len(m.Rows)+1)
	if m.Static != nil {
		rows = append(rows, m.Static)
	}
	for _, ru := range m.Rows {
		rows = append(rows, ru.Row)
	}
	return rows
}
