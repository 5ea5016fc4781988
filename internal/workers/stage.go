package workers

import "sync/atomic"

// Stage counts one kind of the node's work as nodetool tpstats shows
// Cassandra's thread pools: tasks waiting to run, running, and done.
// Goroutines stand in for Cassandra's pools' threads, so nothing is ever
// blocked on a full queue.
type Stage struct {
	pending, active, completed atomic.Int64
}

// Queued counts a task that waits before it can run (Started follows).
func (s *Stage) Queued() { s.pending.Add(1) }

// Started moves a queued task to running.
func (s *Stage) Started() {
	s.pending.Add(-1)
	s.active.Add(1)
}

// Begin counts a task that runs at once.
func (s *Stage) Begin() { s.active.Add(1) }

// Count counts a task done as it came: nothing waited or ran.
func (s *Stage) Count() { s.completed.Add(1) }

// Done counts a running task as completed.
func (s *Stage) Done() {
	s.active.Add(-1)
	s.completed.Add(1)
}

// StageCounts are a stage's figures at one moment.
type StageCounts struct {
	Active    int64 `json:"active"`
	Pending   int64 `json:"pending"`
	Completed int64 `json:"completed"`
}

// Counts reads the stage's figures.
func (s *Stage) Counts() StageCounts {
	return StageCounts{Active: s.active.Load(), Pending: s.pending.Load(), Completed: s.completed.Load()}
}
