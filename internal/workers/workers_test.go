package workers

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPoolRunsEveryTaskConcurrently(t *testing.T) {
	p := New(time.Minute)
	const n = 64
	var started sync.WaitGroup
	release := make(chan struct{})
	var done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		p.Go(func() {
			started.Done()
			<-release // every task waits for all the others to start: none may queue behind another
			done.Done()
		})
	}
	started.Wait()
	close(release)
	done.Wait()
}

func TestPoolReusesIdleWorkers(t *testing.T) {
	p := New(time.Minute)
	var ran atomic.Int32
	for i := 0; i < 200; i++ {
		finished := make(chan struct{})
		p.Go(func() {
			ran.Add(1)
			close(finished)
		})
		<-finished
		// The worker goes back to waiting once the task returns; a later
		// task finds it there.
		deadline := time.Now().Add(5 * time.Second)
		for !p.idleWorker() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	if ran.Load() != 200 {
		t.Fatalf("%d of 200 tasks ran", ran.Load())
	}
	// A worker counts as waiting a moment before it can take a task, so a
	// task sent in that moment (on a machine busy enough to hold the worker
	// there) starts a second one; without reuse it would be 200.
	if got := p.spawned.Load(); got > 2 {
		t.Fatalf("200 tasks one after another started %d workers, want 1 (2 at most)", got)
	}
}

func TestIdleWorkersExit(t *testing.T) {
	p := New(10 * time.Millisecond)
	finished := make(chan struct{})
	p.Go(func() { close(finished) })
	<-finished
	deadline := time.Now().Add(5 * time.Second)
	for p.live.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("an idle worker still runs after its idle timeout")
		}
		time.Sleep(time.Millisecond)
	}
}
