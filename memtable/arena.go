package memtable

import (
	"encoding/binary"
	"fmt"

	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// arena holds a shard's entries as bytes, in chunks that hold no pointers:
// the garbage collector never looks inside them, however many entries they
// hold. An entry of pointer-rich structs (entry, row, cells, key and value
// slices) costs the collector a visit per pointer at every cycle, and a
// memtable's live heap is most of a node's.
//
// A key record is the key, then its header: the entry kind (one byte) and
// where its value is (chunk index and offset, four bytes each). A value
// record is its length (four bytes) and the value, in the encoding SSTables
// store (mutation.AppendEntryValue). Records are written once and never
// change, except the header's value location, which an overwrite moves to
// the merged value; both happen under the shard's write lock, and readers
// read headers under its read lock. Decoded entries alias the chunks, which
// stay as they are for as long as anything points into them.
type arena struct {
	chunks [][]byte
}

const (
	headerSize      = 1 + 4 + 4
	valueHeaderSize = 4
	firstChunkSize  = 4 << 10
	maxChunkSize    = 1 << 20
)

// alloc returns n bytes of fresh arena space and where they start.
func (a *arena) alloc(n int) (chunk, off uint32, b []byte) {
	last := len(a.chunks) - 1
	if last < 0 || cap(a.chunks[last])-len(a.chunks[last]) < n {
		size := firstChunkSize
		if last >= 0 {
			size = min(2*cap(a.chunks[last]), maxChunkSize)
		}
		a.chunks = append(a.chunks, make([]byte, 0, max(size, n)))
		last++
	}
	c := a.chunks[last]
	start := len(c)
	a.chunks[last] = c[:start+n]
	return uint32(last), uint32(start), c[start : start+n : start+n]
}

// addKey copies key into a new key record and returns the arena's key (its
// capacity covers the header) and the bytes taken. The header's value
// location is set by setValue.
func (a *arena) addKey(key []byte, kind mutation.EntryKind) ([]byte, int) {
	n := len(key) + headerSize
	_, _, b := a.alloc(n)
	copy(b, key)
	b[len(key)] = byte(kind)
	return b[:len(key):n], n
}

// setValue stores a value record for the key record, points the key's
// header at it and returns the bytes taken.
func (a *arena) setValue(key, value []byte) int {
	n := valueHeaderSize + len(value)
	chunk, off, b := a.alloc(n)
	binary.LittleEndian.PutUint32(b, uint32(len(value)))
	copy(b[valueHeaderSize:], value)
	h := header(key)
	binary.LittleEndian.PutUint32(h[1:], chunk)
	binary.LittleEndian.PutUint32(h[5:], off)
	return n
}

func header(key []byte) []byte { return key[len(key):cap(key)] }

// rawEntry is an entry as the arena holds it; its slices alias the arena.
type rawEntry struct {
	key   []byte
	kind  mutation.EntryKind
	value []byte
}

// raw reads the entry of a key record.
// REQUIRES: the shard's lock held (the header may move).
func (a *arena) raw(key []byte) rawEntry {
	h := header(key)
	c := a.chunks[binary.LittleEndian.Uint32(h[1:])]
	off := binary.LittleEndian.Uint32(h[5:])
	n := binary.LittleEndian.Uint32(c[off:])
	start := off + valueHeaderSize
	return rawEntry{key: key[:len(key):len(key)], kind: mutation.EntryKind(h[0]), value: c[start : start+n : start+n]}
}

// decode rebuilds the entry; its slices alias the arena. The arena holds
// only what Apply encoded, so an error here is a bug.
func (r *rawEntry) decode() (*mutation.Entry, error) {
	e, err := mutation.DecodeEntryRef(r.key, r.kind, r.value)
	if err != nil {
		return nil, fmt.Errorf("memtable: entry %x does not decode: %w: %v", r.key, invariants.ErrCorruption, err)
	}
	return e, nil
}
