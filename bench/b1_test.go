package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/storage"
)

const (
	b1Writers   = 8
	b1ValueSize = 128
)

var b1Table = [16]byte{0xB1}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func b1Keys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = testutil.BenchKey(uint64(i))
	}
	return keys
}

// openBenchEngine opens a storage engine under dir as the benchmarks run
// it (commit log periodic, the given block cache) with one table.
func openBenchEngine(dir string, cache int64, id [16]byte, name string) (*storage.Engine, *storage.Table, error) {
	e, err := storage.Open(storage.Options{DataDir: dir + "/data", BlockCacheSize: cache,
		CommitLog: commitlog.Options{Dir: dir + "/commitlog", SyncMode: commitlog.SyncPeriodic}})
	if err != nil {
		return nil, nil, err
	}
	tbl, err := e.OpenTable(storage.TableOptions{ID: id, Keyspace: "bench", Name: name})
	if err == nil {
		_, err = e.Recover()
	}
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return e, tbl, nil
}

// writeRow writes one row of one value at timestamp ts, as a CQL INSERT
// would (with its row liveness).
func writeRow(e *storage.Engine, table [16]byte, key, value []byte, ts int64) error {
	return e.Apply(testutil.OneValueRow(table, key, value, ts))
}

// readRow reads a key's partition and checks that it holds its one row.
func readRow(tbl *storage.Table, key []byte, now int64) error {
	p, err := tbl.ReadPartition(key, storage.ReadQuery{Now: now})
	if err == nil && len(p.Rows) != 1 {
		err = fmt.Errorf("sibyl: key %x not found", key)
	}
	return err
}

// pebbleGet reads a key from pebble and checks its value's size.
func pebbleGet(db *pebble.DB, key []byte) error {
	v, closer, err := db.Get(key)
	if err != nil {
		return fmt.Errorf("pebble: key %x: %w", key, err)
	}
	defer closer.Close()
	if len(v) != b1ValueSize {
		return fmt.Errorf("pebble: key %x has a %d-byte value", key, len(v))
	}
	return nil
}

// parallel runs fn over [0, n) split across the writers and returns ops/s.
// It collects garbage first, so that a phase does not pay for the one
// before it (a closed store's memtables, above all).
func parallel(n int, fn func(i int) error) (float64, error) {
	runtime.GC()
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	start := time.Now()
	for w := 0; w < b1Writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += b1Writers {
				if err := fn(i); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), firstErr
}

type b1Result struct{ writes, reads float64 }

// b1BlockCache is both engines' block cache: the same size, so the reads
// compare the engines and not their caches.
const b1BlockCache = 64 << 20

func runSibyl(dir string, keys [][]byte, value []byte, order []int) (b1Result, error) {
	e, tbl, err := openBenchEngine(dir, b1BlockCache, b1Table, "b1")
	if err != nil {
		return b1Result{}, err
	}
	defer e.Close()
	var res b1Result
	res.writes, err = parallel(len(keys), func(i int) error { return writeRow(e, b1Table, keys[i], value, int64(i+1)) })
	if err != nil {
		return res, err
	}
	if err := e.Flush(); err != nil {
		return res, err
	}
	now := time.Now().Unix()
	res.reads, err = parallel(len(order), func(i int) error { return readRow(tbl, keys[order[i]], now) })
	return res, err
}

func runPebble(dir string, keys [][]byte, value []byte, order []int) (b1Result, error) {
	cache := pebble.NewCache(b1BlockCache)
	defer cache.Unref()
	db, err := pebble.Open(dir, &pebble.Options{Cache: cache})
	if err != nil {
		return b1Result{}, err
	}
	defer db.Close()
	var res b1Result
	res.writes, err = parallel(len(keys), func(i int) error { return db.Set(keys[i], value, pebble.NoSync) })
	if err != nil {
		return res, err
	}
	if err := db.Flush(); err != nil {
		return res, err
	}
	res.reads, err = parallel(len(order), func(i int) error { return pebbleGet(db, keys[order[i]]) })
	return res, err
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}

// BenchmarkB1 is B1 of docs/benchmarks.md: the storage engine against a
// plain pebble DB, alternating runs, ratios of the medians per run.
// SIBYL_B1_OPS (default 1,000,000) and SIBYL_B1_ROUNDS (default 3) size it.
func BenchmarkB1(b *testing.B) {
	ops := envInt("SIBYL_B1_OPS", 1_000_000)
	rounds := envInt("SIBYL_B1_ROUNDS", 3)
	keys := b1Keys(ops)
	value := make([]byte, b1ValueSize)
	for i := range value {
		value[i] = byte(i)
	}
	r := rand.New(rand.NewPCG(1, 1))
	order := r.Perm(ops)
	fmt.Printf("B1: %d inserts (16-byte keys, %d-byte values, %d goroutines), then %d random point reads after flush\n",
		ops, b1ValueSize, b1Writers, ops)
	fmt.Printf("machine: %d cores, %s; sibyl commit log periodic, pebble WAL NoSync\n", runtime.NumCPU(), runtime.Version())
	var writeRatios, readRatios []float64
	for round := 0; round < rounds; round++ {
		s, err := runSibyl(b.TempDir(), keys, value, order)
		if err != nil {
			b.Fatal(err)
		}
		p, err := runPebble(b.TempDir(), keys, value, order)
		if err != nil {
			b.Fatal(err)
		}
		writeRatios = append(writeRatios, s.writes/p.writes)
		readRatios = append(readRatios, s.reads/p.reads)
		fmt.Printf("round %d: writes sibyl %.0f/s pebble %.0f/s (%.2f); reads sibyl %.0f/s pebble %.0f/s (%.2f)\n",
			round+1, s.writes, p.writes, s.writes/p.writes, s.reads, p.reads, s.reads/p.reads)
	}
	fmt.Printf("median ratio sibyl/pebble: writes %.2f (goal >= 1.2), reads %.2f (goal >= 1.0); peak RSS %s\n",
		median(writeRatios), median(readRatios), peakRSS())
	b.ReportMetric(median(writeRatios), "write-ratio")
	b.ReportMetric(median(readRatios), "read-ratio")
}
