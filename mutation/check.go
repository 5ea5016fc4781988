package mutation

import (
	"fmt"
	"slices"
	"strings"
)

// Check reports whether m is well-formed: every row meets INVARIANT M1
// (cells in order, one per column and path; column deletions in order, one
// per column), no cell or marker carries what its encoding cannot (a
// negative TTL, a tombstone with a TTL or a value), and every range
// tombstone deletes. A mutation that passes encodes and decodes back to
// itself. It costs a comparison per cell, so the engine checks every write
// before the commit log sees it.
func (m *Mutation) Check() error { return m.check(false) }

// CheckCounterUpdate is Check for a counter write on its way to its
// leader: its counter cells are updates (CounterUpdate's deltas), which no
// engine takes, rather than contexts.
func (m *Mutation) CheckCounterUpdate() error { return m.check(true) }

func (m *Mutation) check(counterUpdates bool) error {
	for i := range m.RangeTombstones {
		if m.RangeTombstones[i].Deletion.IsLive() {
			return m.malformed("range tombstone %d has no deletion time", i)
		}
	}
	if m.Static != nil {
		if err := m.Static.check(counterUpdates); err != nil {
			return m.malformed("static row: %v", err)
		}
	}
	for i, ru := range m.Rows {
		if ru.Row == nil {
			return m.malformed("row %d is nil", i)
		}
		if err := ru.Row.check(counterUpdates); err != nil {
			return m.malformed("row at clustering %x: %v", ru.Clustering, err)
		}
	}
	return nil
}

func (m *Mutation) malformed(format string, args ...any) error {
	return fmt.Errorf("mutation of table %s, key %x: %s: %w", m.Table, m.Key, fmt.Sprintf(format, args...), ErrMalformed)
}

// check reports the first way r breaks INVARIANT M1 or cannot be encoded
// as it is, its counter cells taken as updates or as contexts.
func (r *Row) check(counterUpdates bool) error {
	if !r.Liveness.IsEmpty() && r.Liveness.TTL < 0 {
		return fmt.Errorf("row marker with negative TTL %d", r.Liveness.TTL)
	}
	for i := 1; i < len(r.Columns); i++ {
		if r.Columns[i-1].Column >= r.Columns[i].Column {
			return fmt.Errorf("column deletions out of order at %q", r.Columns[i].Column)
		}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		switch {
		case i > 0 && compareCellPosition(&r.Cells[i-1], c) >= 0:
			return fmt.Errorf("cells out of order at column %q, path %x", c.Column, c.Path)
		case c.TTL < 0:
			return fmt.Errorf("cell of column %q with negative TTL %d", c.Column, c.TTL)
		case c.Tombstone && (c.TTL != 0 || len(c.Value) != 0):
			return fmt.Errorf("tombstone of column %q with a TTL or a value", c.Column)
		case c.Counter && (c.Tombstone || c.TTL != 0):
			return fmt.Errorf("counter cell of column %q that expires or is a tombstone", c.Column)
		case c.Counter && counterUpdates:
			if _, ok := CounterDelta(c); !ok {
				return fmt.Errorf("counter update of column %q of %d bytes", c.Column, len(c.Value))
			}
		case c.Counter:
			if err := CheckCounterContext(c.Value); err != nil {
				return fmt.Errorf("counter cell of column %q: %v", c.Column, err)
			}
		}
	}
	return nil
}

// Normalize puts a row whose cells and column deletions were appended in
// any order into the form INVARIANT M1 requires: cells sorted by column and
// path, two versions of one cell reconciled into one (a statement that
// writes one element twice, as SET m['a'] = 1, m['a'] = 2 does, keeps what
// Reconcile keeps), and column deletions sorted by column, two of one
// column merged into the stronger.
func (r *Row) Normalize() {
	slices.SortStableFunc(r.Cells, func(a, b Cell) int { return compareCellPosition(&a, &b) })
	cells := r.Cells[:0]
	for i := range r.Cells {
		if n := len(cells); n > 0 && compareCellPosition(&cells[n-1], &r.Cells[i]) == 0 {
			cells[n-1] = *Reconcile(&cells[n-1], &r.Cells[i])
			continue
		}
		cells = append(cells, r.Cells[i])
	}
	r.Cells = cells
	slices.SortStableFunc(r.Columns, func(a, b ColumnDeletion) int { return strings.Compare(a.Column, b.Column) })
	cols := r.Columns[:0]
	for _, cd := range r.Columns {
		if n := len(cols); n > 0 && cols[n-1].Column == cd.Column {
			cols[n-1].Deletion = cols[n-1].Deletion.Max(cd.Deletion)
			continue
		}
		cols = append(cols, cd)
	}
	r.Columns = cols
}
