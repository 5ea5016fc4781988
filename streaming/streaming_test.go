package streaming

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/storage"
)

var tableID = mutation.TableID{1, 2, 3}

// memNet is an in-memory network between Services, whose fault hook may
// fail a request before its handler runs or lose its answer after.
type memNet struct {
	mu       sync.Mutex
	handlers map[string]map[messaging.Verb]messaging.Handler
	requests int
	// fault is asked of every request (counted from 1): lose it before it
	// arrives, or lose its answer after the handler ran.
	fault func(n int, verb messaging.Verb) (before, after bool)
	// tamper may change an answer.
	tamper func(verb messaging.Verb, answer []byte) []byte
}

type endpoint struct {
	net  *memNet
	self string
}

func (e endpoint) Request(_ context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error) {
	m := e.net
	m.mu.Lock()
	m.requests++
	n := m.requests
	h := m.handlers[to][verb]
	fault, tamper := m.fault, m.tamper
	m.mu.Unlock()
	var before, after bool
	if fault != nil {
		before, after = fault(n, verb)
	}
	if before {
		return nil, errors.New("connection refused")
	}
	answer, err := h(context.Background(), e.self, payload)
	if err != nil {
		return nil, &messaging.RemoteError{Message: err.Error()}
	}
	if after {
		return nil, errors.New("connection reset")
	}
	if tamper != nil {
		answer = tamper(verb, answer)
	}
	return answer, nil
}

type node struct {
	engine *storage.Engine
	table  *storage.Table
	svc    *Service
}

func newNode(t *testing.T, net *memNet, name string, adjust func(*Options)) *node {
	t.Helper()
	e, err := storage.Open(storage.Options{FS: vfs.NewMem(), DataDir: "data",
		CommitLog: commitlog.Options{Dir: "cl", SyncMode: commitlog.SyncBatch}, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := e.OpenTable(storage.TableOptions{ID: tableID, Keyspace: "ks", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
	opts := Options{Network: endpoint{net, name}, Tables: e, Partitioner: partitioner.Murmur3(), Backoff: time.Millisecond}
	if adjust != nil {
		adjust(&opts)
	}
	svc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	net.mu.Lock()
	if net.handlers == nil {
		net.handlers = map[string]map[messaging.Verb]messaging.Handler{}
	}
	net.handlers[name] = svc.Handlers()
	net.mu.Unlock()
	t.Cleanup(func() { svc.Close(); e.Close() })
	return &node{engine: e, table: tbl, svc: svc}
}

func key(i int) []byte { return []byte(fmt.Sprintf("partition-%04d", i)) }

func (n *node) write(t *testing.T, i int, value string, ts int64) {
	t.Helper()
	m := mutation.NewMutation(tableID, key(i))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, []byte(value))}
	m.Rows = []mutation.RowUpdate{{Row: row}}
	if err := n.engine.Apply(m); err != nil {
		t.Fatal(err)
	}
}

// load writes n partitions over three SSTables and the memtable, with
// one SSTable holding only partitions of the first span (sent whole) and
// some partitions deleted.
func load(t *testing.T, src *node, n int) (spans []storage.KeySpan, prefix func(int) []byte, order []int) {
	prefix = func(i int) []byte {
		return mutation.AppendPartitionPrefix(nil, partitioner.Murmur3().Token(key(i)), key(i))
	}
	for i := range n {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(prefix(a), prefix(b)) })
	for i := range n {
		src.write(t, i, strings.Repeat(fmt.Sprint(i), 20), 10)
		if i%(n/3) == n/3-1 {
			if err := src.table.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	spans = []storage.KeySpan{{From: prefix(order[n/10]), To: prefix(order[n/2])}, {From: prefix(order[3*n/4])}}
	for _, i := range order[n/5 : n/3] {
		src.write(t, i, "newer", 20)
	}
	if err := src.table.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{order[n/4], order[n-1], order[0]} {
		m := mutation.NewMutation(tableID, key(i))
		m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 30, LocalDeletionTime: 1_000_000}
		if err := src.engine.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	return spans, prefix, order
}

// same checks that dst holds what src holds of the spans, and nothing else.
func same(t *testing.T, src, dst *node, spans []storage.KeySpan, prefix func(int) []byte, n int) {
	t.Helper()
	for i := range n {
		in := false
		for _, s := range spans {
			in = in || (s.From == nil || bytes.Compare(prefix(i), s.From) >= 0) && (s.To == nil || bytes.Compare(prefix(i), s.To) < 0)
		}
		got, err := dst.table.ReadPartitionEntries(key(i), storage.ReadQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var want []mutation.Entry
		if in {
			if want, err = src.table.ReadPartitionEntries(key(i), storage.ReadQuery{}); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("partition %d (in the spans: %v): received %v, want %v", i, in, got, want)
		}
	}
}

// TestFetchThroughLostRequestsAndAnswers pulls two spans in small chunks
// over a network that loses requests before they arrive and answers
// after their handler ran: every section arrives (one SSTable whole, the
// others as entries), the receiver holds what the source does of the
// spans and nothing more, and the source lets its SSTables go at the end.
func TestFetchThroughLostRequestsAndAnswers(t *testing.T) {
	net := &memNet{}
	small := func(o *Options) { o.ChunkSize = 512 }
	src, dst := newNode(t, net, "src", small), newNode(t, net, "dst", small)
	const n = 600
	spans, prefix, _ := load(t, src, n)
	net.fault = func(k int, verb messaging.Verb) (bool, bool) {
		return k%11 == 0, k%7 == 0 && verb != messaging.VerbStreamComplete
	}
	res, err := dst.svc.Fetch(context.Background(), "Rebuild", "src", []TableSpans{{Table: tableID, Spans: spans}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sections != 5 || res.Whole != 1 || res.Bytes == 0 {
		t.Fatalf("received %+v, want 5 sections, 1 whole", res)
	}
	same(t, src, dst, spans, prefix, n)
	if s := src.svc.Sessions(); len(s) != 0 {
		t.Fatalf("the source still holds sessions: %+v", s)
	}
	if s := dst.svc.Sessions(); len(s) != 0 {
		t.Fatalf("the receiver still lists sessions: %+v", s)
	}
}

// TestPullAsksTheReceiverToFetch: a third node asks the receiver to pull
// spans from the source; a lost answer makes it ask again, and the
// receiver ends up with what the source holds of the spans; what the
// receiver refuses comes back as it refused it.
func TestPullAsksTheReceiverToFetch(t *testing.T) {
	net := &memNet{}
	src, dst := newNode(t, net, "src", nil), newNode(t, net, "dst", nil)
	asker := newNode(t, net, "asker", nil)
	const n = 300
	spans, prefix, _ := load(t, src, n)
	pulls := 0
	net.fault = func(_ int, verb messaging.Verb) (bool, bool) {
		if verb != messaging.VerbStreamPull {
			return false, false
		}
		pulls++
		return false, pulls == 1 // the first pull's answer is lost
	}
	res, err := asker.svc.Pull(context.Background(), "dst", "Unbootstrap", "src", []TableSpans{{Table: tableID, Spans: spans}})
	if err != nil {
		t.Fatal(err)
	}
	if pulls != 2 || res.Sections == 0 || res.Bytes == 0 {
		t.Fatalf("after %d pulls the receiver reports %+v", pulls, res)
	}
	same(t, src, dst, spans, prefix, n)
	_, err = asker.svc.Pull(context.Background(), "dst", "Unbootstrap", "src", []TableSpans{{Table: mutation.TableID{9}, Spans: spans}})
	if err == nil || !strings.Contains(err.Error(), "dst pulling from src") || pulls != 3 {
		t.Fatalf("a pull of a table the source lacks: %v after %d pulls", err, pulls)
	}
}

// TestAnEntriesSectionResumesFromAnyOffset: a section's chunks asked for
// again from an earlier offset are the bytes they were.
func TestAnEntriesSectionResumesFromAnyOffset(t *testing.T) {
	net := &memNet{}
	src := newNode(t, net, "src", nil)
	for i := range 200 {
		src.write(t, i, "v", 1)
	}
	out, err := src.table.StreamOut([]storage.KeySpan{{From: []byte{0x80}}})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	sec := &sendingSection{sec: out.Sections[0]}
	defer sec.close()
	var all []byte
	var offsets []int64
	for c := (chunk{}); !c.last; {
		if c, err = sec.read(int64(len(all)), 100); err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, c.offset)
		all = append(all, c.data...)
	}
	for _, off := range []int64{offsets[len(offsets)-1], 0, offsets[3], offsets[1] + 17} {
		c, err := sec.read(off, 100)
		if err != nil {
			t.Fatal(err)
		}
		if want := all[off:min(off+100, int64(len(all)))]; !bytes.Equal(c.data, want) {
			t.Fatalf("offset %d again: %d bytes unlike the first time's", off, len(c.data))
		}
	}
	if _, err := sec.read(int64(len(all))+1, 100); err == nil {
		t.Fatal("an offset past the section's end was served")
	}
}

// TestFetchRefusesWhatItDidNotAskFor: a section of a table not asked for,
// an entry whose token is not its partition key's, and chunks whose
// checksum never matches end the session with an error.
func TestFetchRefusesWhatItDidNotAskFor(t *testing.T) {
	net := &memNet{}
	src, dst := newNode(t, net, "src", nil), newNode(t, net, "dst", nil)
	for i := range 50 {
		src.write(t, i, "v", 1)
	}
	all := []TableSpans{{Table: tableID, Spans: []storage.KeySpan{{}}}}
	other := mutation.TableID{9}
	net.tamper = func(verb messaging.Verb, answer []byte) []byte {
		if verb != messaging.VerbStreamPrepare {
			return answer
		}
		secs, err := decodeSections(answer)
		if err != nil {
			t.Fatal(err)
		}
		secs[0].table = other
		out, _ := encodeSections(secs)
		return out
	}
	if _, err := dst.svc.Fetch(context.Background(), "Rebuild", "src", all); err == nil || !strings.Contains(err.Error(), "was not asked for") {
		t.Fatalf("a section of another table: %v", err)
	}
	net.tamper = func(verb messaging.Verb, answer []byte) []byte {
		if verb != messaging.VerbStreamChunk {
			return answer
		}
		c, err := decodeChunk(answer)
		if err != nil {
			t.Fatal(err)
		}
		// The first entry's token, one bit off.
		c.data = bytes.Clone(c.data)
		c.data[1] ^= 1
		return c.encode()
	}
	// Force entries: a span that cuts the table's one SSTable.
	half := []TableSpans{{Table: tableID, Spans: []storage.KeySpan{{From: []byte{0x80}}}}}
	if _, err := dst.svc.Fetch(context.Background(), "Rebuild", "src", half); err == nil || !strings.Contains(err.Error(), "not its own") {
		t.Fatalf("an entry under another token: %v", err)
	}
	net.tamper = func(verb messaging.Verb, answer []byte) []byte {
		if verb == messaging.VerbStreamChunk {
			answer = bytes.Clone(answer)
			answer[len(answer)-1] ^= 1
		}
		return answer
	}
	if _, err := dst.svc.Fetch(context.Background(), "Rebuild", "src", all); !errors.Is(err, errChunkChecksum) {
		t.Fatalf("chunks that never check: %v", err)
	}
	if got, err := dst.table.ReadPartitionEntries(key(1), storage.ReadQuery{}); err != nil || len(got) != 0 {
		t.Fatalf("refused sessions left data: %v, %v", got, err)
	}
	if s := src.svc.Sessions(); len(s) != 0 {
		t.Fatalf("the source still holds sessions after refused ones: %+v", s)
	}
}

// TestSendingIsThrottledAndIdleSessionsGo: the source sends whole SSTables
// at most at its entire SSTable throughput, whatever the other bound, and
// a session no one pulls from is dropped after the idle timeout.
func TestSendingIsThrottledAndIdleSessionsGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &memNet{}
		throttled := func(o *Options) { o.EntireSSTableThroughput = 64 << 10; o.ChunkSize = 8 << 10 }
		src, dst := newNode(t, net, "src", throttled), newNode(t, net, "dst", throttled)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range 2000 {
			value := make([]byte, 100)
			for j := range value {
				value[j] = byte(r.Uint32())
			}
			src.write(t, i, string(value), 1)
		}
		fetch := func(spans ...storage.KeySpan) (Result, time.Duration) {
			t.Helper()
			start := time.Now()
			res, err := dst.svc.Fetch(context.Background(), "Rebuild", "src", []TableSpans{{Table: tableID, Spans: spans}})
			if err != nil {
				t.Fatal(err)
			}
			return res, time.Since(start)
		}
		res, took := fetch(storage.KeySpan{})
		// The bucket starts full: one chunk goes at once.
		if floor := time.Duration(float64(res.Bytes-8<<10) / float64(64<<10) * float64(time.Second)); res.Bytes < 128<<10 || took < floor {
			t.Fatalf("%d bytes in %s, faster than 64 KiB/s allows (%s)", res.Bytes, took, floor)
		}
		// Each bound holds its own kind of section only.
		src.svc.SetThroughput(64 << 10)
		src.svc.SetEntireSSTableThroughput(0)
		if res, took := fetch(storage.KeySpan{}); took > time.Second {
			t.Fatalf("%d bytes of whole SSTables took %s with their own bound lifted", res.Bytes, took)
		}
		res, took = fetch(storage.KeySpan{From: []byte{0x80}})
		if floor := time.Duration(float64(res.Bytes-8<<10) / float64(64<<10) * float64(time.Second)); res.Bytes < 32<<10 || took < floor {
			t.Fatalf("%d bytes of entries in %s, faster than 64 KiB/s allows (%s)", res.Bytes, took, floor)
		}

		if _, err := net.handlers["src"][messaging.VerbStreamPrepare](context.Background(), "dst",
			prepareRequest{session: 77, tables: []TableSpans{{Table: tableID, Spans: []storage.KeySpan{{}}}}}.encode()); err != nil {
			t.Fatal(err)
		}
		if len(src.svc.Sessions()) != 1 {
			t.Fatal("no session after a prepare")
		}
		time.Sleep(10*time.Minute + time.Second)
		src.svc.Reap()
		if s := src.svc.Sessions(); len(s) != 0 {
			t.Fatalf("an idle session is still held: %+v", s)
		}
		if _, err := net.handlers["src"][messaging.VerbStreamChunk](context.Background(), "dst", chunkRequest{session: 77}.encode()); err == nil || !strings.Contains(err.Error(), "no session") {
			t.Fatalf("a chunk of a dropped session: %v", err)
		}
	})
}

// TestAClosedSourceRefusesSessions: a session asked for once the source
// has closed (its node shutting down, messaging still up) is refused and
// holds nothing; were it kept, its SSTables would stay open past the
// engine's close.
func TestAClosedSourceRefusesSessions(t *testing.T) {
	net := &memNet{}
	src, dst := newNode(t, net, "src", nil), newNode(t, net, "dst", nil)
	spans, _, _ := load(t, src, 60)
	src.svc.Close()
	_, err := dst.svc.Fetch(context.Background(), "Rebuild", "src", []TableSpans{{Table: tableID, Spans: spans}})
	if err == nil || !strings.Contains(err.Error(), errClosed.Error()) {
		t.Fatalf("a fetch from a closed source: %v", err)
	}
	if s := src.svc.Sessions(); len(s) != 0 {
		t.Fatalf("the closed source holds sessions: %+v", s)
	}
}
