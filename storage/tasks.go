package storage

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Task is a compaction or an index build in progress, as nodetool
// compactionstats and system_views.sstable_tasks show it.
type Task struct {
	// Started is when the task began; Seq numbers the engine's tasks from
	// 1, so that the two name one task.
	Started         time.Time
	Seq             uint64
	Keyspace, Table string
	// Kind is "compaction", "cleanup" for a compaction that drops the
	// partitions the node no longer owns, or "secondary index build".
	Kind string
	// SSTables is how many SSTables the task reads.
	SSTables int
	// Completed and Total are its progress in bytes: written so far, and
	// the data its inputs hold.
	Completed, Total int64
}

// taskRegistry holds the tasks running.
type taskRegistry struct {
	mu      sync.Mutex
	running map[*runningTask]bool
	seq     uint64
}

// runningTask is a task whose progress moves as it runs.
type runningTask struct {
	Task
	completed atomic.Int64
}

// start registers a task; done must be called when it ends.
func (r *taskRegistry) start(t Task, now time.Time) *runningTask {
	rt := &runningTask{Task: t}
	rt.Started = now
	r.mu.Lock()
	r.seq++
	rt.Seq = r.seq
	if r.running == nil {
		r.running = map[*runningTask]bool{}
	}
	r.running[rt] = true
	r.mu.Unlock()
	return rt
}

func (r *taskRegistry) done(rt *runningTask) {
	r.mu.Lock()
	delete(r.running, rt)
	r.mu.Unlock()
}

// Tasks returns the compactions running, oldest first.
func (e *Engine) Tasks() []Task {
	e.tasks.mu.Lock()
	out := make([]Task, 0, len(e.tasks.running))
	for rt := range e.tasks.running {
		t := rt.Task
		t.Completed = rt.completed.Load()
		out = append(out, t)
	}
	e.tasks.mu.Unlock()
	slices.SortFunc(out, func(a, b Task) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}
