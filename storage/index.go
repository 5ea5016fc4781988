package storage

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/google/btree"
	"github.com/sibyldb/sibyl/internal/ann"
	"github.com/sibyldb/sibyl/memtable"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/sstable"
)

// Storage-attached secondary indexes. Each memtable and each SSTable
// indexes the entries it holds: a memtable as it is written, an SSTable
// as it is written by a flush or a compaction (its index files beside
// it), an SSTable from before the index (or streamed in, or imported) by
// a background build. So an index needs no table of its own, goes with
// its data through flushes and compactions, and is never behind it.
//
// An index maps each term (the byte-comparable form of a value the node's
// IndexSpec reads from an entry) to the partitions holding it. A query
// asks for the partitions whose terms lie between two bounds, in token
// order, and reads them whole: the caller filters the rows, so a term an
// entry held before it was overwritten or deleted costs a read, not a
// wrong answer. A source without the index (a memtable begun before the
// index was created, an SSTable not built yet) offers all its partitions
// of the range instead, so a query is right before any build finishes.

// IndexSpec is a secondary index as the engine keeps it. The engine knows
// no columns: the node builds Terms from the schema.
type IndexSpec struct {
	// Name names the index's files: word characters only.
	Name string
	// Terms calls emit with each term entry e holds (e of the partition
	// with key partitionKey, at clustering for a row, nil for the rest);
	// terms compare as their bytes.
	Terms func(partitionKey, clustering []byte, e *mutation.Entry, emit func(term []byte))
	// Vector, when set, makes this a vector index: its terms are
	// vector<float, n> values, and each source keeps a graph of them to
	// find the nearest to a query.
	Vector *VectorIndex
}

// VectorIndex is what a vector index ranks by.
type VectorIndex struct {
	Similarity ann.Similarity
	Dimension  int
}

// IndexQuery asks an index for the partitions with terms between Lo and
// Hi (nil: open), each bound included when its flag says; or, of a vector
// index, for the partitions of the Nearest terms to Vector: every source
// offers the partitions of its Nearest nearest vectors, so the rows
// nearest overall are among them (the caller ranks the rows it reads).
type IndexQuery struct {
	Index                    string
	Lo, Hi                   []byte
	LoInclusive, HiInclusive bool
	Vector                   []float32
	Nearest                  int
}

// memIndex is one memtable's indexes.
type memIndex struct {
	specs []IndexSpec
	mu    sync.RWMutex
	trees map[string]*memTerms
	// filling are the trees of indexes added to a memtable that held
	// entries: written to, not read, until they hold them all.
	filling map[string]*memTerms
}

// memTerms is one index of a memtable: its postings, and for a vector
// index the graph of their vectors.
type memTerms struct {
	postings *btree.BTreeG[sstable.Posting]
	graph    *vectorGraph
}

func newMemTerms(spec IndexSpec) *memTerms {
	t := &memTerms{postings: btree.NewG(32, func(a, b sstable.Posting) bool { return sstable.ComparePostings(a, b) < 0 })}
	if spec.Vector != nil {
		t.graph = newVectorGraph(spec.Vector)
	}
	return t
}

func (t *memTerms) insert(p sstable.Posting) {
	if _, had := t.postings.ReplaceOrInsert(p); !had && t.graph != nil {
		t.graph.add(p)
	}
}

func newMemIndex(specs []IndexSpec) *memIndex {
	m := &memIndex{specs: specs, trees: map[string]*memTerms{}, filling: map[string]*memTerms{}}
	for _, s := range specs {
		m.trees[s.Name] = newMemTerms(s)
	}
	return m
}

// add indexes entries written to the memtable.
func (m *memIndex) add(entries []mutation.Entry, tokenLen int) {
	m.mu.RLock()
	specs := m.specs
	m.mu.RUnlock()
	if len(specs) == 0 {
		return
	}
	var b indexBuilder
	b.specs = specs
	for i := range entries {
		b.add(&entries[i], tokenLen)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, ps := range b.postings {
		t := m.trees[name]
		if t == nil {
			t = m.filling[name]
		}
		for _, p := range ps {
			t.insert(p)
		}
	}
}

// extend adds an index to a memtable that holds entries already: writes
// from now on are indexed as they come, and those before by a pass over
// the memtable (a term indexed twice is one posting).
func (m *memIndex) extend(spec IndexSpec, mt *memtable.Memtable, tokenLen int) error {
	m.mu.Lock()
	if m.trees[spec.Name] != nil || m.filling[spec.Name] != nil {
		m.mu.Unlock()
		return nil
	}
	m.specs = append(slices.Clone(m.specs), spec)
	tree := newMemTerms(spec)
	m.filling[spec.Name] = tree
	m.mu.Unlock()
	b := indexBuilder{specs: []IndexSpec{spec}}
	it := mt.NewIter(nil, nil)
	for e := it.First(); e != nil; e = it.Next() {
		b.add(e, tokenLen)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err // the tree stays unread: the memtable is read without it
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range b.postings[spec.Name] {
		tree.insert(p)
	}
	delete(m.filling, spec.Name)
	m.trees[spec.Name] = tree
	return nil
}

// refresh takes the current definitions of the memtable's indexes.
func (m *memIndex) refresh(specs []IndexSpec) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := slices.Clone(m.specs)
	for i, s := range next {
		for _, n := range specs {
			if n.Name == s.Name {
				next[i] = n
			}
		}
	}
	m.specs = next
}

// prefixes calls fn with the prefixes of the postings q asks for; false
// when the memtable does not have the index.
func (m *memIndex) prefixes(q IndexQuery, fn func(prefix []byte)) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	mt := m.trees[q.Index]
	if mt == nil {
		return false
	}
	if q.Vector != nil {
		if mt.graph == nil {
			return false
		}
		mt.graph.nearest(q, fn)
		return true
	}
	t := mt.postings
	visit := func(p sstable.Posting) bool {
		if q.Hi != nil {
			if c := bytes.Compare(p.Term, q.Hi); c > 0 || c == 0 && !q.HiInclusive {
				return false
			}
		}
		if q.Lo == nil || q.LoInclusive || !bytes.Equal(p.Term, q.Lo) {
			fn(p.Prefix)
		}
		return true
	}
	if q.Lo == nil {
		t.Ascend(visit)
	} else {
		t.AscendGreaterOrEqual(sstable.Posting{Term: q.Lo}, visit)
	}
	return true
}

// indexBuilder collects the postings of entries for each index.
type indexBuilder struct {
	specs    []IndexSpec
	postings map[string][]sstable.Posting
	lastKey  []byte // the partition of the last entry, parsed once
	lastPK   []byte
	lastPre  []byte
}

func (b *indexBuilder) add(e *mutation.Entry, tokenLen int) {
	if len(b.specs) == 0 {
		return
	}
	if b.postings == nil {
		b.postings = map[string][]sstable.Posting{}
	}
	n, err := mutation.PartitionPrefixLen(e.Key, tokenLen)
	if err != nil {
		return // a malformed key: the read path refuses it
	}
	if !bytes.Equal(e.Key[:n], b.lastPre) {
		parts, err := mutation.ParseKey(e.Key, tokenLen)
		if err != nil {
			return
		}
		b.lastPre, b.lastPK = slices.Clone(e.Key[:n]), slices.Clone(parts.PartitionKey)
	}
	var clustering []byte
	if e.Kind == mutation.RowEntry && len(e.Key) > n {
		clustering = e.Key[n+1:]
	}
	for _, s := range b.specs {
		s.Terms(b.lastPK, clustering, e, func(term []byte) {
			b.postings[s.Name] = append(b.postings[s.Name], sstable.Posting{Term: slices.Clone(term), Prefix: b.lastPre})
		})
	}
}

// holdsMemtable reports whether m is the active memtable or one being
// flushed.
func (t *Table) holdsMemtable(m *memtable.Memtable) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active.Load() == m {
		return true
	}
	return slices.ContainsFunc(t.mu.flushing, func(f flushingMemtable) bool { return f.m == m })
}

// memIndexOf is a memtable's indexes, made when the memtable became the
// active one.
func (t *Table) memIndexOf(m *memtable.Memtable) *memIndex {
	if mi, ok := t.memIndexes.Load(m); ok {
		return mi.(*memIndex)
	}
	return nil
}

// newMemtable makes a memtable with its indexes, for the indexes the table
// has now.
func (t *Table) newMemtable() *memtable.Memtable {
	m := memtable.New()
	if specs := t.indexSpecs(); len(specs) > 0 {
		t.memIndexes.Store(m, newMemIndex(specs))
	}
	return m
}

func (t *Table) indexSpecs() []IndexSpec {
	if p := t.indexes.Load(); p != nil {
		return *p
	}
	return nil
}

// indexApplied indexes entries just applied to memtable m.
func (t *Table) indexApplied(m *memtable.Memtable, entries []mutation.Entry) {
	if mi := t.memIndexOf(m); mi != nil {
		mi.add(entries, t.e.opts.SSTable.TokenLen)
	}
}

// sstableIndexes are an SSTable's indexes, by name.
type sstableIndexes map[string]*sstableIndex

// sstableIndex is an SSTable's index file, with a vector index's graph.
type sstableIndex struct {
	*sstable.Index
	graph *vectorGraph
}

func (s *sstableRef) index(name string) *sstableIndex {
	if p := s.indexes.Load(); p != nil {
		return (*p)[name]
	}
	return nil
}

// attachIndexes adds indexes to an SSTable's.
func (s *sstableRef) attachIndexes(add sstableIndexes) {
	for {
		old := s.indexes.Load()
		next := sstableIndexes{}
		if old != nil {
			maps.Copy(next, *old)
		}
		maps.Copy(next, add)
		if s.indexes.CompareAndSwap(old, &next) {
			return
		}
	}
}

// writeIndexes writes the index files a builder collected for an SSTable
// just published and attaches them. A failure leaves the SSTable without
// them (reads fall back to its partitions, and the build makes them
// later): it is logged, not returned, since the SSTable itself is sound.
func (t *Table) writeIndexes(ref *sstableRef, b *indexBuilder) {
	built := sstableIndexes{}
	for _, spec := range b.specs {
		postings := sstable.SortPostings(b.postings[spec.Name])
		var graph []byte
		var vg *vectorGraph
		if spec.Vector != nil {
			vg = buildVectorGraph(spec.Vector, postings)
			graph = vg.g.AppendBinary([]byte{})
		}
		if err := sstable.WriteIndex(t.e.opts.FS, t.dir, ref.gen, spec.Name, postings, graph); err != nil {
			t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Msg("writing an SSTable's index")
			continue
		}
		idx, _, err := sstable.ReadIndex(t.e.opts.FS, t.dir, ref.gen, spec.Name)
		if err != nil {
			t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Msg("reading back an SSTable's index")
			continue
		}
		// The graph just built serves as it is: decoding it from the file
		// again would rebuild the same one.
		built[spec.Name] = &sstableIndex{Index: idx, graph: vg}
	}
	ref.attachIndexes(built)
}

// buildMissingIndexes starts a build when SSTables just put in the
// table's list lack an index: one made while they were being written,
// after their builders took the definitions (or one whose file could not
// be written). The build does not start another, so a failing one does
// not repeat.
func (t *Table) buildMissingIndexes(refs ...*sstableRef) {
	for _, ref := range refs {
		for _, spec := range t.indexSpecs() {
			if ref.index(spec.Name) == nil {
				t.buildIndexesInBackground()
				return
			}
		}
	}
}

// loadIndexes reads an SSTable's index files for the table's indexes; it
// reports whether some are missing (a build is then due).
func (t *Table) loadIndexes(ref *sstableRef) (missing bool) {
	found := sstableIndexes{}
	for _, spec := range t.indexSpecs() {
		idx, ok, err := sstable.ReadIndex(t.e.opts.FS, t.dir, ref.gen, spec.Name)
		switch {
		case err != nil:
			// A damaged index is built again; the data is not touched.
			t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Uint64("generation", ref.gen).Str("index", spec.Name).
				Msg("an SSTable's index is unreadable: building it again")
			missing = true
		case !ok:
			missing = true
		default:
			si, ok := openSSTableIndex(spec, idx)
			if !ok {
				missing = true // a graph of another similarity, or damaged: built again
				continue
			}
			found[spec.Name] = si
		}
	}
	ref.attachIndexes(found)
	return missing
}

// buildIndexesInBackground builds the missing index files of the table's
// SSTables (written before an index existed, streamed in, or whose build
// was interrupted), one SSTable at a time; queries read those without
// their indexes meanwhile.
func (t *Table) buildIndexesInBackground() {
	if len(t.indexSpecs()) == 0 || !t.indexBuildPending.CompareAndSwap(false, true) {
		return
	}
	t.e.inBackground(t, "index build", t.e.compactionSlots, &t.e.compactionStage, func() error {
		t.indexBuildPending.Store(false)
		return t.buildIndexes()
	})
}

func (t *Table) buildIndexes() error {
	// One build at a time: two would write the same files.
	t.indexBuildMu.Lock()
	defer t.indexBuildMu.Unlock()
	v := t.acquireView()
	defer v.release()
	for _, ref := range v.sstables {
		var specs []IndexSpec
		for _, spec := range t.indexSpecs() {
			if ref.index(spec.Name) == nil {
				specs = append(specs, spec)
			}
		}
		if len(specs) == 0 || ref.obsolete.Load() {
			continue
		}
		if t.e.compactionsStopping() {
			return ErrCompactionStopped
		}
		if err := t.buildIndexesOf(ref, specs); err != nil {
			return err
		}
	}
	return nil
}

// buildIndexesOf indexes one SSTable, as a task nodetool compactionstats
// and system_views.sstable_tasks show: its progress is the share of the
// SSTable's entries read, in its bytes.
func (t *Table) buildIndexesOf(ref *sstableRef, specs []IndexSpec) error {
	m := ref.meta()
	running := t.e.tasks.start(Task{Keyspace: t.opts.Keyspace, Table: t.opts.Name, Kind: "secondary index build",
		SSTables: 1, Total: m.DataSize}, t.e.opts.Now())
	defer t.e.tasks.done(running)
	b := &indexBuilder{specs: specs}
	it, err := ref.r.NewIter(nil, nil)
	if err != nil {
		return err
	}
	tokenLen := t.e.opts.SSTable.TokenLen
	var read int64
	for e := it.First(); e != nil; e = it.Next() {
		b.add(e, tokenLen)
		if read++; read%1024 == 0 && m.Entries > 0 {
			running.completed.Store(min(read, m.Entries) * m.DataSize / m.Entries)
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	running.completed.Store(m.DataSize)
	t.writeIndexes(ref, b)
	t.indexesBuilt.Add(1)
	return nil
}

// reconfigureIndexes takes the table's indexes as they are now (their
// Terms may read a changed definition): dropped ones' files go, and new
// ones are built for the SSTables there are.
func (t *Table) reconfigureIndexes(specs []IndexSpec) {
	old := t.indexSpecs()
	t.indexes.Store(&specs)
	// The memtables read terms with the definitions as they are now (a
	// user type may have gained a field).
	t.memIndexes.Range(func(_, mi any) bool {
		mi.(*memIndex).refresh(specs)
		return true
	})
	if sameIndexes(old, specs) {
		return
	}
	keep := map[string]bool{}
	for _, s := range specs {
		keep[s.Name] = true
	}
	var dropped []string
	for _, s := range old {
		if !keep[s.Name] {
			dropped = append(dropped, s.Name)
		}
	}
	had := map[string]bool{}
	for _, s := range old {
		had[s.Name] = true
	}
	// The memtables index what they hold at once: they are small.
	v := t.acquireView()
	for _, m := range v.memtables {
		mi, _ := t.memIndexes.LoadOrStore(m, newMemIndex(nil))
		for _, spec := range specs {
			if had[spec.Name] {
				continue
			}
			if err := mi.(*memIndex).extend(spec, m, t.e.opts.SSTable.TokenLen); err != nil {
				t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Msg("indexing a memtable")
			}
		}
		if !t.holdsMemtable(m) {
			t.memIndexes.Delete(m) // flushed or truncated meanwhile: nothing reads it now
		}
	}
	v.release()
	if len(dropped) > 0 {
		v := t.acquireView()
		for _, ref := range v.sstables {
			for _, name := range dropped {
				if err := sstable.RemoveIndex(t.e.opts.FS, t.dir, ref.gen, name); err != nil {
					t.e.opts.Logger.Error().Err(err).Str("table", t.opts.Name).Msg("removing a dropped index's file")
				}
			}
		}
		v.release()
	}
	t.buildIndexesInBackground()
}

// indexCandidates are the prefixes of the partitions of [opts.From,
// opts.To) a query must read for q, sorted and without repeats: those the
// sources' indexes name, and every partition of a source without the
// index.
func (t *Table) indexCandidates(v *view, q IndexQuery, opts ScanQuery) ([][]byte, error) {
	tokenLen := t.e.opts.SSTable.TokenLen
	var out [][]byte
	inRange := func(prefix []byte) bool {
		// A resumed page may start inside a partition: keep that one.
		return (opts.From == nil || bytes.Compare(mutation.PartitionUpperBound(prefix), opts.From) > 0) &&
			(opts.To == nil || bytes.Compare(prefix, opts.To) < 0)
	}
	take := func(prefix []byte) {
		if inRange(prefix) {
			out = append(out, prefix)
		}
	}
	// every lists the partitions of a source that has not the index.
	every := func(it mutation.Iterator) error {
		var last []byte
		for e := it.First(); e != nil; e = it.Next() {
			n, err := mutation.PartitionPrefixLen(e.Key, tokenLen)
			if err != nil {
				it.Close()
				return err
			}
			if !bytes.Equal(e.Key[:n], last) {
				last = slices.Clone(e.Key[:n])
				take(last)
			}
		}
		return errors.Join(it.Error(), it.Close())
	}
	for _, m := range v.memtables {
		if mi := t.memIndexOf(m); mi != nil && mi.prefixes(q, take) {
			continue
		}
		if err := every(m.NewIter(opts.From, opts.To)); err != nil {
			return nil, err
		}
	}
	for _, s := range v.sstables {
		if idx := s.index(q.Index); idx != nil && (q.Vector == nil || idx.graph != nil) {
			if q.Vector != nil {
				idx.graph.nearest(q, take)
			} else {
				idx.Prefixes(q.Lo, q.Hi, q.LoInclusive, q.HiInclusive, take)
			}
			continue
		}
		it, err := s.r.NewIter(opts.From, opts.To)
		if err != nil {
			return nil, err
		}
		if err := every(it); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return slices.CompactFunc(out, bytes.Equal), nil
}

// openSSTableIndex pairs an index file with its graph when spec is a
// vector index; false when the file has no fitting graph.
func openSSTableIndex(spec IndexSpec, idx *sstable.Index) (*sstableIndex, bool) {
	si := &sstableIndex{Index: idx}
	if spec.Vector != nil {
		if si.graph = loadVectorGraph(spec.Vector, idx); si.graph == nil {
			return nil, false
		}
	}
	return si, true
}

// sameIndexes reports whether two sets of indexes are the same by name.
func sameIndexes(a, b []IndexSpec) bool {
	return slices.EqualFunc(a, b, func(x, y IndexSpec) bool { return x.Name == y.Name })
}
