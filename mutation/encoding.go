package mutation

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// The binary encoding of rows, entry values and mutations. Integers are Go
// varints (zig-zag for signed values). The same row encoding serves commit
// log records and SSTable values: one encoding per thing.
//
//	row:      flags(1) [marker] [deletion] uvarint(n) n×column-deletion uvarint(n) n×cell
//	marker:   varint(ts) uvarint(ttl) [varint(expiresAt) when ttl > 0]
//	deletion: varint(markedForDeleteAt) varint(localDeletionTime)
//	cell:     bytes(column) flags(1: path, tombstone, expiring, counter) [bytes(path)] varint(ts)
//	          [uvarint(ttl) varint(expiry)] | [varint(ldt) for tombstones] [bytes(value) unless tombstone]
//	bytes:    uvarint(len) len×byte
//	mutation: version(1)=1 table(16) bytes(key) deletion uvarint(n) n×(bytes(start) bytes(end) deletion)
//	          flags(1) [row: static] uvarint(n) n×(bytes(clustering) row)
const mutationVersion = 1

// columnNames remembers recently decoded column names, so that decoding a
// cell, which every read and every memtable merge does, rarely allocates a
// string for its column: a table has few columns, and their names repeat in
// every row. A slot holds one name; two names that share a slot take turns.
var (
	columnNames    [256]atomic.Pointer[string]
	columnNameSeed = maphash.MakeSeed()
)

func columnName(b []byte) string {
	slot := &columnNames[maphash.Bytes(columnNameSeed, b)%uint64(len(columnNames))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

const (
	rowHasMarker   = 1 << 0
	rowHasDeletion = 1 << 1

	cellHasPath   = 1 << 0
	cellTombstone = 1 << 1
	cellExpiring  = 1 << 2
	cellCounter   = 1 << 3
)

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendDeletion(dst []byte, d DeletionTime) []byte {
	dst = binary.AppendVarint(dst, d.MarkedForDeleteAt)
	return binary.AppendVarint(dst, d.LocalDeletionTime)
}

// AppendRow appends the encoding of r.
func AppendRow(dst []byte, r *Row) []byte {
	var flags byte
	if !r.Liveness.IsEmpty() {
		flags |= rowHasMarker
	}
	if !r.Deletion.IsLive() {
		flags |= rowHasDeletion
	}
	dst = append(dst, flags)
	if flags&rowHasMarker != 0 {
		dst = binary.AppendVarint(dst, r.Liveness.Timestamp)
		dst = binary.AppendUvarint(dst, uint64(r.Liveness.TTL))
		if r.Liveness.TTL > 0 {
			dst = binary.AppendVarint(dst, r.Liveness.ExpiresAt)
		}
	}
	if flags&rowHasDeletion != 0 {
		dst = appendDeletion(dst, r.Deletion)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Columns)))
	for _, cd := range r.Columns {
		dst = appendBytes(dst, []byte(cd.Column))
		dst = appendDeletion(dst, cd.Deletion)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Cells)))
	for i := range r.Cells {
		c := &r.Cells[i]
		dst = appendBytes(dst, []byte(c.Column))
		var cf byte
		if c.Path != nil {
			cf |= cellHasPath
		}
		switch {
		case c.Tombstone:
			cf |= cellTombstone
		case c.TTL > 0:
			cf |= cellExpiring
		case c.Counter:
			cf |= cellCounter
		}
		dst = append(dst, cf)
		if c.Path != nil {
			dst = appendBytes(dst, c.Path)
		}
		dst = binary.AppendVarint(dst, c.Timestamp)
		switch {
		case c.Tombstone:
			dst = binary.AppendVarint(dst, c.LocalDeletionTime)
		case c.TTL > 0:
			dst = binary.AppendUvarint(dst, uint64(c.TTL))
			dst = binary.AppendVarint(dst, c.LocalDeletionTime)
		}
		if !c.Tombstone {
			dst = appendBytes(dst, c.Value)
		}
	}
	return dst
}

// decoder reads the encoding; the first error sticks and later reads
// return zero values, so callers check once at the end.
type decoder struct {
	buf []byte
	err error
	// counterUpdates takes counter cells as updates, not contexts (a
	// counter write on its way to its leader).
	counterUpdates bool
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("mutation: %s at %d bytes from the end: %w", what, len(d.buf), ErrMalformed)
	}
	d.buf = nil
}

// ErrMalformed marks a mutation, row or encoding that breaks the data
// model's rules: what no write may carry and no decoder accepts.
var ErrMalformed = errors.New("malformed")

func (d *decoder) byte() byte {
	if len(d.buf) < 1 {
		d.fail("truncated")
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// count reads a count of items each at least minSize bytes long, refusing
// counts the remaining bytes cannot hold.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if n > uint64(len(d.buf)/minSize) {
		d.fail("count exceeds the input")
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.fail("length exceeds the input")
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) deletion() DeletionTime {
	return DeletionTime{MarkedForDeleteAt: d.varint(), LocalDeletionTime: d.varint()}
}

func (d *decoder) ttl() int32 {
	v := d.uvarint()
	if v == 0 || v > 1<<31-1 {
		d.fail("bad ttl")
		return 0
	}
	return int32(v)
}

func (d *decoder) row() *Row {
	r := NewRow()
	d.rowInto(r, nil)
	return r
}

// rowInto decodes a row into r, an empty row (NewRow's), with its cells
// in cells' backing array when they fit.
func (d *decoder) rowInto(r *Row, cells []Cell) {
	flags := d.byte()
	if flags&^(rowHasMarker|rowHasDeletion) != 0 {
		d.fail("unknown row flags")
		return
	}
	if flags&rowHasMarker != 0 {
		r.Liveness.Timestamp = d.varint()
		if ttl := d.uvarint(); ttl > 0 {
			if ttl > 1<<31-1 {
				d.fail("bad ttl")
			}
			r.Liveness.TTL = int32(ttl)
			r.Liveness.ExpiresAt = d.varint()
		}
		if r.Liveness.Timestamp == NoTimestamp {
			d.fail("row marker without timestamp")
		}
	}
	if flags&rowHasDeletion != 0 {
		r.Deletion = d.deletion()
		if r.Deletion.IsLive() {
			d.fail("row deletion without timestamp")
		}
	}
	if n := d.count(3); n > 0 {
		r.Columns = make([]ColumnDeletion, n)
		for i := range r.Columns {
			r.Columns[i] = ColumnDeletion{Column: columnName(d.bytes()), Deletion: d.deletion()}
		}
	}
	if n := d.count(4); n > 0 {
		if n <= cap(cells) {
			r.Cells = cells[:n]
		} else {
			r.Cells = make([]Cell, n)
		}
		for i := range r.Cells {
			c := &r.Cells[i]
			c.Column = columnName(d.bytes())
			cf := d.byte()
			if cf&^(cellHasPath|cellTombstone|cellExpiring|cellCounter) != 0 || bits.OnesCount8(cf&(cellTombstone|cellExpiring|cellCounter)) > 1 {
				d.fail("bad cell flags")
				break
			}
			c.Counter = cf&cellCounter != 0
			if cf&cellHasPath != 0 {
				c.Path = d.bytes()
			}
			c.Timestamp = d.varint()
			c.LocalDeletionTime = NoDeletionTime
			switch {
			case cf&cellTombstone != 0:
				c.Tombstone = true
				c.LocalDeletionTime = d.varint()
			case cf&cellExpiring != 0:
				c.TTL = d.ttl()
				c.LocalDeletionTime = d.varint()
			}
			if !c.Tombstone {
				c.Value = d.bytes()
			}
			if d.err != nil {
				break
			}
		}
	}
	if d.err == nil {
		if err := r.check(d.counterUpdates); err != nil {
			d.fail(err.Error())
		}
	}
}

// DecodeRow decodes a row encoded by AppendRow. The row's byte slices alias b.
func DecodeRow(b []byte) (*Row, error) {
	d := decoder{buf: b}
	r := d.row()
	if d.err == nil && len(d.buf) != 0 {
		d.fail("trailing bytes")
	}
	return r, d.err
}

// AppendEntryValue appends the stored value of an entry (its key is stored
// beside it).
func AppendEntryValue(dst []byte, e *Entry) []byte {
	if e.Row != nil {
		return AppendRow(dst, e.Row)
	}
	return appendDeletion(dst, e.Deletion)
}

// inlineCells is how many cells a decoded entry's row holds in the
// entry's own allocation.
const inlineCells = 2

// decodedEntry is a row entry with its row and the row's first cells in
// one allocation: reads decode an entry from each source they visit, and
// the entry, the row and its cells were three allocations each.
type decodedEntry struct {
	entry Entry
	row   Row
	cells [inlineCells]Cell
}

// DecodeEntryRef is DecodeEntry for an entry that lives on the heap (an
// iterator's): a row entry, its row and its first cells are allocated
// together.
func DecodeEntryRef(key []byte, kind EntryKind, value []byte) (*Entry, error) {
	if kind != StaticRowEntry && kind != RowEntry {
		e, err := DecodeEntry(key, kind, value)
		return &e, err
	}
	b := &decodedEntry{row: Row{Liveness: NoLiveness, Deletion: Live}}
	b.entry = Entry{Key: key, Kind: kind, Row: &b.row}
	d := decoder{buf: value}
	d.rowInto(&b.row, b.cells[:0])
	if d.err == nil && len(d.buf) != 0 {
		d.fail("trailing bytes")
	}
	return &b.entry, d.err
}

// DecodeEntry rebuilds an entry from its engine key and stored value; kind
// must come from the key (ParseKey). Slices alias key and value.
func DecodeEntry(key []byte, kind EntryKind, value []byte) (Entry, error) {
	e := Entry{Key: key, Kind: kind}
	d := decoder{buf: value}
	switch kind {
	case PartitionDeletionEntry, RangeTombstoneEntry:
		e.Deletion = d.deletion()
		if d.err == nil && e.Deletion.IsLive() {
			d.fail("deletion without timestamp")
		}
	case StaticRowEntry, RowEntry:
		e.Row = d.row()
	default:
		return e, fmt.Errorf("mutation: unknown entry kind 0x%02x: %w", uint8(kind), ErrMalformed)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("trailing bytes")
	}
	return e, d.err
}

// AppendMutation appends the encoding of m.
func AppendMutation(dst []byte, m *Mutation) []byte {
	dst = append(dst, mutationVersion)
	dst = append(dst, m.Table[:]...)
	dst = appendBytes(dst, m.Key)
	dst = appendDeletion(dst, m.Deletion)
	dst = binary.AppendUvarint(dst, uint64(len(m.RangeTombstones)))
	for i := range m.RangeTombstones {
		rt := &m.RangeTombstones[i]
		dst = appendBytes(dst, rt.Start)
		dst = appendBytes(dst, rt.End)
		dst = appendDeletion(dst, rt.Deletion)
	}
	if m.Static != nil {
		dst = append(dst, 1)
		dst = AppendRow(dst, m.Static)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(m.Rows)))
	for _, ru := range m.Rows {
		dst = appendBytes(dst, ru.Clustering)
		dst = AppendRow(dst, ru.Row)
	}
	return dst
}

// DecodeMutationHeader reads only the table and partition key of an
// encoded mutation: enough to name a record whose rest does not decode,
// or to skip one without decoding it. The key aliases b.
func DecodeMutationHeader(b []byte) (TableID, []byte, error) {
	d := decoder{buf: b}
	id, key := d.mutationHeader()
	return id, key, d.err
}

// mutationHeader reads what starts a mutation's encoding: the version, the
// table and the partition key.
func (d *decoder) mutationHeader() (id TableID, key []byte) {
	if v := d.byte(); d.err == nil && v != mutationVersion {
		d.fail(fmt.Sprintf("unknown mutation encoding version %d", v))
	}
	if d.err == nil && len(d.buf) < len(id) {
		d.fail("truncated table id")
	}
	if d.err != nil {
		return id, nil
	}
	copy(id[:], d.buf)
	d.buf = d.buf[len(id):]
	return id, d.bytes()
}

// DecodeMutation decodes a mutation encoded by AppendMutation. Its byte
// slices alias b.
func DecodeMutation(b []byte) (*Mutation, error) {
	m, err := decodeMutation(b, false)
	if err != nil {
		return nil, err
	}
	return m, m.Check()
}

// DecodeCounterUpdate decodes a counter write encoded by AppendMutation,
// its counter cells updates (CheckCounterUpdate).
func DecodeCounterUpdate(b []byte) (*Mutation, error) {
	m, err := decodeMutation(b, true)
	if err != nil {
		return nil, err
	}
	return m, m.CheckCounterUpdate()
}

// decodeMutation decodes a mutation, its rows checked, its range
// tombstones not yet.
func decodeMutation(b []byte, counterUpdates bool) (*Mutation, error) {
	d := decoder{buf: b, counterUpdates: counterUpdates}
	m := &Mutation{}
	if m.Table, m.Key = d.mutationHeader(); d.err != nil {
		return nil, d.err
	}
	m.Deletion = d.deletion()
	if n := d.count(4); n > 0 {
		m.RangeTombstones = make([]RangeTombstone, n)
		for i := range m.RangeTombstones {
			m.RangeTombstones[i] = RangeTombstone{Start: d.bytes(), End: d.bytes(), Deletion: d.deletion()}
		}
	}
	switch d.byte() {
	case 0:
	case 1:
		m.Static = d.row()
	default:
		d.fail("bad static flag")
	}
	if n := d.count(3); n > 0 {
		m.Rows = make([]RowUpdate, n)
		for i := range m.Rows {
			m.Rows[i] = RowUpdate{Clustering: d.bytes(), Row: d.row()}
		}
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}
