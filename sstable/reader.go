package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// Reader reads one published SSTable.
type Reader struct {
	name     string // path of the Data file
	meta     *Metadata
	r        *sstable.Reader
	tokenLen int
	filter   []byte // the Filter component; nil passes every partition
}

// Open opens generation gen in dir. cache may be nil.
func Open(fs vfs.FS, dir string, gen uint64, cache *Cache, tokenLen int) (*Reader, error) {
	cmp, err := comparerFor(tokenLen)
	if err != nil {
		return nil, err
	}
	meta, err := readMetadata(fs, fs.PathJoin(dir, StatisticsFileName(gen)))
	if err != nil {
		return nil, err
	}
	if n := len(meta.MinToken); n > 0 && n != tokenLen {
		// Tokens are 8 bytes under Murmur3Partitioner, 16 under
		// RandomPartitioner: the partitioner setting changed.
		return nil, fmt.Errorf("sstable: %s holds %d-byte tokens and this node's partitioner makes %d-byte ones: "+
			"a node keeps the partitioner its data was written with", fs.PathJoin(dir, DataFileName(gen)), n, tokenLen)
	}
	filter, err := readFilter(fs, fs.PathJoin(dir, FilterFileName(gen)))
	if err != nil {
		return nil, err
	}
	name := fs.PathJoin(dir, DataFileName(gen))
	f, err := fs.Open(name, vfs.RandomReadsOption)
	if err != nil {
		return nil, fmt.Errorf("sstable: open %s: %w", name, err)
	}
	if err := checkFooter(f, meta); err != nil {
		f.Close()
		return nil, fmt.Errorf("sstable: %s: %w", name, err)
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sstable: open %s: %w", name, err)
	}
	ro := sstable.ReaderOptions{Comparer: cmp}
	if cache != nil {
		ro.Cache = cache.c
	}
	// On error pebble has closed the file already.
	r, err := newPebbleReader(readable, ro)
	if err != nil {
		return nil, wrapReadError(name, err)
	}
	return &Reader{name: name, meta: meta, r: r, tokenLen: tokenLen, filter: filter}, nil
}

// wrapReadError names the file and marks checksum failures as corruption
// (INVARIANT S2).
func wrapReadError(name string, err error) error {
	if pebble.IsCorruptionError(err) || strings.Contains(err.Error(), "checksum") {
		return fmt.Errorf("sstable: %s: %w: %v", name, invariants.ErrCorruption, err)
	}
	return fmt.Errorf("sstable: %s: %w", name, err)
}

// Metadata returns the Statistics component.
func (r *Reader) Metadata() *Metadata { return r.meta }

// RawBytes is the size of the SSTable's keys and values before
// compression and block framing.
func (r *Reader) RawBytes() int64 {
	return int64(r.r.Properties.RawKeySize + r.r.Properties.RawValueSize)
}

// Name is the path of the Data file.
func (r *Reader) Name() string { return r.name }

// Close releases the file.
func (r *Reader) Close() error { return r.r.Close() }

// NewIter iterates the entries with keys in [lower, upper); nil bounds are
// open.
func (r *Reader) NewIter(lower, upper []byte) (*Iter, error) {
	it, err := r.r.NewIter(lower, upper)
	if err != nil {
		return nil, wrapReadError(r.name, err)
	}
	return &Iter{r: r, it: it, lower: lower, upper: upper, state: beforeFirst}, nil
}

// MayContainPartition reports whether the SSTable may hold entries of the
// partition with the given prefix, from its key range and bloom filter.
func (r *Reader) MayContainPartition(prefix []byte) (bool, error) {
	it, err := r.NewPartitionIter(prefix, nil)
	if it == nil || err != nil {
		return false, err
	}
	return true, it.Close()
}

// NewPartitionIter iterates the entries of one partition, or returns nil
// when the key range, the bloom filter or a seek shows the SSTable has
// none. upper is the partition's mutation.PartitionUpperBound, or nil to
// have it made here.
func (r *Reader) NewPartitionIter(prefix, upper []byte) (*Iter, error) {
	if r.meta.MinKey == nil || bytes.Compare(prefix, r.meta.MaxKey) > 0 || !mayContain(r.filter, prefix) {
		return nil, nil
	}
	if upper == nil { // made only for an SSTable the filter keeps: most of a read's are not
		upper = mutation.PartitionUpperBound(prefix)
	}
	if bytes.Compare(upper, r.meta.MinKey) <= 0 {
		return nil, nil
	}
	it, err := r.r.NewIter(prefix, upper)
	if err != nil {
		return nil, wrapReadError(r.name, err)
	}
	k, v := it.SeekGE(prefix, sstable.SeekGEFlags(0))
	if k == nil {
		err := it.Error()
		if closeErr := it.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return nil, wrapReadError(r.name, err)
		}
		return nil, nil
	}
	i := &Iter{r: r, it: it, lower: prefix, upper: upper, state: beforeFirst}
	// The probe already found the partition's first entry; the read's
	// First takes it from here instead of seeking again.
	i.primed = i.decode(k, v.Value, afterLast)
	i.state = beforeFirst
	if i.err != nil {
		err := i.err
		it.Close()
		return nil, err
	}
	return i, nil
}

// PartitionDeletion returns the partition's deletion when the iterator, not
// yet moved, holds one: the probe that opened it decoded the partition's
// first entry, where a partition deletion sorts.
func (i *Iter) PartitionDeletion() (mutation.DeletionTime, bool) {
	if i.primed == nil || i.primed.Kind != mutation.PartitionDeletionEntry {
		return mutation.DeletionTime{}, false
	}
	return i.primed.Deletion, true
}

type iterState uint8

const (
	atEntry iterState = iota
	beforeFirst
	afterLast
)

// Iter decodes the entries of an SSTable (mutation.Iterator).
type Iter struct {
	r            *Reader
	it           sstable.Iterator
	lower, upper []byte
	state        iterState
	err          error
	// primed is the entry the underlying iterator is positioned at, decoded
	// by the seek that opened it, until any other move.
	primed *mutation.Entry
}

var _ mutation.Iterator = (*Iter)(nil)

// valueFunc is pebble's lazy value accessor, taken as a method value so
// that no pebble type beyond the key appears here.
type valueFunc func(buf []byte) ([]byte, bool, error)

func (i *Iter) decode(k *sstable.InternalKey, value valueFunc, ifNone iterState) *mutation.Entry {
	if k == nil {
		if err := i.it.Error(); err != nil && i.err == nil {
			i.err = wrapReadError(i.r.name, err)
		}
		i.state = ifNone
		return nil
	}
	v, _, err := value(nil)
	if err != nil {
		i.err = wrapReadError(i.r.name, err)
		i.state = ifNone
		return nil
	}
	// Copy key and value out of pebble's block buffer, which the next move may
	// release: entries from an SSTable stay valid for as long as callers
	// hold them, like memtable entries.
	buf := make([]byte, len(k.UserKey)+len(v))
	key := buf[:len(k.UserKey):len(k.UserKey)]
	copy(key, k.UserKey)
	val := buf[len(key):]
	copy(val, v)
	parts, err := mutation.ParseKey(key, i.r.tokenLen)
	var e *mutation.Entry
	if err == nil {
		e, err = mutation.DecodeEntryRef(key, parts.Kind, val)
	}
	if err != nil {
		i.err = fmt.Errorf("sstable: %s: key %x: %w: %v", i.r.name, k.UserKey, invariants.ErrCorruption, err)
		i.state = ifNone
		return nil
	}
	i.state = atEntry
	return e
}

// SeekGE implements mutation.Iterator.
func (i *Iter) SeekGE(key []byte) *mutation.Entry {
	if i.lower != nil && bytes.Compare(key, i.lower) <= 0 {
		return i.First()
	}
	i.primed = nil
	k, v := i.it.SeekGE(key, sstable.SeekGEFlags(0))
	return i.decode(k, v.Value, afterLast)
}

// First implements mutation.Iterator.
func (i *Iter) First() *mutation.Entry {
	if e := i.primed; e != nil {
		i.primed = nil
		i.state = atEntry
		return e
	}
	if i.lower != nil {
		k, v := i.it.SeekGE(i.lower, sstable.SeekGEFlags(0))
		return i.decode(k, v.Value, afterLast)
	}
	k, v := i.it.First()
	return i.decode(k, v.Value, afterLast)
}

// Next implements mutation.Iterator.
func (i *Iter) Next() *mutation.Entry {
	switch i.state {
	case beforeFirst:
		return i.First()
	case afterLast:
		return nil
	}
	i.primed = nil
	k, v := i.it.Next()
	return i.decode(k, v.Value, afterLast)
}

// SeekLT implements mutation.Iterator.
func (i *Iter) SeekLT(key []byte) *mutation.Entry {
	if i.upper != nil && bytes.Compare(key, i.upper) > 0 {
		key = i.upper
	}
	i.primed = nil
	k, v := i.it.SeekLT(key, sstable.SeekLTFlags(0))
	return i.decode(k, v.Value, beforeFirst)
}

// Last implements mutation.Iterator.
func (i *Iter) Last() *mutation.Entry {
	if i.upper != nil {
		return i.SeekLT(i.upper)
	}
	i.primed = nil
	k, v := i.it.Last()
	return i.decode(k, v.Value, beforeFirst)
}

// Prev implements mutation.Iterator.
func (i *Iter) Prev() *mutation.Entry {
	switch i.state {
	case afterLast:
		return i.Last()
	case beforeFirst:
		return nil
	}
	i.primed = nil
	k, v := i.it.Prev()
	return i.decode(k, v.Value, beforeFirst)
}

// Error implements mutation.Iterator.
func (i *Iter) Error() error { return i.err }

// Close implements mutation.Iterator.
func (i *Iter) Close() error {
	if err := i.it.Close(); err != nil && i.err == nil {
		i.err = wrapReadError(i.r.name, err)
	}
	return i.err
}

// Generations lists the published SSTables in dir (those whose Statistics
// file exists), oldest first.
func Generations(fs vfs.FS, dir string) ([]uint64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("sstable: list %s: %w", dir, err)
	}
	var gens []uint64
	for _, name := range names {
		if g, ok := parseName(name, "-Statistics.db"); ok {
			gens = append(gens, g)
		}
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	return gens, nil
}

func parseName(name, suffix string) (uint64, bool) {
	if !strings.HasPrefix(name, "sb-") || !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "sb-"), suffix), 10, 64)
	return g, err == nil
}

// RemoveIncomplete deletes what an interrupted flush or compaction left in
// dir: temporary files, and Data files without a Statistics file. It
// returns the names removed.
func RemoveIncomplete(fs vfs.FS, dir string) ([]string, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("sstable: list %s: %w", dir, err)
	}
	published := map[uint64]bool{}
	for _, name := range names {
		if g, ok := parseName(name, "-Statistics.db"); ok {
			published[g] = true
		}
	}
	var removed []string
	for _, name := range names {
		incomplete := strings.HasPrefix(name, "sb-") && strings.HasSuffix(name, tempSuffix)
		if g, ok := parseName(name, "-Data.db"); ok && !published[g] {
			incomplete = true
		}
		if g, ok := parseName(name, "-Filter.db"); ok && !published[g] {
			incomplete = true
		}
		if g, ok := indexGeneration(name); ok && !published[g] {
			incomplete = true
		}
		if !incomplete {
			continue
		}
		if err := fs.Remove(fs.PathJoin(dir, name)); err != nil {
			return removed, fmt.Errorf("sstable: remove %s: %w", name, err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// Remove deletes the files of generation gen: Statistics first, so a crash
// midway leaves unpublished components that RemoveIncomplete clears.
func Remove(fs vfs.FS, dir string, gen uint64) error {
	for _, name := range ComponentNames(gen) {
		err := fs.Remove(fs.PathJoin(dir, name))
		if err != nil && !(name == FilterFileName(gen) && errors.Is(err, os.ErrNotExist)) {
			return fmt.Errorf("sstable: remove generation %d: %w", gen, err)
		}
	}
	// Its index files, once it is unpublished: one left by a crash here
	// goes with RemoveIncomplete.
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("sstable: remove generation %d: %w", gen, err)
	}
	for _, name := range indexFilesOf(names, gen) {
		if err := fs.Remove(fs.PathJoin(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sstable: remove generation %d: %w", gen, err)
		}
	}
	return nil
}

// ComponentNames are a generation's files, Statistics first: the order in
// which they go.
func ComponentNames(gen uint64) []string {
	return []string{StatisticsFileName(gen), DataFileName(gen), FilterFileName(gen)}
}

// checkFooter refuses a Data file whose size or footer differ from what its
// Statistics recorded.
func checkFooter(f vfs.File, meta *Metadata) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != meta.DataSize {
		return invariants.Corruptf("data file has %d bytes, its statistics say %d", st.Size(), meta.DataSize)
	}
	crc, err := footerCRC(f, st.Size())
	if err != nil {
		return err
	}
	if crc != meta.FooterCRC {
		return invariants.Corruptf("footer checksum mismatch")
	}
	return nil
}

// newPebbleReader opens pebble's reader, turning a panic on malformed
// input (which the footer check should already have refused) into a
// corruption error rather than a crashed node.
func newPebbleReader(readable objstorage.Readable, ro sstable.ReaderOptions) (r *sstable.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			_ = readable.Close()
			r, err = nil, invariants.Corruptf("unreadable table: %v", p)
		}
	}()
	return sstable.NewReader(readable, ro)
}
