package commitlog

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/testutil"
)

// TestMain runs the crash child instead of the tests when
// TestCrashKill starts this binary as one.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SIBYL_CRASH_DIR"); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild appends numbered records and prints "ack N" after each Append
// returns, until it is killed.
func crashChild(dir string) {
	mode, _ := ParseSyncMode(os.Getenv("SIBYL_CRASH_MODE"))
	start, _ := strconv.Atoi(os.Getenv("SIBYL_CRASH_START"))
	l, err := Open(Options{FS: vfs.Default, Dir: dir, SegmentSize: 256 << 10, SyncMode: mode, GroupWindow: time.Millisecond,
		DisableMmap: os.Getenv("SIBYL_CRASH_WRITE") != ""})
	if err != nil {
		testutil.CrashChildFail(err)
	}
	testutil.CrashChildWrites(start, func(n int) error {
		_, err := l.Append(tableA, payloadOf(n))
		return err
	})
}

// TestCrashKill kills a writing child with SIGKILL at random moments and
// checks that every record it acknowledged is replayed, in every sync mode,
// with mapped segments and with written ones.
func TestCrashKill(t *testing.T) {
	const cycles = 20
	for _, write := range []bool{false, true} {
		for _, mode := range []SyncMode{SyncPeriodic, SyncGroup, SyncBatch} {
			name := mode.String() + map[bool]string{false: "/mmap", true: "/write"}[write]
			t.Run(name, func(t *testing.T) { testCrashKill(t, mode, write, cycles) })
		}
	}
}

func testCrashKill(t *testing.T, mode SyncMode, write bool, cycles int) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	acked := map[int]bool{}
	next := 0
	for cycle := 0; cycle < cycles; cycle++ {
		got := runAndKill(t, dir, mode, write, next, time.Duration(5+r.IntN(60))*time.Millisecond)
		for _, n := range got {
			acked[n] = true
			next = max(next, n+1)
		}
		next += 1000 // numbers a killed child took but never acknowledged stay unused
		l, err := Open(Options{FS: vfs.Default, Dir: dir, SegmentSize: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		replayed := map[int]bool{}
		if _, err := l.Replay(func(_ Position, p []byte) error {
			n, err := strconv.Atoi(strings.SplitN(string(p), "-", 3)[1])
			if err != nil {
				return err
			}
			if string(p) != string(payloadOf(n)) {
				return fmt.Errorf("record %d has the wrong payload", n)
			}
			replayed[n] = true
			return nil
		}); err != nil {
			t.Fatalf("seed %d cycle %d: replay: %v", seed, cycle, err)
		}
		l.Close()
		for n := range acked {
			if !replayed[n] {
				t.Fatalf("seed %d cycle %d: acknowledged record %d lost", seed, cycle, n)
			}
		}
	}
	if len(acked) < cycles {
		t.Fatalf("only %d records acknowledged in %d cycles: the child is not writing", len(acked), cycles)
	}
}

func runAndKill(t *testing.T, dir string, mode SyncMode, write bool, start int, after time.Duration) []int {
	t.Helper()
	env := []string{"SIBYL_CRASH_DIR=" + dir, "SIBYL_CRASH_MODE=" + mode.String(), "SIBYL_CRASH_START=" + strconv.Itoa(start)}
	if write {
		env = append(env, "SIBYL_CRASH_WRITE=1")
	}
	return testutil.RunAndKill(t, env, after)
}
