package stress

import (
	"math"
	"testing"
)

func TestMinuteWindow(t *testing.T) {
	w := newMinuteWindow()
	var minutes []MinuteStats
	for second := 1; second <= 150; second++ {
		h := newHist()
		latency := int64(1000 * ((second-1)/60 + 1)) // 1 ms, 2 ms, then 3 ms
		for range 100 {
			_ = h.RecordValue(latency)
		}
		ss := SecondStats{Second: second, Interval: Interval{Ops: 100}}
		if second == 30 {
			_ = h.RecordValue(50_000)
			ss.Ops, ss.Errors = 101, 2
		}
		if m, full := w.add(ss, h); full {
			minutes = append(minutes, m)
		}
	}
	if len(minutes) != 2 {
		t.Fatalf("%d full minutes from 150 seconds, want 2", len(minutes))
	}
	w.late(10, minutes)
	last := w.close(3)
	near := func(got, want float64) bool { return math.Abs(got-want) <= want/100 }
	for _, c := range []struct {
		got                          MinuteStats
		number, seconds              int
		ops, errors                  int64
		p50, p999, max, opsPerSecond float64
	}{
		{minutes[0], 1, 60, 6001, 2, 1, 1, 50, 6001.0 / 60},
		{minutes[1], 2, 60, 6000, 0, 2, 2, 2, 100},
		{last, 3, 30, 3010, 0, 3, 3, 3, 3010.0 / 30},
	} {
		m := c.got
		if m.Minute != c.number || m.Seconds != c.seconds || m.Ops != c.ops || m.Errors != c.errors ||
			!near(m.P50, c.p50) || !near(m.P999, c.p999) || !near(m.Max, c.max) || !near(m.OpsPerSec, c.opsPerSecond) {
			t.Errorf("minute %d: got %+v", c.number, m)
		}
	}
}

// Operations that end after the last second of a run that ended on a
// minute's edge join that minute.
func TestMinuteWindowLateAfterFullMinute(t *testing.T) {
	w := newMinuteWindow()
	var minutes []MinuteStats
	for second := 1; second <= 60; second++ {
		h := newHist()
		_ = h.RecordValue(1000)
		if m, full := w.add(SecondStats{Second: second, Interval: Interval{Ops: 1}}, h); full {
			minutes = append(minutes, m)
		}
	}
	w.late(6, minutes)
	if len(minutes) != 1 || minutes[0].Ops != 66 || minutes[0].OpsPerSec != 1.1 || w.ops != 0 {
		t.Fatalf("got %+v, %d under way", minutes, w.ops)
	}
}
