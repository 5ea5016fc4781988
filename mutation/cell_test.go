package mutation

import (
	"testing"
)

func live(ts int64, v string) Cell { return LiveCell("v", nil, ts, []byte(v)) }
func expiring(ts int64, ttl int32, now int64, v string) Cell {
	return ExpiringCell("v", nil, ts, ttl, now, []byte(v))
}
func tomb(ts, now int64) Cell { return TombstoneCell("v", nil, ts, now) }

// TestReconcile covers every rule of cassandra-semantics.md 1.1, in both
// argument orders.
func TestReconcile(t *testing.T) {
	cases := []struct {
		name string
		a, b Cell
		want Cell
	}{
		{"higher timestamp wins over greater value", live(2, "a"), live(1, "z"), live(2, "a")},
		{"higher timestamp live beats older tombstone", live(2, "a"), tomb(1, 100), live(2, "a")},
		{"higher timestamp tombstone beats live", tomb(3, 100), live(2, "a"), tomb(3, 100)},
		{"negative timestamps compare signed", live(-1, "a"), live(-5, "z"), live(-1, "a")},
		{"tie: tombstone beats live", live(5, "zz"), tomb(5, 100), tomb(5, 100)},
		{"tie: expiring beats live even with smaller value", live(5, "zz"), expiring(5, 10, 100, "a"), expiring(5, 10, 100, "a")},
		{"tie: expiring beats live even when already expired", live(5, "zz"), expiring(5, 1, 0, "a"), expiring(5, 1, 0, "a")},
		{"tie: tombstone beats expiring", expiring(5, 10, 100, "a"), tomb(5, 50), tomb(5, 50)},
		{"tie: two tombstones, later deletion time wins", tomb(5, 100), tomb(5, 200), tomb(5, 200)},
		{"tie: two expiring, later expiry wins over greater value", expiring(5, 10, 100, "z"), expiring(5, 20, 100, "a"), expiring(5, 20, 100, "a")},
		{"tie: two expiring same expiry, greater value wins", expiring(5, 10, 100, "a"), expiring(5, 10, 100, "b"), expiring(5, 10, 100, "b")},
		{"tie: two live, greater value wins", live(5, "a"), live(5, "b"), live(5, "b")},
		{"tie: values compare unsigned", live(5, "\x7f"), live(5, "\x80"), live(5, "\x80")},
		{"tie: a proper prefix is smaller", live(5, "ab"), live(5, "abc"), live(5, "abc")},
		{"tie: empty value is smallest", live(5, ""), live(5, "\x00"), live(5, "\x00")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][2]Cell{{tc.a, tc.b}, {tc.b, tc.a}} {
				got := Reconcile(&order[0], &order[1])
				if got.String() != tc.want.String() {
					t.Errorf("Reconcile(%s, %s) = %s, want %s", order[0], order[1], got, tc.want)
				}
			}
		})
	}
}

func TestDeletionRules(t *testing.T) {
	d := DeletionTime{MarkedForDeleteAt: 10, LocalDeletionTime: 100}
	if !d.Shadows(10) || !d.Shadows(9) || d.Shadows(11) {
		t.Errorf("a deletion at 10 must shadow timestamps <= 10 and only those")
	}
	if Live.Shadows(NoTimestamp + 1) {
		t.Errorf("Live shadows nothing")
	}
	later := DeletionTime{MarkedForDeleteAt: 11, LocalDeletionTime: 50}
	sameTsLaterLdt := DeletionTime{MarkedForDeleteAt: 10, LocalDeletionTime: 101}
	if !later.Supersedes(d) || d.Supersedes(later) {
		t.Errorf("the higher mark must win")
	}
	if !sameTsLaterLdt.Supersedes(d) || d.Supersedes(sameTsLaterLdt) {
		t.Errorf("at equal marks the later local deletion time must win")
	}
	if d.Max(Live) != d || Live.Max(d) != d {
		t.Errorf("any deletion supersedes Live")
	}
}

func TestLivenessSupersedes(t *testing.T) {
	plain := LivenessInfo{Timestamp: 5, ExpiresAt: NoDeletionTime}
	exp := LivenessInfo{Timestamp: 5, TTL: 10, ExpiresAt: 110}
	expLater := LivenessInfo{Timestamp: 5, TTL: 20, ExpiresAt: 120}
	newer := LivenessInfo{Timestamp: 6, ExpiresAt: NoDeletionTime}
	cases := []struct {
		a, b LivenessInfo
		want bool
	}{
		{newer, exp, true}, {exp, newer, false},
		{exp, plain, true}, {plain, exp, false},
		{expLater, exp, true}, {exp, expLater, false},
		{plain, plain, false},
	}
	for _, tc := range cases {
		if got := tc.a.Supersedes(tc.b); got != tc.want {
			t.Errorf("%s supersedes %s = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if !exp.IsLive(109) || exp.IsLive(110) {
		t.Errorf("an expiring marker is live strictly before its expiry")
	}
	if NoLiveness.IsLive(0) {
		t.Errorf("an empty marker is never live")
	}
}
