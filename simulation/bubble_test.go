package simulation

import (
	"runtime"
	"testing"
	"testing/synctest"
)

// inBubble runs f in a synctest bubble, and then empties every sync.Pool:
// pebble's SSTable writer pools its write tasks with a channel made where
// the task was (writeTaskPool), and a task made in one bubble and taken
// in the next would end the test binary ("send on synctest channel from
// outside bubble"). Two collections drop a pool's items.
func inBubble(t *testing.T, f func(*testing.T)) {
	t.Helper()
	synctest.Test(t, f)
	runtime.GC()
	runtime.GC()
}
