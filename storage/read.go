package storage

import (
	"bytes"
	"errors"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/sstable"
	"github.com/sibyldb/sibyl/tracing"
)

// A partition read and its answer are the request package's, the forms
// every layer above shares: the engine is one node's answer to them.
type (
	// ReadQuery shapes a partition read.
	ReadQuery = request.Slice
	// Row is a clustering row as a read returns it: only live data.
	Row = request.Row
	// Partition is what a read returns of one partition.
	Partition = request.Partition
	// RawPartition is one partition of ScanEntries: its key and the
	// entries the scan visited, in key order.
	RawPartition = request.RawPartition
)

// partitionState is what a read learns before the rows: deletions.
type partitionState struct {
	deletion   mutation.DeletionTime
	tombstones []mutation.RangeTombstone
}

// absorb takes a partition deletion or a range tombstone into the state;
// other entries are left to the caller.
func (s *partitionState) absorb(e *mutation.Entry, tokenLen int) error {
	switch e.Kind {
	case mutation.PartitionDeletionEntry:
		s.deletion = s.deletion.Max(e.Deletion)
	case mutation.RangeTombstoneEntry:
		parts, err := mutation.ParseKey(e.Key, tokenLen)
		if err != nil {
			return err
		}
		s.tombstones = append(s.tombstones, mutation.RangeTombstone{Start: parts.Clustering, End: parts.End, Deletion: e.Deletion})
	}
	return nil
}

// shadowOf returns the strongest deletion over a row entry: the partition
// deletion for the static row, and the range tombstones covering its
// clustering as well for a clustering row.
func (s *partitionState) shadowOf(e *mutation.Entry, clustering []byte) mutation.DeletionTime {
	d := s.deletion
	if e.Kind != mutation.RowEntry {
		return d
	}
	for i := range s.tombstones {
		if s.tombstones[i].Covers(clustering) {
			d = d.Max(s.tombstones[i].Deletion)
		}
	}
	return d
}

// live returns what a read at now sees of a row entry, or nil.
func (s *partitionState) live(e *mutation.Entry, clustering []byte, now int64) *mutation.Row {
	r := e.Row.ShadowedBy(s.shadowOf(e, clustering))
	if r == nil {
		return nil
	}
	return r.Live(now)
}

// ReadPartition reads one partition's static row and the live rows in the
// slice, merging memtables and the SSTables that may hold the partition.
func (t *Table) ReadPartition(key []byte, opts ReadQuery) (*Partition, error) {
	return t.read(key, opts, nil)
}

// ReadPartitionEntries is ReadPartition's raw form, for a coordinator that
// reconciles replicas: the partition's entries as the read saw them
// (deletions, range tombstones and the static row, then every row entry
// visited until the limit's live rows, dead ones included), in key order.
// ResolvePartition turns them, or a merge of several replicas' entries,
// into what ReadPartition returns.
func (t *Table) ReadPartitionEntries(key []byte, opts ReadQuery) ([]mutation.Entry, error) {
	var raw []mutation.Entry
	if _, err := t.read(key, opts, &raw); err != nil {
		return nil, err
	}
	slices.SortFunc(raw, func(a, b mutation.Entry) int { return bytes.Compare(a.Key, b.Key) })
	return raw, nil
}

// read reads a partition, keeping the entries it visits in raw if asked.
func (t *Table) read(key []byte, opts ReadQuery, raw *[]mutation.Entry) (*Partition, error) {
	start := time.Now()
	prefix := mutation.AppendPartitionPrefix(nil, t.e.opts.Partitioner.Token(key), key)
	opts.Trace.Event("Acquiring sstable references")
	v := t.acquireView()
	defer v.release()
	it, err := t.partitionIter(v, prefix, opts.Trace)
	if err != nil {
		return nil, t.e.reportFailure(err)
	}
	var seen scanned
	p, err := readPartition(it, t.e.opts.SSTable.TokenLen, prefix, key, opts, raw, &seen)
	err = t.e.reportFailure(errors.Join(err, it.Close()))
	took := since(start)
	t.metrics.ReadLatency.Record(took)
	if s := t.sampling.Load(); s != nil {
		s.Reads.Add(string(key), 1)
		s.ReadTime.Max(string(key), took)
	}
	t.metrics.TombstonesPerRead.Record(int64(seen.dead))
	t.metrics.LivePerRead.Record(int64(seen.live))
	return p, err
}

// ResolvePartition reads entries of one partition (in key order, as
// ReadPartitionEntries returns them or merged from several) as
// ReadPartition reads the engine.
func ResolvePartition(p partitioner.Partitioner, tokenLen int, key []byte, entries []mutation.Entry, opts ReadQuery) (*Partition, error) {
	prefix := mutation.AppendPartitionPrefix(nil, p.Token(key), key)
	opts.Trace = nil // the replicas' reads recorded what they read
	return readPartition(&sliceIter{entries: entries, pos: -1}, tokenLen, prefix, key, opts, nil, &scanned{})
}

// partitionIter merges the sources that may hold the partition. An SSTable
// whose newest write is older than a partition deletion another source
// holds has nothing the read could return, and is left out (as Cassandra
// skips SSTables by their maximum timestamp).
func (t *Table) partitionIter(v *view, prefix []byte, tr *tracing.Trace) (*mergingIter, error) {
	upper := mutation.PartitionUpperBound(prefix)
	deletion := mutation.Live
	var its []mutation.Iterator
	for _, m := range v.memtables {
		its = append(its, m.NewIter(prefix, upper))
	}
	type candidate struct {
		it *sstable.Iter
		s  *sstableRef
	}
	var candidates []candidate
	closeAll := func() {
		for _, it := range its {
			it.Close()
		}
		for _, c := range candidates {
			c.it.Close()
		}
	}
	for _, s := range v.sstables {
		it, err := s.r.NewPartitionIter(prefix)
		if err != nil {
			closeAll()
			return nil, err
		}
		if it == nil {
			if tr != nil {
				tr.Eventf("Bloom filter allows skipping sstable %d", s.gen)
			}
			continue
		}
		candidates = append(candidates, candidate{it, s})
		if d, ok := it.PartitionDeletion(); ok {
			deletion = deletion.Max(d)
		}
	}
	if len(candidates) > 0 {
		// Only worth a lookup when there is an SSTable it could rule out.
		var delKey []byte
		for _, m := range v.memtables {
			if !m.HasPartitionDeletions() {
				continue
			}
			if delKey == nil {
				delKey = mutation.AppendEntryKey(nil, prefix, mutation.PartitionDeletionEntry, nil)
			}
			if e := m.Get(delKey); e != nil {
				deletion = deletion.Max(e.Deletion)
			}
		}
	}
	read := int64(0)
	for _, c := range candidates {
		if !deletion.IsLive() && c.s.meta().MaxTimestamp < deletion.MarkedForDeleteAt {
			if tr != nil {
				tr.Eventf("Skipping sstable %d: its newest write is older than the partition deletion", c.s.gen)
			}
			c.it.Close()
			continue
		}
		its = append(its, c.it)
		read++
	}
	t.readStats.reads.Add(1)
	t.readStats.sstables.Add(read)
	t.metrics.SSTablesPerRead.Record(read)
	if tr != nil {
		tr.Event("Merging memtable contents")
		tr.Eventf("Merged data from memtables and %d sstables", read)
	}
	return newMergingIter(its), nil
}

// ReadStats counts partition reads and the SSTables they read (the source
// of nodetool's SSTables-per-read).
func (t *Table) ReadStats() (reads, sstables int64) {
	return t.readStats.reads.Load(), t.readStats.sstables.Load()
}

// scanned is what a partition read went through: the live rows it
// returned, and the deletions and rows with nothing live.
type scanned struct{ live, dead int }

// readPartition walks a partition: deletions and the static row first, then
// the rows of the slice in the asked order, counting what it went through
// in seen.
func readPartition(it mutation.Iterator, tokenLen int, prefix, key []byte, opts ReadQuery, raw *[]mutation.Entry, seen *scanned) (*Partition, error) {
	p := &Partition{Key: key}
	var st partitionState
	st.deletion = mutation.Live
	dead := &seen.dead
	defer func() {
		seen.live = len(p.Rows)
		if opts.Trace != nil {
			opts.Trace.Eventf("Read %d live rows and %d tombstone cells", seen.live, seen.dead)
		}
	}()
	rowsStart := mutation.AppendEntryKey(nil, prefix, mutation.RowEntry, opts.Start)
	keep := func(e *mutation.Entry) {
		if raw != nil {
			c := *e
			c.Key = slices.Clone(e.Key) // the iterator's bytes are only lent
			*raw = append(*raw, c)
		}
	}
	e := it.First()
	for ; e != nil && e.Kind != mutation.RowEntry; e = it.Next() {
		keep(e)
		if e.Kind == mutation.StaticRowEntry {
			p.Static = st.live(e, nil, opts.Now)
		} else if err := st.absorb(e, tokenLen); err != nil {
			return nil, err
		} else {
			*dead++
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	var rowsEnd []byte
	if opts.End != nil {
		rowsEnd = mutation.AppendEntryKey(nil, prefix, mutation.RowEntry, opts.End)
	} else {
		rowsEnd = mutation.PartitionUpperBound(prefix)
	}
	take := func(e *mutation.Entry) bool {
		keep(e)
		clustering := e.Key[len(prefix)+1:]
		if live := st.live(e, clustering, opts.Now); live != nil {
			p.Rows = append(p.Rows, Row{Clustering: clustering, Row: live})
		} else {
			*dead++
		}
		return opts.Limit == 0 || len(p.Rows) < opts.Limit
	}
	if !opts.Reverse {
		// The walk above stopped at the first row; a seek is needed only
		// when the slice starts after it.
		if e != nil && bytes.Compare(e.Key, rowsStart) < 0 {
			e = it.SeekGE(rowsStart)
		}
		for ; e != nil && bytes.Compare(e.Key, rowsEnd) < 0; e = it.Next() {
			if !take(e) {
				break
			}
		}
	} else {
		for e = it.SeekLT(rowsEnd); e != nil && bytes.Compare(e.Key, rowsStart) >= 0 && e.Kind == mutation.RowEntry; e = it.Prev() {
			if !take(e) {
				break
			}
		}
	}
	return p, it.Error()
}

// ScanQuery shapes a token-ordered scan over partitions.
type ScanQuery struct {
	// From is the engine key to start at (inclusive): the partition prefix
	// of a token's first key, or a key just after the last row a page
	// returned. Nil starts at the beginning.
	From []byte
	// To is the engine key to stop before; nil scans to the end.
	To []byte
	// Limit is the most live rows returned over all partitions; 0: none.
	Limit int
	// PerPartitionLimit is the most live rows per partition; 0: none.
	PerPartitionLimit int
	// Now is the read's time in seconds.
	Now int64
}

// Scan reads partitions in token order from opts.From, returning the live
// rows (and static rows) found. It serves token-range queries and paging.
func (t *Table) Scan(opts ScanQuery) ([]*Partition, error) {
	out, _, err := t.scan(opts, nil, false)
	return out, t.e.reportFailure(err)
}

// IndexScan is Scan of the partitions where an index finds terms q asks
// for (and of those some source cannot rule out: see IndexSpec), whole:
// the caller keeps the rows that match.
func (t *Table) IndexScan(q IndexQuery, opts ScanQuery) ([]*Partition, error) {
	out, _, err := t.scan(opts, &q, false)
	return out, t.e.reportFailure(err)
}

// IndexScanEntries is IndexScan's raw form, as ScanEntries is Scan's.
func (t *Table) IndexScanEntries(q IndexQuery, opts ScanQuery) ([]RawPartition, error) {
	_, raw, err := t.scan(opts, &q, true)
	return raw, t.e.reportFailure(err)
}

// ScanEntries is Scan's raw form, for a coordinator that reconciles
// replicas: each partition's entries as the scan saw them (deletions,
// range tombstones, the static row, and every row entry up to the limits'
// live rows, dead ones included). ResolvePartition reads each as Scan
// does.
func (t *Table) ScanEntries(opts ScanQuery) ([]RawPartition, error) {
	_, raw, err := t.scan(opts, nil, true)
	return raw, t.e.reportFailure(err)
}

// scan reads [opts.From, opts.To): every partition, or with q only those
// its index finds.
func (t *Table) scan(opts ScanQuery, q *IndexQuery, keepRaw bool) ([]*Partition, []RawPartition, error) {
	start := time.Now()
	defer func() { t.metrics.RangeLatency.Record(since(start)) }()
	v := t.acquireView()
	defer v.release()
	var its []mutation.Iterator
	for _, m := range v.memtables {
		its = append(its, m.NewIter(opts.From, opts.To))
	}
	for _, s := range v.sstables {
		it, err := s.r.NewIter(opts.From, opts.To)
		if err != nil {
			for _, it := range its {
				it.Close()
			}
			return nil, nil, err
		}
		its = append(its, it)
	}
	it := newMergingIter(its)
	// candidates are the partitions an index query reads, by prefix; the
	// iterator seeks from one to the next.
	var candidates [][]byte
	if q != nil {
		var err error
		if candidates, err = t.indexCandidates(v, *q, opts); err != nil {
			it.Close()
			return nil, nil, err
		}
	}
	seek := func() *mutation.Entry {
		for len(candidates) > 0 {
			from := candidates[0]
			if opts.From != nil && bytes.Compare(opts.From, from) > 0 {
				from = opts.From // a page resumed inside this partition
			}
			e := it.SeekGE(from)
			if e == nil {
				return nil
			}
			if bytes.HasPrefix(e.Key, candidates[0]) && len(e.Key) > len(candidates[0]) {
				return e
			}
			candidates = candidates[1:]
		}
		return nil
	}
	var out []*Partition
	var raw []RawPartition
	total := 0
	tokenLen := t.e.opts.SSTable.TokenLen
	var cur *Partition
	var curPrefix []byte
	var st partitionState
	first := it.First
	next := it.Next
	if q != nil {
		first = seek
		next = func() *mutation.Entry {
			e := it.Next()
			if e != nil && bytes.HasPrefix(e.Key, candidates[0]) && len(e.Key) > len(candidates[0]) {
				return e
			}
			candidates = candidates[1:]
			return seek()
		}
	}
	for e := first(); e != nil; e = next() {
		n, err := mutation.PartitionPrefixLen(e.Key, tokenLen)
		if err != nil {
			it.Close()
			return nil, nil, err
		}
		if cur == nil || !bytes.Equal(e.Key[:n], curPrefix) {
			parts, err := mutation.ParseKey(e.Key, tokenLen)
			if err != nil {
				it.Close()
				return nil, nil, err
			}
			curPrefix = parts.Prefix
			cur = &Partition{Key: parts.PartitionKey}
			st = partitionState{deletion: mutation.Live}
			out = append(out, cur)
			if keepRaw {
				raw = append(raw, RawPartition{Key: cur.Key})
			}
		}
		if e.Kind == mutation.RowEntry && opts.PerPartitionLimit > 0 && len(cur.Rows) >= opts.PerPartitionLimit {
			continue
		}
		if keepRaw {
			c := *e
			c.Key = slices.Clone(e.Key)
			raw[len(raw)-1].Entries = append(raw[len(raw)-1].Entries, c)
		}
		switch e.Kind {
		case mutation.StaticRowEntry:
			cur.Static = st.live(e, nil, opts.Now)
		case mutation.RowEntry:
			clustering := e.Key[len(curPrefix)+1:]
			if live := st.live(e, clustering, opts.Now); live != nil {
				cur.Rows = append(cur.Rows, Row{Clustering: clustering, Row: live})
				total++
			}
		default:
			if err := st.absorb(e, tokenLen); err != nil {
				it.Close()
				return nil, nil, err
			}
		}
		if opts.Limit > 0 && total >= opts.Limit {
			break
		}
	}
	err := errors.Join(it.Error(), it.Close())
	if err != nil {
		return nil, nil, err
	}
	kept := out[:0]
	for _, p := range out {
		if !p.IsEmpty() {
			kept = append(kept, p)
		}
	}
	return kept, raw, nil
}

// sliceIter walks entries held in a slice, in key order.
type sliceIter struct {
	entries []mutation.Entry
	pos     int
}

func (s *sliceIter) at(i int) *mutation.Entry {
	if i < 0 || i >= len(s.entries) {
		s.pos = max(-1, min(i, len(s.entries)))
		return nil
	}
	s.pos = i
	return &s.entries[i]
}

func (s *sliceIter) SeekGE(key []byte) *mutation.Entry {
	i, _ := slices.BinarySearchFunc(s.entries, key, func(e mutation.Entry, k []byte) int { return bytes.Compare(e.Key, k) })
	return s.at(i)
}

func (s *sliceIter) SeekLT(key []byte) *mutation.Entry {
	i, _ := slices.BinarySearchFunc(s.entries, key, func(e mutation.Entry, k []byte) int { return bytes.Compare(e.Key, k) })
	return s.at(i - 1)
}

func (s *sliceIter) First() *mutation.Entry { return s.at(0) }
func (s *sliceIter) Last() *mutation.Entry  { return s.at(len(s.entries) - 1) }
func (s *sliceIter) Next() *mutation.Entry  { return s.at(s.pos + 1) }
func (s *sliceIter) Prev() *mutation.Entry  { return s.at(s.pos - 1) }
func (s *sliceIter) Error() error           { return nil }
func (s *sliceIter) Close() error           { return nil }
