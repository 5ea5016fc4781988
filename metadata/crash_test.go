package metadata

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"go.etcd.io/raft/v3"

	"github.com/sibyldb/sibyl/internal/testutil"
)

// TestMain runs the crash child instead of the tests when
// TestCrashKill starts this binary as one.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SIBYL_METADATA_CRASH_DIR"); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashApplier keeps the names of the changes applied, and gives them to
// snapshots: the child's stand-in for system_schema.
type crashApplier struct {
	mu    sync.Mutex
	names []string
}

func (a *crashApplier) ApplySchema(m []byte, _ int64, _ uint64, _ bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.names = append(a.names, string(m))
	return nil
}

func (a *crashApplier) SchemaSnapshot() ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return []byte(strings.Join(a.names, ",")), nil
}

func (a *crashApplier) RestoreSchema(b []byte, _ uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.names = strings.Split(string(b), ",")
	return nil
}

func (a *crashApplier) ApplyTopology(map[uint64]NodeRecord, uint64) error { return nil }

// crashChild runs a one-node group in dir and commits numbered schema
// changes from four goroutines, printing "ack N" once change N has
// applied, until it is killed.
func crashChild(dir string) {
	start, _ := strconv.Atoi(os.Getenv("SIBYL_METADATA_CRASH_START"))
	a := &crashApplier{}
	nop := zerolog.Nop()
	l, err := Open(Options{Self: Member{ID: 1, Endpoint: "127.0.0.1"}, FS: vfs.Default, Dir: dir, Applier: a, SnapshotEntries: 25, Logger: &nop})
	if err != nil {
		testutil.CrashChildFail(err)
	}
	// What the last run's snapshot holds is this run's system_schema.
	if snap, err := l.disk.mem.Snapshot(); err == nil && !raft.IsEmptySnap(snap) {
		_, names, err := decodeSnapshot(snap.Data)
		if err != nil {
			testutil.CrashChildFail(err)
		}
		_ = a.RestoreSchema(names, 0)
	}
	if !l.HasLog() {
		if err := l.Bootstrap(0); err != nil {
			testutil.CrashChildFail(err)
		}
	}
	if err := l.Start(); err != nil {
		testutil.CrashChildFail(err)
	}
	testutil.CrashChildWrites(start, func(n int) error {
		for {
			_, err := l.ProposeSchema(context.Background(), l.Status().State.SchemaEpoch, 1, 1, []byte(strconv.Itoa(n)))
			if !errors.Is(err, ErrSchemaChanged) {
				return err
			}
		}
	})
}

// committedNames reads a log directory as a restart finds it: the names
// its snapshot holds, and those of the committed entries after it.
func committedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	nop := zerolog.Nop()
	d, err := openDisk(vfs.Default, dir, &nop)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	out := map[string]bool{}
	snap, _ := d.mem.Snapshot()
	if !raft.IsEmptySnap(snap) {
		_, names, err := decodeSnapshot(snap.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range strings.Split(string(names), ",") {
			out[n] = true
		}
	}
	hs, _, _ := d.mem.InitialState()
	first, _ := d.mem.FirstIndex()
	if hs.Commit >= first {
		ents, err := d.mem.Entries(first, hs.Commit+1, ^uint64(0))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if c, _, err := decodeEntry(e.Data); err == nil && c != nil {
				out[string(c.Mutations)] = true
			}
		}
	}
	return out
}

// TestCrashKill kills a child committing schema changes with SIGKILL at
// random moments, twenty times: every change it acknowledged is in the
// log it leaves (its snapshot or its committed entries), and the log
// opens and goes on each time.
func TestCrashKill(t *testing.T) {
	const cycles = 20
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 2))
	acked := map[int]bool{}
	next := 0
	for cycle := range cycles {
		env := []string{"SIBYL_METADATA_CRASH_DIR=" + dir, "SIBYL_METADATA_CRASH_START=" + strconv.Itoa(next)}
		for _, n := range testutil.RunAndKill(t, env, time.Duration(5+r.IntN(60))*time.Millisecond) {
			acked[n] = true
			next = max(next, n+1)
		}
		next += 1000 // numbers a killed child took but never acknowledged stay unused
		have := committedNames(t, dir)
		for n := range acked {
			if !have[strconv.Itoa(n)] {
				t.Fatalf("seed %d cycle %d: acknowledged change %d is not in the log", seed, cycle, n)
			}
		}
	}
	if len(acked) < cycles {
		t.Fatalf("only %d changes acknowledged in %d cycles: the child is not committing", len(acked), cycles)
	}
	t.Logf("%d changes acknowledged over %d kills", len(acked), cycles)
}
