package exec

import (
	"bytes"
	"encoding/binary"

	"github.com/sibyldb/sibyl/partitioner"
)

// QueryParams are what a client sends with a statement besides its text
// (per call, so not an Options type).
type QueryParams struct {
	Values [][]byte // bound values, by marker index
	// PageSize is the most rows a SELECT returns at once; 0 or less: all.
	PageSize int
	// PagingState resumes a SELECT after the last row of an earlier page
	// (the Result's PagingState, opaque to clients).
	PagingState []byte
}

// pagingState is where a page ended: the partition key and clustering of
// its last row (nil clustering for a partition's static-only row), and how
// many rows the query has returned so far, for its LIMIT.
type pagingState struct {
	key, clustering []byte
	returned        int
}

const pagingStateVersion = 1

func (p *pagingState) encode() []byte {
	b := []byte{pagingStateVersion}
	for _, part := range [][]byte{p.key, p.clustering} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return binary.AppendUvarint(b, uint64(p.returned))
}

func decodePagingState(b []byte) (*pagingState, error) {
	bad := invalidf("Invalid value for the paging state")
	if len(b) == 0 || b[0] != pagingStateVersion {
		return nil, bad
	}
	b = b[1:]
	read := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, false
		}
		v := bytes.Clone(b[k : k+int(n)])
		b = b[k+int(n):]
		return v, true
	}
	p := &pagingState{}
	var ok bool
	if p.key, ok = read(); !ok {
		return nil, bad
	}
	if p.clustering, ok = read(); !ok {
		return nil, bad
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || k != len(b) {
		return nil, bad
	}
	p.returned = int(n)
	return p, nil
}

// pager decides which rows of a read go into this page. A resumed page
// reads again from the start of the query's partition or scan and skips
// the rows at or before where the last page ended, by position (that row
// may be gone since): correct for any data, but quadratic over a large
// scan; starting the engine's read at the resume point is still to do.
type pager struct {
	resume   *pagingState // nil: from the start
	skipping bool
	// Rows come with partitions in token order and clustering in byte
	// order, reversed for a reversed read.
	part    partitioner.Partitioner
	reverse bool
	size    int // rows per page; 0: no paging
	limit   int // the query's LIMIT; 0: none
	emitted int
	last    pagingState
	full    bool
}

func newPager(o QueryParams, limit int, part partitioner.Partitioner, reverse bool) (*pager, error) {
	p := &pager{size: o.PageSize, limit: limit, part: part, reverse: reverse}
	if p.size < 0 {
		p.size = 0
	}
	if o.PagingState != nil {
		st, err := decodePagingState(o.PagingState)
		if err != nil {
			return nil, err
		}
		p.resume, p.skipping = st, true
	}
	return p, nil
}

// take reports whether the row at (key, clustering) belongs to this page;
// done says the page (or the query's LIMIT) is complete and reading may
// stop. Rows come in the query's order.
func (p *pager) take(key, clustering []byte) (take, done bool) {
	if p.skipping {
		if p.notAfterResume(key, clustering) {
			return false, false
		}
		p.skipping = false
	}
	if p.limit > 0 && p.returnedSoFar() >= p.limit {
		return false, true
	}
	if p.size > 0 && p.emitted >= p.size {
		p.full = true
		return false, true
	}
	p.emitted++
	p.last = pagingState{key: key, clustering: clustering}
	return true, false
}

// notAfterResume reports whether the row at (key, clustering) comes at or
// before the resume point in the read's order. A static-only row (empty
// clustering) comes first in its partition.
func (p *pager) notAfterResume(key, clustering []byte) bool {
	r := p.resume
	if !bytes.Equal(key, r.key) {
		c := partitioner.Compare(p.part.Token(key), p.part.Token(r.key))
		if c == 0 {
			c = bytes.Compare(key, r.key)
		}
		return c < 0
	}
	if len(clustering) == 0 || len(r.clustering) == 0 {
		return len(clustering) == 0
	}
	c := bytes.Compare(clustering, r.clustering)
	if p.reverse {
		return c >= 0
	}
	return c <= 0
}

func (p *pager) returnedSoFar() int {
	n := p.emitted
	if p.resume != nil {
		n += p.resume.returned
	}
	return n
}

// state is the paging state of the page taken: set when a row beyond the
// page was seen, so the client asks for more only when there is more.
func (p *pager) state() []byte {
	if !p.full {
		return nil
	}
	st := p.last
	st.returned = p.returnedSoFar()
	return st.encode()
}
