package testutil

import (
	"bytes"
	"sort"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// MemStore stands in for the storage engine in the tests of packages that
// may not import it: entries merged under their engine keys per table
// (through mutation.MergeEntries, the engine's own merge), read back with
// partition deletions, range tombstones and expiry applied. It keeps
// everything in one map and is not safe for concurrent use.
type MemStore struct {
	Partitioner partitioner.Partitioner
	tables      map[mutation.TableID]map[string]*mutation.Entry
}

// NewMemStore returns an empty store over Murmur3 tokens.
func NewMemStore() *MemStore {
	return &MemStore{Partitioner: partitioner.Murmur3(), tables: map[mutation.TableID]map[string]*mutation.Entry{}}
}

// Apply merges mutations in.
func (s *MemStore) Apply(ms ...*mutation.Mutation) {
	for _, m := range ms {
		tbl := s.tables[m.Table]
		if tbl == nil {
			tbl = map[string]*mutation.Entry{}
			s.tables[m.Table] = tbl
		}
		for _, e := range m.AppendEntries(nil, s.Partitioner.Token(m.Key)) {
			if old := tbl[string(e.Key)]; old != nil {
				tbl[string(e.Key)] = mutation.MergeEntries(old, &e)
			} else {
				tbl[string(e.Key)] = &e
			}
		}
	}
}

// Truncate forgets a table's entries.
func (s *MemStore) Truncate(table mutation.TableID) { delete(s.tables, table) }

// MemRow is a live clustering row.
type MemRow struct {
	Clustering []byte
	Row        *mutation.Row
}

// MemPartition is what a read sees of a partition at some time.
type MemPartition struct {
	Key    []byte
	Static *mutation.Row
	Rows   []MemRow
}

// Partitions returns the live partitions of a table in token order, as a
// read at now (seconds) sees them; partitions with nothing live are left
// out.
func (s *MemStore) Partitions(table mutation.TableID, now int64) ([]MemPartition, error) {
	entries := s.tables[table]
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tokenLen := s.Partitioner.TokenBytesLen()
	var out []MemPartition
	var cur *MemPartition
	var prefix []byte
	var partDel mutation.DeletionTime
	var rts []mutation.RangeTombstone
	flush := func() {
		if cur != nil && (cur.Static != nil || len(cur.Rows) > 0) {
			out = append(out, *cur)
		}
	}
	for _, k := range keys {
		e := entries[k]
		parts, err := mutation.ParseKey(e.Key, tokenLen)
		if err != nil {
			return nil, err
		}
		if cur == nil || !bytes.Equal(parts.Prefix, prefix) {
			flush()
			cur = &MemPartition{Key: parts.PartitionKey}
			prefix, partDel, rts = parts.Prefix, mutation.Live, nil
		}
		switch e.Kind {
		case mutation.PartitionDeletionEntry:
			partDel = e.Deletion
		case mutation.RangeTombstoneEntry:
			rts = append(rts, mutation.RangeTombstone{Start: parts.Clustering, End: parts.End, Deletion: e.Deletion})
		case mutation.StaticRowEntry:
			if r := e.Row.ShadowedBy(partDel); r != nil {
				cur.Static = r.Live(now)
			}
		case mutation.RowEntry:
			d := partDel
			for i := range rts {
				if rts[i].Covers(parts.Clustering) {
					d = d.Max(rts[i].Deletion)
				}
			}
			if r := e.Row.ShadowedBy(d); r != nil {
				if r = r.Live(now); r != nil {
					cur.Rows = append(cur.Rows, MemRow{Clustering: parts.Clustering, Row: r})
				}
			}
		}
	}
	flush()
	return out, nil
}
