package coordinator

import "sync"

// background counts the sends still running after their request
// returned (the replicas a write did not wait for, hint deliveries, the
// replicas a read stopped waiting for). Unlike a sync.WaitGroup, new
// sends may start while Settle waits, as gossip starts hint deliveries
// whenever it sees a node come up.
type background struct {
	mu      sync.Mutex
	running int
	idle    *sync.Cond
}

func newBackground() *background {
	b := &background{}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// Go runs f on a goroutine of its own, counted until it returns.
func (b *background) Go(f func()) {
	b.mu.Lock()
	b.running++
	b.mu.Unlock()
	go func() {
		defer func() {
			b.mu.Lock()
			b.running--
			if b.running == 0 {
				b.idle.Broadcast()
			}
			b.mu.Unlock()
		}()
		f()
	}()
}

// Wait returns once no counted goroutine runs.
func (b *background) Wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.running > 0 {
		b.idle.Wait()
	}
}
