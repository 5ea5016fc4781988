package native

import "fmt"

// Query parameter flags (cql-clients.md 1.9).
const (
	qfValues            = 0x01
	qfSkipMetadata      = 0x02
	qfPageSize          = 0x04
	qfPagingState       = 0x08
	qfSerialConsistency = 0x10
	qfDefaultTimestamp  = 0x20
	qfNamesForValues    = 0x40
	qfKeyspace          = 0x80
	qfNowInSeconds      = 0x100
)

// queryParams are the parameters of QUERY and EXECUTE.
type queryParams struct {
	consistency  uint16
	flags        uint32
	values       [][]byte
	unset        []bool   // by value position: the client bound "unset"
	names        []string // with qfNamesForValues, by value position
	pageSize     int32    // 0: not paged
	pagingState  []byte
	serial       uint16
	hasSerial    bool
	timestamp    int64 // with qfDefaultTimestamp, microseconds
	hasTimestamp bool
	keyspace     string
}

func (r *reader) queryParams(version byte) queryParams {
	var p queryParams
	p.consistency = r.short()
	if version >= 5 {
		p.flags = uint32(r.int())
	} else {
		p.flags = uint32(r.byte())
	}
	if p.flags&qfValues != 0 {
		n := int(r.short())
		if n <= len(r.b) { // each value takes at least four bytes: a bound from the body, not the client
			p.values, p.unset = make([][]byte, 0, n), make([]bool, 0, n)
		}
		for i := 0; i < n && r.err == nil; i++ {
			if p.flags&qfNamesForValues != 0 {
				p.names = append(p.names, r.string())
			}
			v, unset := r.value()
			p.values = append(p.values, v)
			p.unset = append(p.unset, unset)
		}
	}
	if p.flags&qfPageSize != 0 {
		p.pageSize = r.int()
	}
	if p.flags&qfPagingState != 0 {
		p.pagingState = r.bytes()
	}
	r.paramsTail(&p, version)
	return p
}

// paramsTail reads what QUERY, EXECUTE and BATCH parameters end with: the
// serial consistency, the default timestamp, and (v5) the keyspace and
// the time.
func (r *reader) paramsTail(p *queryParams, version byte) {
	if p.flags&qfSerialConsistency != 0 {
		p.serial, p.hasSerial = r.short(), true
	}
	if p.flags&qfDefaultTimestamp != 0 {
		p.timestamp, p.hasTimestamp = r.long(), true
	}
	if version >= 5 {
		if p.flags&qfKeyspace != 0 {
			p.keyspace = r.string()
		}
		if p.flags&qfNowInSeconds != 0 {
			r.int()
		}
	}
}

// batchEntry is one statement of a BATCH message: a query string or a
// prepared id, with its values.
type batchEntry struct {
	query  string
	id     []byte
	values [][]byte
	unset  []bool
}

type batchRequest struct {
	kind    byte // 0 logged, 1 unlogged, 2 counter
	entries []batchEntry
	params  queryParams // consistency, flags, serial, timestamp
}

func (r *reader) batch(version byte) batchRequest {
	var b batchRequest
	b.kind = r.byte()
	n := int(r.short())
	for i := 0; i < n && r.err == nil; i++ {
		var e batchEntry
		switch kind := r.byte(); kind {
		case 0:
			e.query = r.longString()
		case 1:
			e.id = r.shortBytes()
		default:
			r.fail(fmt.Errorf("invalid batch statement kind %d", kind))
		}
		m := int(r.short())
		for j := 0; j < m && r.err == nil; j++ {
			v, unset := r.value()
			e.values = append(e.values, v)
			e.unset = append(e.unset, unset)
		}
		b.entries = append(b.entries, e)
	}
	p := &b.params
	p.consistency = r.short()
	if version >= 5 {
		p.flags = uint32(r.int())
	} else {
		p.flags = uint32(r.byte())
	}
	if p.flags&qfNamesForValues != 0 {
		r.fail(fmt.Errorf("named values are not supported in batches"))
	}
	r.paramsTail(p, version)
	return b
}
