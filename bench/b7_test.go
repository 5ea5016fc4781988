package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/sibyldb/sibyl/internal/testutil"
)

var b7Table = [16]byte{0xB7}

// b7Values holds random bytes that rows take their values from at
// scattered offsets: values that do not compress, so that the data on disk
// is as large as the rows, without a random generator per write.
type b7Values []byte

func newB7Values() b7Values {
	r := rand.New(rand.NewPCG(7, 7))
	pool := make([]byte, 1<<20)
	for i := range pool {
		pool[i] = byte(r.Uint32())
	}
	return pool
}

func (p b7Values) of(i uint64) []byte {
	off := splitmix(i) % uint64(len(p)-b1ValueSize)
	return p[off : off+b1ValueSize]
}

// splitmix scatters a counter over 64 bits (SplitMix64's finalizer), for
// read keys drawn without a shared generator.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// b7Store is one of the two engines B7 compares: loaded, then read.
type b7Store struct {
	name    string
	load    func(i uint64) error
	settle  func() error // flushes and waits for compactions
	read    func(i uint64) error
	close   func()
	summary func() string
}

func openB7Sibyl(dir string, cache int64, values b7Values) (*b7Store, error) {
	e, tbl, err := openBenchEngine(dir, cache, b7Table, "b7")
	if err != nil {
		return nil, err
	}
	return &b7Store{
		name: "sibyl",
		load: func(i uint64) error { return writeRow(e, b7Table, testutil.BenchKey(i), values.of(i), int64(i+1)) },
		settle: func() error {
			if err := e.Flush(); err != nil {
				return err
			}
			return waitFor(func() bool { return e.PendingCompactions() == 0 })
		},
		read:  func(i uint64) error { return readRow(tbl, testutil.BenchKey(i), time.Now().Unix()) },
		close: func() { e.Close() },
		summary: func() string {
			st := tbl.Stats()
			cs := e.CacheStats()
			return fmt.Sprintf("%d sstables, %.2f GiB on disk, %.2f sstables per read, cache hit rate %.3f",
				st.SSTables, float64(st.LiveBytes)/(1<<30), st.SSTablesPerRead, hitRate(cs.Hits, cs.Misses))
		},
	}, nil
}

func openB7Pebble(dir string, cache int64, values b7Values) (*b7Store, error) {
	c := pebble.NewCache(cache)
	db, err := pebble.Open(dir, &pebble.Options{Cache: c})
	if err != nil {
		c.Unref()
		return nil, err
	}
	return &b7Store{
		name: "pebble",
		load: func(i uint64) error { return db.Set(testutil.BenchKey(i), values.of(i), pebble.NoSync) },
		settle: func() error {
			if err := db.Flush(); err != nil {
				return err
			}
			// Pebble's estimated debt counts L0 files that stay below its
			// compaction threshold: settled is no compaction running for
			// three polls in a row.
			idle := 0
			return waitFor(func() bool {
				if db.Metrics().Compact.NumInProgress == 0 {
					idle++
				} else {
					idle = 0
				}
				return idle >= 3
			})
		},
		read:  func(i uint64) error { return pebbleGet(db, testutil.BenchKey(i)) },
		close: func() { db.Close(); c.Unref() },
		summary: func() string {
			m := db.Metrics()
			return fmt.Sprintf("%d sstables, %.2f GiB on disk, cache hit rate %.3f",
				m.Total().NumFiles, float64(m.DiskSpaceUsage())/(1<<30),
				hitRate(m.BlockCache.Hits, m.BlockCache.Misses))
		},
	}, nil
}

func hitRate(hits, misses int64) float64 { return float64(hits) / float64(max(1, hits+misses)) }

// waitFor polls until done holds, for at most half an hour: a store whose
// compactions never settle fails the run rather than hang it.
func waitFor(done func() bool) error {
	deadline := time.Now().Add(30 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("compactions still pending after 30 minutes")
		}
		time.Sleep(time.Second)
	}
	return nil
}

// BenchmarkB7 is the in-process half of B7 in docs/benchmarks.md: both
// engines loaded with the same rows, many times their (equal) block
// caches, then random point reads alternating between them. SIBYL_B7_ROWS
// (default 20,000,000), SIBYL_B7_CACHE_MB (256), SIBYL_B7_READS per round
// (1,000,000) and SIBYL_B7_ROUNDS (3) size it.
func BenchmarkB7(b *testing.B) {
	rows := uint64(envInt("SIBYL_B7_ROWS", 20_000_000))
	cache := int64(envInt("SIBYL_B7_CACHE_MB", 256)) << 20
	reads := envInt("SIBYL_B7_READS", 1_000_000)
	rounds := envInt("SIBYL_B7_ROUNDS", 3)
	values := newB7Values()
	fmt.Printf("B7: %d rows (16-byte keys, %d-byte random values, %d goroutines), block cache %d MiB each; %d random point reads per round\n",
		rows, b1ValueSize, b1Writers, cache>>20, reads)
	fmt.Printf("machine: %d cores, %s; sibyl commit log periodic, pebble WAL NoSync\n", runtime.NumCPU(), runtime.Version())
	var stores []*b7Store
	defer func() {
		for _, s := range stores {
			s.close()
		}
	}()
	for _, open := range []func(string, int64, b7Values) (*b7Store, error){openB7Sibyl, openB7Pebble} {
		s, err := open(b.TempDir(), cache, values)
		if err != nil {
			b.Fatal(err)
		}
		stores = append(stores, s)
		start := time.Now()
		rate, err := parallel(int(rows), func(i int) error { return s.load(uint64(i)) })
		if err != nil {
			b.Fatal(err)
		}
		loaded := time.Since(start)
		if err := s.settle(); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s: loaded at %.0f rows/s in %s, compactions settled %s later; %s\n",
			s.name, rate, loaded.Round(time.Second), (time.Since(start) - loaded).Round(time.Second), s.summary())
	}
	var ratios []float64
	for round := 0; round < rounds; round++ {
		var rates [2]float64
		for n, s := range stores {
			seed := uint64(round*len(stores)+n) << 40
			rate, err := parallel(reads, func(i int) error { return s.read(splitmix(seed+uint64(i)) % rows) })
			if err != nil {
				b.Fatal(err)
			}
			rates[n] = rate
		}
		ratios = append(ratios, rates[0]/rates[1])
		fmt.Printf("round %d: reads sibyl %.0f/s pebble %.0f/s (%.2f)\n", round+1, rates[0], rates[1], rates[0]/rates[1])
	}
	for _, s := range stores {
		fmt.Printf("%s after the reads: %s\n", s.name, s.summary())
	}
	fmt.Printf("median read ratio sibyl/pebble %.2f (goal >= 1.0); peak RSS %s\n", median(ratios), peakRSS())
	b.ReportMetric(median(ratios), "read-ratio")
}
