package virtual

import (
	"bytes"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// Row is one row of a virtual table: its columns' serialized values by
// name; a column left out, or nil, is null.
type Row map[string][]byte

// Table is one virtual table: its definition and what builds its rows, all
// of them, at each read.
type Table struct {
	Def  *schema.Table
	Rows func() ([]Row, error)
}

// Tables answers the reads of a node's virtual tables.
type Tables struct {
	p    partitioner.Partitioner
	byID map[mutation.TableID]Table
}

// New returns the virtual tables given, and system_virtual_schema's;
// p gives the tokens token bounds are checked against.
func New(p partitioner.Partitioner, tables ...Table) *Tables {
	v := &Tables{p: p, byID: map[mutation.TableID]Table{}}
	for _, t := range append(tables, schemaTables()...) {
		v.byID[t.Def.ID] = t
	}
	return v
}

// partition is one partition a virtual table's rows make: its key and
// entries, in key order.
type partition struct {
	key     []byte
	token   partitioner.Token
	entries []mutation.Entry
}

// partitions builds a table's rows into partitions, in read order (by
// key: schema.CompareVirtualKeys). Rows are live and never expire; a second row with the
// primary key of an earlier one replaces it.
func (v *Tables) partitions(t *schema.Table) ([]*partition, error) {
	vt, ok := v.byID[t.ID]
	if !ok {
		return nil, fmt.Errorf("virtual: table %s.%s has no rows", t.Keyspace, t.Name)
	}
	rows, err := vt.Rows()
	if err != nil {
		return nil, err
	}
	byKey := map[string]*partition{}
	var out []*partition
	for i, r := range rows {
		// Later rows win: each is written a microsecond after the one
		// before it.
		m, err := vt.Def.InsertMutation(r, &schema.CellWriter{Timestamp: int64(i + 1), Now: 0})
		if err != nil {
			return nil, fmt.Errorf("virtual: %s.%s: %w", t.Keyspace, t.Name, err)
		}
		p := byKey[string(m.Key)]
		if p == nil {
			p = &partition{key: m.Key, token: v.p.Token(m.Key)}
			byKey[string(m.Key)] = p
			out = append(out, p)
		}
		p.entries = m.AppendEntries(p.entries, p.token)
	}
	for _, p := range out {
		p.entries = mergeEntries(p.entries)
	}
	slices.SortFunc(out, func(a, b *partition) int { return schema.CompareVirtualKeys(t, a.key, b.key) })
	return out, nil
}

// mergeEntries sorts entries by key, merging those of one key.
func mergeEntries(entries []mutation.Entry) []mutation.Entry {
	slices.SortStableFunc(entries, func(a, b mutation.Entry) int { return bytes.Compare(a.Key, b.Key) })
	out := entries[:0]
	for _, e := range entries {
		if n := len(out); n > 0 && bytes.Equal(out[n-1].Key, e.Key) {
			out[n-1] = *mutation.MergeEntries(&out[n-1], &e)
			continue
		}
		out = append(out, e)
	}
	return out
}

// resolve reads a slice of one partition, as the engine reads a stored
// one.
func (v *Tables) resolve(p *partition, q request.Slice) (*request.Partition, error) {
	q.Trace = nil
	return storage.ResolvePartition(v.p, v.p.TokenBytesLen(), p.key, p.entries, q)
}

// ReadPartition reads a slice of one partition of a virtual table; nil
// when it has no such partition.
func (v *Tables) ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	parts, err := v.partitions(t)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if bytes.Equal(p.key, r.Key) {
			out, err := v.resolve(p, r.Slice)
			if err != nil || out.IsEmpty() {
				return nil, err
			}
			return out, nil
		}
	}
	return nil, nil
}

// Scan reads a virtual table's partitions in key order, those whose
// token is within the read's bounds and that come after its resume key,
// up to its limits.
func (v *Tables) Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error) {
	parts, err := v.partitions(t)
	if err != nil {
		return nil, err
	}
	var out []*request.Partition
	total := 0
	for _, p := range parts {
		switch {
		case r.From != nil && partitioner.Compare(p.token, *r.From) < 0:
			continue
		case r.To != nil && partitioner.Compare(p.token, *r.To) >= 0:
			continue
		case r.After != nil && schema.CompareVirtualKeys(t, p.key, r.After) <= 0:
			continue
		}
		limit := r.PerPartitionLimit
		if r.Limit > 0 && (limit == 0 || r.Limit-total < limit) {
			limit = r.Limit - total
		}
		got, err := v.resolve(p, request.Slice{Limit: limit, Now: r.Now})
		if err != nil {
			return nil, err
		}
		if got.IsEmpty() {
			continue
		}
		out = append(out, got)
		total += len(got.Rows)
		if r.Limit > 0 && total >= r.Limit {
			break
		}
	}
	return out, nil
}

// The encoders of the values virtual rows hold.

// Text is a text value.
func Text(s string) []byte { return []byte(s) }

// OptionalText is a text value, null when empty.
func OptionalText(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// Int is an int value.
func Int(v int) []byte { return cqltype.EncodeInt(int32(min(max(v, -1<<31), 1<<31-1))) }

// Bigint is a bigint value.
func Bigint(v int64) []byte { return cqltype.EncodeBigint(v) }

// Double is a double value.
func Double(v float64) []byte { return cqltype.EncodeDouble(v) }

// Boolean is a boolean value.
func Boolean(v bool) []byte { return cqltype.EncodeBoolean(v) }

// Timestamp is a timestamp value (millisecond precision).
func Timestamp(t time.Time) []byte { return cqltype.EncodeTimestamp(t.UnixMilli()) }

// Inet is an inet value: 4 bytes for an IPv4 address, 16 otherwise.
func Inet(ip net.IP) []byte {
	if v4 := ip.To4(); v4 != nil {
		return []byte(v4)
	}
	return []byte(ip.To16())
}
