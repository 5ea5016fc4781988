package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/internal/invariants"
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

// take takes one entry of a partition into the state: a partition
// deletion or a range tombstone is absorbed, a static or clustering row
// (clustering its clustering; nil for the static row) is read as a read at
// now sees it. It returns the row's live part (nil: nothing live, or no
// row) and the tombstones the entry counts (rowTombstones; a range
// tombstone counts its two bounds, the two markers Cassandra reads it as;
// a partition deletion nothing).
func (s *partitionState) take(e *mutation.Entry, clustering []byte, tokenLen int, now int64) (*mutation.Row, int, error) {
	switch e.Kind {
	case mutation.PartitionDeletionEntry:
		return nil, 0, s.absorb(e, tokenLen)
	case mutation.RangeTombstoneEntry:
		return nil, 2, s.absorb(e, tokenLen)
	}
	r := e.Row.ShadowedBy(s.shadowOf(e, clustering))
	if r == nil {
		return nil, 0, nil // all of it under a deletion outside the row
	}
	live := r.Live(now)
	if live == r {
		return live, 0, nil // Live keeps a row whole only when nothing in it is dead
	}
	return live, rowTombstones(r, live != nil, now), nil
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

// rowTombstones counts the tombstones of a row, with what deletions from
// outside it shadow gone, as Cassandra counts them against its tombstone
// thresholds: each cell not live at now (deleted or expired); for a row
// with none of those and nothing live, one for its deletion or expired
// marker.
func rowTombstones(r *mutation.Row, live bool, now int64) int {
	n := 0
	for i := range r.Cells {
		if !r.Cells[i].IsLive(now) {
			n++
		}
	}
	if n == 0 && !live && (!r.Deletion.IsLive() || len(r.Columns) > 0 || r.Liveness.IsExpiring()) {
		n = 1
	}
	return n
}

// errTooManyTombstones stops a read past its failure threshold; the table
// reports it as a request.TombstoneOverwhelming.
var errTooManyTombstones = errors.New("storage: more tombstones than tombstone_failure_threshold")

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
	prefix, upper := mutation.PartitionBounds(t.e.opts.Partitioner.Token(key), key)
	opts.Trace.Event("Acquiring sstable references")
	v := t.acquireView()
	defer v.release()
	it, err := t.partitionIter(v, prefix, upper, opts.Trace)
	if err != nil {
		return nil, t.e.reportFailure(err)
	}
	warnAt, failAt := t.tombstoneThresholds()
	seen := scanned{failAt: failAt}
	p, err := readPartition(it, t.e.opts.SSTable.TokenLen, prefix, key, opts, raw, &seen)
	if errors.Is(err, errTooManyTombstones) {
		err = t.tooManyTombstones(key, &opts, seen)
	}
	if closeErr := it.Close(); closeErr != nil {
		err = errors.Join(err, closeErr)
	}
	if err = t.e.reportFailure(err); err == nil {
		t.traceTombstones(key, &opts, seen, warnAt)
	}
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

// tombstoneThresholds are the table's tombstone warning and failure
// thresholds (0: none). As in Cassandra, reads of the node's own
// keyspaces have none; nor, unlike Cassandra, have those of
// system_traces, whose sessions all expire within a day, and which the
// node scans for its own dashboard.
func (t *Table) tombstoneThresholds() (warnAt, failAt int) {
	switch t.opts.Keyspace {
	case "system", "system_schema", "system_traces":
		return 0, 0
	}
	return t.e.opts.TombstoneWarnThreshold, t.e.opts.TombstoneFailureThreshold
}

// traceTombstones records what a read went through in its trace, and
// past the warning threshold warns the client and the log. key is the
// last partition read; q the partition read, or nil for a scan.
func (t *Table) traceTombstones(key []byte, q *ReadQuery, seen scanned, warnAt int) {
	warn := warnAt > 0 && seen.dead > warnAt
	if warn {
		msg := fmt.Sprintf("Read %d live rows and %d tombstone cells for query %.512s; token %s (see tombstone_warn_threshold)",
			seen.live, seen.dead, t.describeRead(key, q), t.e.opts.Partitioner.Token(key))
		t.metrics.TombstoneWarnings.Add(1)
		t.e.opts.Logger.Warn().Msg(msg)
		if q != nil && q.Warnings != nil {
			*q.Warnings = append(*q.Warnings, msg)
		}
	}
	if q != nil && q.Trace != nil {
		see := ""
		if warn {
			see = " (see tombstone_warn_threshold)"
		}
		q.Trace.Eventf("Read %d live rows and %d tombstone cells%s", seen.live, seen.dead, see)
	}
}

// tooManyTombstones is the failure of a read of key that met more
// tombstones than the failure threshold allows: traced, logged and
// counted as Cassandra does.
func (t *Table) tooManyTombstones(key []byte, q *ReadQuery, seen scanned) error {
	query := t.describeRead(key, q)
	err := &request.TombstoneOverwhelming{Tombstones: seen.dead, Query: query,
		Token: t.e.opts.Partitioner.Token(key).String(), Key: t.describeKey(key)}
	if q != nil && q.Trace != nil {
		q.Trace.Eventf("Scanned over %d tombstones for query %s; query aborted (see tombstone_failure_threshold)", seen.failAt, query)
	}
	t.metrics.TombstoneFailures.Add(1)
	t.e.opts.Logger.Error().Msg(err.Error())
	return err
}

// describeRead is a partition read of key (q), or a scan (nil), as CQL
// for the tombstone messages.
func (t *Table) describeRead(key []byte, q *ReadQuery) string {
	if q == nil {
		return fmt.Sprintf("SELECT * FROM %s.%s ALLOW FILTERING", t.opts.Keyspace, t.opts.Name)
	}
	if d := t.e.opts.DescribeRead; d != nil {
		return d(t.id, key, *q)
	}
	return fmt.Sprintf("SELECT * FROM %s.%s WHERE key = 0x%x ALLOW FILTERING", t.opts.Keyspace, t.opts.Name, key)
}

// describeKey is a partition key as the tombstone failure names it.
func (t *Table) describeKey(key []byte) string {
	if d := t.e.opts.DescribeKey; d != nil {
		return d(t.id, key)
	}
	return fmt.Sprintf("0x%x", key)
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
// skips SSTables by their maximum timestamp). A partition one source
// holds, as most point reads find, is read from that source directly:
// there is nothing to merge.
func (t *Table) partitionIter(v *view, prefix, upper []byte, tr *tracing.Trace) (mutation.Iterator, error) {
	deletion := mutation.Live
	// On the stack unless the read has more sources than this.
	var itsBuf [4]mutation.Iterator
	its := itsBuf[:0]
	for _, m := range v.memtables {
		if m.Size() == 0 {
			continue // a memtable just switched in, as after every flush: nothing to merge
		}
		its = append(its, m.NewIter(prefix, upper))
	}
	type candidate struct {
		it *sstable.Iter
		s  *sstableRef
	}
	var candidatesBuf [4]candidate
	candidates := candidatesBuf[:0]
	closeAll := func() {
		for _, it := range its {
			it.Close()
		}
		for _, c := range candidates {
			c.it.Close()
		}
	}
	for _, s := range v.sstables {
		it, err := s.r.NewPartitionIter(prefix, upper)
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
	if len(its) == 1 {
		return its[0], nil
	}
	return newMergingIter(its), nil
}

// ReadStats counts partition reads and the SSTables they read (the source
// of nodetool's SSTables-per-read).
func (t *Table) ReadStats() (reads, sstables int64) {
	return t.readStats.reads.Load(), t.readStats.sstables.Load()
}

// scanned is what a read went through: the live rows it returned and the
// tombstones it met (rowTombstones), the read failing once they pass
// failAt (0: never).
type scanned struct {
	live, dead int
	failAt     int
}

// tombstones counts n more tombstones, failing the read once they pass
// the threshold.
func (s *scanned) tombstones(n int) error {
	s.dead += n
	if s.failAt > 0 && s.dead > s.failAt {
		return errTooManyTombstones
	}
	return nil
}

// readPartition walks a partition: deletions and the static row first, then
// the rows of the slice in the asked order, counting what it went through
// in seen. it holds the partition's entries only.
func readPartition(it mutation.Iterator, tokenLen int, prefix, key []byte, opts ReadQuery, raw *[]mutation.Entry, seen *scanned) (*Partition, error) {
	p := &Partition{Key: key}
	var st partitionState
	st.deletion = mutation.Live
	defer func() { seen.live = len(p.Rows) }()
	// The walk below stops at the first row: without a start bound, a
	// forward read needs no seek, and no start key.
	var rowsStart []byte
	if opts.Start != nil || opts.Reverse {
		rowsStart = mutation.AppendEntryKey(nil, prefix, mutation.RowEntry, opts.Start)
	}
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
		live, counted, err := st.take(e, nil, tokenLen, opts.Now)
		if err != nil {
			return nil, err
		}
		if e.Kind == mutation.StaticRowEntry {
			p.Static = live
		}
		if err := seen.tombstones(counted); err != nil {
			return nil, err
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	// Without an end bound, a forward read needs none: it holds only the
	// partition's entries.
	var rowsEnd []byte
	if opts.End != nil {
		rowsEnd = mutation.AppendEntryKey(nil, prefix, mutation.RowEntry, opts.End)
	} else if opts.Reverse {
		rowsEnd = mutation.PartitionUpperBound(prefix)
	}
	// take reads one row, and says whether the read goes on.
	take := func(e *mutation.Entry) (bool, error) {
		keep(e)
		clustering := e.Key[len(prefix)+1:]
		live, counted, err := st.take(e, clustering, tokenLen, opts.Now)
		if err != nil {
			return false, err
		}
		if live != nil {
			p.Rows = append(p.Rows, Row{Clustering: clustering, Row: live})
		}
		if err := seen.tombstones(counted); err != nil {
			return false, err
		}
		// A row with no clustering is a table's without clustering
		// columns, and its partition's only one: the read need not look
		// for another.
		return (opts.Limit == 0 || len(p.Rows) < opts.Limit) && len(clustering) > 0, nil
	}
	if !opts.Reverse {
		// A seek is needed only when the slice starts after the first row.
		if rowsStart != nil && e != nil && bytes.Compare(e.Key, rowsStart) < 0 {
			e = it.SeekGE(rowsStart)
		}
		for ; e != nil && (rowsEnd == nil || bytes.Compare(e.Key, rowsEnd) < 0); e = it.Next() {
			more, err := take(e)
			if err != nil {
				return nil, err
			}
			if !more {
				if invariants.Enabled && len(e.Key) == len(prefix)+1 {
					if next := it.Next(); next != nil {
						return nil, invariants.Failf("storage: %x follows a row without clustering in its partition", next.Key)
					}
				}
				break
			}
		}
	} else {
		for e = it.SeekLT(rowsEnd); e != nil && bytes.Compare(e.Key, rowsStart) >= 0 && e.Kind == mutation.RowEntry; e = it.Prev() {
			more, err := take(e)
			if err != nil {
				return nil, err
			}
			if !more {
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
	warnAt, failAt := t.tombstoneThresholds()
	seen := scanned{failAt: failAt}
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
		var clustering []byte
		if e.Kind == mutation.RowEntry {
			clustering = e.Key[len(curPrefix)+1:]
		}
		live, counted, err := st.take(e, clustering, tokenLen, opts.Now)
		if err != nil {
			it.Close()
			return nil, nil, err
		}
		switch {
		case e.Kind == mutation.StaticRowEntry:
			cur.Static = live
		case live != nil:
			cur.Rows = append(cur.Rows, Row{Clustering: clustering, Row: live})
			total++
		}
		if err := seen.tombstones(counted); err != nil {
			return nil, nil, t.e.reportFailure(errors.Join(t.tooManyTombstones(cur.Key, nil, seen), it.Close()))
		}
		if opts.Limit > 0 && total >= opts.Limit {
			break
		}
	}
	err := errors.Join(it.Error(), it.Close())
	if err != nil {
		return nil, nil, err
	}
	seen.live = total
	if cur != nil {
		t.traceTombstones(cur.Key, nil, seen, warnAt)
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
