package workers

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Pool hands tasks to idle workers. The zero value is not usable; call New.
type Pool struct {
	tasks       chan func()
	idleTimeout time.Duration
	spawned     atomic.Int64 // workers started, ever
	live        atomic.Int32 // workers running or waiting
	waiting     atomic.Int32 // workers waiting for a task
}

// IdleTimeout is how long the request paths' workers wait for another
// request before they exit: long enough to outlast a lull between bursts.
const IdleTimeout = 10 * time.Second

// New returns a pool whose workers exit after idleTimeout without a task.
func New(idleTimeout time.Duration) *Pool {
	return &Pool{tasks: make(chan func()), idleTimeout: idleTimeout}
}

// Go runs task on a worker that is waiting for one, or on a new worker when
// none is. It never blocks on a busy pool: concurrency is the caller's to bound.
func (p *Pool) Go(task func()) {
	select {
	case p.tasks <- task:
		return
	default:
	}
	if p.waiting.Load() > 0 {
		// A worker is on its way to wait for a task: let it get there
		// rather than start another.
		runtime.Gosched()
		select {
		case p.tasks <- task:
			return
		default:
		}
	}
	p.spawned.Add(1)
	p.live.Add(1)
	go p.work(task)
}

func (p *Pool) work(task func()) {
	defer p.live.Add(-1)
	task()
	idle := time.NewTimer(p.idleTimeout)
	defer idle.Stop()
	for {
		p.waiting.Add(1)
		select {
		case task := <-p.tasks:
			p.waiting.Add(-1)
			task()
			idle.Reset(p.idleTimeout)
		case <-idle.C:
			p.waiting.Add(-1)
			return
		}
	}
}

// idleWorker reports whether a worker is waiting for a task.
func (p *Pool) idleWorker() bool { return p.waiting.Load() > 0 }
