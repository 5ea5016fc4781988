package coordinator

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestBackgroundStartsWhileSettling: sends may start while Settle waits
// (gossip starts hint deliveries whenever it sees a node up), and Settle
// returns once every one started before it returns has ended.
func TestBackgroundStartsWhileSettling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackground()
		var ended atomic.Int32
		b.Go(func() {
			time.Sleep(time.Second)
			// A send that starts another while Settle waits.
			b.Go(func() {
				time.Sleep(time.Second)
				ended.Add(1)
			})
			ended.Add(1)
		})
		settled := make(chan struct{})
		go func() {
			b.Wait()
			close(settled)
		}()
		synctest.Wait()
		select {
		case <-settled:
			t.Fatal("Settle returned with sends running")
		default:
		}
		<-settled
		if n := ended.Load(); n != 2 {
			t.Fatalf("Settle returned after %d of 2 sends", n)
		}
		b.Wait() // nothing runs: at once
	})
}
