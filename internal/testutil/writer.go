package testutil

import (
	"slices"
	"sync"
	"time"
)

// Writer writes rows k = from, from+1, ... one after another until
// stopped, a pause before each, and remembers those acknowledged (write
// returned nil): a load that goes on while a cluster is reconfigured.
type Writer struct {
	mu    sync.Mutex
	acked []int
	stop  chan struct{}
	done  chan struct{}
}

// StartWriter starts writing.
func StartWriter(from int, pause time.Duration, write func(k int) error) *Writer {
	w := &Writer{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for k := from; ; k++ {
			select {
			case <-w.stop:
				return
			case <-time.After(pause):
			}
			if write(k) == nil {
				w.mu.Lock()
				w.acked = append(w.acked, k)
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// Count is how many rows have been acknowledged so far.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// Acked are the rows acknowledged so far.
func (w *Writer) Acked() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acked)
}

// Finish stops the writes and returns every row acknowledged, those
// written before the writer started (0 to before-1) first.
func (w *Writer) Finish(before int) []int {
	close(w.stop)
	<-w.done
	rows := make([]int, 0, before+len(w.acked))
	for k := range before {
		rows = append(rows, k)
	}
	return append(rows, w.acked...)
}
