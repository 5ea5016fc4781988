package coordinator

import (
	"sync"
	"sync/atomic"
)

// background counts the sends still running after their request
// returned (the replicas a write did not wait for, hint deliveries, the
// replicas a read stopped waiting for). Unlike a sync.WaitGroup, new
// sends may start while Settle waits, as gossip starts hint deliveries
// whenever it sees a node come up. A send costs two atomic operations;
// the lock is taken only while someone waits.
type background struct {
	running atomic.Int64
	waiters atomic.Int32
	mu      sync.Mutex
	idle    *sync.Cond
}

func newBackground() *background {
	b := &background{}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// Go runs f on a goroutine of its own, counted until it returns.
func (b *background) Go(f func()) {
	b.running.Add(1)
	go func() {
		defer b.done()
		f()
	}()
}

func (b *background) done() {
	if b.running.Add(-1) == 0 && b.waiters.Load() > 0 {
		// Under the lock: a waiter between its check and its sleep holds
		// it, so the wake-up cannot fall in between.
		b.mu.Lock()
		b.idle.Broadcast()
		b.mu.Unlock()
	}
}

// Wait returns once no counted goroutine runs.
func (b *background) Wait() {
	b.waiters.Add(1)
	defer b.waiters.Add(-1)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.running.Load() > 0 {
		b.idle.Wait()
	}
}
