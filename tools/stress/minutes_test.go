package stress

import (
	"math"
	"testing"
)

func TestMinuteWindow(t *testing.T) {
	w := newMinuteWindow()
	for second := 1; second <= 150; second++ {
		h := newHist()
		latency := int64(1000 * ((second-1)/60 + 1)) // 1 ms, 2 ms, then 3 ms
		for range 100 {
			_ = h.RecordValue(latency)
		}
		ops, errors := int64(100), int64(0)
		if second == 30 {
			_ = h.RecordValue(50_000)
			ops, errors = 101, 2
		}
		w.add(ops, errors, h)
	}
	if len(w.closed) != 2 {
		t.Fatalf("%d full minutes from 150 seconds, want 2", len(w.closed))
	}
	w.late(10)
	minutes := w.minutes()
	if len(minutes) != 3 {
		t.Fatalf("%d minutes at the end of 150 seconds, want 3", len(minutes))
	}
	last := minutes[2]
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
	for range 60 {
		h := newHist()
		_ = h.RecordValue(1000)
		w.add(1, 0, h)
	}
	w.late(6)
	minutes := w.minutes()
	if len(minutes) != 1 || minutes[0].Ops != 66 || minutes[0].OpsPerSec != 1.1 || w.ops != 0 {
		t.Fatalf("got %+v, %d under way", minutes, w.ops)
	}
}
