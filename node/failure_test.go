package node

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sibyldb/sibyl/storage"
)

// TestFailurePolicies runs every commit_failure_policy and
// disk_failure_policy against the failures the engine reports: the
// policies that stop take the native protocol down (the admin API stays),
// die exits too, and the others leave the node serving.
func TestFailurePolicies(t *testing.T) {
	for _, c := range []struct {
		commit, disk string
		kind         storage.FailureKind
		stops, dies  bool
	}{
		{"stop", "stop", storage.CommitLogFailure, true, false},
		{"stop_commit", "stop", storage.CommitLogFailure, false, false},
		{"die", "stop", storage.CommitLogFailure, true, true},
		{"stop", "stop", storage.DiskFailure, true, false},
		{"stop", "stop", storage.CorruptionFailure, false, false},
		{"stop", "stop_paranoid", storage.CorruptionFailure, true, false},
		{"stop", "die", storage.CorruptionFailure, true, true},
		{"stop", "ignore", storage.DiskFailure, false, false},
	} {
		var exited atomic.Int32
		exited.Store(-1)
		n, err := Open(Config{DataDir: t.TempDir(), NativePort: freePort(t), AdminPort: freePort(t),
			CommitFailurePolicy: c.commit, DiskFailurePolicy: c.disk, Exit: func(code int) { exited.Store(int32(code)) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.StartNative(); err != nil {
			t.Fatal(err)
		}
		n.onStorageFailure(c.kind, errors.New("injected"))
		serving := n.nativeRunning
		deadline := time.Now().Add(5 * time.Second)
		for c.stops && serving() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if c.dies {
			for exited.Load() < 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		name := c.kind.String() + " under commit_failure_policy " + c.commit + ", disk_failure_policy " + c.disk
		if got := !serving(); got != c.stops {
			t.Errorf("%s: transports stopped %v, want %v", name, got, c.stops)
		}
		if got := exited.Load(); (got == 1) != c.dies {
			t.Errorf("%s: exit status %d, want an exit %v", name, got, c.dies)
		}
		if got := promtest.ToFloat64(n.metrics.storageFailures.WithLabelValues(c.kind.String())); got != 1 {
			t.Errorf("%s: sibyl_storage_failures_total %v, want 1", name, got)
		}
		if names, err := promtest.GatherAndCount(n.metrics.registry, "sibyl_commitlog_segment_allocation_failures_total"); err != nil || names != 1 {
			t.Errorf("%s: the allocation failure counter: %d, %v", name, names, err)
		}
		if err := n.Close(); err != nil {
			t.Errorf("%s: close: %v", name, err)
		}
	}
}

func TestFailurePolicyConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{CommitFailurePolicy: "ignore"}, "commit_failure_policy: ignore is not supported"},
		{Config{CommitFailurePolicy: "halt"}, `commit_failure_policy: "halt" is not one of stop, stop_commit, die`},
		{Config{DiskFailurePolicy: "best_effort"}, "disk_failure_policy: best_effort stops using a failed one of several data directories"},
		{Config{DiskFailurePolicy: "panic"}, `disk_failure_policy: "panic" is not one of stop, stop_paranoid, die, ignore`},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}
