package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/sstable"
)

// A table's data moves to another node in sections, one per SSTable that
// holds some of the token ranges moved: whole, where every partition of
// the SSTable is in them (its files are sent as they are, as Cassandra 4's
// zero-copy streaming does), or as the entries of the SSTable inside them.
// The receiver makes each section an SSTable of its own, so nothing is
// reconciled on the way and every tombstone travels with the data it
// shadows.

// KeySpan is the engine keys [From, To) of a run of whole partitions:
// From and To fall between partitions (a token's partition prefix, as
// range reads bound themselves). A nil From starts at the first key, a
// nil To runs to the last.
type KeySpan struct {
	From, To []byte
}

func (s KeySpan) contains(key []byte) bool {
	return (s.From == nil || bytes.Compare(key, s.From) >= 0) && (s.To == nil || bytes.Compare(key, s.To) < 0)
}

// checkSpans refuses spans that are empty, out of order or overlapping.
func checkSpans(spans []KeySpan) error {
	if len(spans) == 0 {
		return errors.New("storage: no key spans")
	}
	for i, s := range spans {
		if s.From != nil && s.To != nil && bytes.Compare(s.From, s.To) >= 0 {
			return fmt.Errorf("storage: key span %d is empty: %x to %x", i, s.From, s.To)
		}
		if i > 0 {
			prev := spans[i-1]
			if prev.To == nil || s.From == nil || bytes.Compare(s.From, prev.To) < 0 {
				return fmt.Errorf("storage: key span %d starts before span %d ends", i, i-1)
			}
		}
	}
	return nil
}

// spanOf is the span of sorted spans holding key, or -1.
func spanOf(spans []KeySpan, key []byte) int {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].To == nil || bytes.Compare(key, spans[i].To) < 0 })
	if i < len(spans) && spans[i].contains(key) {
		return i
	}
	return -1
}

// coverage is how spans cover an SSTable with data: whole when one span
// holds every partition of it, else the spans that hold some.
func coverage(m *sstable.Metadata, spans []KeySpan) (whole bool, overlapping []KeySpan) {
	for _, s := range spans {
		if s.To != nil && bytes.Compare(m.MinKey, s.To) >= 0 || s.From != nil && bytes.Compare(m.MaxKey, s.From) < 0 {
			continue
		}
		if s.contains(m.MinKey) && s.contains(m.MaxKey) {
			return true, nil
		}
		overlapping = append(overlapping, s)
	}
	return false, overlapping
}

// Outgoing is what a table sends of some key spans: its SSTables as of
// the flush StreamOut began with, held until Release.
type Outgoing struct {
	Sections []*OutgoingSection
	refs     []*sstableRef
}

// OutgoingSection is one SSTable's part of an Outgoing.
type OutgoingSection struct {
	t     *Table
	ref   *sstableRef
	spans []KeySpan // those the SSTable overlaps; nil when Whole
}

// StreamOut flushes the table and returns the sections that hold the
// spans' data. The caller sends them and then calls Release.
func (t *Table) StreamOut(spans []KeySpan) (*Outgoing, error) {
	if err := checkSpans(spans); err != nil {
		return nil, err
	}
	if err := t.Flush(); err != nil {
		return nil, err
	}
	v := t.acquireView()
	defer v.release()
	out := &Outgoing{}
	for _, ref := range v.sstables {
		m := ref.meta()
		if m.MinKey == nil {
			continue // a commit log bound marker: no data
		}
		whole, overlapping := coverage(m, spans)
		if !whole && overlapping == nil {
			continue
		}
		ref.refs.Add(1)
		out.refs = append(out.refs, ref)
		sec := &OutgoingSection{t: t, ref: ref}
		if !whole {
			sec.spans = overlapping
		}
		out.Sections = append(out.Sections, sec)
	}
	return out, nil
}

// Release lets the sections' SSTables go.
func (o *Outgoing) Release() {
	for _, r := range o.refs {
		r.unref()
	}
	o.refs, o.Sections = nil, nil
}

// Whole reports whether every partition of the section's SSTable is to be
// sent, so its files go as they are.
func (s *OutgoingSection) Whole() bool { return s.spans == nil }

// Metadata is the SSTable's Statistics, which an ImportWhole takes.
func (s *OutgoingSection) Metadata() sstable.Metadata { return *s.ref.meta() }

// Size is the bytes the section sends: exact for a whole section (its
// Data file), an estimate for entries (the SSTable's uncompressed keys and
// values, in the share of its token span that the spans cover).
func (s *OutgoingSection) Size() int64 {
	m := s.ref.meta()
	if s.Whole() {
		return m.DataSize
	}
	return int64(float64(s.ref.r.RawBytes()) * s.coveredShare())
}

// coveredShare is the share of the SSTable's token span inside the spans,
// its partitions taken as spread evenly over it (as hashed tokens are).
func (s *OutgoingSection) coveredShare() float64 {
	p := s.t.e.Partitioner()
	n := p.TokenBytesLen()
	place := func(key []byte, ifNil float64) float64 {
		if len(key) < n {
			return ifNil
		}
		tok, err := p.TokenFromBytes(key[:n])
		if err != nil {
			return ifNil
		}
		return p.RingFraction(tok)
	}
	m := s.ref.meta()
	lo, hi := place(m.MinKey, 0), place(m.MaxKey, 1)
	if hi <= lo {
		return 1
	}
	covered := 0.0
	for _, span := range s.spans {
		from, to := max(place(span.From, 0), lo), min(place(span.To, 1), hi)
		covered += max(0, to-from)
	}
	return min(1, covered/(hi-lo))
}

// SectionData is a whole section's Data file, readable from any offset so
// that a transfer may go on where it broke off.
type SectionData interface {
	io.Reader
	io.ReaderAt
	io.Closer
}

// OpenData opens the SSTable's Data file, to send whole.
func (s *OutgoingSection) OpenData() (SectionData, error) {
	fs := s.t.e.opts.FS
	return fs.Open(fs.PathJoin(s.t.dir, sstable.DataFileName(s.ref.gen)))
}

// Filter is the SSTable's Filter file, to send whole: nil when it has
// none (an SSTable written before filters were).
func (s *OutgoingSection) Filter() ([]byte, error) {
	fs := s.t.e.opts.FS
	f, err := fs.Open(fs.PathJoin(s.t.dir, sstable.FilterFileName(s.ref.gen)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Entries calls send with each entry of the section, in key order (for a
// whole section, every entry). An entry is valid only during its call.
func (s *OutgoingSection) Entries(send func(*mutation.Entry) error) error {
	spans := s.spans
	if spans == nil {
		spans = []KeySpan{{}}
	}
	for _, span := range spans {
		it, err := s.ref.r.NewIter(span.From, span.To)
		if err != nil {
			return err
		}
		for e := it.First(); e != nil; e = it.Next() {
			if err := send(e); err != nil {
				it.Close()
				return err
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}

// ErrTableClosed is an import that finished after its table closed (the
// engine's close, or a drop): what it received is not kept.
var ErrTableClosed = errors.New("storage: the table closed while data was imported into it")

// ErrTruncatedDuringImport is an import the table's truncation overtook:
// its data was from before the truncation, and is dropped with it.
var ErrTruncatedDuringImport = errors.New("storage: the table was truncated while data was imported into it")

// Import receives one section's entries as a new SSTable of the table.
type Import struct {
	t           *Table
	spans       []KeySpan
	w           *sstable.Writer
	gen         uint64
	truncations uint64
	added       int
}

// NewImport starts receiving entries, which must be in key order and
// inside spans (those the receiver asked for).
func (t *Table) NewImport(spans []KeySpan) (*Import, error) {
	if err := checkSpans(spans); err != nil {
		return nil, err
	}
	w, gen, err := t.createSSTable(0)
	if err != nil {
		return nil, err
	}
	return &Import{t: t, spans: spans, w: w, gen: gen, truncations: t.truncations()}, nil
}

// Add appends an entry.
func (i *Import) Add(e *mutation.Entry) error {
	if spanOf(i.spans, e.Key) < 0 {
		return fmt.Errorf("storage: import into %s.%s: key %x is outside the spans asked for", i.t.opts.Keyspace, i.t.opts.Name, e.Key)
	}
	if err := i.w.Add(e); err != nil {
		return err
	}
	i.added++
	return nil
}

// Finish publishes the SSTable; an empty import publishes nothing.
func (i *Import) Finish() error {
	if i.added == 0 {
		i.w.Abort()
		return nil
	}
	if i.t.isClosed() {
		i.w.Abort()
		return ErrTableClosed
	}
	// No record of this node's commit log is in it.
	ref, err := i.t.publish(i.w, i.gen, commitlog.Position{})
	if err != nil {
		return err
	}
	return i.t.addImported(ref, i.truncations)
}

// Abort drops what was received.
func (i *Import) Abort() { i.w.Abort() }

// ImportWhole receives an SSTable sent whole: its Statistics, Data file
// and Filter file (nil: none). Its keys must be inside spans.
func (t *Table) ImportWhole(spans []KeySpan, meta sstable.Metadata, data io.Reader, filter []byte) error {
	if err := checkSpans(spans); err != nil {
		return err
	}
	if meta.MinKey == nil || spanOf(spans, meta.MinKey) < 0 || spanOf(spans, meta.MinKey) != spanOf(spans, meta.MaxKey) {
		return fmt.Errorf("storage: import into %s.%s: an SSTable of keys %x to %x is not inside one of the spans asked for",
			t.opts.Keyspace, t.opts.Name, meta.MinKey, meta.MaxKey)
	}
	if filter == nil {
		filter = sstable.NoFilter()
	}
	if t.isClosed() {
		return ErrTableClosed
	}
	truncations := t.truncations()
	gen := t.allocGeneration()
	if _, err := sstable.Import(t.e.opts.FS, t.dir, gen, meta, data, filter); err != nil {
		return err
	}
	ref, err := t.openSSTable(gen)
	if err != nil {
		_ = sstable.Remove(t.e.opts.FS, t.dir, gen)
		return err
	}
	return t.addImported(ref, truncations)
}

// addImported puts an imported SSTable in the table's list, unless a
// truncation came after the import began.
func (t *Table) addImported(ref *sstableRef, truncations uint64) error {
	// flushMu orders it with Truncate, which swaps the list under it.
	t.flushMu.Lock()
	t.mu.Lock()
	var refused error
	switch {
	case t.mu.closed:
		refused = ErrTableClosed
	case t.mu.truncations != truncations:
		refused = ErrTruncatedDuringImport
	default:
		t.mu.sstables = append(t.mu.sstables, ref)
	}
	t.mu.Unlock()
	t.flushMu.Unlock()
	if refused != nil {
		ref.r.Close()
		_ = sstable.Remove(t.e.opts.FS, t.dir, ref.gen)
		return refused
	}
	t.e.opts.Logger.Debug().Str("keyspace", t.opts.Keyspace).Str("table", t.opts.Name).Uint64("generation", ref.gen).
		Int64("bytes", ref.meta().DataSize).Msg("imported")
	t.e.compactInBackground(t)
	t.buildIndexesInBackground() // an imported SSTable comes without index files
	return nil
}

func (t *Table) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.closed
}

func (t *Table) truncations() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.truncations
}
