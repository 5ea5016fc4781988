package exec

import (
	"bytes"
	"slices"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// partitionReader hands a SELECT the partitions it selects, in the
// query's order, reading from the coordinator as they are wanted: by key
// (one read per key and clustering slice), or by scanning in chunks of
// rows. A chunk that ends inside a partition, or a page that did, is
// resumed by reading the rest of that partition and scanning on after it,
// so no read starts again from the beginning.
//
// A partition may come in several pieces (one per slice, or split across
// chunks); consecutive pieces with the same key are one partition.
type partitionReader struct {
	s       *Session
	t       *schema.Table
	kr      *keyRestrictions
	reverse bool
	now     int64
	// limit is the most rows one read returns (0: all); perPartition,
	// when set, caps each partition's rows (only when nothing filters
	// the rows, so that every row read is one the query keeps).
	limit, perPartition int
	// index, when set, has scans read only the partitions a secondary
	// index finds (the filters keep the rows).
	index *request.IndexRead
	// warnings takes what this node's reads tell the client.
	warnings *[]string

	// Reads by key: the key being read and its slices.
	resume   *pagingState
	keyIdx   int
	sliceIdx int
	keyTaken int // rows read of the key being read
	slices   []clusteringSlice
	entered  bool

	// Scans: the partition to finish (restKey after restClustering, with
	// restRead rows of it already taken), then the scan on after the
	// partition key `after`.
	restKey, restClustering []byte
	restRead                int
	after                   []byte
	pending                 []*request.Partition
	scanned                 bool // pending came from a scan: whole partitions
	exhausted               bool
}

// resumeAt has the reader start after where a page ended (nil: from the
// start).
func (r *partitionReader) resumeAt(resume *pagingState) {
	r.resume = resume
	if !r.kr.keyed && resume != nil {
		r.restKey, r.restClustering, r.restRead = resume.key, resume.clustering, resume.inPartition
		r.after = resume.key
	}
}

// next returns the next piece of a partition, and whether it is the whole
// partition (so a partition with no rows reads as its static row); nil
// when no more remain.
func (r *partitionReader) next() (*request.Partition, bool, error) {
	if r.kr.keyed {
		return r.nextByKey()
	}
	return r.nextScanned()
}

func (r *partitionReader) nextByKey() (*request.Partition, bool, error) {
	for r.keyIdx < len(r.kr.keys) {
		key := r.kr.keys[r.keyIdx]
		if !r.entered {
			r.entered, r.sliceIdx, r.keyTaken = true, 0, 0
			r.slices = r.keySlices(key)
		}
		limit := r.pieceLimit(r.keyTaken)
		if r.sliceIdx >= len(r.slices) || r.perPartition > 0 && limit <= 0 {
			r.keyIdx, r.entered = r.keyIdx+1, false
			continue
		}
		sl := r.slices[r.sliceIdx]
		r.sliceIdx++
		q := request.PartitionRead{Key: key, Slice: request.Slice{Reverse: r.reverse, Limit: limit, Now: r.now, Trace: r.s.trace, Warnings: r.warnings}, Consistency: r.s.consistency}
		q.Start, q.End = sl.bounds()
		p, err := r.s.c.ReadPartition(r.t, q)
		if err != nil {
			return nil, false, coordinatorError(err)
		}
		if p == nil {
			continue
		}
		r.keyTaken += len(p.Rows)
		if n := len(p.Rows); n > 0 && r.limit > 0 && n == r.limit && limit == r.limit {
			// The read stopped at the chunk size: the slice goes on after
			// its last row, read next.
			last := p.Rows[n-1].Clustering
			rest := sl
			if r.reverse {
				rest.end = mutation.EndBound(last, false)
			} else {
				rest.start = mutation.StartBound(last, false)
			}
			r.sliceIdx--
			r.slices[r.sliceIdx] = rest
		}
		return p, sl.whole(), nil
	}
	return nil, false, nil
}

// keySlices are the slices to read of a partition, in the read's order:
// none for a partition an earlier page finished, and only what follows
// the resume point for the partition it stopped in.
func (r *partitionReader) keySlices(key []byte) []clusteringSlice {
	sl := r.kr.slices
	if res := r.resume; res != nil {
		switch c := r.comparePartitions(key, res.key); {
		case c < 0:
			return nil
		case c == 0:
			if len(res.clustering) == 0 {
				return nil // its static row was the last one returned
			}
			after := clusteringSlice{start: mutation.StartBound(res.clustering, false), end: mutation.TopBound}
			if r.reverse {
				after = clusteringSlice{start: []byte{}, end: mutation.EndBound(res.clustering, false)}
			}
			sl = intersectSlices(sl, []clusteringSlice{after})
		}
	}
	sl = slices.Clone(sl) // a slice read in chunks narrows in place
	if r.reverse {
		slices.Reverse(sl)
	}
	return sl
}

// pieceLimit is the most rows to read of a partition of which taken rows
// have been read already.
func (r *partitionReader) pieceLimit(taken int) int {
	n := r.limit
	if r.perPartition > 0 && (n == 0 || r.perPartition-taken < n) {
		n = r.perPartition - taken
	}
	return n
}

func (r *partitionReader) nextScanned() (*request.Partition, bool, error) {
	for len(r.pending) == 0 {
		if r.exhausted || r.kr.empty {
			return nil, false, nil
		}
		if r.restKey != nil {
			if err := r.readRest(); err != nil {
				return nil, false, err
			}
			continue
		}
		parts, err := r.s.c.Scan(r.t, request.RangeRead{Limit: r.limit, PerPartitionLimit: r.perPartition, Now: r.now,
			From: r.kr.from, To: r.kr.to, After: r.after, Consistency: r.s.consistency, Trace: r.s.trace, Index: r.index})
		if err != nil {
			return nil, false, coordinatorError(err)
		}
		rows := 0
		for _, p := range parts {
			rows += len(p.Rows)
		}
		if r.limit == 0 || rows < r.limit {
			r.exhausted = true
		} else {
			last := parts[len(parts)-1]
			r.restKey, r.restClustering, r.restRead = last.Key, nil, len(last.Rows)
			if len(last.Rows) > 0 {
				r.restClustering = last.Rows[len(last.Rows)-1].Clustering
			}
		}
		r.pending, r.scanned = parts, true
	}
	p := r.pending[0]
	r.pending = r.pending[1:]
	return p, r.scanned, nil
}

// readRest reads what follows restClustering in restKey's partition, and
// has the scan go on after that partition.
func (r *partitionReader) readRest() error {
	key, clustering := r.restKey, r.restClustering
	r.restKey, r.after = nil, key
	limit := r.pieceLimit(r.restRead)
	if len(clustering) == 0 || (r.perPartition > 0 && limit <= 0) {
		return nil // the partition is done
	}
	p, err := r.s.c.ReadPartition(r.t, request.PartitionRead{Key: key,
		Slice: request.Slice{Start: mutation.StartBound(clustering, false), Limit: limit, Now: r.now, Trace: r.s.trace, Warnings: r.warnings}, Consistency: r.s.consistency})
	if err != nil {
		return coordinatorError(err)
	}
	if p == nil || len(p.Rows) == 0 {
		return nil
	}
	if r.limit > 0 && len(p.Rows) >= limit && limit == r.limit {
		// The read stopped at the chunk size: more of it may remain.
		r.restKey, r.restClustering, r.restRead = key, p.Rows[len(p.Rows)-1].Clustering, r.restRead+len(p.Rows)
	}
	r.pending, r.scanned = []*request.Partition{p}, false
	return nil
}

// comparePartitions orders two of the table's partition keys as reads
// return them.
func (r *partitionReader) comparePartitions(a, b []byte) int {
	if schema.IsVirtualKeyspace(r.t.Keyspace) {
		return schema.CompareVirtualKeys(r.t, a, b)
	}
	return comparePartitions(r.s.partitioner(), a, b)
}

// comparePartitions orders partition keys as reads return them: by token,
// then by key bytes.
func comparePartitions(p partitioner.Partitioner, a, b []byte) int {
	if bytes.Equal(a, b) {
		return 0
	}
	if c := partitioner.Compare(p.Token(a), p.Token(b)); c != 0 {
		return c
	}
	return bytes.Compare(a, b)
}

// bounds are the slice's bounds as a read takes them: nil for an open
// side.
func (sl clusteringSlice) bounds() (start, end []byte) {
	if len(sl.start) > 0 {
		start = sl.start
	}
	if !bytes.Equal(sl.end, mutation.TopBound) {
		end = sl.end
	}
	return start, end
}

// whole reports whether the slice is the whole partition.
func (sl clusteringSlice) whole() bool {
	return len(sl.start) == 0 && bytes.Equal(sl.end, mutation.TopBound)
}
