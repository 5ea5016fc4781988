package commitlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/sibyldb/sibyl/mutation"
)

var tableA = mutation.TableID{0xA}
var tableB = mutation.TableID{0xB}

func openMem(t *testing.T, fs vfs.FS, mode SyncMode) *Log { return openIn(t, fs, "cl", mode) }

func openIn(t *testing.T, fs vfs.FS, dir string, mode SyncMode) *Log {
	t.Helper()
	l, err := Open(Options{FS: fs, Dir: dir, SegmentSize: 64 << 10, SyncMode: mode, GroupWindow: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// backend is where a test's log lives: on disk, where segments are
// memory-mapped, or in memory, where they are written (an in-memory file
// has no descriptor to map).
type backend struct {
	name string
	fs   vfs.FS
	dir  string
}

func backends(t *testing.T) []backend {
	return []backend{{"mmap", vfs.Default, t.TempDir()}, {"write", vfs.NewMem(), "cl"}}
}

func payloadOf(i int) []byte {
	return []byte(fmt.Sprintf("record-%06d-%s", i, strings.Repeat("x", i%300)))
}

func replayAll(t *testing.T, l *Log) ([][]byte, ReplayStats) {
	t.Helper()
	var got [][]byte
	stats, err := l.Replay(func(_ Position, p []byte) error {
		got = append(got, append([]byte(nil), p...))
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return got, stats
}

func TestAppendReplayEveryMode(t *testing.T) {
	for _, mode := range []SyncMode{SyncPeriodic, SyncGroup, SyncBatch} {
		for _, b := range backends(t) {
			t.Run(mode.String()+"/"+b.name, func(t *testing.T) { testAppendReplay(t, b, mode) })
		}
	}
}

func testAppendReplay(t *testing.T, b backend, mode SyncMode) {
	fs := b.fs
	l := openIn(t, fs, b.dir, mode)
	if got := l.mapped; got != (b.name == "mmap") {
		t.Fatalf("mapped = %v on the %s backend", got, b.name)
	}
	const writers, each = 4, 150
	var wg sync.WaitGroup
	var mu sync.Mutex
	positions := map[Position]bool{}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				pos, err := l.Append(tableA, payloadOf(w*each+i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if positions[pos] {
					t.Errorf("position %s handed out twice", pos)
				}
				positions[pos] = true
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if l.SegmentCount() < 2 {
		t.Fatalf("expected the records to span segments, got %d", l.SegmentCount())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openIn(t, fs, b.dir, mode)
	defer l2.Close()
	got, stats := replayAll(t, l2)
	if len(got) != writers*each || stats.TruncatedBytes != 0 {
		t.Fatalf("replayed %d records (%+v), want %d", len(got), stats, writers*each)
	}
	seen := map[string]bool{}
	for _, p := range got {
		seen[string(p)] = true
	}
	for i := 0; i < writers*each; i++ {
		if !seen[string(payloadOf(i))] {
			t.Fatalf("record %d missing after replay", i)
		}
	}
}

func TestPositionsGrowAcrossRestarts(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, SyncBatch)
	first, _ := l.Append(tableA, []byte("a"))
	l.Close()
	// Even with every segment gone, new positions stay above old ones.
	names, _ := fs.List("cl")
	for _, n := range names {
		fs.Remove(fs.PathJoin("cl", n))
	}
	l2, err := Open(Options{FS: fs, Dir: "cl", MinSegmentID: first.Segment + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	second, _ := l2.Append(tableA, []byte("b"))
	if !first.Less(second) {
		t.Fatalf("position %s after restart is not above %s", second, first)
	}
}

func TestDiscardDeletesFlushedSegments(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testDiscard(t, b) })
	}
}

func testDiscard(t *testing.T, b backend) {
	fs := b.fs
	l := openIn(t, fs, b.dir, SyncPeriodic)
	defer l.Close()
	var lastA, lastB Position
	for i := 0; i < 1500; i++ {
		var err error
		if i%2 == 0 {
			lastA, err = l.Append(tableA, payloadOf(i))
		} else {
			lastB, err = l.Append(tableB, payloadOf(i))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	n := l.SegmentCount()
	if n < 3 {
		t.Fatalf("want several segments, got %d", n)
	}
	if err := l.Discard(tableA, lastA); err != nil {
		t.Fatal(err)
	}
	if l.SegmentCount() != n {
		t.Fatalf("segments went while table B still needs them")
	}
	if err := l.Discard(tableB, lastB); err != nil {
		t.Fatal(err)
	}
	if got := l.SegmentCount(); got != 1 {
		t.Fatalf("after both tables flushed everything, %d segments remain, want only the tail", got)
	}
	l.mu.Lock()
	for l.mu.preparing {
		l.mu.cond.Wait()
	}
	names, _ := fs.List(b.dir)
	want := []string{SegmentFileName(l.mu.tail.id)}
	if l.mu.prepared != nil {
		want = append(want, SegmentFileName(l.mu.prepared.id)) // made ahead for the next rollover
	}
	l.mu.Unlock()
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("files left: %v, want %v", names, want)
	}
}

// writeRecords fills a fresh log on fs and returns the file of its last segment.
func writeRecords(t *testing.T, fs vfs.FS, n int) string {
	t.Helper()
	l := openMem(t, fs, SyncBatch)
	for i := 0; i < n; i++ {
		if _, err := l.Append(tableA, payloadOf(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	ids, _ := listSegments(fs, "cl")
	return fs.PathJoin("cl", SegmentFileName(ids[len(ids)-1]))
}

func rewrite(t *testing.T, fs vfs.FS, name string, edit func([]byte) []byte) {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	out, _ := fs.Create(name)
	out.Write(edit(data))
	out.Close()
}

func TestTornTailIsTruncated(t *testing.T) {
	// Cuts count from the end of the last payload: the zeros padding it to
	// a multiple of four are not data, and a record missing only them is
	// whole.
	pad := recordSize(len(payloadOf(9))) - recordHeaderSize - len(payloadOf(9))
	for _, cut := range []int{1, 5, 8, 20} {
		fs := vfs.NewMem()
		name := writeRecords(t, fs, 10)
		rewrite(t, fs, name, func(b []byte) []byte { return b[:len(b)-pad-cut] })
		l := openMem(t, fs, SyncBatch)
		got, stats := replayAll(t, l)
		if len(got) != 9 || stats.TruncatedBytes == 0 {
			t.Fatalf("cut %d: replayed %d records, stats %+v; want 9 and a truncation", cut, len(got), stats)
		}
		// The truncation is permanent: after more writes and a restart the
		// old segment is no longer the newest, and replay still succeeds.
		l.Append(tableA, []byte("after"))
		l.Close()
		l2 := openMem(t, fs, SyncBatch)
		got, stats = replayAll(t, l2)
		if len(got) != 10 || stats.TruncatedBytes != 0 {
			t.Fatalf("cut %d: second replay gave %d records, %+v", cut, len(got), stats)
		}
		l2.Close()
	}
}

func TestBadChecksumInTheMiddleStopsReplay(t *testing.T) {
	fs := vfs.NewMem()
	name := writeRecords(t, fs, 10)
	rewrite(t, fs, name, func(b []byte) []byte {
		b[segmentHeaderSize+recordHeaderSize+3] ^= 0x40 // inside the first record's payload
		return b
	})
	l := openMem(t, fs, SyncBatch)
	defer l.Close()
	_, err := l.Replay(func(Position, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", segmentHeaderSize)) {
		t.Fatalf("replay error = %v; want a checksum error naming %s and offset %d", err, name, segmentHeaderSize)
	}
}

func TestEmptyRecordRefused(t *testing.T) {
	l := openMem(t, vfs.NewMem(), SyncPeriodic)
	defer l.Close()
	if _, err := l.Append(tableA, nil); err == nil || !strings.Contains(err.Error(), "empty record") {
		t.Fatalf("Append of an empty record: %v", err)
	}
}

func TestOversizedRecordRefused(t *testing.T) {
	l := openMem(t, vfs.NewMem(), SyncPeriodic)
	defer l.Close()
	if _, err := l.Append(tableA, make([]byte, 40<<10)); err == nil || !strings.Contains(err.Error(), "larger than the maximum") {
		t.Fatalf("Append of a record over half a segment: %v", err)
	}
}

func TestWriteFailureSurfacesAndSticks(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpFileWrite, errorfs.OpFileSync} {
		t.Run(fmt.Sprint(op), func(t *testing.T) {
			var armed bool
			var mu sync.Mutex
			inj := errorfs.InjectorFunc(func(o errorfs.Op, path string) error {
				mu.Lock()
				defer mu.Unlock()
				if armed && o == op && strings.Contains(path, "CommitLog") {
					return errorfs.ErrInjected
				}
				return nil
			})
			fs := errorfs.Wrap(vfs.NewMem(), inj)
			l, err := Open(Options{FS: fs, Dir: "cl", SyncMode: SyncBatch})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if _, err := l.Append(tableA, []byte("ok")); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			armed = true
			mu.Unlock()
			if _, err := l.Append(tableA, []byte("fails")); !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("Append with a failing %v returned %v", op, err)
			}
			mu.Lock()
			armed = false
			mu.Unlock()
			if _, err := l.Append(tableA, []byte("refused")); err == nil || !strings.Contains(err.Error(), "refuses writes") {
				t.Fatalf("after a failure the log must refuse writes, got %v", err)
			}
		})
	}
}

func FuzzScanSegment(f *testing.F) {
	header := appendSegmentHeader(nil, 7)
	f.Add(appendRecord(append([]byte(nil), header...), []byte("payload")))
	f.Add(append(append([]byte(nil), header...), 0, 0, 0, 9))
	f.Add([]byte("SIBYLCL1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seg := &segment{id: 7, name: "fuzz"}
		for _, newest := range []bool{false, true} {
			valid, records, err := scanSegment(seg, data, newest, func(Position, []byte) error { return nil })
			if valid > len(data) {
				t.Fatalf("valid prefix %d longer than %d bytes", valid, len(data))
			}
			if err == nil && !newest && valid != len(data) && len(data) >= segmentHeaderSize {
				t.Fatalf("an older segment may not be truncated silently")
			}
			if err == nil && valid >= segmentHeaderSize {
				// What replay keeps must read back whole, with the same records.
				again, n, err := scanSegment(seg, bytes.Clone(data[:valid]), false, func(Position, []byte) error { return nil })
				if err != nil || again != valid || n != records {
					t.Fatalf("the kept prefix rescans as %d bytes, %d records, %v; want %d, %d", again, n, err, valid, records)
				}
			}
		}
	})
}

// fillMapped writes n records into a fresh log on disk and returns the
// newest segment's file, closed, at its full mapped size.
func fillMapped(t *testing.T, dir string, n int) string {
	t.Helper()
	l := openIn(t, vfs.Default, dir, SyncBatch)
	if !l.mapped {
		t.Fatal("a log on disk should map its segments")
	}
	for i := 0; i < n; i++ {
		if _, err := l.Append(tableA, payloadOf(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ids, _ := listSegments(vfs.Default, dir)
	return vfs.Default.PathJoin(dir, SegmentFileName(ids[len(ids)-1]))
}

// endOfRecords is the offset past the last record of a mapped segment.
func endOfRecords(t *testing.T, data []byte) int {
	t.Helper()
	off := segmentHeaderSize
	for off+recordHeaderSize <= len(data) {
		n := int(binary.BigEndian.Uint32(data[off:]))
		if n == 0 {
			return off
		}
		off += recordSize(n)
	}
	t.Fatal("no end of records")
	return 0
}

// TestMappedRecordWithoutLengthIsDropped plays a process killed while
// copying a record into a mapped segment: the payload is there, the length
// never got stored. Replay keeps the records before it and truncates.
func TestMappedRecordWithoutLengthIsDropped(t *testing.T) {
	dir := t.TempDir()
	name := fillMapped(t, dir, 10)
	rewrite(t, vfs.Default, name, func(b []byte) []byte {
		// Payload and checksum stored, the length not yet.
		end := endOfRecords(t, b)
		hdr := recordHeader([]byte("unpublished payload"))
		copy(b[end+4:], hdr[4:8])
		copy(b[end+recordHeaderSize:], "unpublished payload")
		return b
	})
	l := openIn(t, vfs.Default, dir, SyncBatch)
	got, stats := replayAll(t, l)
	if len(got) != 10 || stats.TruncatedBytes == 0 {
		t.Fatalf("replayed %d records, %+v; want 10 and a truncation", len(got), stats)
	}
	l.Close()
}

// TestMappedDataAfterTheEndOfAnOlderSegment is corruption: only the newest
// segment can hold a record cut off by a crash.
func TestMappedDataAfterTheEndOfAnOlderSegment(t *testing.T) {
	dir := t.TempDir()
	name := fillMapped(t, dir, 10)
	var end int
	rewrite(t, vfs.Default, name, func(b []byte) []byte {
		end = endOfRecords(t, b)
		b[end+100] = 1
		return b
	})
	l := openIn(t, vfs.Default, dir, SyncBatch)
	if _, err := l.Append(tableA, []byte("newer")); err != nil { // a newer segment now follows
		t.Fatal(err)
	}
	l.Close()
	l = openIn(t, vfs.Default, dir, SyncBatch)
	defer l.Close()
	_, err := l.Replay(func(Position, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", end)) {
		t.Fatalf("replay = %v; want an error naming %s at offset %d", err, name, end)
	}
}

// TestTornRecordBeforeAPreparedSegment: a crash leaves the segment prepared
// for the next rollover after the tail. It holds no records, so the tail
// is still the newest segment with records, where a torn record is
// expected rather than corruption.
func TestTornRecordBeforeAPreparedSegment(t *testing.T) {
	dir := t.TempDir()
	name := fillMapped(t, dir, 10)
	rewrite(t, vfs.Default, name, func(b []byte) []byte {
		copy(b[endOfRecords(t, b)+recordHeaderSize:], "half-copied payload")
		return b
	})
	ids, _ := listSegments(vfs.Default, dir)
	prepared := make([]byte, 64<<10)
	appendSegmentHeader(prepared[:0], ids[len(ids)-1]+1)
	writeFile(t, vfs.Default, vfs.Default.PathJoin(dir, SegmentFileName(ids[len(ids)-1]+1)), prepared)
	l := openIn(t, vfs.Default, dir, SyncBatch)
	defer l.Close()
	got, stats := replayAll(t, l)
	if len(got) != 10 || stats.TruncatedBytes == 0 {
		t.Fatalf("replayed %d records, %+v; want 10 and a truncation", len(got), stats)
	}
}

func writeFile(t *testing.T, fs vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseWhileAppending closes the log under appenders in every sync
// mode: each append either succeeds or says the log is closed, and every
// record that succeeded replays.
func TestCloseWhileAppending(t *testing.T) {
	for _, mode := range []SyncMode{SyncPeriodic, SyncGroup, SyncBatch} {
		for _, b := range backends(t) {
			t.Run(mode.String()+"/"+b.name, func(t *testing.T) {
				l := openIn(t, b.fs, b.dir, mode)
				var mu sync.Mutex
				acked := map[string]bool{}
				var wg sync.WaitGroup
				for w := 0; w < 4; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						for i := 0; ; i++ {
							p := payloadOf(w*100000 + i)
							_, err := l.Append(tableA, p)
							if errors.Is(err, ErrClosed) {
								return
							}
							if err != nil {
								t.Errorf("append while closing: %v", err)
								return
							}
							mu.Lock()
							acked[string(p)] = true
							mu.Unlock()
						}
					}(w)
				}
				for {
					mu.Lock()
					n := len(acked)
					mu.Unlock()
					if n >= 2000 { // past a few segment rollovers
						break
					}
					time.Sleep(time.Millisecond)
				}
				if err := l.Close(); err != nil {
					t.Fatalf("close: %v", err)
				}
				wg.Wait()
				l2 := openIn(t, b.fs, b.dir, mode)
				defer l2.Close()
				got, _ := replayAll(t, l2)
				replayed := map[string]bool{}
				for _, p := range got {
					replayed[string(p)] = true
				}
				for p := range acked {
					if !replayed[p] {
						t.Fatalf("acknowledged record %q did not replay", p[:13])
					}
				}
			})
		}
	}
}

// TestSegmentWithAHalfStoredHeader: a crash while a mapped segment's header
// was being stored leaves part of it (here the magic alone) and zeros after
// it. No record can have gone there, so replay removes the segment and
// replays the others, rather than refusing to start.
func TestSegmentWithAHalfStoredHeader(t *testing.T) {
	dir := t.TempDir()
	fillMapped(t, dir, 10)
	ids, _ := listSegments(vfs.Default, dir)
	half := make([]byte, 64<<10)
	appendSegmentHeader(half[:0], ids[len(ids)-1]+1)
	clear(half[len(segmentMagic):segmentHeaderSize])
	name := vfs.Default.PathJoin(dir, SegmentFileName(ids[len(ids)-1]+1))
	writeFile(t, vfs.Default, name, half)
	l := openIn(t, vfs.Default, dir, SyncBatch)
	defer l.Close()
	got, _ := replayAll(t, l)
	if len(got) != 10 {
		t.Fatalf("replayed %d records, want 10", len(got))
	}
	if _, err := vfs.Default.Stat(name); err == nil {
		t.Fatalf("%s, whose header was never completed, is still there after replay", name)
	}
}

// TestBadSegmentHeaderBeforeRecordsStopsReplay: a header that does not
// match while records follow it is corruption, not a crash.
func TestBadSegmentHeaderBeforeRecordsStopsReplay(t *testing.T) {
	dir := t.TempDir()
	name := fillMapped(t, dir, 10)
	rewrite(t, vfs.Default, name, func(b []byte) []byte {
		b[9] ^= 0xFF // the segment id
		return b
	})
	l := openIn(t, vfs.Default, dir, SyncBatch)
	defer l.Close()
	_, err := l.Replay(func(Position, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "bad segment header") {
		t.Fatalf("replay = %v; want a bad segment header error", err)
	}
}

// TestSegmentAllocationFailureIsRetried fills the disk (every new segment
// file fails with ENOSPC) under a mapped log: writes that need a new
// segment are refused with an error naming it, those within a second of a
// failure without touching the disk again, and once space returns the next
// write makes a segment and the log takes writes again, every acknowledged
// record replaying.
func TestSegmentAllocationFailureIsRetried(t *testing.T) {
	var mu sync.Mutex
	full, creates := false, 0
	inj := errorfs.InjectorFunc(func(o errorfs.Op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		if o == errorfs.OpCreate && strings.Contains(path, "CommitLog") {
			creates++
			if full {
				return syscall.ENOSPC
			}
		}
		return nil
	})
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	dir := t.TempDir()
	opts := Options{FS: errorfs.Wrap(vfs.Default, inj), Dir: dir, SegmentSize: 64 << 10, SyncMode: SyncBatch,
		Now: func() time.Time { return time.Unix(0, clock.Load()) }}
	l, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !l.mapped {
		t.Fatal("the log on disk is not mapped")
	}
	waitPrepared := func() {
		for {
			l.mu.Lock()
			ready := l.mu.prepared != nil
			l.mu.Unlock()
			if ready {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitPrepared()
	mu.Lock()
	full = true
	mu.Unlock()
	var acked [][]byte
	payload := bytes.Repeat([]byte("p"), 1000)
	var refusal error
	for i := 0; refusal == nil; i++ {
		if i > 1000 {
			t.Fatal("no write was refused on a full disk")
		}
		p := append([]byte(fmt.Sprintf("%06d", i)), payload...)
		if _, err := l.Append(tableA, p); err != nil {
			refusal = err
			break
		}
		acked = append(acked, p)
	}
	if !errors.Is(refusal, ErrSegmentAllocation) || !errors.Is(refusal, syscall.ENOSPC) || !strings.Contains(refusal.Error(), "CommitLog-1-") {
		t.Fatalf("the refusal on a full disk: %v", refusal)
	}
	mu.Lock()
	before := creates
	mu.Unlock()
	for i := 0; i < 50; i++ {
		if _, err := l.Append(tableA, payload); !errors.Is(err, ErrSegmentAllocation) {
			t.Fatalf("a write within a second of the failure: %v", err)
		}
	}
	mu.Lock()
	if creates != before {
		t.Fatalf("writes within a second of the failure tried %d creates", creates-before)
	}
	full = false // space returns
	mu.Unlock()
	if _, err := l.Append(tableA, payload); !errors.Is(err, ErrSegmentAllocation) {
		t.Fatalf("a write before the retry interval: %v", err)
	}
	clock.Add(int64(2 * time.Second))
	for i := 0; i < 200; i++ { // past the next rollover too
		p := append([]byte(fmt.Sprintf("after-%06d", i)), payload...)
		if _, err := l.Append(tableA, p); err != nil {
			t.Fatalf("a write once space returned: %v", err)
		}
		acked = append(acked, p)
	}
	if l.AllocationFailures() == 0 {
		t.Fatal("no allocation failure counted")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	opts.FS = vfs.Default
	l, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, _ := replayAll(t, l)
	if len(got) != len(acked) {
		t.Fatalf("replayed %d records, acknowledged %d", len(got), len(acked))
	}
	for i := range got {
		if !bytes.Equal(got[i], acked[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
}

// TestOpenOnAFullDisk opens a log whose first segment cannot be made: Open
// succeeds, so that replay can run and free the old segments, and writes
// are refused until a segment can be made.
func TestOpenOnAFullDisk(t *testing.T) {
	var full atomic.Bool
	full.Store(true)
	inj := errorfs.InjectorFunc(func(o errorfs.Op, path string) error {
		if full.Load() && o == errorfs.OpCreate && strings.Contains(path, "CommitLog") {
			return syscall.ENOSPC
		}
		return nil
	})
	dir := t.TempDir()
	first := openIn(t, vfs.Default, dir, SyncBatch)
	if _, err := first.Append(tableA, []byte("before")); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := Open(Options{FS: errorfs.Wrap(vfs.Default, inj), Dir: dir, SegmentSize: 64 << 10, SyncMode: SyncBatch})
	if err != nil {
		t.Fatalf("Open on a full disk: %v", err)
	}
	defer l.Close()
	if got, _ := replayAll(t, l); len(got) != 1 || string(got[0]) != "before" {
		t.Fatalf("replayed %q", got)
	}
	if err := l.DiscardReplayed(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(tableA, []byte("refused")); !errors.Is(err, ErrSegmentAllocation) {
		t.Fatalf("Append without a segment: %v", err)
	}
	full.Store(false)
	l.mu.Lock()
	l.mu.allocFailedAt = time.Time{} // as if a second had passed
	l.mu.Unlock()
	if _, err := l.Append(tableA, []byte("after")); err != nil {
		t.Fatalf("Append once there is space: %v", err)
	}
}
