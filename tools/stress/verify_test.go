package stress

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocql/gocql"
)

func TestAReadBehindTheLastAcknowledgedWrite(t *testing.T) {
	w := written{ts: 100, hash: 7}
	for _, c := range []struct {
		name   string
		w      written
		found  bool
		ts     int64
		hash   uint64
		behind bool
	}{
		{"the write itself", w, true, 100, 7, false},
		{"a newer write", w, true, 101, 9, false},
		{"an older write", w, true, 99, 7, true},
		{"nothing", w, false, 0, 0, true},
		{"another value under its timestamp", w, true, 100, 8, true},
		{"no acknowledged write, nothing found", written{}, false, 0, 0, false},
		{"no acknowledged write, an unacknowledged one found", written{}, true, 5, 1, false},
	} {
		if got := c.w.behind(c.found, c.ts, c.hash); got != c.behind {
			t.Errorf("%s: behind = %v, want %v", c.name, got, c.behind)
		}
	}
}

func TestLedgerKeepsTheNewestAcknowledgedWriteOfEachKey(t *testing.T) {
	l := newLedger()
	keys := []int64{0, 1, 1<<ledgerChunkBits - 1, 1 << ledgerChunkBits, 5 << ledgerChunkBits}
	var wg sync.WaitGroup
	seen := map[int64]int64{}
	var mu sync.Mutex
	for thread := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key := keys[(thread+i)%len(keys)]
				ts := l.timestamp()
				l.acked(key, written{ts: ts, hash: uint64(ts)})
				mu.Lock()
				seen[key] = max(seen[key], ts)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Acknowledged out of their order, the older loses.
	l.acked(keys[0], written{ts: 1, hash: 1})
	for _, k := range keys {
		if got := l.get(k); got.ts != seen[k] || got.hash != uint64(seen[k]) {
			t.Errorf("key %d: %+v, want the newest, %d", k, got, seen[k])
		}
	}
	if got := l.get(3 << ledgerChunkBits); got.ts != 0 {
		t.Errorf("a key never written: %+v", got)
	}
	got := l.written()
	slices.Sort(got)
	if !slices.Equal(got, keys) {
		t.Errorf("written() = %v, want %v", got, keys)
	}
}

func TestLedgerTimestampsAreUnique(t *testing.T) {
	l := newLedger()
	var mu sync.Mutex
	all := map[int64]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				ts := l.timestamp()
				mu.Lock()
				if all[ts] {
					t.Errorf("timestamp %d given twice", ts)
				}
				all[ts] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func TestOverlap(t *testing.T) {
	simple := func(rf string) map[string]string {
		return map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": rf}
	}
	nts := map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3", "dc2": "2"}
	for _, c := range []struct {
		cl          gocql.Consistency
		replication map[string]string
		want        bool
	}{
		{gocql.Quorum, simple("3"), true},
		{gocql.One, simple("1"), true},
		{gocql.One, simple("3"), false},
		{gocql.Two, simple("3"), true},
		{gocql.Two, simple("4"), false},
		{gocql.All, simple("3"), true},
		{gocql.LocalQuorum, nts, true},
		{gocql.Three, nts, true},
		{gocql.Two, nts, false},
		{gocql.LocalOne, nts, false},
		{gocql.LocalOne, map[string]string{"class": "NetworkTopologyStrategy", "dc1": "1"}, true},
	} {
		got, note := overlap(c.cl, c.replication)
		if got != c.want || got == (note != "") {
			t.Errorf("%s over %v: %v (%q), want %v", c.cl, c.replication, got, note, c.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		v    VerifySummary
		want string
	}{
		{VerifySummary{Checked: 10, ReadBack: 10, Overlapping: true}, ""},
		{VerifySummary{Stale: 3}, ""},
		{VerifySummary{Stale: 3, Overlapping: true}, "3 stale reads"},
		{VerifySummary{Lost: 2, Unreadable: 1}, "2 acknowledged writes lost, 1 unreadable"},
	} {
		err := c.v.verdict()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasSuffix(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.v, err, c.want)
		}
	}
}
