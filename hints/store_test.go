package hints

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"golang.org/x/time/rate"

	"github.com/sibyldb/sibyl/mutation"
)

const day = 24 * time.Hour

// clock is a test's settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *clock { return &clock{now: time.UnixMilli(1_700_000_000_000)} }

func open(t *testing.T, fs vfs.FS, c *clock, opts Options) *Store {
	t.Helper()
	opts.FS, opts.Dir, opts.Now = fs, "hints", c.Now
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hint is mutation i: a partition deletion whose timestamp names it.
func hint(i int) *mutation.Mutation {
	m := mutation.NewMutation(mutation.TableID{1}, fmt.Appendf(nil, "key-%d", i))
	m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: int64(i), LocalDeletionTime: 1}
	return m
}

func ids(ms []*mutation.Mutation) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = int(m.Deletion.MarkedForDeleteAt)
	}
	return out
}

// collector is a replica that takes pages, failing the ones fail says.
type collector struct {
	mu    sync.Mutex
	got   []int
	pages int
	fail  func(page int) bool
}

func (c *collector) send(_ context.Context, ms []*mutation.Mutation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pages++
	if c.fail != nil && c.fail(c.pages) {
		return errors.New("replica refused")
	}
	c.got = append(c.got, ids(ms)...)
	return nil
}

func write(t *testing.T, s *Store, host string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := s.Write(host, hint(i), day); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestDeliverTakesEveryHintAndRemovesItsFiles(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{MaxFileSize: 500})
	write(t, s, "a", 0, 40)
	write(t, s, "b", 100, 103)
	p := s.Pending()
	if len(p) != 2 || p[0].Host != "a" || p[0].Files < 2 || p[1].Files != 1 {
		t.Fatalf("pending %+v: want a in several files of 500 bytes and b in one", p)
	}
	var got collector
	res, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send, PageBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got.got)
	if !slices.Equal(got.got, seq(0, 40)) || res.Delivered != 40 {
		t.Fatalf("delivered %v (%d), want 0..39", got.got, res.Delivered)
	}
	if s.Has("a") || !s.Has("b") {
		t.Fatalf("after delivering a: a has hints %v, b %v", s.Has("a"), s.Has("b"))
	}
	names, _ := fs.List("hints")
	if len(names) != 1 {
		t.Fatalf("files left %v, want b's only", names)
	}
}

func TestHintsWrittenDuringDeliveryGoToANewFile(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{})
	write(t, s, "a", 0, 10)
	var got collector
	writes := 0
	send := func(ctx context.Context, ms []*mutation.Mutation) error {
		if writes == 0 {
			writes++
			write(t, s, "a", 10, 15) // a write that times out while delivering
		}
		return got.send(ctx, ms)
	}
	if _, err := s.Deliver(context.Background(), "a", Delivery{Send: send, PageBytes: 50, InFlight: 1}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got.got)
	if !slices.Equal(got.got, seq(0, 15)) || s.Has("a") {
		t.Fatalf("delivered %v (left: %v), want 0..14 and nothing left", got.got, s.Has("a"))
	}
}

func TestDeliveryResumesAfterTheLastPageTaken(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{})
	write(t, s, "a", 0, 30)
	bad := collector{fail: func(p int) bool { return p == 3 }}
	res, err := s.Deliver(context.Background(), "a", Delivery{Send: bad.send, PageBytes: 1, InFlight: 1})
	if err == nil || res.Delivered != 2 || !slices.Equal(bad.got, []int{0, 1}) {
		t.Fatalf("first delivery: %v, %d delivered %v; want the failure after hints 0 and 1", err, res.Delivered, bad.got)
	}
	var good collector
	if _, err := s.Deliver(context.Background(), "a", Delivery{Send: good.send, PageBytes: 1, InFlight: 1}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(good.got, seq(2, 30)) {
		t.Fatalf("second delivery sent %v, want 2..29: from where the first stopped", good.got)
	}
}

func TestPipelinedDeliveryLosesNothingWhenPagesFail(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{MaxFileSize: 2000})
	seen := map[int]bool{}
	next := 0
	for round := range 200 {
		n := rng.IntN(20)
		write(t, s, "a", next, next+n)
		next += n
		r := collector{fail: func(int) bool { return rng.IntN(8) == 0 }}
		_, err := s.Deliver(context.Background(), "a", Delivery{Send: r.send, PageBytes: 1 + rng.IntN(300), InFlight: 1 + rng.IntN(6)})
		for _, id := range r.got {
			seen[id] = true
		}
		if err == nil && s.Has("a") {
			t.Fatalf("round %d: delivery ended without error with hints left", round)
		}
		if rng.IntN(10) == 0 { // a restart
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, fs, c, Options{MaxFileSize: 2000})
		}
	}
	r := collector{}
	if _, err := s.Deliver(context.Background(), "a", Delivery{Send: r.send}); err != nil {
		t.Fatal(err)
	}
	for _, id := range r.got {
		seen[id] = true
	}
	for i := range next {
		if !seen[i] {
			t.Fatalf("hint %d of %d never delivered", i, next)
		}
	}
	if len(seen) != next {
		t.Fatalf("%d hints delivered, %d written", len(seen), next)
	}
}

func TestHintsOutlivingGCGraceAreDropped(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{})
	for i := range 3 {
		if err := s.Write("a", hint(i), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	c.add(5 * time.Second)
	if err := s.Write("a", hint(3), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c.add(6 * time.Second)
	var got collector
	res, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.got, []int{3}) || res.Expired != 3 || s.Has("a") {
		t.Fatalf("delivered %v, %d expired; want 3 alone, the others 11 s old", got.got, res.Expired)
	}
}

func TestMaxSizePerHostRefusesHints(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{MaxSizePerHost: 300})
	var i int
	for ; ; i++ {
		err := s.Write("a", hint(i), day)
		if errors.Is(err, ErrHostFull) {
			break
		}
		if err != nil || i > 100 {
			t.Fatalf("hint %d: %v", i, err)
		}
	}
	if s.Pending()[0].Bytes > 300 || i == 0 {
		t.Fatalf("%d hints took %d bytes, past the cap of 300", i, s.Pending()[0].Bytes)
	}
	if err := s.Write("b", hint(0), day); err != nil {
		t.Fatalf("another replica's hint: %v", err)
	}
	var got collector
	if _, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write("a", hint(0), day); err != nil {
		t.Fatalf("a hint once the others were delivered: %v", err)
	}
}

func TestRestartKeepsHintsAndTheirAge(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{})
	start := c.Now()
	write(t, s, "a", 0, 5)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.add(time.Hour)
	s = open(t, fs, c, Options{})
	write(t, s, "a", 5, 8)
	p := s.Pending()
	if len(p) != 1 || p[0].Files != 2 || !p[0].Oldest.Equal(start.Truncate(time.Millisecond)) || !p[0].Newest.Equal(c.Now()) {
		t.Fatalf("pending after a restart %+v: want two files, the oldest from %v", p, start)
	}
	if age, ok := s.Age("a"); !ok || age != time.Hour {
		t.Fatalf("age %v %v, want an hour", age, ok)
	}
	var got collector
	if _, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.got, seq(0, 8)) {
		t.Fatalf("delivered %v, want 0..7 oldest first", got.got)
	}
}

func TestATornRecordEndsItsFile(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{})
	write(t, s, "a", 0, 5)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := fs.List("hints")
	path := "hints/" + names[0]
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// A crash in the last write: its record cut short.
	w, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[:len(data)-3]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s = open(t, fs, c, Options{})
	var got collector
	res, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.got, seq(0, 4)) || res.Torn == 0 || s.Has("a") {
		t.Fatalf("delivered %v, torn %d bytes; want 0..3 and the torn file gone", got.got, res.Torn)
	}
}

func TestFirstFormatFilesAreDelivered(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	if err := fs.MkdirAll("hints", 0o755); err != nil {
		t.Fatal(err)
	}
	var data []byte
	for i := range 3 {
		body := mutation.AppendMutation(nil, hint(i))
		data = binary.BigEndian.AppendUint32(data, uint32(len(body)))
		data = binary.BigEndian.AppendUint32(data, crc32.Checksum(body, crcTable))
		data = append(data, body...)
	}
	f, err := fs.Create("hints/127.0.0.2.hints")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := open(t, fs, c, Options{})
	var got collector
	if _, err := s.Deliver(context.Background(), "127.0.0.2", Delivery{Send: got.send}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.got, seq(0, 3)) {
		t.Fatalf("delivered %v from the first format, want 0..2", got.got)
	}
}

func TestTruncateAndPause(t *testing.T) {
	fs, c := vfs.NewMem(), newClock()
	s := open(t, fs, c, Options{})
	write(t, s, "a", 0, 3)
	write(t, s, "b", 0, 3)
	var got collector
	if _, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send, Paused: func() bool { return true }}); !errors.Is(err, ErrPaused) || len(got.got) != 0 {
		t.Fatalf("a paused delivery: %v, sent %v", err, got.got)
	}
	if err := s.Truncate("a"); err != nil {
		t.Fatal(err)
	}
	if s.Has("a") || !s.Has("b") {
		t.Fatal("truncating a's hints left them, or took b's")
	}
	if err := s.Truncate(""); err != nil {
		t.Fatal(err)
	}
	if names, _ := fs.List("hints"); len(s.Pending()) != 0 || len(names) != 0 {
		t.Fatalf("after truncating all: %v, files %v", s.Pending(), names)
	}
}

func TestDeliveryIsThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs, c := vfs.NewMem(), newClock()
		s := open(t, fs, c, Options{})
		write(t, s, "a", 0, 2000)
		bytes := s.Pending()[0].Bytes
		var got collector
		const perSecond = 16 << 10
		start := time.Now()
		if _, err := s.Deliver(context.Background(), "a", Delivery{Send: got.send, Limiter: rate.NewLimiter(perSecond, 4<<10), PageBytes: 4 << 10}); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		// The limiter starts with a burst in hand; the rest is paced.
		want := time.Duration(float64(bytes-4<<10-2000*headerLen) / perSecond * float64(time.Second))
		if took < want || len(got.got) != 2000 {
			t.Fatalf("%d bytes at %d/s took %v (want at least %v); %d delivered", bytes, perSecond, took, want, len(got.got))
		}
	})
}
