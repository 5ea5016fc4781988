package mutation

import (
	"fmt"
	"strings"
)

// ColumnDeletion deletes a whole non-frozen collection or UDT column of a row
// (a "complex deletion"): every element written at or before it is shadowed.
type ColumnDeletion struct {
	Column   string
	Deletion DeletionTime
}

// Row is one clustering row, or a partition's static row. Its position
// (the clustering) lives in the engine key, not here.
type Row struct {
	Liveness LivenessInfo     // the row marker
	Deletion DeletionTime     // a row deletion
	Columns  []ColumnDeletion // sorted by Column, at most one per column
	Cells    []Cell           // sorted by (Column, Path); INVARIANT M1
}

// NewRow returns an empty row: no marker, no deletion, no cells.
func NewRow() *Row { return &Row{Liveness: NoLiveness, Deletion: Live} }

// IsEmpty reports whether the row carries nothing at all.
func (r *Row) IsEmpty() bool {
	return r.Liveness.IsEmpty() && r.Deletion.IsLive() && len(r.Columns) == 0 && len(r.Cells) == 0
}

// columnDeletion returns the complex deletion of column, or Live.
func (r *Row) columnDeletion(column string) DeletionTime {
	for i := range r.Columns {
		if r.Columns[i].Column == column {
			return r.Columns[i].Deletion
		}
	}
	return Live
}

// MergeRows merges two versions of the same row: markers and deletions by
// their supersede rules, cells pairwise through Reconcile. Data shadowed by
// the merged row or column deletions is dropped, which is safe because the
// deletion that shadows it stays in the result. Inputs are not modified.
func MergeRows(a, b *Row) *Row {
	out := &Row{Liveness: a.Liveness, Deletion: a.Deletion.Max(b.Deletion)}
	if b.Liveness.Supersedes(a.Liveness) {
		out.Liveness = b.Liveness
	}
	out.Columns = mergeColumnDeletions(a.Columns, b.Columns)
	out.Cells = make([]Cell, 0, len(a.Cells)+len(b.Cells))
	i, j := 0, 0
	for i < len(a.Cells) || j < len(b.Cells) {
		var c *Cell
		switch {
		case j == len(b.Cells):
			c = &a.Cells[i]
			i++
		case i == len(a.Cells):
			c = &b.Cells[j]
			j++
		default:
			switch cmp := compareCellPosition(&a.Cells[i], &b.Cells[j]); {
			case cmp < 0:
				c = &a.Cells[i]
				i++
			case cmp > 0:
				c = &b.Cells[j]
				j++
			default:
				c = Reconcile(&a.Cells[i], &b.Cells[j])
				i++
				j++
			}
		}
		out.Cells = append(out.Cells, *c)
	}
	out.removeShadowed()
	return out
}

func mergeColumnDeletions(a, b []ColumnDeletion) []ColumnDeletion {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make([]ColumnDeletion, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Column < b[j].Column):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Column < a[i].Column:
			out = append(out, b[j])
			j++
		default:
			out = append(out, ColumnDeletion{Column: a[i].Column, Deletion: a[i].Deletion.Max(b[j].Deletion)})
			i++
			j++
		}
	}
	return out
}

// removeShadowed drops, in place, what the row's own deletions shadow: the
// marker and cells under the row deletion, column deletions the row deletion
// supersedes, and collection elements under their column's deletion.
func (r *Row) removeShadowed() {
	if r.Deletion.Shadows(r.Liveness.Timestamp) {
		r.Liveness = NoLiveness
	}
	if len(r.Columns) > 0 {
		kept := r.Columns[:0]
		for _, cd := range r.Columns {
			if !cd.Deletion.IsLive() && !r.Deletion.Supersedes(cd.Deletion) {
				kept = append(kept, cd)
			}
		}
		r.Columns = kept
		if len(kept) == 0 {
			r.Columns = nil
		}
	}
	if r.Deletion.IsLive() && len(r.Columns) == 0 {
		return
	}
	kept := r.Cells[:0]
	for _, c := range r.Cells {
		if r.Deletion.Shadows(c.Timestamp) {
			continue
		}
		if c.Path != nil && r.columnDeletion(c.Column).Shadows(c.Timestamp) {
			continue
		}
		kept = append(kept, c)
	}
	r.Cells = kept
}

// ShadowedBy returns what remains of r under a deletion from outside the row
// (a partition deletion or a range tombstone), or nil if nothing remains. The
// row's own deletion is kept only when it supersedes d.
func (r *Row) ShadowedBy(d DeletionTime) *Row {
	if d.IsLive() {
		return r
	}
	out := &Row{Liveness: r.Liveness, Deletion: r.Deletion}
	if d.Shadows(out.Liveness.Timestamp) {
		out.Liveness = NoLiveness
	}
	if !out.Deletion.Supersedes(d) {
		out.Deletion = Live
	}
	for _, cd := range r.Columns {
		if cd.Deletion.Supersedes(d) {
			out.Columns = append(out.Columns, cd)
		}
	}
	for _, c := range r.Cells {
		if !d.Shadows(c.Timestamp) {
			out.Cells = append(out.Cells, c)
		}
	}
	if out.IsEmpty() {
		return nil
	}
	return out
}

// Live returns the row as a read at now (seconds) sees it: only live cells,
// the marker only when live, no deletions; nil when nothing in it is live.
// A row that already is all that comes back itself, as ShadowedBy does, so
// the common read of a plain row copies nothing. Callers apply outside
// deletions first with ShadowedBy.
func (r *Row) Live(now int64) *Row {
	if r.seenWhole(now) {
		return r
	}
	out := &Row{Liveness: NoLiveness, Deletion: Live}
	if r.Liveness.IsLive(now) {
		out.Liveness = r.Liveness
	}
	for _, c := range r.Cells {
		if c.IsLive(now) {
			out.Cells = append(out.Cells, c)
		}
	}
	if out.Liveness.IsEmpty() && len(out.Cells) == 0 {
		return nil
	}
	return out
}

// seenWhole reports whether a read at now sees all of r: something live,
// no deletions, and nothing dead or expired.
func (r *Row) seenWhole(now int64) bool {
	if !r.Deletion.IsLive() || len(r.Columns) > 0 {
		return false
	}
	if !r.Liveness.IsLive(now) && (r.Liveness != NoLiveness || len(r.Cells) == 0) {
		return false
	}
	for i := range r.Cells {
		if !r.Cells[i].IsLive(now) {
			return false
		}
	}
	return true
}

// Purge prepares r for writing by a compaction at now (seconds): expired
// cells become tombstones dated at their original write time, and any
// tombstone, dead marker or deletion whose local deletion time is before
// gcBefore and for which purgeable(timestamp) holds is dropped. It returns nil
// when nothing remains.
func (r *Row) Purge(now, gcBefore int64, purgeable func(ts int64) bool) *Row {
	canDrop := func(ts, ldt int64) bool { return ldt < gcBefore && purgeable(ts) }
	out := &Row{Liveness: r.Liveness, Deletion: r.Deletion}
	if l := r.Liveness; l.IsExpiring() && now >= l.ExpiresAt && canDrop(l.Timestamp, l.ExpiresAt-int64(l.TTL)) {
		out.Liveness = NoLiveness
	}
	if !out.Deletion.IsLive() && canDrop(out.Deletion.MarkedForDeleteAt, out.Deletion.LocalDeletionTime) {
		out.Deletion = Live
	}
	for _, cd := range r.Columns {
		if !canDrop(cd.Deletion.MarkedForDeleteAt, cd.Deletion.LocalDeletionTime) {
			out.Columns = append(out.Columns, cd)
		}
	}
	for _, c := range r.Cells {
		if c.IsExpiring() && now >= c.LocalDeletionTime {
			c = Cell{Column: c.Column, Path: c.Path, Timestamp: c.Timestamp, Tombstone: true,
				LocalDeletionTime: c.LocalDeletionTime - int64(c.TTL)}
		}
		if c.Tombstone && canDrop(c.Timestamp, c.LocalDeletionTime) {
			continue
		}
		out.Cells = append(out.Cells, c)
	}
	if out.IsEmpty() {
		return nil
	}
	return out
}

// MinTimestamp returns the smallest timestamp of anything in r, or
// math.MaxInt64 when r is empty; SSTable metadata
// keeps it for tombstone purging.
func (r *Row) MinTimestamp() int64 { lo, _ := r.timestampBounds(); return lo }

// MaxTimestamp returns the largest timestamp in r, or NoTimestamp.
func (r *Row) MaxTimestamp() int64 { _, hi := r.timestampBounds(); return hi }

func (r *Row) timestampBounds() (lo, hi int64) {
	lo, hi = NoDeletionTime, NoTimestamp
	see := func(ts int64) {
		lo, hi = min(lo, ts), max(hi, ts)
	}
	if !r.Liveness.IsEmpty() {
		see(r.Liveness.Timestamp)
	}
	if !r.Deletion.IsLive() {
		see(r.Deletion.MarkedForDeleteAt)
	}
	for _, cd := range r.Columns {
		see(cd.Deletion.MarkedForDeleteAt)
	}
	for i := range r.Cells {
		see(r.Cells[i].Timestamp)
	}
	return lo, hi
}

// String prints the row compactly for tests and debugging.
func (r *Row) String() string {
	var parts []string
	if !r.Liveness.IsEmpty() {
		parts = append(parts, "marker"+r.Liveness.String())
	}
	if !r.Deletion.IsLive() {
		parts = append(parts, "rowdel="+r.Deletion.String())
	}
	for _, cd := range r.Columns {
		parts = append(parts, fmt.Sprintf("%s=coldel:%s", cd.Column, cd.Deletion))
	}
	for _, c := range r.Cells {
		parts = append(parts, c.String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}
