package topk

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"
)

// Summary counts at most Capacity items. An item not counted when the
// summary is full takes the place of the least counted one, inheriting
// its count as its possible overcount (Error): an item's true count lies
// between Count-Error and Count, and every item seen more often than the
// least count kept is in the summary.
type Summary struct {
	capacity int
	mu       sync.Mutex
	byItem   map[string]*entry
	least    minHeap
}

type entry struct {
	item         string
	count, error int64
	index        int // in the heap
}

// Item is one item of a summary's top.
type Item struct {
	Item         string
	Count, Error int64
}

// New returns an empty summary of at most capacity items (at least 1).
func New(capacity int) *Summary {
	capacity = max(capacity, 1)
	return &Summary{capacity: capacity, byItem: make(map[string]*entry, capacity)}
}

// Add counts an item weight times (a frequency counts 1 each time).
func (s *Summary) Add(item string, weight int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e, ok := s.byItem[item]; {
	case ok:
		e.count += weight
		heap.Fix(&s.least, e.index)
	case len(s.least) < s.capacity:
		s.put(item, weight)
	default:
		least := s.least[0].count
		s.replaceLeast(item, least+weight, least)
	}
}

// Max keeps, for an item, the largest value offered (a summary of
// maxima: the largest mutation of a partition, the slowest read). An item
// not kept when the summary is full replaces the one of the smallest
// maximum, if its value is larger.
func (s *Summary) Max(item string, value int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e, ok := s.byItem[item]; {
	case ok:
		if value > e.count {
			e.count = value
			heap.Fix(&s.least, e.index)
		}
	case len(s.least) < s.capacity:
		s.put(item, value)
	case value > s.least[0].count:
		s.replaceLeast(item, value, 0)
	}
}

// put adds an item the summary has room for.
func (s *Summary) put(item string, count int64) {
	e := &entry{item: item, count: count}
	s.byItem[item] = e
	heap.Push(&s.least, e)
}

// replaceLeast puts an item in the place of the least counted one.
func (s *Summary) replaceLeast(item string, count, error int64) {
	e := s.least[0]
	delete(s.byItem, e.item)
	e.item, e.count, e.error = item, count, error
	s.byItem[item] = e
	heap.Fix(&s.least, 0)
}

// Top returns the k most counted items, most first (ties by item).
func (s *Summary) Top(k int) []Item {
	s.mu.Lock()
	out := make([]Item, 0, len(s.least))
	for _, e := range s.least {
		out = append(out, Item{Item: e.item, Count: e.count, Error: e.error})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Item) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Item, b.Item)
	})
	return out[:min(k, len(out))]
}

// minHeap orders entries by count, least first.
type minHeap []*entry

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].count < h[j].count }
func (h minHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *minHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *minHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
