package bench

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gocql/gocql"
)

// BenchmarkB2 is B2 and B5 of the benchmark rules: one bin/sibyl server
// process driven by gocql with prepared statements, 64 requests in flight
// over 2 connections. Phases, alternating over rounds: the ceiling (a
// prepared read of system.local, no storage), prepared INSERTs of a bigint
// key and a 128-byte blob, prepared SELECTs of those rows by key. It
// reports ops/s and p50/p99/p99.9 per phase, the write/ceiling and
// read/ceiling ratios (median over rounds), the time from start to the
// first query, and the server's resident memory idle and under load.
// SIBYL_B2_OPS (default 200,000 per phase) and SIBYL_B2_ROUNDS (3) size it.
func BenchmarkB2(b *testing.B) {
	ops := envInt("SIBYL_B2_OPS", 200_000)
	rounds := envInt("SIBYL_B2_ROUNDS", 3)
	srv := startServer(b, "B2")
	defer srv.stop(b)
	fmt.Printf("B2: gocql, prepared statements, 64 in flight over 2 connections, %d operations per phase, %d rounds; machine: %d cores, %s\n",
		ops, rounds, runtime.NumCPU(), runtime.Version())
	fmt.Printf("B5: start to first query %s; idle RSS %s\n", srv.startup.Round(time.Millisecond), formatKiB(srv.rss()))

	s := srv.session(b)
	defer s.Close()
	for _, q := range []string{
		"CREATE KEYSPACE b2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE b2.kv (k bigint PRIMARY KEY, v blob)",
	} {
		if err := s.Query(q).Exec(); err != nil {
			b.Fatal(err)
		}
	}
	value := make([]byte, b1ValueSize)
	var peak atomic.Int64
	stopSampling := srv.sampleRSS(&peak)
	phases := []struct {
		name string
		run  func(i int) error
	}{
		{"ceiling", func(int) error {
			var v string
			return s.Query("SELECT release_version FROM system.local WHERE key = 'local'").Scan(&v)
		}},
		{"writes", func(i int) error {
			return s.Query("INSERT INTO b2.kv (k, v) VALUES (?, ?)", int64(i), value).Exec()
		}},
		{"reads", func(i int) error {
			var v []byte
			return s.Query("SELECT v FROM b2.kv WHERE k = ?", int64(i%ops)).Scan(&v)
		}},
	}
	var writeRatios, readRatios []float64
	for round := 1; round <= rounds; round++ {
		rates := map[string]float64{}
		for _, p := range phases {
			rate, h, err := inFlight(64, ops, p.run)
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			rates[p.name] = rate
			fmt.Printf("round %d: %-7s %8.0f ops/s  p50 %s  p99 %s  p99.9 %s\n", round, p.name, rate,
				micros(h.ValueAtQuantile(50)), micros(h.ValueAtQuantile(99)), micros(h.ValueAtQuantile(99.9)))
		}
		writeRatios = append(writeRatios, rates["writes"]/rates["ceiling"])
		readRatios = append(readRatios, rates["reads"]/rates["ceiling"])
	}
	stopSampling()
	w, r := median(writeRatios), median(readRatios)
	fmt.Printf("median ratios: writes/ceiling %.2f (goal >= 0.6), reads/ceiling %.2f (goal >= 0.7); RSS under load up to %s\n",
		w, r, formatKiB(peak.Load()))
	b.ReportMetric(w, "write/ceiling")
	b.ReportMetric(r, "read/ceiling")
	b.ReportMetric(srv.startup.Seconds(), "startup-s")
}

// inFlight runs fn over [0, n) from workers goroutines, each waiting for
// its request before the next, and returns ops/s and the latencies.
func inFlight(workers, n int, fn func(i int) error) (float64, *hdrhistogram.Histogram, error) {
	runtime.GC()
	var next atomic.Int64
	var mu sync.Mutex
	all := hdrhistogram.New(1, int64(30*time.Second/time.Microsecond), 3)
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hdrhistogram.New(1, int64(30*time.Second/time.Microsecond), 3)
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					break
				}
				t := time.Now()
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				_ = h.RecordValue(time.Since(t).Microseconds())
			}
			mu.Lock()
			all.Merge(h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), all, firstErr
}

func micros(us int64) string { return (time.Duration(us) * time.Microsecond).String() }

func formatKiB(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// server is a bin/sibyl server process on a free loopback port.
type server struct {
	cmd     *exec.Cmd
	bin     string
	port    int
	admin   int
	dir     string
	startup time.Duration // from start to the first successful query
}

func startServer(b *testing.B, benchmark string) *server {
	bin, err := filepath.Abs("../bin/sibyl")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		b.Fatalf("%s runs bin/sibyl: build it first (make bench does): %v", benchmark, err)
	}
	freePort := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	port := freePort()
	dir := b.TempDir()
	srv := &server{bin: bin, port: port, admin: freePort(), dir: dir}
	srv.cmd = exec.Command(bin, "server", "--data-dir", filepath.Join(dir, "node"), "--native-transport-port", strconv.Itoa(port),
		"--admin-port", strconv.Itoa(srv.admin))
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		b.Fatal(err)
	}
	srv.cmd.Stdout, srv.cmd.Stderr = log, log
	start := time.Now()
	if err := srv.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = port
	cluster.ConnectTimeout = time.Second
	cluster.NumConns = 1
	for {
		s, err := cluster.CreateSession()
		if err == nil {
			var v string
			err = s.Query("SELECT release_version FROM system.local WHERE key = 'local'").Scan(&v)
			s.Close()
			if err == nil {
				srv.startup = time.Since(start)
				break
			}
		}
		if time.Since(start) > 30*time.Second {
			srv.stop(b)
			b.Fatalf("the server did not answer within 30 s: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(time.Second) // settle before measuring idle memory
	return srv
}

// rss is the server's resident memory in KiB.
func (s *server) rss() int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// sampleRSS keeps the largest resident memory seen in peak until the
// returned function is called.
func (s *server) sampleRSS(peak *atomic.Int64) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := s.rss(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	return func() { close(done) }
}

// session is a gocql session of two connections to the server, at ONE.
func (s *server) session(b *testing.B) *gocql.Session {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = s.port
	cluster.NumConns = 2
	cluster.Timeout = 60 * time.Second
	cluster.Consistency = gocql.One
	session, err := cluster.CreateSession()
	if err != nil {
		b.Fatal(err)
	}
	return session
}

// nodetool runs a nodetool command against the server.
func (s *server) nodetool(b *testing.B, args ...string) {
	out, err := exec.Command(s.bin, append([]string{"nodetool", "-h", "127.0.0.1", "-p", strconv.Itoa(s.admin)}, args...)...).CombinedOutput()
	if err != nil {
		b.Fatalf("nodetool %v: %v: %s", args, err, out)
	}
}

func (s *server) stop(b *testing.B) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		b.Errorf("the server did not stop cleanly: %v", err)
	}
}
