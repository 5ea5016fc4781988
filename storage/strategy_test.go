package storage

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// span builds the summary of an SSTable holding partitions lo..hi (as
// two-digit prefixes, so that byte order is numeric order).
func span(level int, size int64, lo, hi int) sstableSummary {
	return sstableSummary{size: size, level: level, first: fmt.Appendf(nil, "%02d", lo), last: fmt.Appendf(nil, "%02d", hi)}
}

func TestPickLeveled(t *testing.T) {
	o := CompactionOptions{Strategy: Leveled, SSTableSize: 100, Fanout: 10}
	o.EnsureDefaults()
	cases := []struct {
		name string
		ssts []sstableSummary
		want *compactionPlan
	}{
		{"one level-0 SSTable waits", []sstableSummary{span(0, 50, 0, 99)}, nil},
		{"small level-0 SSTables below min_threshold wait",
			[]sstableSummary{span(0, 10, 0, 99), span(0, 10, 0, 99), span(0, 10, 0, 99)}, nil},
		{"min_threshold small level-0 SSTables merge in place",
			[]sstableSummary{span(0, 10, 0, 99), span(0, 10, 0, 99), span(0, 10, 0, 99), span(0, 10, 0, 99)},
			&compactionPlan{inputs: []int{0, 1, 2, 3}}},
		{"level 0 worth an SSTable merges with what it overlaps in level 1",
			[]sstableSummary{span(0, 60, 10, 20), span(0, 60, 15, 30), span(1, 100, 0, 9), span(1, 100, 10, 19), span(1, 100, 25, 40), span(1, 100, 41, 60)},
			&compactionPlan{inputs: []int{0, 1, 3, 4}, level: 1, cutSize: 100}},
		{"level 1 gives up what lies between level-0 inputs",
			[]sstableSummary{span(0, 60, 10, 12), span(0, 60, 30, 32), span(1, 100, 20, 25), span(1, 100, 40, 50)},
			&compactionPlan{inputs: []int{0, 1, 2}, level: 1, cutSize: 100}},
		{"an over-full level 1 pushes one SSTable into level 2",
			[]sstableSummary{span(1, 600, 0, 49), span(1, 600, 50, 99), span(2, 100, 0, 10), span(2, 100, 45, 60), span(2, 100, 70, 80)},
			&compactionPlan{inputs: []int{0, 2, 3}, level: 2, cutSize: 100}},
		{"a deeper over-full level goes before level 0",
			[]sstableSummary{span(0, 60, 0, 99), span(0, 60, 0, 99), span(1, 50, 0, 99), span(2, 20000, 0, 99)},
			&compactionPlan{inputs: []int{3}, level: 3, cutSize: 100}},
		{"level 0 past max_threshold is size-tiered in place",
			func() []sstableSummary {
				var s []sstableSummary
				for range 33 {
					s = append(s, span(0, 10, 0, 99))
				}
				return s
			}(),
			&compactionPlan{inputs: func() []int {
				var in []int
				for i := range 32 {
					in = append(in, i)
				}
				return in
			}()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cursors levelCursors
			got := pickCompaction(c.ssts, &o, &cursors)
			if (got == nil) != (c.want == nil) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if got == nil {
				return
			}
			slices.Sort(got.inputs)
			if !slices.Equal(got.inputs, c.want.inputs) || got.level != c.want.level || got.cutSize != c.want.cutSize {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestPickLeveledRoundRobin shows successive compactions of an over-full
// level take its SSTables in turn, wrapping around.
func TestPickLeveledRoundRobin(t *testing.T) {
	o := CompactionOptions{Strategy: Leveled, SSTableSize: 100, Fanout: 10}
	o.EnsureDefaults()
	ssts := []sstableSummary{span(1, 400, 50, 59), span(1, 400, 0, 9), span(1, 400, 20, 29)}
	var cursors levelCursors
	var order []int
	for range 4 {
		p := pickCompaction(ssts, &o, &cursors)
		if p == nil || len(p.inputs) != 1 || p.level != 2 {
			t.Fatalf("got %+v, want one level-1 SSTable into level 2", p)
		}
		order = append(order, p.inputs[0])
	}
	if want := []int{1, 2, 0, 1}; !slices.Equal(order, want) {
		t.Fatalf("took %v, want %v", order, want)
	}
}

func TestPickTimeWindow(t *testing.T) {
	o := CompactionOptions{Strategy: TimeWindow, Window: time.Hour}
	o.EnsureDefaults()
	hour := time.Hour.Microseconds()
	at := func(size int64, ts int64) sstableSummary { return sstableSummary{size: size, maxTimestamp: ts} }
	cases := []struct {
		name string
		ssts []sstableSummary
		want []int
	}{
		{"the newest window waits for min_threshold", []sstableSummary{at(10, 5*hour+1), at(10, 5*hour+2), at(10, 5*hour+3)}, nil},
		{"the newest window is size-tiered",
			[]sstableSummary{at(10, 5*hour+1), at(10, 5*hour+2), at(10, 5*hour+3), at(10, 5*hour+4), at(10, 4*hour)},
			[]int{0, 1, 2, 3}},
		{"an older window with two SSTables merges", []sstableSummary{at(10, 5*hour), at(10, 3*hour+5), at(1000, 3*hour+9)}, []int{1, 2}},
		{"older windows of one SSTable stay", []sstableSummary{at(10, 5*hour), at(10, 3*hour), at(10, 2*hour), at(10, hour)}, nil},
		{"the newer of two older windows goes first",
			[]sstableSummary{at(10, 5*hour), at(10, 2*hour), at(10, 2*hour+1), at(10, 3*hour), at(10, 3*hour+1)},
			[]int{3, 4}},
		{"windows before the epoch", []sstableSummary{at(10, 5*hour), at(10, -1), at(10, -hour+1), at(10, 1)}, []int{1, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := pickCompaction(c.ssts, &o, nil)
			var inputs []int
			if got != nil {
				inputs = slices.Sorted(slices.Values(got.inputs))
				if got.level != 0 || got.cutSize != 0 {
					t.Fatalf("time-window outputs are one level-0 SSTable; got %+v", got)
				}
			}
			if !slices.Equal(inputs, c.want) {
				t.Fatalf("got %v, want %v", inputs, c.want)
			}
		})
	}
}

func TestCompactionOptionsValidate(t *testing.T) {
	bad := []CompactionOptions{
		{Strategy: 7},
		{MinThreshold: 1},
		{MinThreshold: 8, MaxThreshold: 4},
		{BucketLow: 2, BucketHigh: 1},
		{SSTableSize: -1},
		{Fanout: 1},
		{Window: -time.Second},
	}
	for _, o := range bad {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: Validate accepted it", o)
		}
	}
	good := CompactionOptions{Strategy: Leveled}
	if err := good.Validate(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}
