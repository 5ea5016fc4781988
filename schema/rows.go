package schema

import (
	"fmt"
	"strings"

	"github.com/sibyldb/sibyl/mutation"
)

// InsertMutation builds what an INSERT of one row writes: a row marker and
// a cell per column given. A nil value writes a deletion (a tombstone, or
// for a multi-cell column a column deletion); a multi-cell value replaces
// what the column held. Static columns go to the partition's static row.
// All key columns must have values.
func (t *Table) InsertMutation(values map[string][]byte, w *CellWriter) (*mutation.Mutation, error) {
	cols := make([]*Column, 0, len(values))
	vals := make([][]byte, 0, len(values))
	for name, v := range values {
		c := t.byName[name]
		if c == nil {
			return nil, fmt.Errorf("Undefined column name %s in table %s.%s", name, t.Keyspace, t.Name)
		}
		cols, vals = append(cols, c), append(vals, v)
	}
	return t.InsertRow(cols, vals, w)
}

// InsertRow is InsertMutation with the values given by column: cols are
// distinct columns of t, vals their values (nil: null).
func (t *Table) InsertRow(cols []*Column, vals [][]byte, w *CellWriter) (*mutation.Mutation, error) {
	m, row, err := t.newRowMutation(cols, vals)
	if err != nil {
		return nil, err
	}
	marker := mutation.LivenessInfo{Timestamp: w.Timestamp, ExpiresAt: mutation.NoDeletionTime}
	if w.TTL > 0 {
		marker.TTL, marker.ExpiresAt = w.TTL, w.Now+int64(w.TTL)
	}
	row.Liveness = marker
	row.Cells = make([]mutation.Cell, 0, len(cols)-len(t.PartitionKey)-len(t.Clustering))
	var static *mutation.Row
	for i, c := range cols {
		if c.IsPrimaryKey() {
			continue
		}
		target := row
		if c.Kind == Static {
			if static == nil {
				static = mutation.NewRow()
			}
			target = static
		}
		if err := w.Put(target, c, vals[i]); err != nil {
			return nil, err
		}
	}
	row.Normalize()
	if static != nil {
		static.Normalize()
		if !static.IsEmpty() {
			m.Static = static
		}
	}
	return m, nil
}

// Put writes one column's whole value (nil: its deletion) into a row, as
// INSERT and UPDATE's SET c = v do. It appends: Row.Normalize puts the row in
// order once it is complete.
func (w *CellWriter) Put(r *mutation.Row, c *Column, value []byte) error {
	if c.Type.IsMultiCell() {
		del := w.OverwriteDeletion(c)
		if value == nil {
			del.Deletion.MarkedForDeleteAt = w.Timestamp
		}
		r.Columns = append(r.Columns, del)
		if value == nil {
			return nil
		}
	}
	if value == nil {
		r.Cells = append(r.Cells, w.Tombstone(c, nil))
		return nil
	}
	cells, err := w.AppendCells(r.Cells, c, value)
	if err != nil {
		return err
	}
	r.Cells = cells
	return nil
}

// newRowMutation starts a mutation for the row the key columns among cols
// name: every key column must have a value.
func (t *Table) newRowMutation(cols []*Column, vals [][]byte) (*mutation.Mutation, *mutation.Row, error) {
	pk := make([][]byte, len(t.PartitionKey))
	ck := make([][]byte, len(t.Clustering))
	for i, c := range cols {
		switch c.Kind {
		case PartitionKey:
			pk[c.Position] = vals[i]
		case Clustering:
			ck[c.Position] = vals[i]
		}
	}
	var missing []string
	for i, c := range t.PartitionKey {
		if pk[i] == nil {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("Some partition key parts are missing: %s", strings.Join(missing, ", "))
	}
	key, err := t.StatementKey(pk)
	if err != nil {
		return nil, nil, err
	}
	for i, c := range t.Clustering {
		if ck[i] == nil {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("Some clustering keys are missing: %s", strings.Join(missing, ", "))
	}
	clustering, err := t.layout.Encode(nil, ck)
	if err == nil {
		err = t.CheckClustering(clustering)
	}
	if err != nil {
		return nil, nil, err
	}
	m := mutation.NewMutation(t.ID, key)
	row := mutation.NewRow()
	m.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
	return m, row, nil
}

// RowCells returns every column of one row as a read sees it at now, by
// name: the key columns from the partition key and clustering, the others
// from the row's live cells (static columns from static, which may be
// nil). Null columns are absent.
func (t *Table) RowCells(partitionKey, clustering []byte, row, static *mutation.Row, now int64) (map[string]Cell, error) {
	vals := make(RowValues, len(t.Columns))
	if err := t.ReadRow(vals, nil, partitionKey, clustering, row, static, now); err != nil {
		return nil, err
	}
	out := make(map[string]Cell, len(t.Columns))
	for i, c := range t.Columns {
		if vals[i].Value != nil {
			out[c.Name] = vals[i]
		}
	}
	return out, nil
}

// RowValues are one row's columns by Column.Index; a null column has a nil
// Value.
type RowValues []Cell

// ReadRow fills out (len(t.Columns) long) with one row as RowCells reads
// it: a read of many rows reuses one RowValues. need, when set, says by
// Column.Index which regular and static columns the reader uses; the
// others are left null, unread.
func (t *Table) ReadRow(out RowValues, need []bool, partitionKey, clustering []byte, row, static *mutation.Row, now int64) error {
	clear(out)
	pk, err := t.SplitPartitionKey(partitionKey)
	if err != nil {
		return err
	}
	for i, c := range t.PartitionKey {
		out[c.Index] = Cell{Value: pk[i]}
	}
	ck, err := t.layout.Decode(clustering)
	if err != nil {
		return err
	}
	for i, v := range ck {
		out[t.Clustering[i].Index] = Cell{Value: v}
	}
	for _, r := range []*mutation.Row{static, row} {
		if r == nil {
			continue
		}
		if err := t.putValues(out, need, r, now); err != nil {
			return err
		}
	}
	return nil
}
