package memtable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation"
)

func rowEntry(key string, ts int64, value string) mutation.Entry {
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, []byte(value))}
	return mutation.Entry{Key: []byte(key), Kind: mutation.RowEntry, Row: row}
}

// fill applies n distinct keys drawn from next and returns them sorted.
func fill(m *Memtable, n int, next func() []byte) [][]byte {
	var keys [][]byte
	seen := map[string]bool{}
	for len(keys) < n {
		k := next()
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		keys = append(keys, k)
		m.Apply([]mutation.Entry{rowEntry(string(k), 1, "x")})
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	return keys
}

func TestIteratorSuite(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 5, 63, 64, 65, 300} {
		m := New()
		keys := fill(m, n, func() []byte { return []byte(fmt.Sprintf("k%04d", r.IntN(5000))) })
		testutil.CheckIterator(t, r, keys, 2000, func(lower, upper []byte) mutation.Iterator {
			return m.NewIter(lower, upper)
		})
	}
}

// TestIteratorSuiteAcrossShards spreads keys over every shard, with the
// first byte at shard boundaries too, so iterators cross from shard to
// shard in both directions and bounds fall in empty shards.
func TestIteratorSuiteAcrossShards(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{1, 2, 40, 200, 1000} {
		m := New()
		keys := fill(m, n, func() []byte {
			for {
				first := byte(r.IntN(256))
				if r.IntN(4) == 0 {
					first = byte(r.IntN(shardCount)) << (8 - shardBits) // a shard's first key byte
				}
				if n < 50 && first>>(8-shardBits)%3 == 0 {
					continue // leave some shards empty
				}
				return []byte{first, byte(r.IntN(256)), byte(r.IntN(4))}
			}
		})
		if m.Len() != n {
			t.Fatalf("Len = %d, want %d", m.Len(), n)
		}
		testutil.CheckIterator(t, r, keys, 4000, func(lower, upper []byte) mutation.Iterator {
			return m.NewIter(lower, upper)
		})
	}
}

func TestApplyMergesThroughReconcile(t *testing.T) {
	m := New()
	m.Apply([]mutation.Entry{rowEntry("a", 5, "new")})
	m.Apply([]mutation.Entry{rowEntry("a", 3, "old")})
	m.Apply([]mutation.Entry{rowEntry("a", 5, "alpha")}) // same timestamp: the greater value wins
	got := m.Get([]byte("a"))
	if got == nil || string(got.Row.Cells[0].Value) != "new" {
		t.Fatalf("merged entry = %v, want value new", got)
	}
	if m.Len() != 1 {
		t.Fatalf("Len = %d, want 1", m.Len())
	}
	if m.MinTimestamp() != 3 || m.MaxTimestamp() != 5 {
		t.Fatalf("timestamps [%d, %d], want [3, 5]", m.MinTimestamp(), m.MaxTimestamp())
	}
	if m.Size() <= 0 {
		t.Fatalf("Size = %d", m.Size())
	}
}

// TestConcurrentWritersAndReaders runs under -race in make test: readers
// iterate while writers apply, and every reader sees keys in order.
func TestConcurrentWritersAndReaders(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	const writers, each = 4, 2000
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				m.Apply([]mutation.Entry{rowEntry(fmt.Sprintf("k%06d", (i*7919+w)%5000), int64(i), "v")})
			}
		}(w)
	}
	for rd := 0; rd < 2; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pass := 0; pass < 20; pass++ {
				it := m.NewIter(nil, nil)
				var prev []byte
				for e := it.First(); e != nil; e = it.Next() {
					if prev != nil && bytes.Compare(prev, e.Key) >= 0 {
						t.Errorf("keys out of order: %q then %q", prev, e.Key)
						return
					}
					prev = e.Key
				}
				it.Close()
			}
		}()
	}
	wg.Wait()
	want := map[int]bool{}
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			want[(i*7919+w)%5000] = true
		}
	}
	if m.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", m.Len(), len(want))
	}
}

// TestApplyCopiesWhatItKeeps: the memtable keeps its own copy, so a caller
// may reuse its entries and their bytes once Apply returns.
func TestApplyCopiesWhatItKeeps(t *testing.T) {
	m := New()
	e := rowEntry("k", 1, "first")
	m.Apply([]mutation.Entry{e})
	copy(e.Key, "x")
	copy(e.Row.Cells[0].Value, "XXXXX")
	got := m.Get([]byte("k"))
	if got == nil || string(got.Row.Cells[0].Value) != "first" {
		t.Fatalf("after the caller changed its entry, Get(k) = %v, want value first", got)
	}
	if m.Get([]byte("x")) != nil {
		t.Fatalf("the caller's change of its key reached the memtable")
	}
}
