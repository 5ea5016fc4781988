package schema

import (
	"encoding/binary"
	"fmt"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
)

// A table's non-key column is stored as cells of its row: a simple column
// (any frozen or native type) as one cell; a multi-cell column (a
// non-frozen collection or user type) as one cell per element, whose path
// orders the elements as CQL does:
//
//	set   path = the element, byte-comparable; value empty
//	map   path = the key, byte-comparable; value = the value
//	list  path = a timeuuid, byte-comparable (insertion order); value = the element
//	udt   path = the field's index, 2 bytes big-endian; value = the field
//
// Replacing a multi-cell column's whole value deletes what was there with a
// column deletion just before the write (see OverwriteDeletion).

// CellWriter makes the cells of one write.
type CellWriter struct {
	Timestamp int64 // microseconds
	TTL       int32 // seconds; 0 for none
	Now       int64 // seconds, when the write happens: TTLs expire from it
	// NextListPath returns a fresh timeuuid (16 bytes) for a list element,
	// later than every one before; needed only to write lists.
	NextListPath func() []byte
}

// Cell is a live cell of column c (path set for an element) written with
// the writer's timestamp and TTL.
func (w *CellWriter) Cell(c *Column, path, value []byte) mutation.Cell {
	return w.cell(c.Name, path, value)
}

func (w *CellWriter) cell(column string, path, value []byte) mutation.Cell {
	if w.TTL > 0 {
		return mutation.ExpiringCell(column, path, w.Timestamp, w.TTL, w.Now, value)
	}
	return mutation.LiveCell(column, path, w.Timestamp, value)
}

// Tombstone is the cell that deletes a simple column, or one element of a
// multi-cell column (path set).
func (w *CellWriter) Tombstone(c *Column, path []byte) mutation.Cell {
	return mutation.TombstoneCell(c.Name, path, w.Timestamp, w.Now)
}

// OverwriteDeletion is the column deletion that goes with writing a whole
// multi-cell value: it removes the elements written before, and not the
// new ones, by deleting just below the write's timestamp.
func (w *CellWriter) OverwriteDeletion(c *Column) mutation.ColumnDeletion {
	return mutation.ColumnDeletion{Column: c.Name,
		Deletion: mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp - 1, LocalDeletionTime: w.Now}}
}

// AppendCells appends the cells that store value (a serialized CQL value,
// not null) in column c.
func (w *CellWriter) AppendCells(dst []mutation.Cell, c *Column, value []byte) ([]mutation.Cell, error) {
	t := c.Type
	if !t.IsMultiCell() {
		return append(dst, w.cell(c.Name, nil, value)), nil
	}
	switch t.Kind {
	case cqltype.Set:
		elems, err := cqltype.DecodeCollection(value)
		if err != nil {
			return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
		}
		for _, e := range elems {
			path, err := t.Params[0].AppendComparable(nil, e)
			if err != nil {
				return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
			}
			dst = append(dst, w.cell(c.Name, path, []byte{}))
		}
	case cqltype.Map:
		keys, vals, err := cqltype.DecodeMap(value)
		if err != nil {
			return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
		}
		for i, k := range keys {
			path, err := t.Params[0].AppendComparable(nil, k)
			if err != nil {
				return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
			}
			dst = append(dst, w.cell(c.Name, path, vals[i]))
		}
	case cqltype.List:
		elems, err := cqltype.DecodeCollection(value)
		if err != nil {
			return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
		}
		for _, e := range elems {
			path, err := w.ListPath()
			if err != nil {
				return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
			}
			dst = append(dst, w.cell(c.Name, path, e))
		}
	case cqltype.UDT:
		fields, err := cqltype.DecodeTuple(value, len(t.Params))
		if err != nil {
			return dst, fmt.Errorf("schema: column %s: %w", c.Name, err)
		}
		for i, f := range fields {
			if f != nil {
				dst = append(dst, w.cell(c.Name, FieldPath(i), f))
			}
		}
	default:
		return dst, fmt.Errorf("schema: column %s: type %s is not multi-cell", c.Name, t)
	}
	return dst, nil
}

// ListPath returns the path of a new list element.
func (w *CellWriter) ListPath() ([]byte, error) {
	if w.NextListPath == nil {
		return nil, fmt.Errorf("schema: writing a list needs element paths")
	}
	return cqltype.TimeuuidType.AppendComparable(nil, w.NextListPath())
}

// FieldPath is the path of a non-frozen user type's field.
func FieldPath(index int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(index)) }

// Cell is what a read sees of a simple column: its value and write
// metadata, for WRITETIME() and TTL().
type Cell struct {
	Value     []byte
	Timestamp int64
	TTL       int32 // 0 when the cell does not expire
	ExpiresAt int64 // seconds; meaningful when TTL > 0
}

// RowVisible reports whether a row the engine returned holds anything a
// query sees at now: a live marker, or a live cell of a column the table
// has, not one dropped after the cell was written. (The engine knows no
// columns, so a row kept alive by a dropped column's cells reaches here.)
func (t *Table) RowVisible(r *mutation.Row, now int64) bool {
	if r.Liveness.IsLive(now) {
		return true
	}
	for i := range r.Cells {
		cell := &r.Cells[i]
		c := t.byName[cell.Column]
		if c == nil || c.IsPrimaryKey() {
			continue
		}
		if at, dropped := t.Dropped[c.Name]; dropped && cell.Timestamp <= at {
			continue
		}
		if cell.IsLive(now) {
			return true
		}
	}
	return false
}

// putValues adds to out the live values of a row's non-key columns at now:
// multi-cell columns are put back together into one serialized value.
// Columns without a live value are left out.
func (t *Table) putValues(out RowValues, need []bool, r *mutation.Row, now int64) error {
	cells := r.Cells
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j].Column == cells[i].Column {
			j++
		}
		c := t.byName[cells[i].Column]
		if c == nil || c.IsPrimaryKey() || need != nil && !need[c.Index] {
			i = j // a dropped column's cells are ignored, as Cassandra does
			continue
		}
		if err := t.putColumn(out, c, cells[i:j], now); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (t *Table) putColumn(out RowValues, c *Column, cells []mutation.Cell, now int64) error {
	droppedAt, wasDropped := t.Dropped[c.Name]
	visible := func(cell *mutation.Cell) bool {
		return cell.IsLive(now) && !(wasDropped && cell.Timestamp <= droppedAt)
	}
	typ := c.Type
	if !typ.IsMultiCell() {
		// One cell (no path): no need to gather anything.
		for k := len(cells) - 1; k >= 0; k-- {
			if l := &cells[k]; visible(l) {
				v := Cell{Value: l.Value, Timestamp: l.Timestamp, TTL: l.TTL}
				if l.Counter {
					// A counter reads as its total, a bigint.
					v.Value = cqltype.EncodeBigint(mutation.CounterTotal(l.Value))
				}
				if l.TTL > 0 {
					v.ExpiresAt = l.LocalDeletionTime
				}
				out[c.Index] = v
				return nil
			}
		}
		return nil
	}
	var live []*mutation.Cell
	for k := range cells {
		if visible(&cells[k]) {
			live = append(live, &cells[k])
		}
	}
	if len(live) == 0 {
		return nil
	}
	var value []byte
	switch typ.Kind {
	case cqltype.Set, cqltype.Map:
		keys := make([][]byte, len(live))
		vals := make([][]byte, len(live))
		for k, l := range live {
			key, _, err := typ.Params[0].DecodeComparable(l.Path)
			if err != nil {
				return fmt.Errorf("schema: %s.%s column %s: element path: %w", t.Keyspace, t.Name, c.Name, err)
			}
			keys[k], vals[k] = key, l.Value
		}
		if typ.Kind == cqltype.Set {
			value = cqltype.EncodeCollection(keys)
		} else {
			value = cqltype.EncodeMap(keys, vals)
		}
	case cqltype.List:
		elems := make([][]byte, len(live))
		for k, l := range live {
			elems[k] = l.Value
		}
		value = cqltype.EncodeCollection(elems)
	case cqltype.UDT:
		fields := make([][]byte, len(typ.Params))
		for _, l := range live {
			if len(l.Path) != 2 {
				return fmt.Errorf("schema: %s.%s column %s: field path of %d bytes", t.Keyspace, t.Name, c.Name, len(l.Path))
			}
			if i := int(binary.BigEndian.Uint16(l.Path)); i < len(fields) {
				fields[i] = l.Value
			}
		}
		value = cqltype.EncodeTuple(fields)
	}
	out[c.Index] = Cell{Value: value}
	return nil
}
