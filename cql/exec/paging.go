package exec

import (
	"bytes"
	"encoding/binary"

	"github.com/sibyldb/sibyl/mutation/request"
)

// QueryParams are what a client sends with a statement besides its text
// (per call, so not an Options type).
type QueryParams struct {
	Values [][]byte // bound values, by marker index
	// Unset marks, by marker index, the values a client bound as "unset"
	// (protocol v4 and up): a written column so bound is left as it is,
	// and a USING or LIMIT value as if not given.
	Unset []bool
	// DefaultTimestamp, when set, is the client's timestamp (microseconds)
	// for writes without USING TIMESTAMP.
	DefaultTimestamp *int64
	// PageSize is the most rows a SELECT returns at once; 0 or less: all.
	PageSize int
	// PagingState resumes a SELECT after the last row of an earlier page
	// (the Result's PagingState, opaque to clients).
	PagingState []byte
	// Consistency is the statement's consistency level (the zero value,
	// ANY, reads as ONE: callers that do not name one, tests and the
	// node's own statements, get the weakest read).
	Consistency request.Consistency
	// SerialConsistency is a conditional write's Paxos level, SERIAL or
	// LOCAL_SERIAL; nil is SERIAL.
	SerialConsistency *request.Consistency
}

// pagingState is where a page ended: the partition key and clustering of
// its last row (nil clustering for a partition's static-only row), how
// many rows the query has returned so far, for its LIMIT, and how many of
// them came from that partition, for PER PARTITION LIMIT.
type pagingState struct {
	key, clustering []byte
	returned        int
	inPartition     int
}

const pagingStateVersion = 2

func (p *pagingState) encode() []byte {
	b := []byte{pagingStateVersion}
	for _, part := range [][]byte{p.key, p.clustering} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	b = binary.AppendUvarint(b, uint64(p.returned))
	return binary.AppendUvarint(b, uint64(p.inPartition))
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
	if k <= 0 || n > 1<<31 {
		return nil, bad
	}
	p.returned, b = int(n), b[k:]
	n, k = binary.Uvarint(b)
	if k <= 0 || k != len(b) || n > 1<<31 {
		return nil, bad
	}
	p.inPartition = int(n)
	return p, nil
}

// pager decides which rows of a read go into this page. The read starts
// after the resume point (partitionReader), so the pager only counts: the
// page size, and the query's LIMIT across pages.
type pager struct {
	resume  *pagingState // nil: from the start
	size    int          // rows per page; 0: no paging
	limit   int          // the query's LIMIT; 0: none
	emitted int
	last    pagingState
	full    bool
}

// take reports whether the row at (key, clustering), the inPartition-th
// of its partition, belongs to this page; done says the page (or the
// query's LIMIT) is complete and reading may stop.
func (p *pager) take(key, clustering []byte, inPartition int) (take, done bool) {
	if p.limit > 0 && p.returnedSoFar() >= p.limit {
		return false, true
	}
	if p.size > 0 && p.emitted >= p.size {
		p.full = true
		return false, true
	}
	p.emitted++
	p.last = pagingState{key: key, clustering: clustering, inPartition: inPartition}
	return true, false
}

// want is how many rows a read needs to fill the page and see whether
// more follow; 0: all.
func (p *pager) want() int {
	n := 0
	if p.size > 0 {
		n = p.size + 1
	}
	if p.limit > 0 {
		left := max(p.limit-p.returnedSoFar(), 0) + 1
		if n == 0 || left < n {
			n = left
		}
	}
	return n
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
