package storage

import (
	"math/rand/v2"
	"time"

	"github.com/sibyldb/sibyl/commitlog"
)

// commitlogOptionsFor picks a sync mode and a small segment size, so tests
// cross segment boundaries and every mode's path.
func commitlogOptionsFor(r *rand.Rand) commitlog.Options {
	return commitlog.Options{
		Dir:         "commitlog",
		SegmentSize: 64 << 10,
		SyncMode:    []commitlog.SyncMode{commitlog.SyncPeriodic, commitlog.SyncGroup, commitlog.SyncBatch}[r.IntN(3)],
		GroupWindow: time.Millisecond,
	}
}
