package storage

import (
	"bytes"
	"math"
	"sort"
)

// sstableSummary is what a compaction strategy knows of an SSTable.
type sstableSummary struct {
	size  int64
	level int
	// first and last are the partition prefixes of the first and last
	// entries; nil for an SSTable without entries.
	first, last []byte
	// maxTimestamp is the newest write timestamp, in microseconds.
	maxTimestamp int64
}

func (s *sstableSummary) overlaps(o *sstableSummary) bool {
	return s.first != nil && o.first != nil &&
		bytes.Compare(s.first, o.last) <= 0 && bytes.Compare(o.first, s.last) <= 0
}

// compactionPlan is a compaction a strategy chose.
type compactionPlan struct {
	inputs []int // indexes of the chosen SSTables
	level  int   // of the outputs
	// cutSize starts a new output at the first partition boundary past it;
	// 0 writes one output.
	cutSize int64
}

// maxLevel is the deepest level Leveled fills.
const maxLevel = 8

// levelCursors remember, per level, the last partition prefix a leveled
// compaction took from it, so that successive compactions walk the level
// round-robin instead of rewriting its first SSTable again and again.
type levelCursors [maxLevel + 1][]byte

// pickCompaction chooses the compaction a table's strategy wants next, or
// nil.
func pickCompaction(ssts []sstableSummary, o *CompactionOptions, cursors *levelCursors) *compactionPlan {
	switch o.Strategy {
	case Leveled:
		return pickLeveled(ssts, o, cursors)
	case TimeWindow:
		return pickTimeWindow(ssts, o)
	default:
		all := make([]int, len(ssts))
		for i := range all {
			all[i] = i
		}
		return sizeTieredPlan(ssts, all, o)
	}
}

// sizeTieredPlan applies the size-tiered rule to the SSTables members.
func sizeTieredPlan(ssts []sstableSummary, members []int, o *CompactionOptions) *compactionPlan {
	sizes := make([]int64, len(members))
	for i, m := range members {
		sizes[i] = ssts[m].size
	}
	picked := pickSizeTiered(sizes, *o)
	if picked == nil {
		return nil
	}
	p := &compactionPlan{}
	for _, i := range picked {
		p.inputs = append(p.inputs, members[i])
	}
	return p
}

// pickLeveled follows the leveled strategy. Level 0 holds flushed SSTables,
// which may overlap; every deeper level n holds non-overlapping SSTables of
// about SSTableSize, SSTableSize*Fanout^n bytes in all. The deepest
// over-full level goes first: one of its SSTables, in turn, merges with what
// it overlaps in the next level. Then level 0: past MaxThreshold SSTables it
// is size-tiered in place, since merging them all into level 1 at once would
// be one huge compaction; once its SSTables together reach SSTableSize they
// merge with what they overlap in level 1; before that, MinThreshold of them
// merge with each other.
func pickLeveled(ssts []sstableSummary, o *CompactionOptions, cursors *levelCursors) *compactionPlan {
	var levels [maxLevel + 1][]int
	var bytesIn [maxLevel + 1]int64
	for i := range ssts {
		l := min(ssts[i].level, maxLevel)
		levels[l] = append(levels[l], i)
		bytesIn[l] += ssts[i].size
	}
	l0 := levels[0]
	if len(l0) > o.MaxThreshold {
		if p := sizeTieredPlan(ssts, l0, o); p != nil {
			return p
		}
	}
	for n := maxLevel - 1; n >= 1; n-- {
		limit := float64(o.SSTableSize) * math.Pow(float64(o.Fanout), float64(n))
		if len(levels[n]) == 0 || float64(bytesIn[n]) <= limit {
			continue
		}
		chosen := nextInLevel(ssts, levels[n], cursors[n])
		cursors[n] = append(cursors[n][:0], ssts[chosen].last...)
		inputs := append([]int{chosen}, overlapping(ssts, levels[n+1], []int{chosen})...)
		return &compactionPlan{inputs: inputs, level: n + 1, cutSize: o.SSTableSize}
	}
	if len(l0) < 2 {
		return nil
	}
	if len(l0) > o.MaxThreshold {
		l0 = l0[:o.MaxThreshold]
	}
	if bytesIn[0] >= o.SSTableSize {
		// Outputs are cut by size, so one may span the gaps between
		// level-0 inputs: level 1 must give up everything in their combined
		// range, not only what each input overlaps.
		span := combinedRange(ssts, l0)
		inputs := append([]int(nil), l0...)
		for _, i := range levels[1] {
			if ssts[i].overlaps(&span) {
				inputs = append(inputs, i)
			}
		}
		return &compactionPlan{inputs: inputs, level: 1, cutSize: o.SSTableSize}
	}
	if len(l0) >= o.MinThreshold {
		return &compactionPlan{inputs: l0}
	}
	return nil
}

// combinedRange is the range from the smallest first to the largest last
// prefix of members.
func combinedRange(ssts []sstableSummary, members []int) sstableSummary {
	var r sstableSummary
	for _, i := range members {
		s := &ssts[i]
		if s.first == nil {
			continue
		}
		if r.first == nil || bytes.Compare(s.first, r.first) < 0 {
			r.first = s.first
		}
		if r.last == nil || bytes.Compare(s.last, r.last) > 0 {
			r.last = s.last
		}
	}
	return r
}

// nextInLevel returns the SSTable of the level that starts after cursor,
// wrapping to the first.
func nextInLevel(ssts []sstableSummary, level []int, cursor []byte) int {
	sorted := append([]int(nil), level...)
	sort.Slice(sorted, func(a, b int) bool { return bytes.Compare(ssts[sorted[a]].first, ssts[sorted[b]].first) < 0 })
	for _, i := range sorted {
		if cursor == nil || bytes.Compare(ssts[i].first, cursor) > 0 {
			return i
		}
	}
	return sorted[0]
}

// overlapping returns the members of level that overlap any of picked.
func overlapping(ssts []sstableSummary, level, picked []int) []int {
	var out []int
	for _, i := range level {
		for _, p := range picked {
			if ssts[i].overlaps(&ssts[p]) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// pickTimeWindow follows the time-window strategy: SSTables are grouped by
// the window their newest write falls in. The newest window is size-tiered,
// as it still takes writes; any older window with two or more SSTables is
// merged into one, at most MaxThreshold of its smallest at a time. Newer
// windows go first.
func pickTimeWindow(ssts []sstableSummary, o *CompactionOptions) *compactionPlan {
	width := max(int64(o.Window/o.TimestampUnit), 1)
	windows := map[int64][]int{}
	var starts []int64
	for i := range ssts {
		w := floorDiv(ssts[i].maxTimestamp, width)
		if windows[w] == nil {
			starts = append(starts, w)
		}
		windows[w] = append(windows[w], i)
	}
	sort.Slice(starts, func(a, b int) bool { return starts[a] > starts[b] })
	for n, start := range starts {
		members := windows[start]
		if n == 0 {
			if p := sizeTieredPlan(ssts, members, o); p != nil {
				return p
			}
			continue
		}
		if len(members) < 2 {
			continue
		}
		sort.SliceStable(members, func(a, b int) bool { return ssts[members[a]].size < ssts[members[b]].size })
		if len(members) > o.MaxThreshold {
			members = members[:o.MaxThreshold]
		}
		return &compactionPlan{inputs: members}
	}
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
