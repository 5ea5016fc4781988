package testutil

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
)

// CheckIterator drives iterators made by newIter through random moves and
// bounds, checking each answer against a model: keys, sorted and distinct,
// are everything the source holds. Every mutation.Iterator must pass it.
func CheckIterator(t testing.TB, r *rand.Rand, keys [][]byte, steps int,
	newIter func(lower, upper []byte) mutation.Iterator) {
	t.Helper()
	if !sort.SliceIsSorted(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 }) {
		t.Fatalf("CheckIterator: keys are not sorted")
	}
	pick := func() []byte {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			if len(keys) > 0 {
				k := keys[r.IntN(len(keys))]
				return append(k[:len(k):len(k)], 0) // just after a key
			}
		}
		if len(keys) == 0 {
			return []byte{byte(r.IntN(256))}
		}
		return keys[r.IntN(len(keys))]
	}
	for round := 0; round < steps/20+1; round++ {
		lower, upper := pick(), pick()
		if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
			lower, upper = upper, lower
		}
		var in [][]byte
		for _, k := range keys {
			if (lower == nil || bytes.Compare(k, lower) >= 0) && (upper == nil || bytes.Compare(k, upper) < 0) {
				in = append(in, k)
			}
		}
		it := newIter(lower, upper)
		pos := -1 // index into in; -1 before the first, len(in) after the last
		var trace []string
		for step := 0; step < 20; step++ {
			var got *mutation.Entry
			var op string
			switch r.IntN(6) {
			case 0:
				op, got = "First", it.First()
				pos = 0
			case 1:
				op, got = "Last", it.Last()
				pos = len(in) - 1
			case 2:
				k := pick()
				if k == nil {
					k = []byte{}
				}
				op, got = fmt.Sprintf("SeekGE(%x)", k), it.SeekGE(k)
				pos = sort.Search(len(in), func(i int) bool { return bytes.Compare(in[i], k) >= 0 })
			case 3:
				k := pick()
				if k == nil {
					k = []byte{0xFF, 0xFF, 0xFF, 0xFF}
				}
				op, got = fmt.Sprintf("SeekLT(%x)", k), it.SeekLT(k)
				pos = sort.Search(len(in), func(i int) bool { return bytes.Compare(in[i], k) >= 0 }) - 1
			case 4:
				op, got = "Next", it.Next()
				if pos < len(in) {
					pos++
				}
			case 5:
				op, got = "Prev", it.Prev()
				if pos >= 0 {
					pos--
				}
			}
			if pos < -1 {
				pos = -1
			}
			if pos > len(in) {
				pos = len(in)
			}
			trace = append(trace, op)
			var want []byte
			if pos >= 0 && pos < len(in) {
				want = in[pos]
			}
			if err := it.Error(); err != nil {
				t.Fatalf("bounds [%x, %x) after %v: error %v", lower, upper, trace, err)
			}
			switch {
			case want == nil && got != nil:
				t.Fatalf("bounds [%x, %x) after %v: got %x, want exhausted", lower, upper, trace, got.Key)
			case want != nil && got == nil:
				t.Fatalf("bounds [%x, %x) after %v: got exhausted, want %x", lower, upper, trace, want)
			case want != nil && !bytes.Equal(got.Key, want):
				t.Fatalf("bounds [%x, %x) after %v: got %x, want %x", lower, upper, trace, got.Key, want)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}
