package repair

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// Repaired is a stretch of a table's tokens, (Start, End] with Start <
// End, and when the last repair that covered it on every replica began
// (Unix seconds).
type Repaired struct {
	Range partitioner.Range
	At    int64
}

// History is where repairs have made every replica of each table agree,
// and since when: the storage engine's RepairHistory, which tables whose
// tombstones wait for repair purge by. A token keeps the newest time of
// the repairs that covered it. Readers never lock: a change publishes a
// new copy.
type History struct {
	Partitioner partitioner.Partitioner

	mu     sync.Mutex // orders changes
	tables atomic.Pointer[map[mutation.TableID][]Repaired]
}

// RepairedAt is when the last repair of table that covered token began.
func (h *History) RepairedAt(table mutation.TableID, token partitioner.Token) (int64, bool) {
	tables := h.tables.Load()
	if tables == nil {
		return 0, false
	}
	segs := (*tables)[table]
	i, _ := slices.BinarySearchFunc(segs, token, func(s Repaired, t partitioner.Token) int {
		return partitioner.Compare(s.Range.End, t)
	})
	if i < len(segs) && partitioner.Compare(segs[i].Range.Start, token) < 0 {
		return segs[i].At, true
	}
	return 0, false
}

// CoveredSince is the oldest time at which the repairs that together
// covered every token of r (which may wrap) began; false if some token of
// r no repair has covered, or r holds no token.
func (h *History) CoveredSince(table mutation.TableID, r partitioner.Range) (int64, bool) {
	tables := h.tables.Load()
	if tables == nil {
		return 0, false
	}
	segs := (*tables)[table]
	oldest, any := int64(0), false
	for _, piece := range r.Unwrap(h.Partitioner) {
		// The stretches must run unbroken from piece.Start to piece.End.
		i, _ := slices.BinarySearchFunc(segs, piece.Start, func(s Repaired, t partitioner.Token) int {
			return partitioner.Compare(s.Range.End, t)
		})
		if i < len(segs) && partitioner.Compare(segs[i].Range.End, piece.Start) == 0 {
			i++ // it ends where the piece begins: none of its tokens is in the piece
		}
		at := piece.Start
		for partitioner.Compare(at, piece.End) < 0 {
			if i == len(segs) || partitioner.Compare(segs[i].Range.Start, at) > 0 {
				return 0, false
			}
			if !any || segs[i].At < oldest {
				oldest, any = segs[i].At, true
			}
			at = segs[i].Range.End
			i++
		}
	}
	return oldest, any
}

// Record notes that a repair of table begun at at covered ranges (which
// may wrap) on every replica, and returns the table's history after it.
func (h *History) Record(table mutation.TableID, ranges []partitioner.Range, at int64) []Repaired {
	h.mu.Lock()
	defer h.mu.Unlock()
	var pieces []partitioner.Range
	for _, r := range ranges {
		pieces = append(pieces, r.Unwrap(h.Partitioner)...)
	}
	tables := h.copyTables()
	segs := merge(tables[table], union(pieces), at)
	tables[table] = segs
	h.tables.Store(&tables)
	return slices.Clone(segs)
}

// Forget drops table's history (the table was dropped).
func (h *History) Forget(table mutation.TableID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tables := h.copyTables()
	delete(tables, table)
	h.tables.Store(&tables)
}

// REQUIRES: h.mu held.
func (h *History) copyTables() map[mutation.TableID][]Repaired {
	out := map[mutation.TableID][]Repaired{}
	if tables := h.tables.Load(); tables != nil {
		for id, segs := range *tables {
			out[id] = segs
		}
	}
	return out
}

// union is pieces (none wrapping) sorted and joined where they overlap or
// touch, so that no two share a token.
func union(pieces []partitioner.Range) []partitioner.Range {
	slices.SortFunc(pieces, func(a, b partitioner.Range) int { return partitioner.Compare(a.Start, b.Start) })
	var out []partitioner.Range
	for _, p := range pieces {
		if n := len(out); n > 0 && partitioner.Compare(p.Start, out[n-1].End) <= 0 {
			if partitioner.Compare(p.End, out[n-1].End) > 0 {
				out[n-1].End = p.End
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

// merge adds the stretches of add (sorted, disjoint, not wrapping), all
// repaired at at, to segs (the same, each with its own time) in one
// sweep: each token keeps the newer time, neighbours of one time joined.
// The result is a new slice.
func merge(segs []Repaired, add []partitioner.Range, at int64) []Repaired {
	bounds := make([]partitioner.Token, 0, 2*(len(segs)+len(add)))
	for _, r := range add {
		bounds = append(bounds, r.Start, r.End)
	}
	for _, s := range segs {
		bounds = append(bounds, s.Range.Start, s.Range.End)
	}
	slices.SortFunc(bounds, partitioner.Compare)
	bounds = slices.CompactFunc(bounds, func(a, b partitioner.Token) bool { return partitioner.Compare(a, b) == 0 })
	covers := func(r partitioner.Range, lo, hi partitioner.Token) bool {
		return partitioner.Compare(r.Start, lo) <= 0 && partitioner.Compare(hi, r.End) <= 0
	}
	var out []Repaired
	j, k := 0, 0 // the first of segs, and of add, that may cover the piece being made
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		for j < len(segs) && partitioner.Compare(segs[j].Range.End, lo) <= 0 {
			j++
		}
		for k < len(add) && partitioner.Compare(add[k].End, lo) <= 0 {
			k++
		}
		t, covered := int64(0), false
		if k < len(add) && covers(add[k], lo, hi) {
			t, covered = at, true
		}
		if j < len(segs) && covers(segs[j].Range, lo, hi) && (!covered || segs[j].At > t) {
			t, covered = segs[j].At, true
		}
		if !covered {
			continue
		}
		if n := len(out); n > 0 && out[n-1].At == t && partitioner.Compare(out[n-1].Range.End, lo) == 0 {
			out[n-1].Range.End = hi
			continue
		}
		out = append(out, Repaired{Range: partitioner.Range{Start: lo, End: hi}, At: t})
	}
	return out
}
