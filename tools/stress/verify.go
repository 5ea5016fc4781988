package stress

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// VerifySummary is what --verify found.
type VerifySummary struct {
	// Checked is the reads of the run compared with the writes of their
	// key acknowledged before they began; Stale, those that found an
	// older write or none.
	Checked int64 `json:"checked"`
	Stale   int64 `json:"stale"`
	// ReadBack is the keys with an acknowledged write read at the end;
	// Lost, those whose last acknowledged write was not there; Unreadable,
	// those whose reads failed every try.
	ReadBack   int64 `json:"read_back"`
	Lost       int64 `json:"lost"`
	Unreadable int64 `json:"unreadable"`
	// Overlapping says whether the level's reads and writes must meet on
	// a replica (W + R > RF): without, stale reads are what the level
	// allows and do not fail the run.
	Overlapping bool   `json:"overlapping"`
	Note        string `json:"note,omitempty"`
}

// ErrVerifyFailed is a --verify run that lost acknowledged writes, or
// whose reads missed one at a level that promises them.
var ErrVerifyFailed = errors.New("stress: verify failed")

// written is a key's last acknowledged write: its timestamp (0: none) and
// a hash of its value.
type written struct {
	ts   int64
	hash uint64
}

// behind reports whether a read that found (ts, hash), or nothing, misses
// the write w that was acknowledged before the read began. A newer
// timestamp is a later write (acknowledged since, or not at all: a
// timed-out write may land), never a miss.
func (w written) behind(found bool, ts int64, hash uint64) bool {
	if w.ts == 0 {
		return false
	}
	return !found || ts < w.ts || ts == w.ts && hash != w.hash
}

// ledgerChunk is the writes of 1<<ledgerChunkBits consecutive keys: the
// workloads' keys are dense from 0, so a run's ledger costs 16 bytes a key.
const ledgerChunkBits = 16

type ledgerChunk struct {
	mu   sync.Mutex
	keys [1 << ledgerChunkBits]written
}

// ledger remembers every key's last acknowledged write.
type ledger struct {
	mu     sync.RWMutex
	chunks map[int64]*ledgerChunk
	seed   maphash.Seed
	last   atomic.Int64 // the last timestamp given out, µs
}

func newLedger() *ledger {
	return &ledger{chunks: map[int64]*ledgerChunk{}, seed: maphash.MakeSeed()}
}

// timestamp is a write's timestamp in µs: the clock, but always above the
// last one given, so that no two writes of the run share one and a
// write's timestamp names it.
func (l *ledger) timestamp() int64 {
	now := time.Now().UnixMicro()
	for {
		last := l.last.Load()
		ts := max(now, last+1)
		if l.last.CompareAndSwap(last, ts) {
			return ts
		}
	}
}

func (l *ledger) hash(v []byte) uint64 { return maphash.Bytes(l.seed, v) }

func (l *ledger) chunk(key int64, create bool) *ledgerChunk {
	i := key >> ledgerChunkBits
	l.mu.RLock()
	c := l.chunks[i]
	l.mu.RUnlock()
	if c != nil || !create {
		return c
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c = l.chunks[i]; c == nil {
		c = &ledgerChunk{}
		l.chunks[i] = c
	}
	return c
}

// acked records an acknowledged write; an older one than the key's last
// changes nothing (writes of one key from several threads may be
// acknowledged out of their order).
func (l *ledger) acked(key int64, w written) {
	c := l.chunk(key, true)
	c.mu.Lock()
	if r := &c.keys[key&(1<<ledgerChunkBits-1)]; w.ts > r.ts {
		*r = w
	}
	c.mu.Unlock()
}

func (l *ledger) get(key int64) written {
	c := l.chunk(key, false)
	if c == nil {
		return written{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keys[key&(1<<ledgerChunkBits-1)]
}

// written is every key with an acknowledged write.
func (l *ledger) written() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var keys []int64
	for i, c := range l.chunks {
		c.mu.Lock()
		for j := range c.keys {
			if c.keys[j].ts != 0 {
				keys = append(keys, i<<ledgerChunkBits|int64(j))
			}
		}
		c.mu.Unlock()
	}
	return keys
}

// verifier checks a run's reads against its ledger.
type verifier struct {
	ledger *ledger
	share  float64 // of reads checked
	// overlapping and note are overlap's answer for the run's level.
	overlapping bool
	note        string
	// runCL is the run's level; readBackCL reads every write back at the
	// end: the run's level, or ALL where the run's reads and writes need
	// not meet.
	runCL, readBackCL gocql.Consistency
	checked           atomic.Int64
	stale             atomic.Int64
}

// readChecked reads key with its write time and reports whether it missed
// the last write of the key acknowledged before it began.
func (w *workload) readChecked(key int64, cl gocql.Consistency) (behind bool, err error) {
	want := w.verify.ledger.get(key)
	var v []byte
	var ts int64
	err = w.s.Query("SELECT value, WRITETIME(value) FROM "+w.ks+".kv WHERE key = ?", w.keyBytes(key)).Consistency(cl).Scan(&v, &ts)
	found := err == nil
	if errors.Is(err, gocql.ErrNotFound) {
		err = nil
	}
	if err != nil {
		return false, err
	}
	return want.behind(found, ts, w.verify.ledger.hash(v)), nil
}

// checkedRead is a read of the run: a share of them checked.
func (w *workload) checkedRead(key int64, r *rand.Rand) (bool, error) {
	if w.verify == nil || r.Float64() >= w.verify.share {
		return false, w.plainRead(key)
	}
	behind, err := w.readChecked(key, w.verify.runCL)
	if err == nil {
		w.verify.checked.Add(1)
		if behind {
			w.verify.stale.Add(1)
		}
	}
	return true, err
}

// readBack reads every key with an acknowledged write, with the run's
// threads, printing a line a second, and counts those that lost it.
func (w *workload) readBack(out io.Writer) *VerifySummary {
	keys := w.verify.ledger.written()
	fmt.Fprintf(out, "\nReading back %d acknowledged writes\n", len(keys))
	fmt.Fprintf(out, "%8s %10s %9s %8s %10s\n", "time(s)", "keys/s", "checked", "lost", "unreadable")
	var next, done, lost, unreadable atomic.Int64
	var wg sync.WaitGroup
	for range w.opts.Threads {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(keys)) {
					return
				}
				behind, err := w.readBackOne(keys[i])
				switch {
				case err != nil:
					unreadable.Add(1)
				case behind:
					lost.Add(1)
				}
				done.Add(1)
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	start, lastAt := time.Now(), time.Now()
	var lastDone int64
	line := func() {
		now, d := time.Now(), done.Load()
		fmt.Fprintf(out, "%8.1f %10.0f %9d %8d %10d\n", now.Sub(start).Seconds(), float64(d-lastDone)/now.Sub(lastAt).Seconds(), d, lost.Load(), unreadable.Load())
		lastAt, lastDone = now, d
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			line()
			continue
		case <-finished:
			line()
		}
		break
	}
	return &VerifySummary{Checked: w.verify.checked.Load(), Stale: w.verify.stale.Load(),
		ReadBack: done.Load(), Lost: lost.Load(), Unreadable: unreadable.Load(),
		Overlapping: w.verify.overlapping, Note: w.verify.note}
}

// readBackOne reads one key, trying again as preloading does: a node
// briefly overloaded is not a lost write.
func (w *workload) readBackOne(key int64) (behind bool, err error) {
	for attempt := 1; attempt <= loadRetries; attempt++ {
		if behind, err = w.readChecked(key, w.verify.readBackCL); err == nil {
			return behind, nil
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	return false, err
}

// overlap reports whether reads and writes at cl must meet on a replica of
// a keyspace replicated as replication (system_schema's map): then a
// read never misses a write acknowledged before it. The note says why
// not, when not.
func overlap(cl gocql.Consistency, replication map[string]string) (bool, string) {
	var rf, largestDC int
	for k, v := range replication {
		n, err := strconv.Atoi(v)
		if err != nil || k == "class" {
			continue
		}
		if k == "replication_factor" {
			rf, largestDC = n, n
			break
		}
		rf += n
		largestDC = max(largestDC, n)
	}
	var blockFor int
	switch cl {
	case gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum:
		return true, ""
	case gocql.One, gocql.Any:
		blockFor = 1
	case gocql.Two:
		blockFor = 2
	case gocql.Three:
		blockFor = 3
	case gocql.LocalOne:
		blockFor, rf = 1, largestDC
	}
	if 2*blockFor > rf {
		return true, ""
	}
	return false, fmt.Sprintf("reads and writes at %s with replication factor %d need not meet on a replica (%d + %d is not more than %d): stale reads are what the level allows",
		cl, rf, blockFor, blockFor, rf)
}

// verdict is the error a --verify run ends with, if any.
func (v *VerifySummary) verdict() error {
	var why []string
	if v.Lost > 0 {
		why = append(why, fmt.Sprintf("%d acknowledged writes lost", v.Lost))
	}
	if v.Unreadable > 0 {
		why = append(why, fmt.Sprintf("%d unreadable", v.Unreadable))
	}
	if v.Stale > 0 && v.Overlapping {
		why = append(why, fmt.Sprintf("%d stale reads", v.Stale))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrVerifyFailed, strings.Join(why, ", "))
}

func printVerify(out io.Writer, v *VerifySummary) {
	fmt.Fprintf(out, "\nVerify: %d reads checked, %d stale; %d acknowledged writes read back, %d lost, %d unreadable\n",
		v.Checked, v.Stale, v.ReadBack, v.Lost, v.Unreadable)
	if v.Note != "" {
		fmt.Fprintf(out, "  (%s)\n", v.Note)
	}
}
