package storage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation"
)

var crashTableID = [16]byte{0xC7}

// TestMain runs the crash child instead of the tests when TestCrashKill
// starts this binary as one.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SIBYL_ENGINE_CRASH_DIR"); dir != "" {
		engineCrashChild(dir)
		return
	}
	os.Exit(m.Run())
}

func crashEngineOptions(dir string, mode commitlog.SyncMode) Options {
	return Options{
		DataDir:      dir + "/data",
		CommitLog:    commitlog.Options{Dir: dir + "/commitlog", SegmentSize: 256 << 10, SyncMode: mode, GroupWindow: time.Millisecond},
		MemtableSize: 64 << 10, // flushes and compactions happen while the child is killed
	}
}

func crashValue(n int) []byte {
	return []byte(fmt.Sprintf("value-%d-%s", n, strings.Repeat("v", n%97)))
}

// engineCrashChild writes keys through the engine and prints "ack N" after
// each Apply returns, until it is killed.
func engineCrashChild(dir string) {
	mode, _ := commitlog.ParseSyncMode(os.Getenv("SIBYL_ENGINE_CRASH_MODE"))
	start, _ := strconv.Atoi(os.Getenv("SIBYL_ENGINE_CRASH_START"))
	e, err := Open(crashEngineOptions(dir, mode))
	if err == nil {
		_, err = e.OpenTable(TableOptions{ID: crashTableID, Keyspace: "ks", Name: "crash"})
	}
	if err == nil {
		_, err = e.Recover()
	}
	if err != nil {
		testutil.CrashChildFail(err)
	}
	testutil.CrashChildWrites(start, func(n int) error {
		m := mutation.NewMutation(crashTableID, []byte(fmt.Sprintf("key-%d", n)))
		row := mutation.NewRow()
		row.Liveness = mutation.LivenessInfo{Timestamp: int64(n), ExpiresAt: mutation.NoDeletionTime}
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, int64(n), crashValue(n))}
		m.Rows = []mutation.RowUpdate{{Row: row}}
		return e.Apply(m)
	})
}

// TestCrashKill kills a child writing through the engine with SIGKILL at
// random moments, restarts the engine, and checks every acknowledged key
// is there with its value, in every sync mode.
func TestCrashKill(t *testing.T) {
	const cycles = 20
	for _, mode := range []commitlog.SyncMode{commitlog.SyncPeriodic, commitlog.SyncGroup, commitlog.SyncBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			seed := uint64(time.Now().UnixNano())
			r := rand.New(rand.NewPCG(seed, 2))
			acked := map[int]bool{}
			next := 0
			// Each restart checks the keys acknowledged since the last one;
			// the last restart checks them all, so nothing acknowledged
			// earlier was lost by a later recovery, flush or compaction.
			var fresh []int
			for cycle := 0; cycle < cycles; cycle++ {
				fresh = fresh[:0]
				for _, n := range runEngineChild(t, dir, mode, next, time.Duration(10+r.IntN(80))*time.Millisecond) {
					acked[n] = true
					fresh = append(fresh, n)
					next = max(next, n+1)
				}
				next += 1000
				e, err := Open(crashEngineOptions(dir, mode))
				if err != nil {
					t.Fatal(err)
				}
				tbl, err := e.OpenTable(TableOptions{ID: crashTableID, Keyspace: "ks", Name: "crash"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.Recover(); err != nil {
					t.Fatalf("seed %d cycle %d: recover: %v", seed, cycle, err)
				}
				check := fresh
				if cycle == cycles-1 {
					check = check[:0]
					for n := range acked {
						check = append(check, n)
					}
				}
				for _, n := range check {
					p, err := tbl.ReadPartition([]byte(fmt.Sprintf("key-%d", n)), ReadQuery{Now: time.Now().Unix()})
					if err != nil {
						t.Fatalf("seed %d cycle %d: read key %d: %v", seed, cycle, n, err)
					}
					if len(p.Rows) != 1 || string(p.Rows[0].Row.Cells[0].Value) != string(crashValue(n)) {
						t.Fatalf("seed %d cycle %d: acknowledged key %d lost or wrong: %+v", seed, cycle, n, p.Rows)
					}
				}
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if len(acked) < cycles {
				t.Fatalf("only %d writes acknowledged in %d cycles: the child is not writing", len(acked), cycles)
			}
		})
	}
}

func runEngineChild(t *testing.T, dir string, mode commitlog.SyncMode, start int, after time.Duration) []int {
	t.Helper()
	return testutil.RunAndKill(t, []string{"SIBYL_ENGINE_CRASH_DIR=" + dir, "SIBYL_ENGINE_CRASH_MODE=" + mode.String(),
		"SIBYL_ENGINE_CRASH_START=" + strconv.Itoa(start)}, after)
}
