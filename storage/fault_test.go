package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/internal/invariants"
	"github.com/sibyldb/sibyl/mutation"
)

// faultyEngine opens an engine whose filesystem fails the chosen operation
// on paths containing match while armed.
func faultyEngine(t *testing.T, op errorfs.Op, match string, adjust ...func(*Options)) (*Engine, *Table, *atomic.Bool) {
	t.Helper()
	var armed atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(o errorfs.Op, path string) error {
		if armed.Load() && o == op && strings.Contains(path, match) {
			return errorfs.ErrInjected
		}
		return nil
	}))
	e, tbl := testEngine(t, fs, adjust...)
	return e, tbl, &armed
}

func writeKey(e *Engine, key string) error {
	m := mutation.NewMutation(modelTableID, []byte(key))
	row := mutation.NewRow()
	row.Liveness = mutation.LivenessInfo{Timestamp: 1, ExpiresAt: mutation.NoDeletionTime}
	m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
	return e.Apply(m)
}

func TestFlushFailureSurfacesAndKeepsData(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpFileWrite, errorfs.OpFileSync, errorfs.OpRename, errorfs.OpCreate} {
		e, tbl, armed := faultyEngine(t, op, "sb-")
		if err := writeKey(e, "k"); err != nil {
			t.Fatal(err)
		}
		armed.Store(true)
		if err := tbl.Flush(); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("op %v: Flush = %v, want the injected error", op, err)
		}
		armed.Store(false)
		p, err := tbl.ReadPartition([]byte("k"), ReadQuery{})
		if err != nil || len(p.Rows) != 1 {
			t.Fatalf("op %v: after a failed flush the row must still read: %v %v", op, p, err)
		}
		if err := writeKey(e, "k2"); err != nil {
			t.Fatalf("op %v: the engine must stay usable: %v", op, err)
		}
		// The next flush retries the failed one, then flushes the new write.
		if err := tbl.Flush(); err != nil {
			t.Fatalf("op %v: flush after the fault cleared: %v", op, err)
		}
		if n := tbl.SSTableCount(); n != 2 {
			t.Fatalf("op %v: %d SSTables after the retry, want 2 (the retried memtable and the new one)", op, n)
		}
		for _, k := range []string{"k", "k2"} {
			if p, err := tbl.ReadPartition([]byte(k), ReadQuery{}); err != nil || len(p.Rows) != 1 {
				t.Fatalf("op %v: %s after the retry: %v %v", op, k, p, err)
			}
		}
		e.Close()
	}
}

func TestCommitLogFailureRefusesWrites(t *testing.T) {
	e, tbl, armed := faultyEngine(t, errorfs.OpFileWrite, "CommitLog")
	defer e.Close()
	armed.Store(true)
	if err := writeKey(e, "k"); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Apply with a failing commit log = %v", err)
	}
	armed.Store(false)
	if err := writeKey(e, "k"); err == nil {
		t.Fatalf("after a commit log failure writes must be refused")
	}
	p, err := tbl.ReadPartition([]byte("k"), ReadQuery{})
	if err != nil || !p.IsEmpty() {
		t.Fatalf("a refused write must not be visible: %v %v", p, err)
	}
}

// TestFullMemtableSpaceRefusesWritesWhileFlushesFail fills the memtable
// space while every flush fails: writes are refused with an error naming the
// space and the flush's failure, acknowledged writes stay readable, and once
// flushes succeed again writes go on.
func TestFullMemtableSpaceRefusesWritesWhileFlushesFail(t *testing.T) {
	const space = 64 << 10
	e, tbl, armed := faultyEngine(t, errorfs.OpCreate, "sb-", func(o *Options) {
		o.MemtableSize = 1 << 30 // only the total space triggers flushes
		o.MemtableTotalSpace = space
		o.CommitLog.SyncMode = commitlog.SyncPeriodic
	})
	defer e.Close()
	armed.Store(true)
	var acked []string
	var refusal error
	for i := 0; i < 10000 && refusal == nil; i++ {
		key := fmt.Sprintf("key-%05d", i)
		if refusal = writeKey(e, key); refusal == nil {
			acked = append(acked, key)
		}
	}
	if refusal == nil {
		t.Fatalf("%d writes into a %d-byte memtable space with every flush failing were all accepted", len(acked), space)
	}
	if !errors.Is(refusal, errorfs.ErrInjected) || !strings.Contains(refusal.Error(), "memtable_heap_space") {
		t.Fatalf("refusal %q should name the memtable space and wrap the flush's error", refusal)
	}
	if held := e.memtableBytes.Load(); held <= space || held > 2*space {
		t.Fatalf("memtables hold %d bytes at the refusal; want just past the %d-byte space", held, space)
	}
	armed.Store(false)
	if err := writeKey(e, "after"); err != nil {
		t.Fatalf("with flushes working again, a write must go through: %v", err)
	}
	if e.memtableBytes.Load() > space {
		t.Fatalf("the write went through without the flush freeing the space")
	}
	for _, k := range append(acked, "after") {
		if p, err := tbl.ReadPartition([]byte(k), ReadQuery{}); err != nil || len(p.Rows) != 1 {
			t.Fatalf("acknowledged %s: %v %v", k, p, err)
		}
	}
}

// fullDisk fails the creation of every file, and every write to one, with
// ENOSPC while full is set: a disk with no space left.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) MaybeError(op errorfs.Op, path string) error {
	if d.full.Load() && (op == errorfs.OpCreate || op == errorfs.OpFileWrite) {
		return syscall.ENOSPC
	}
	return nil
}

// TestFullDiskThenSpace fills the disk under an engine whose commit log
// maps its segments: once the commit log cannot make a new segment, writes
// are refused with an error naming it; no failure the policies act on is
// reported; once there is space again writes resume by themselves, and
// every acknowledged write survives a flush and a restart.
func TestFullDiskThenSpace(t *testing.T) {
	disk := &fullDisk{}
	var failures []FailureKind
	var mu sync.Mutex
	dir := t.TempDir()
	opts := func(o *Options) {
		o.DataDir, o.CommitLog = filepath.Join(dir, "data"), commitlog.Options{Dir: filepath.Join(dir, "cl"), SegmentSize: 64 << 10}
		o.OnFailure = func(kind FailureKind, err error) {
			mu.Lock()
			failures = append(failures, kind)
			mu.Unlock()
		}
	}
	e, tbl := testEngine(t, errorfs.Wrap(vfs.Default, disk), opts)
	value := strings.Repeat("v", 2000)
	write := func(k int) error {
		m := mutation.NewMutation(modelTableID, []byte(fmt.Sprintf("k%06d", k)))
		row := mutation.NewRow()
		row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, []byte(value))}
		m.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(1), Row: row}}
		return e.Apply(m)
	}
	acked := 0
	for ; acked < 20; acked++ {
		if err := write(acked); err != nil {
			t.Fatal(err)
		}
	}
	disk.full.Store(true)
	var refusal error
	for k := acked; refusal == nil; k++ {
		if k > acked+1000 {
			t.Fatal("a full disk refused no write")
		}
		if refusal = write(k); refusal == nil {
			acked = k + 1
		}
	}
	if !errors.Is(refusal, syscall.ENOSPC) || !strings.Contains(refusal.Error(), "CommitLog-1-") {
		t.Fatalf("the refusal on a full disk: %v", refusal)
	}
	if err := tbl.Flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a flush on a full disk: %v", err)
	}
	disk.full.Store(false)
	// Within a second of the last failure the log does not try again.
	deadline := time.Now().Add(5 * time.Second)
	for write(acked) != nil {
		if time.Now().After(deadline) {
			t.Fatal("writes did not resume once there was space")
		}
		time.Sleep(50 * time.Millisecond)
	}
	acked++
	for k := acked; k < acked+50; k++ {
		if err := write(k); err != nil {
			t.Fatalf("a write once there was space: %v", err)
		}
	}
	acked += 50
	if err := tbl.Flush(); err != nil {
		t.Fatalf("a flush once there was space: %v", err)
	}
	mu.Lock()
	if len(failures) != 0 {
		t.Fatalf("a full disk was reported as %v", failures)
	}
	mu.Unlock()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, tbl = testEngine(t, vfs.Default, opts)
	defer e.Close()
	parts, err := tbl.Scan(ScanQuery{})
	if err != nil || len(parts) != acked {
		t.Fatalf("after a restart %d partitions (%v), acknowledged %d", len(parts), err, acked)
	}
}

// TestFailuresReachThePolicies checks what the engine reports to
// OnFailure: a flush that meets an I/O error (a disk failure), and a read
// of a corrupt SSTable (corruption).
func TestFailuresReachThePolicies(t *testing.T) {
	var got []FailureKind
	eio := atomic.Bool{}
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op, path string) error {
		if eio.Load() && op == errorfs.OpFileSync && strings.Contains(path, "sb-") {
			return &os.PathError{Op: "sync", Path: path, Err: syscall.EIO}
		}
		return nil
	}))
	e, tbl := testEngine(t, fs, func(o *Options) { o.OnFailure = func(kind FailureKind, err error) { got = append(got, kind) } })
	defer e.Close()
	if err := writeKey(e, "k"); err != nil {
		t.Fatal(err)
	}
	eio.Store(true)
	if err := tbl.Flush(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("flush: %v", err)
	}
	eio.Store(false)
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != DiskFailure {
		t.Fatalf("reported %v, want one disk failure", got)
	}
	if kind, ok := classifyFailure(fmt.Errorf("read: %w", invariants.ErrCorruption)); !ok || kind != CorruptionFailure {
		t.Fatalf("corruption classified as %v, %v", kind, ok)
	}
	if _, ok := classifyFailure(fmt.Errorf("write: %w", &os.PathError{Op: "write", Err: syscall.ENOSPC})); ok {
		t.Fatal("a full disk classified as a failure")
	}
}
