package clients

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/tools/stress"
)

// TestStressWorkloads runs each workload briefly against a node: the
// operations counted add up to --ops, what the write workload wrote reads
// back, and the JSON report's totals match the summary.
func TestStressWorkloads(t *testing.T) {
	_, cluster := startNode(t)
	dir := t.TempDir()
	run := func(o stress.Options) *stress.Summary {
		t.Helper()
		var out bytes.Buffer
		o.Nodes, o.Port, o.Threads, o.Seed, o.Out = []string{"127.0.0.1"}, cluster.Port, 8, 1, &out
		sum, err := stress.Run(o)
		if err != nil {
			t.Fatalf("%s: %v\n%s", o.Workload, err, out.String())
		}
		var total int64
		for op, s := range sum.Ops {
			if len(s.Errors) > 0 {
				t.Errorf("%s: %s errors %v", o.Workload, op, s.Errors)
			}
			total += s.Count
		}
		if o.Ops > 0 && total != o.Ops {
			t.Errorf("%s: %d operations counted, want %d", o.Workload, total, o.Ops)
		}
		// The series adds up to the total, each interval's rate over its
		// own length (the last one is shorter than a second).
		var seriesOps int64
		for _, sec := range sum.PerSecond {
			seriesOps += sec.Ops
			if sec.Ops > 0 && sec.OpsPerSec <= 0 {
				t.Errorf("%s: second %d: %d operations at %v/s", o.Workload, sec.Second, sec.Ops, sec.OpsPerSec)
			}
		}
		if seriesOps != sum.Total || sum.Total != total {
			t.Errorf("%s: the per-second series adds up to %d operations, the total is %d, the operations %d", o.Workload, seriesOps, sum.Total, total)
		}
		if !strings.Contains(out.String(), "Results ("+o.Workload) {
			t.Errorf("%s printed no summary:\n%s", o.Workload, out.String())
		}
		return sum
	}
	jsonFile, plotFile := filepath.Join(dir, "w.json"), filepath.Join(dir, "w.html")
	sum := run(stress.Options{Workload: "write", Ops: 500, Keys: 500, JSON: jsonFile, Plot: plotFile})
	s := session(t, cluster)
	var n int
	if err := s.Query("SELECT count(*) FROM stress.kv").Scan(&n); err != nil || n != 500 {
		t.Fatalf("the write workload left %d rows, %v", n, err)
	}
	var report stress.Summary
	raw, err := os.ReadFile(jsonFile)
	if err != nil || json.Unmarshal(raw, &report) != nil {
		t.Fatalf("the JSON report: %v", err)
	}
	if report.Total != sum.Total || report.Ops["insert"].Count != 500 || len(report.PerSecond) == 0 {
		t.Fatalf("JSON report total %d, inserts %v, %d seconds", report.Total, report.Ops["insert"], len(report.PerSecond))
	}
	if page, _ := os.ReadFile(plotFile); !bytes.Contains(page, []byte("<svg")) || bytes.Contains(page, []byte("<script")) {
		t.Fatal("the plot page has no chart, or needs scripts")
	}
	for _, o := range []stress.Options{
		{Workload: "read", Ops: 300, Keys: 500},
		{Workload: "mixed", Ops: 300, Keys: 500, Ratio: "1:3", Distribution: "zipfian"},
		{Workload: "dynamo", Ops: 300, Preload: 200, Mix: 4, ValueSize: 1500},
		{Workload: "ycsb-a", Ops: 300, Keys: 500, Distribution: "zipfian"},
		{Workload: "ycsb-b", Ops: 200, Keys: 500},
		{Workload: "ycsb-c", Ops: 200, Keys: 500, Distribution: "sequential"},
		{Workload: "ycsb-d", Ops: 200, Keys: 500},
		{Workload: "ycsb-e", Ops: 200, Keys: 500},
		{Workload: "ycsb-f", Ops: 200, Keys: 500},
		{Workload: "mixed", Duration: 1200 * time.Millisecond, Keys: 500, Rate: 500},
	} {
		run(o)
	}
	// Dynamo's inserts follow the preloaded and warm-up keys, so each one adds a row.
	dyn := run(stress.Options{Workload: "dynamo", Keyspace: "dyn", Ops: 300, Preload: 200, Warmup: 50, Mix: 1, ValueSize: 100})
	if err := s.Query("SELECT count(*) FROM dyn.kv").Scan(&n); err != nil || int64(n) != 250+dyn.Ops["insert"].Count {
		t.Fatalf("dynamo left %d rows after %d inserts, %v", n, dyn.Ops["insert"].Count, err)
	}
	// --overwrite writes keys of the key space again: 400 writes over 40
	// keys leave 40 rows at most.
	over := run(stress.Options{Workload: "write", Keyspace: "over", Ops: 400, Keys: 40, Overwrite: true})
	if err := s.Query("SELECT count(*) FROM over.kv").Scan(&n); err != nil || n == 0 || n > 40 || over.Ops["rewrite"].Count != 400 {
		t.Fatalf("400 overwrites of 40 keys left %d rows (%v rewrites), %v", n, over.Ops["rewrite"], err)
	}
	// lwt's conditional rewrites apply to the preloaded keys only; the
	// counter workload's increments add up to its operations.
	lwt := run(stress.Options{Workload: "lwt", Keyspace: "lwt", Ops: 200, Keys: 50, Preload: 50})
	var value []byte
	if err := s.Query("SELECT count(*) FROM lwt.kv").Scan(&n); err != nil || n != 50 || lwt.Ops["cas"].Count != 200 {
		t.Fatalf("200 conditional rewrites of 50 preloaded keys left %d rows (%v), %v", n, lwt.Ops["cas"], err)
	}
	if err := s.Query("SELECT value FROM lwt.kv LIMIT 1").Scan(&value); err != nil || len(value) != 128 {
		t.Fatalf("a conditionally rewritten value of %d bytes, %v", len(value), err)
	}
	run(stress.Options{Workload: "counter", Keyspace: "ctr", Ops: 300, Keys: 20})
	var counted, c int64
	iter := s.Query("SELECT n FROM ctr.counts").Iter()
	for iter.Scan(&c) {
		counted += c
	}
	if err := iter.Close(); err != nil || counted != 300 {
		t.Fatalf("300 increments add up to %d, %v", counted, err)
	}
	for _, o := range []stress.Options{{Workload: "lwt", Verify: true}, {Workload: "counter", Verify: true}} {
		if _, err := stress.Run(o); err == nil || !strings.Contains(err.Error(), "--verify: not with "+o.Workload) {
			t.Errorf("--verify with %s: %v", o.Workload, err)
		}
	}
	if _, err := stress.Run(stress.Options{Workload: "nope"}); err == nil || !strings.Contains(err.Error(), `workload "nope" is not one of`) {
		t.Fatalf("an unknown workload: %v", err)
	}
}

// TestStressVerify runs --verify against a node twice: once clean (every
// acknowledged write read back, no stale read), and once over keys whose
// writes a tombstone from the future shadows, which it must report as
// lost and stale, ending the run with ErrVerifyFailed.
func TestStressVerify(t *testing.T) {
	_, cluster := startNode(t)
	run := func(o stress.Options) (*stress.Summary, string, error) {
		t.Helper()
		var out bytes.Buffer
		o.Nodes, o.Port, o.Threads, o.Seed, o.Out, o.Verify = []string{"127.0.0.1"}, cluster.Port, 8, 1, &out, true
		sum, err := stress.Run(o)
		if sum == nil || sum.Verify == nil {
			t.Fatalf("%s: no verify summary: %v\n%s", o.Workload, err, out.String())
		}
		return sum, out.String(), err
	}
	sum, out, err := run(stress.Options{Workload: "mixed", Keyspace: "verified", Ops: 2000, Keys: 200, Preload: 200, Overwrite: true})
	if v := sum.Verify; err != nil || v.Checked == 0 || v.Stale != 0 || v.ReadBack != 200 || v.Lost != 0 || v.Unreadable != 0 || !v.Overlapping {
		t.Fatalf("a clean run: %+v, %v\n%s", v, err, out)
	}
	if !strings.Contains(out, "Verify: ") || !strings.Contains(out, "Reading back 200 acknowledged writes") {
		t.Fatalf("the output has no verify lines:\n%s", out)
	}

	s := session(t, cluster)
	for _, q := range []string{
		"CREATE KEYSPACE shadowed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE shadowed.kv (key blob PRIMARY KEY, value blob)",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	future := time.Now().Add(time.Hour).UnixMicro()
	const shadowed = 50
	for k := range shadowed {
		if err := s.Query("DELETE FROM shadowed.kv USING TIMESTAMP ? WHERE key = ?", future, binary.BigEndian.AppendUint64(nil, uint64(k))).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	jsonFile := filepath.Join(t.TempDir(), "v.json")
	sum, out, err = run(stress.Options{Workload: "ycsb-a", Keyspace: "shadowed", Ops: 1000, Keys: 100, Preload: 100, JSON: jsonFile})
	if v := sum.Verify; !errors.Is(err, stress.ErrVerifyFailed) || v.Lost != shadowed || v.ReadBack != 100 || v.Stale == 0 || v.Stale > v.Checked {
		t.Fatalf("writes under a tombstone from the future: %+v, %v\n%s", v, err, out)
	}
	var report stress.Summary
	if raw, err := os.ReadFile(jsonFile); err != nil || json.Unmarshal(raw, &report) != nil || report.Verify == nil || *report.Verify != *sum.Verify {
		t.Fatalf("the JSON report's verify: %+v, %v", report.Verify, err)
	}
	var stalePerSecond int64
	for _, sec := range report.PerSecond {
		stalePerSecond += sec.Stale
	}
	if stalePerSecond != sum.Verify.Stale {
		t.Fatalf("the per-second stale reads add up to %d, the summary says %d", stalePerSecond, sum.Verify.Stale)
	}
}

// TestStressInterrupted: a run long by its duration ends soon after its
// Interrupt closes, and still reads back every write it acknowledged.
func TestStressInterrupted(t *testing.T) {
	_, cluster := startNode(t)
	interrupt := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(interrupt) })
	var out bytes.Buffer
	began := time.Now()
	sum, err := stress.Run(stress.Options{Workload: "write", Keyspace: "interrupted", Duration: time.Hour, Nodes: []string{"127.0.0.1"},
		Port: cluster.Port, Threads: 4, Seed: 1, Out: &out, Verify: true, Interrupt: interrupt})
	if err != nil || sum == nil || sum.Verify == nil {
		t.Fatalf("an interrupted run: %v\n%s", err, out.String())
	}
	if took := time.Since(began); took > 5*time.Minute || sum.Seconds > 60 || sum.Total == 0 || sum.Verify.ReadBack != sum.Total || sum.Verify.Lost != 0 {
		t.Fatalf("an hour's run interrupted after 2 s: %.1f s, %d operations, verify %+v", sum.Seconds, sum.Total, sum.Verify)
	}
}
