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

// AppendEntries appends the entries a mutation writes, keyed for token tok.
func (m *Mutation) AppendEntries(dst []Entry, tok partitioner.Token) []Entry {
	prefix := AppendPartitionPrefix(nil, tok, m.Key)
	if !m.Deletion.IsLive() {
		dst = append(dst, Entry{Key: AppendEntryKey(nil, prefix, PartitionDeletionEntry, nil),
			Kind: PartitionDeletionEntry, Deletion: m.Deletion})
	}
	for i := range m.RangeTombstones {
		rt := &m.RangeTombstones[i]
		dst = append(dst, Entry{Key: AppendRangeTombstoneKey(nil, prefix, rt.Start, rt.End),
			Kind: RangeTombstoneEntry, Deletion: rt.Deletion})
	}
	if m.Static != nil {
		dst = append(dst, Entry{Key: AppendEntryKey(nil, prefix, StaticRowEntry, nil), Kind: StaticRowEntry, Row: m.Static})
	}
	for _, ru := range m.Rows {
		dst = append(dst, Entry{Key: AppendEntryKey(nil, prefix, RowEntry, ru.Clustering), Kind: RowEntry, Row: ru.Row})
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
