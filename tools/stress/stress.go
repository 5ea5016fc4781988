package stress

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gocql/gocql"
)

// Options configure a run (the flags of sibyl stress).
type Options struct {
	Workload string   // write, read, mixed, dynamo, ycsb-a ... ycsb-f, lwt, counter
	Nodes    []string // contact points
	Port     int
	// Username and Password log in (PasswordAuthenticator); none when
	// Username is "".
	Username, Password string
	// TLS, when set, connects with it (client_encryption_options).
	TLS         *tls.Config
	Threads     int
	Connections int // per node
	Ops         int64
	Duration    time.Duration // when Ops is 0
	// Interrupt, once closed, ends the timed run early (SIGINT): the
	// summary, and --verify's read-back, cover what ran.
	Interrupt    <-chan struct{}
	Keys         int64 // the key space of reads and rewrites
	Preload      int64 // keys written before the timed run
	Warmup       int64 // new keys written after the preload, untimed
	KeySize      int   // bytes: the key's number, big-endian, then zeros; at least 8
	ValueSize    int
	Distribution string // uniform, zipfian, sequential
	Consistency  string
	// SerialConsistency is the Paxos level of lwt's conditional writes:
	// SERIAL (default) or LOCAL_SERIAL.
	SerialConsistency string
	ReplicationFactor int
	Keyspace          string
	TokenAware        bool    // send each request to a replica; else only to Nodes, in turn
	Rate              float64 // ops/s cap, 0: none
	Seed              uint64  // 0: from the clock
	Ratio             string  // mixed: write:read
	Mix               int     // dynamo: 1..4
	Overwrite         bool    // write and mixed: rewrite keys of the key space instead of adding new ones
	JSON, Plot        string  // report files, when set
	// Verify remembers every acknowledged write, checks a share of the
	// reads (VerifyShare, default all) against them and reads every one
	// back at the end.
	Verify      bool
	VerifyShare float64
	Out         io.Writer
}

// EnsureDefaults fills unset fields.
func (o *Options) EnsureDefaults() {
	if len(o.Nodes) == 0 {
		o.Nodes = []string{"127.0.0.1"}
	}
	if o.Port == 0 {
		o.Port = 9042
	}
	if o.Threads == 0 {
		o.Threads = 32
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano()) // the report records it, to run again alike
	}
	if o.Connections == 0 {
		o.Connections = 2
	}
	if o.Ops == 0 && o.Duration == 0 {
		o.Ops = 100_000
	}
	if o.Keys == 0 {
		o.Keys = 100_000
	}
	if o.ValueSize == 0 {
		o.ValueSize = 128
	}
	if o.KeySize == 0 {
		o.KeySize = 8
	}
	if o.Distribution == "" {
		o.Distribution = "uniform"
	}
	if o.Consistency == "" {
		o.Consistency = "ONE"
	}
	if o.SerialConsistency == "" {
		o.SerialConsistency = "SERIAL"
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = 1
	}
	if o.Keyspace == "" {
		o.Keyspace = "stress"
	}
	if o.Ratio == "" {
		o.Ratio = "1:1"
	}
	if o.Mix == 0 {
		o.Mix = 1
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.VerifyShare == 0 {
		o.VerifyShare = 1
	}
}

// Validate names what is wrong.
func (o *Options) Validate() error {
	var errs []error
	if _, ok := workloads[o.Workload]; !ok {
		errs = append(errs, fmt.Errorf("workload %q is not one of %s", o.Workload, strings.Join(slices.Sorted(mapKeys(workloads)), ", ")))
	}
	if o.Threads < 0 || o.Connections < 0 || o.Ops < 0 || o.Keys < 0 || o.Preload < 0 || o.Warmup < 0 || o.ValueSize < 0 || o.Rate < 0 {
		errs = append(errs, errors.New("--threads, --connections, --ops, --keys, --preload, --value-size and --rate must not be negative"))
	}
	if o.KeySize != 0 && o.KeySize < 8 {
		errs = append(errs, fmt.Errorf("--key-size: %d is under the 8 bytes a key's number takes", o.KeySize))
	}
	if o.VerifyShare < 0 || o.VerifyShare > 1 {
		errs = append(errs, fmt.Errorf("--verify-share: %v is not a fraction from 0 to 1", o.VerifyShare))
	}
	if o.Mix < 0 || o.Mix > 4 {
		errs = append(errs, fmt.Errorf("--mix: %d is not 1, 2, 3 or 4", o.Mix))
	}
	var c gocql.Consistency
	if o.Consistency != "" && c.UnmarshalText([]byte(strings.ToUpper(o.Consistency))) != nil {
		errs = append(errs, fmt.Errorf("--consistency: %q is not a consistency level", o.Consistency))
	}
	var serial gocql.SerialConsistency
	if o.SerialConsistency != "" && serial.UnmarshalText([]byte(strings.ToUpper(o.SerialConsistency))) != nil {
		errs = append(errs, fmt.Errorf("--serial-consistency: %q is not SERIAL or LOCAL_SERIAL", o.SerialConsistency))
	}
	if o.Verify && o.Workload == "lwt" {
		errs = append(errs, errors.New("--verify: not with lwt, whose writes take the Paxos round's timestamp"))
	}
	if o.Verify && o.Workload == "counter" {
		errs = append(errs, errors.New("--verify: not with counter, whose increments add up rather than overwrite"))
	}
	return errors.Join(errs...)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Operation kinds.
const (
	opInsert  = "insert"  // a new key
	opRewrite = "rewrite" // an existing key overwritten (YCSB's update)
	opRead    = "read"
	opScan    = "scan"
	opRMW     = "read-modify-write"
	// opCAS is a conditional rewrite of an existing key (UPDATE ... IF
	// EXISTS): a lightweight transaction.
	opCAS = "cas"
	// opIncrement adds one to a counter of the key space (UPDATE ... SET
	// n = n + 1).
	opIncrement = "increment"
)

type weighted struct {
	op     string
	weight int
}

// workloads are the operation mixes; write, mixed and dynamo are filled
// in from --overwrite, --ratio and --mix.
var workloads = map[string][]weighted{
	"write":   nil,
	"read":    {{opRead, 1}},
	"mixed":   nil,
	"dynamo":  nil,
	"ycsb-a":  {{opRead, 50}, {opRewrite, 50}},
	"ycsb-b":  {{opRead, 95}, {opRewrite, 5}},
	"ycsb-c":  {{opRead, 100}},
	"ycsb-d":  {{opRead, 95}, {opInsert, 5}},
	"ycsb-e":  {{opScan, 95}, {opInsert, 5}},
	"ycsb-f":  {{opRead, 50}, {opRMW, 50}},
	"lwt":     {{opCAS, 1}},
	"counter": {{opIncrement, 1}},
}

var dynamoMixes = [5][]weighted{
	1: {{opInsert, 50}, {opRead, 50}},
	2: {{opInsert, 10}, {opRewrite, 40}, {opRead, 50}},
	3: {{opRewrite, 50}, {opRead, 50}},
	4: {{opRewrite, 90}, {opRead, 10}},
}

func (o *Options) mix() ([]weighted, error) {
	switch o.Workload {
	case "mixed":
		w, r, ok := strings.Cut(o.Ratio, ":")
		wi, err1 := strconv.Atoi(w)
		ri, err2 := strconv.Atoi(r)
		if !ok || err1 != nil || err2 != nil || wi < 0 || ri < 0 || wi+ri == 0 {
			return nil, fmt.Errorf("--ratio: %q is not write:read", o.Ratio)
		}
		return []weighted{{o.writeOp(), wi}, {opRead, ri}}, nil
	case "write":
		return []weighted{{o.writeOp(), 1}}, nil
	case "dynamo":
		return dynamoMixes[o.Mix], nil
	}
	return workloads[o.Workload], nil
}

// writeOp is what write and mixed write: new keys, or with --overwrite
// keys drawn from the key space as reads are (cassandra-stress's -pop).
func (o *Options) writeOp() string {
	if o.Overwrite {
		return opRewrite
	}
	return opInsert
}

// opStats are one operation kind's figures.
type opStats struct {
	all    *hdrhistogram.Histogram // microseconds
	second *hdrhistogram.Histogram
	errors map[string]int64
}

// Interval is a stretch of the run: its operations and their latencies.
type Interval struct {
	Ops int64 `json:"ops"`
	// OpsPerSec is Ops over the interval's length: the last interval of a
	// run is shorter than the others.
	OpsPerSec float64 `json:"ops_per_s"`
	P50       float64 `json:"p50_ms"`
	P99       float64 `json:"p99_ms"`
	P999      float64 `json:"p99_9_ms"`
	Max       float64 `json:"max_ms"`
	Errors    int64   `json:"errors"`
}

// intervalOf is an interval's figures from its counts, its length in
// seconds and its latencies (microseconds).
func intervalOf(ops, errors int64, seconds float64, h *hdrhistogram.Histogram) Interval {
	return Interval{Ops: ops, Errors: errors, OpsPerSec: float64(ops) / seconds,
		P50: ms(float64(h.ValueAtQuantile(50))), P99: ms(float64(h.ValueAtQuantile(99))),
		P999: ms(float64(h.ValueAtQuantile(99.9))), Max: ms(float64(h.Max()))}
}

// SecondStats is one second of the run.
type SecondStats struct {
	Second int `json:"second"`
	Interval
	// Stale is the checked reads of the interval that missed an
	// acknowledged write (--verify).
	Stale int64 `json:"stale,omitempty"`
}

// MinuteStats is one minute of the run (the last may be shorter): B7's
// flat line is judged minute by minute, and a minute's p99.9 is not any
// mix of its seconds' ones.
type MinuteStats struct {
	Minute  int `json:"minute"`
	Seconds int `json:"seconds"`
	Interval
}

// minuteWindow gathers seconds into minutes, numbered from 1.
type minuteWindow struct {
	hist        *hdrhistogram.Histogram
	seconds     int
	ops, errors int64
	closed      []MinuteStats
}

func newMinuteWindow() *minuteWindow { return &minuteWindow{hist: newHist()} }

// add takes one second: its counts and its latencies.
func (w *minuteWindow) add(ops, errors int64, h *hdrhistogram.Histogram) {
	w.hist.Merge(h)
	w.seconds++
	w.ops += ops
	w.errors += errors
	if w.seconds == 60 {
		w.close()
	}
}

// late counts operations that ended just after the last second: they join
// the minute under way, or the last one closed if none is.
func (w *minuteWindow) late(ops int64) {
	if w.seconds > 0 || len(w.closed) == 0 {
		w.ops += ops
		return
	}
	m := &w.closed[len(w.closed)-1]
	m.Ops += ops
	m.OpsPerSec = float64(m.Ops) / float64(m.Seconds)
}

func (w *minuteWindow) close() {
	w.closed = append(w.closed, MinuteStats{Minute: len(w.closed) + 1, Seconds: w.seconds,
		Interval: intervalOf(w.ops, w.errors, float64(max(w.seconds, 1)), w.hist)})
	w.seconds, w.ops, w.errors = 0, 0, 0
	w.hist.Reset()
}

// minutes are the run's minutes once it ended: a run of a minute or more
// is reported by the minute, its last part minute included; a shorter one
// has only its seconds.
func (w *minuteWindow) minutes() []MinuteStats {
	if len(w.closed) > 0 && w.seconds > 0 {
		w.close()
	}
	return w.closed
}

// OpSummary is an operation kind's totals.
type OpSummary struct {
	Count     int64            `json:"count"`
	OpsPerSec float64          `json:"ops_per_s"`
	Mean      float64          `json:"mean_ms"`
	P50       float64          `json:"p50_ms"`
	P95       float64          `json:"p95_ms"`
	P99       float64          `json:"p99_ms"`
	P999      float64          `json:"p99_9_ms"`
	P9999     float64          `json:"p99_99_ms"`
	Max       float64          `json:"max_ms"`
	Errors    map[string]int64 `json:"errors"`
	// Distribution is the latency at each of a range of percentiles, for
	// the report's curve.
	Distribution [][2]float64 `json:"distribution"`
}

// Summary is a run's result.
type Summary struct {
	Workload  string                `json:"workload"`
	Options   map[string]any        `json:"options"`
	Seconds   float64               `json:"seconds"`
	Total     int64                 `json:"total_ops"`
	Ops       map[string]*OpSummary `json:"operations"`
	PerSecond []SecondStats         `json:"per_second"`
	PerMinute []MinuteStats         `json:"per_minute,omitempty"`
	Verify    *VerifySummary        `json:"verify,omitempty"`
}

// recorder gathers latencies from the workers.
type recorder struct {
	mu    sync.Mutex
	ops   map[string]*opStats
	done  atomic.Int64
	errs  atomic.Int64
	start time.Time
}

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
}

func (r *recorder) record(op string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.ops[op]
	if s == nil {
		s = &opStats{all: newHist(), second: newHist(), errors: map[string]int64{}}
		r.ops[op] = s
	}
	if err != nil {
		s.errors[errorKind(err)]++
		r.errs.Add(1)
	} else {
		us := max(d.Microseconds(), 1)
		_ = s.all.RecordValue(us)
		_ = s.second.RecordValue(us)
	}
	r.done.Add(1)
}

// errorKind names an error as a summary counts it: the server's error
// code, or the client's failure.
func errorKind(err error) string {
	var re gocql.RequestError
	if errors.As(err, &re) {
		return fmt.Sprintf("server error 0x%04x", re.Code())
	}
	if errors.Is(err, gocql.ErrTimeoutNoResponse) {
		return "client timeout"
	}
	return fmt.Sprintf("%T", err)
}

func ms(us float64) float64 { return us / 1000 }

// Run runs the workload and prints its live lines and summary.
func Run(opts Options) (*Summary, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	mix, err := opts.mix()
	if err != nil {
		return nil, err
	}
	chooser, err := newKeyChooser(opts.Distribution, max(opts.Keys, opts.Preload))
	if err != nil {
		return nil, err
	}
	if opts.Workload == "ycsb-d" {
		chooser, _ = newKeyChooser("latest", max(opts.Keys, opts.Preload))
	}
	cluster := gocql.NewCluster(opts.Nodes...)
	cluster.Port = opts.Port
	if opts.Username != "" {
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: opts.Username, Password: opts.Password}
	}
	if opts.TLS != nil {
		// gocql sets InsecureSkipVerify from EnableHostVerification.
		cluster.SslOpts = &gocql.SslOptions{Config: opts.TLS, EnableHostVerification: !opts.TLS.InsecureSkipVerify}
	}
	cluster.NumConns = opts.Connections
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	var cl gocql.Consistency
	_ = cl.UnmarshalText([]byte(strings.ToUpper(opts.Consistency)))
	cluster.Consistency = cl
	_ = cluster.SerialConsistency.UnmarshalText([]byte(strings.ToUpper(opts.SerialConsistency)))
	if opts.TokenAware {
		cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	} else {
		// Without topology: only the nodes named, in turn; they forward to
		// the replicas.
		cluster.HostFilter = gocql.WhiteListHostFilter(opts.Nodes...)
	}
	s, err := cluster.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("connecting to %s:%d: %w", strings.Join(opts.Nodes, ","), opts.Port, err)
	}
	defer s.Close()
	ks := `"` + opts.Keyspace + `"`
	schema := []string{
		fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", ks, opts.ReplicationFactor),
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.kv (key blob PRIMARY KEY, value blob)", ks),
	}
	if opts.Workload == "counter" {
		schema = append(schema, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.counts (key blob PRIMARY KEY, n counter)", ks))
	}
	for _, q := range schema {
		if err := s.Query(q).Exec(); err != nil {
			return nil, fmt.Errorf("creating the schema: %w", err)
		}
	}
	w := &workload{s: s, ks: ks, opts: &opts, chooser: chooser}
	if opts.Verify {
		w.verify = &verifier{ledger: newLedger(), share: opts.VerifyShare, runCL: cl, readBackCL: cl}
		var replication map[string]string
		if err := s.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", opts.Keyspace).Scan(&replication); err != nil {
			return nil, fmt.Errorf("reading the keyspace's replication: %w", err)
		}
		w.verify.overlapping, w.verify.note = overlap(cl, replication)
		if !w.verify.overlapping {
			// Only ALL is sure to meet a write acknowledged by fewer.
			w.verify.readBackCL = gocql.All
		}
	}
	w.nextKey.Store(opts.Preload + opts.Warmup) // inserts follow the preloaded and warm-up keys
	if opts.Preload > 0 {
		fmt.Fprintf(opts.Out, "Preloading %d keys\n", opts.Preload)
		if err := w.writeRange(0, opts.Preload); err != nil {
			return nil, fmt.Errorf("preloading: %w", err)
		}
	}
	if opts.Warmup > 0 {
		fmt.Fprintf(opts.Out, "Warming up with %d writes\n", opts.Warmup)
		if err := w.writeRange(opts.Preload, opts.Preload+opts.Warmup); err != nil {
			return nil, fmt.Errorf("warming up: %w", err)
		}
	}
	fmt.Fprintf(opts.Out, "Running %s with %d threads, %d connections per node\n", opts.Workload, opts.Threads, opts.Connections)
	header := fmt.Sprintf("%8s %10s %9s %9s %8s %9s", "time(s)", "ops/s", "p50(ms)", "p99(ms)", "errors", "progress")
	if w.verify != nil {
		header += fmt.Sprintf(" %8s", "stale")
	}
	fmt.Fprintln(opts.Out, header)
	rec := &recorder{ops: map[string]*opStats{}, start: time.Now()}
	sum := &Summary{Workload: opts.Workload, Ops: map[string]*OpSummary{}, Options: map[string]any{
		"threads": opts.Threads, "connections": opts.Connections, "ops": opts.Ops, "duration": opts.Duration.String(),
		"keys": opts.Keys, "preload": opts.Preload, "warmup": opts.Warmup, "key_size": opts.KeySize, "value_size": opts.ValueSize, "distribution": opts.Distribution,
		"consistency": opts.Consistency, "replication_factor": opts.ReplicationFactor, "rate": opts.Rate, "seed": opts.Seed,
		"ratio": opts.Ratio, "mix": opts.Mix, "overwrite": opts.Overwrite, "nodes": opts.Nodes, "port": opts.Port, "keyspace": opts.Keyspace, "token_aware": opts.TokenAware,
		"verify": opts.Verify, "verify_share": opts.VerifyShare}}
	stop := make(chan struct{})
	var issued atomic.Int64
	var wg sync.WaitGroup
	pace := newPacer(opts.Rate)
	deadline := time.Time{}
	if opts.Ops == 0 {
		deadline = rec.start.Add(opts.Duration)
	}
	for t := 0; t < opts.Threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(opts.Seed, uint64(t)+1))
			for {
				if opts.Ops > 0 && issued.Add(1) > opts.Ops {
					return
				}
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				select {
				case <-stop:
					return
				case <-opts.Interrupt:
					return
				default:
				}
				pace.wait()
				op := pick(mix, r)
				start := time.Now()
				err := w.do(op, r)
				rec.record(op, time.Since(start), err)
			}
		}(t)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	second := 0
	var lastDone, lastErrs, lastStale int64
	lastAt := rec.start
	var lastInterval float64
	minutes := newMinuteWindow()
	report := func() {
		second++
		now := time.Now()
		interval := now.Sub(lastAt).Seconds()
		lastAt, lastInterval = now, interval
		rec.mu.Lock()
		merged := newHist()
		for _, st := range rec.ops {
			merged.Merge(st.second)
			st.second.Reset()
		}
		rec.mu.Unlock()
		done, errs := rec.done.Load(), rec.errs.Load()
		ss := SecondStats{Second: second, Interval: intervalOf(done-lastDone, errs-lastErrs, interval, merged)}
		lastDone, lastErrs = done, errs
		minutes.add(ss.Ops, ss.Errors, merged)
		if w.verify != nil {
			stale := w.verify.stale.Load()
			ss.Stale, lastStale = stale-lastStale, stale
		}
		sum.PerSecond = append(sum.PerSecond, ss)
		progress := "-"
		if opts.Ops > 0 {
			progress = fmt.Sprintf("%.1f%%", 100*float64(done)/float64(opts.Ops))
		}
		line := fmt.Sprintf("%8.1f %10.0f %9.3f %9.3f %8d %9s", now.Sub(rec.start).Seconds(), ss.OpsPerSec, ss.P50, ss.P99, ss.Errors, progress)
		if w.verify != nil {
			line += fmt.Sprintf(" %8d", ss.Stale)
		}
		fmt.Fprintln(opts.Out, line)
	}
loop:
	for {
		select {
		case <-ticker.C:
			report()
		case <-finished:
			break loop
		}
	}
	close(stop)
	elapsed := time.Since(rec.start).Seconds()
	if done := rec.done.Load(); done > lastDone {
		if n := len(sum.PerSecond); n > 0 && time.Since(lastAt) < time.Second/4 {
			// Operations in flight at the deadline end just after it:
			// they join the last interval rather than make one of a few
			// milliseconds.
			last := &sum.PerSecond[n-1]
			last.Ops += done - lastDone
			last.Errors += rec.errs.Load() - lastErrs
			if w.verify != nil {
				last.Stale += w.verify.stale.Load() - lastStale
			}
			last.OpsPerSec = float64(last.Ops) / (lastInterval + time.Since(lastAt).Seconds())
			minutes.late(done - lastDone)
		} else {
			report()
		}
	}
	sum.PerMinute = minutes.minutes()
	sum.Seconds, sum.Total = elapsed, rec.done.Load()
	for op, st := range rec.ops {
		h := st.all
		o := &OpSummary{Count: h.TotalCount(), OpsPerSec: float64(h.TotalCount()) / elapsed,
			Mean: ms(h.Mean()), P50: ms(float64(h.ValueAtQuantile(50))), P95: ms(float64(h.ValueAtQuantile(95))),
			P99: ms(float64(h.ValueAtQuantile(99))), P999: ms(float64(h.ValueAtQuantile(99.9))),
			P9999: ms(float64(h.ValueAtQuantile(99.99))), Max: ms(float64(h.Max())), Errors: st.errors}
		for _, q := range []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100} {
			o.Distribution = append(o.Distribution, [2]float64{q, ms(float64(h.ValueAtQuantile(q)))})
		}
		o.Count += int64(sumErrors(st.errors))
		sum.Ops[op] = o
	}
	printSummary(opts.Out, sum)
	if w.verify != nil {
		sum.Verify = w.readBack(opts.Out)
		printVerify(opts.Out, sum.Verify)
	}
	if opts.JSON != "" {
		if err := writeJSON(opts.JSON, sum); err != nil {
			return sum, err
		}
	}
	if opts.Plot != "" {
		if err := writePlot(opts.Plot, sum); err != nil {
			return sum, err
		}
	}
	if sum.Verify != nil {
		return sum, sum.Verify.verdict()
	}
	return sum, nil
}

func sumErrors(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func pick(mix []weighted, r *rand.Rand) string {
	total := 0
	for _, w := range mix {
		total += w.weight
	}
	x := r.IntN(total)
	for _, w := range mix {
		if x < w.weight {
			return w.op
		}
		x -= w.weight
	}
	return mix[len(mix)-1].op
}

func printSummary(out io.Writer, s *Summary) {
	fmt.Fprintf(out, "\nResults (%s, %.1f s, %d operations):\n", s.Workload, s.Seconds, s.Total)
	fmt.Fprintf(out, "%-18s %9s %10s %9s %9s %9s %9s %9s %9s %9s\n", "op", "count", "ops/s", "mean(ms)", "p50", "p95", "p99", "p99.9", "p99.99", "max")
	for _, op := range slices.Sorted(mapKeys(s.Ops)) {
		o := s.Ops[op]
		fmt.Fprintf(out, "%-18s %9d %10.0f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", op, o.Count, o.OpsPerSec,
			o.Mean, o.P50, o.P95, o.P99, o.P999, o.P9999, o.Max)
		kinds := slices.Sorted(mapKeys(o.Errors))
		for _, k := range kinds {
			fmt.Fprintf(out, "  errors: %s: %d\n", k, o.Errors[k])
		}
	}
	if len(s.PerMinute) == 0 {
		return
	}
	fmt.Fprintf(out, "\n%-8s %8s %10s %9s %9s %9s %9s %9s\n", "minute", "seconds", "ops/s", "p50", "p99", "p99.9", "max", "errors")
	for _, m := range s.PerMinute {
		fmt.Fprintf(out, "%-8d %8d %10.0f %9.3f %9.3f %9.3f %9.3f %9d\n", m.Minute, m.Seconds, m.OpsPerSec, m.P50, m.P99, m.P999, m.Max, m.Errors)
	}
}

// pacer spaces operations to a rate.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return &pacer{}
	}
	return &pacer{interval: time.Duration(float64(time.Second) / rate), next: time.Now()}
}

func (p *pacer) wait() {
	if p.interval == 0 {
		return
	}
	p.mu.Lock()
	at := p.next
	p.next = p.next.Add(p.interval)
	if now := time.Now(); p.next.Before(now) {
		p.next = now
	}
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
}

// workload runs operations.
type workload struct {
	s       *gocql.Session
	ks      string
	opts    *Options
	chooser keyChooser
	nextKey atomic.Int64 // the next new key
	verify  *verifier    // nil without --verify
}

func (w *workload) keyBytes(k int64) []byte {
	b := make([]byte, w.opts.KeySize)
	binary.BigEndian.PutUint64(b, uint64(k))
	return b
}

func (w *workload) value(r *rand.Rand) []byte {
	v := make([]byte, w.opts.ValueSize)
	for i := 0; i+8 <= len(v); i += 8 {
		binary.LittleEndian.PutUint64(v[i:], r.Uint64())
	}
	return v
}

func (w *workload) write(key int64, r *rand.Rand) error {
	v := w.value(r)
	q := w.s.Query("INSERT INTO "+w.ks+".kv (key, value) VALUES (?, ?)", w.keyBytes(key), v)
	if w.verify == nil {
		return q.Exec()
	}
	// The write's own timestamp names it in the ledger and in what a
	// read finds.
	done := written{ts: w.verify.ledger.timestamp(), hash: w.verify.ledger.hash(v)}
	if err := q.WithTimestamp(done.ts).Exec(); err != nil {
		return err
	}
	w.verify.ledger.acked(key, done)
	return nil
}

// plainRead reads key's value; a key not written yet is a read all the
// same.
func (w *workload) plainRead(key int64) error {
	var v []byte
	err := w.s.Query("SELECT value FROM "+w.ks+".kv WHERE key = ?", w.keyBytes(key)).Scan(&v)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil
	}
	return err
}

func (w *workload) existing(r *rand.Rand) int64 {
	return w.chooser.next(r, max(w.opts.Keys, w.opts.Preload))
}

func (w *workload) do(op string, r *rand.Rand) error {
	switch op {
	case opInsert:
		return w.write(w.nextKey.Add(1)-1, r)
	case opRewrite:
		return w.write(w.existing(r), r)
	case opRead:
		_, err := w.checkedRead(w.existing(r), r)
		return err
	case opScan:
		iter := w.s.Query("SELECT key FROM "+w.ks+".kv WHERE token(key) >= token(?) LIMIT 10", w.keyBytes(w.existing(r))).Iter()
		var k []byte
		for iter.Scan(&k) {
		}
		return iter.Close()
	case opRMW:
		key := w.existing(r)
		if _, err := w.checkedRead(key, r); err != nil {
			return err
		}
		return w.write(key, r)
	case opCAS:
		// Whether it applied (a key not preloaded does not exist) is no
		// error: the round ran either way.
		_, err := w.s.Query("UPDATE "+w.ks+".kv SET value = ? WHERE key = ? IF EXISTS", w.value(r), w.keyBytes(w.existing(r))).ScanCAS()
		return err
	case opIncrement:
		return w.s.Query("UPDATE "+w.ks+".counts SET n = n + 1 WHERE key = ?", w.keyBytes(w.existing(r))).Exec()
	}
	return fmt.Errorf("unknown operation %s", op)
}

// writeRange writes keys [from, to) with the run's threads, untimed.
// loadRetries is how often a preload or warm-up write is tried: a node
// that is briefly overloaded answers a timeout, and cassandra-stress
// retries its writes (9 times) rather than give up the run.
const loadRetries = 10

// writeRetrying writes key k, trying again after a pause that grows.
func (w *workload) writeRetrying(k int64, r *rand.Rand) error {
	var err error
	for attempt := 1; attempt <= loadRetries; attempt++ {
		if err = w.write(k, r); err == nil {
			return nil
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	return fmt.Errorf("key %d, %d tries: %w", k, loadRetries, err)
}

func (w *workload) writeRange(from, to int64) error {
	var next atomic.Int64
	next.Store(from)
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for t := 0; t < w.opts.Threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(w.opts.Seed, uint64(t)+1000))
			for {
				k := next.Add(1) - 1
				if k >= to {
					return
				}
				if err := w.writeRetrying(k, r); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}(t)
	}
	wg.Wait()
	return firstErr
}
