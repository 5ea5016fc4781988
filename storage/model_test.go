package storage

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
)

var modelLong = flag.Bool("model.long", false, "run the randomized model test with many more seeds and steps")

// The model: every write kept as written; reads recompute the expected
// table by folding the writes with the reconcile and shadowing rules.
type modelCell struct {
	pk, ck int // ck -1: static row
	cell   mutation.Cell
}

type modelDeletion struct {
	pk     int
	lo, hi int // clustering range [lo, hi]; lo == hi for a row deletion; -2 for the partition
	del    mutation.DeletionTime
}

type model struct {
	cells     []modelCell
	markers   []modelCell // cell.Timestamp/TTL/LocalDeletionTime describe the marker
	deletions []modelDeletion
	colDels   []modelCell // Column + Timestamp/LocalDeletionTime: complex deletion of m
}

var layout = mutation.ClusteringLayout{{Type: cqltype.IntType}}

func clusteringOf(ck int) []byte {
	b, err := layout.Encode(nil, [][]byte{cqltype.EncodeInt(int32(ck))})
	if err != nil {
		panic(err)
	}
	return b
}

func pkOf(pk int) []byte { return []byte(fmt.Sprintf("p%d", pk)) }

// expected renders what a full read of partition pk must return at now.
func (m *model) expected(pk int, now int64) string {
	partDel := mutation.Live
	for _, d := range m.deletions {
		if d.pk == pk && d.lo == -2 {
			partDel = partDel.Max(d.del)
		}
	}
	shadowOf := func(ck int) mutation.DeletionTime {
		s := partDel
		if ck < 0 {
			return s
		}
		for _, d := range m.deletions {
			if d.pk == pk && d.lo != -2 && d.lo <= ck && ck <= d.hi {
				s = s.Max(d.del)
			}
		}
		return s
	}
	colDel := func(ck int) mutation.DeletionTime {
		s := mutation.Live
		for _, c := range m.colDels {
			if c.pk == pk && c.ck == ck {
				s = s.Max(mutation.DeletionTime{MarkedForDeleteAt: c.cell.Timestamp, LocalDeletionTime: c.cell.LocalDeletionTime})
			}
		}
		return s
	}
	var lines []string
	for ck := -1; ck < 10; ck++ {
		shadow := shadowOf(ck)
		winners := map[string]*mutation.Cell{}
		for i := range m.cells {
			c := &m.cells[i]
			if c.pk != pk || c.ck != ck {
				continue
			}
			key := c.cell.Column + "/" + string(c.cell.Path)
			if w, ok := winners[key]; ok {
				winners[key] = mutation.Reconcile(w, &c.cell)
			} else {
				winners[key] = &c.cell
			}
		}
		var live []string
		for _, w := range winners {
			if w.IsLive(now) && !shadow.Shadows(w.Timestamp) && !(w.Path != nil && colDel(ck).Shadows(w.Timestamp)) {
				live = append(live, fmt.Sprintf("%s%x=%s@%d", w.Column, w.Path, w.Value, w.Timestamp))
			}
		}
		marker := mutation.NoLiveness
		for _, mk := range m.markers {
			if mk.pk == pk && mk.ck == ck {
				l := mutation.LivenessInfo{Timestamp: mk.cell.Timestamp, TTL: mk.cell.TTL, ExpiresAt: mk.cell.LocalDeletionTime}
				if l.Supersedes(marker) {
					marker = l
				}
			}
		}
		markerLive := marker.IsLive(now) && !shadow.Shadows(marker.Timestamp)
		if len(live) == 0 && !markerLive {
			continue
		}
		sort.Strings(live)
		lines = append(lines, fmt.Sprintf("ck=%d marker=%v %s", ck, markerLive, strings.Join(live, " ")))
	}
	return strings.Join(lines, "\n")
}

// render prints what the engine returned in the model's form.
func render(p *Partition) string {
	var lines []string
	one := func(ck int, r *mutation.Row) {
		var live []string
		for _, c := range r.Cells {
			live = append(live, fmt.Sprintf("%s%x=%s@%d", c.Column, c.Path, c.Value, c.Timestamp))
		}
		sort.Strings(live)
		lines = append(lines, fmt.Sprintf("ck=%d marker=%v %s", ck, !r.Liveness.IsEmpty(), strings.Join(live, " ")))
	}
	if p.Static != nil {
		one(-1, p.Static)
	}
	for _, r := range p.Rows {
		vals, err := layout.Decode(r.Clustering)
		if err != nil {
			return "bad clustering: " + err.Error()
		}
		ck, _ := cqltype.DecodeInt(vals[0])
		one(int(ck), r.Row)
	}
	return strings.Join(lines, "\n")
}

type modelRun struct {
	t      *testing.T
	r      *rand.Rand
	fs     vfs.FS
	now    int64
	e      *Engine
	tbl    *Table
	m      model
	opts   TableOptions
	trace  []string
	parts  int
	seed   uint64
	clock  atomic.Int64 // mr.now for the engine's background goroutines
	eopts  Options
	closed bool
}

var modelTableID = [16]byte{0x5e, 0x1b}

func (mr *modelRun) open() {
	e, err := Open(mr.eopts)
	if err != nil {
		mr.fail("open: %v", err)
	}
	tbl, err := e.OpenTable(mr.opts)
	if err != nil {
		mr.fail("open table: %v", err)
	}
	if _, err := e.Recover(); err != nil {
		mr.fail("recover: %v", err)
	}
	mr.e, mr.tbl = e, tbl
}

func (mr *modelRun) fail(format string, args ...any) {
	mr.t.Helper()
	tail := mr.trace
	if len(tail) > 30 {
		tail = tail[len(tail)-30:]
	}
	mr.t.Fatalf("seed %d: %s\nlast steps:\n  %s\nreplay: go test -tags invariants -run 'TestModel/seed=%d$' ./storage/",
		mr.seed, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "), mr.seed)
}

// ts draws a write timestamp from the current second: ties are frequent,
// and a write never carries a timestamp below a tombstone that compaction
// may already have purged (which in Cassandra too would resurrect data: the
// reason gc_grace_seconds exists).
func (mr *modelRun) ts() int64 { return mr.now*10 + int64(mr.r.IntN(10)) }

func (mr *modelRun) apply(mu *mutation.Mutation, what string) {
	mr.trace = append(mr.trace, what)
	if err := mr.e.Apply(mu); err != nil {
		mr.fail("apply %s: %v", what, err)
	}
}

// step performs one random operation.
func (mr *modelRun) step() {
	r := mr.r
	pk := r.IntN(mr.parts)
	ck := r.IntN(10)
	mu := mutation.NewMutation(modelTableID, pkOf(pk))
	ts := mr.ts()
	switch op := r.IntN(100); {
	case op < 30: // INSERT: marker and cells, maybe with TTL
		row := mutation.NewRow()
		var ttl int32
		if r.IntN(4) == 0 {
			ttl = int32(1 + r.IntN(5))
		}
		row.Liveness = mutation.LivenessInfo{Timestamp: ts, ExpiresAt: mutation.NoDeletionTime}
		if ttl > 0 {
			row.Liveness.TTL, row.Liveness.ExpiresAt = ttl, mr.now+int64(ttl)
		}
		mr.m.markers = append(mr.m.markers, modelCell{pk, ck, mutation.Cell{Timestamp: ts, TTL: ttl, LocalDeletionTime: row.Liveness.ExpiresAt}})
		for _, col := range []string{"a", "b"} {
			if r.IntN(3) == 0 {
				continue
			}
			v := []byte(fmt.Sprintf("%s%d", col, r.IntN(5)))
			c := mutation.LiveCell(col, nil, ts, v)
			if ttl > 0 {
				c = mutation.ExpiringCell(col, nil, ts, ttl, mr.now, v)
			}
			row.Cells = append(row.Cells, c)
			mr.m.cells = append(mr.m.cells, modelCell{pk, ck, c})
		}
		mu.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: row}}
		mr.apply(mu, fmt.Sprintf("insert p%d ck%d ts%d ttl%d %v", pk, ck, ts, ttl, row))
	case op < 45: // UPDATE one cell, or a map element, or the static column
		row := mutation.NewRow()
		var c mutation.Cell
		target := ck
		switch r.IntN(3) {
		case 0:
			c = mutation.LiveCell("b", nil, ts, []byte(fmt.Sprintf("u%d", r.IntN(5))))
		case 1:
			c = mutation.LiveCell("m", []byte{byte('k' + r.IntN(3))}, ts, []byte(fmt.Sprintf("e%d", r.IntN(5))))
		default:
			c = mutation.LiveCell("s", nil, ts, []byte(fmt.Sprintf("s%d", r.IntN(5))))
			target = -1
		}
		row.Cells = []mutation.Cell{c}
		if target < 0 {
			mu.Static = row
		} else {
			mu.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: row}}
		}
		mr.m.cells = append(mr.m.cells, modelCell{pk, target, c})
		mr.apply(mu, fmt.Sprintf("update p%d ck%d %v", pk, target, c))
	case op < 55: // DELETE a cell
		row := mutation.NewRow()
		c := mutation.TombstoneCell([]string{"a", "b"}[r.IntN(2)], nil, ts, mr.now)
		row.Cells = []mutation.Cell{c}
		mu.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: row}}
		mr.m.cells = append(mr.m.cells, modelCell{pk, ck, c})
		mr.apply(mu, fmt.Sprintf("delete cell p%d ck%d %v", pk, ck, c))
	case op < 60: // DELETE the whole collection m
		row := mutation.NewRow()
		d := mutation.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: mr.now}
		row.Columns = []mutation.ColumnDeletion{{Column: "m", Deletion: d}}
		mu.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: row}}
		mr.m.colDels = append(mr.m.colDels, modelCell{pk, ck, mutation.Cell{Column: "m", Timestamp: ts, LocalDeletionTime: mr.now}})
		mr.apply(mu, fmt.Sprintf("delete m p%d ck%d ts%d", pk, ck, ts))
	case op < 68: // DELETE a row
		row := mutation.NewRow()
		row.Deletion = mutation.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: mr.now}
		mu.Rows = []mutation.RowUpdate{{Clustering: clusteringOf(ck), Row: row}}
		mr.m.deletions = append(mr.m.deletions, modelDeletion{pk, ck, ck, row.Deletion})
		mr.apply(mu, fmt.Sprintf("delete row p%d ck%d ts%d", pk, ck, ts))
	case op < 74: // DELETE a clustering range
		lo, hi := ck, ck+r.IntN(4)
		d := mutation.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: mr.now}
		mu.RangeTombstones = []mutation.RangeTombstone{{
			Start: mutation.StartBound(clusteringOf(lo), true), End: mutation.EndBound(clusteringOf(hi), true), Deletion: d}}
		mr.m.deletions = append(mr.m.deletions, modelDeletion{pk, lo, hi, d})
		mr.apply(mu, fmt.Sprintf("delete range p%d [%d,%d] ts%d", pk, lo, hi, ts))
	case op < 77: // DELETE a partition
		mu.Deletion = mutation.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: mr.now}
		mr.m.deletions = append(mr.m.deletions, modelDeletion{pk, -2, -2, mu.Deletion})
		mr.apply(mu, fmt.Sprintf("delete partition p%d ts%d", pk, ts))
	case op < 85:
		mr.trace = append(mr.trace, "flush")
		if err := mr.tbl.Flush(); err != nil {
			mr.fail("flush: %v", err)
		}
	case op < 87:
		mr.trace = append(mr.trace, "compact major")
		if err := mr.tbl.CompactMajor(); err != nil {
			mr.fail("compact major: %v", err)
		}
	case op < 89:
		// What the strategy would run in the background, run here so that
		// seeds without background compaction exercise it too.
		mr.trace = append(mr.trace, "compact by strategy")
		for {
			did, err := mr.tbl.compactOnce()
			if err != nil {
				mr.fail("compact by strategy: %v", err)
			}
			if !did {
				break
			}
		}
	case op < 91:
		mr.reconfigureIndexes()
	case op < 93:
		mr.trace = append(mr.trace, "restart")
		if err := mr.e.Close(); err != nil {
			mr.fail("close: %v", err)
		}
		mr.open()
	default:
		adv := int64(r.IntN(4))
		mr.now += adv
		mr.clock.Store(mr.now)
		mr.trace = append(mr.trace, fmt.Sprintf("clock +%ds", adv))
	}
}

// check reads every partition, forward and in reverse, and compares it
// with the model.
func (mr *modelRun) check() {
	mr.checkLevels()
	mr.checkIndexes()
	for pk := 0; pk < mr.parts; pk++ {
		want := mr.m.expected(pk, mr.now)
		p, err := mr.tbl.ReadPartition(pkOf(pk), ReadQuery{Now: mr.now})
		if err != nil {
			mr.fail("read p%d: %v", pk, err)
		}
		if got := render(p); got != want {
			mr.fail("read p%d at %d:\ngot:\n%s\nwant:\n%s", pk, mr.now, got, want)
		}
		rev, err := mr.tbl.ReadPartition(pkOf(pk), ReadQuery{Now: mr.now, Reverse: true})
		if err != nil {
			mr.fail("reverse read p%d: %v", pk, err)
		}
		if len(rev.Rows) != len(p.Rows) {
			mr.fail("reverse read p%d has %d rows, forward %d", pk, len(rev.Rows), len(p.Rows))
		}
		for i := range rev.Rows {
			if string(rev.Rows[i].Clustering) != string(p.Rows[len(p.Rows)-1-i].Clustering) {
				mr.fail("reverse read p%d is not the forward read reversed", pk)
			}
		}
		mr.checkSlice(pk, p)
	}
	// A token-ordered scan returns the same partitions.
	parts, err := mr.tbl.Scan(ScanQuery{Now: mr.now})
	if err != nil {
		mr.fail("scan: %v", err)
	}
	nonEmpty := 0
	for pk := 0; pk < mr.parts; pk++ {
		if mr.m.expected(pk, mr.now) != "" {
			nonEmpty++
		}
	}
	if len(parts) != nonEmpty {
		mr.fail("scan returned %d partitions, the model has %d with live data", len(parts), nonEmpty)
	}
	for _, p := range parts {
		var pk int
		fmt.Sscanf(string(p.Key), "p%d", &pk)
		if got, want := render(p), mr.m.expected(pk, mr.now); got != want {
			mr.fail("scan p%d:\ngot:\n%s\nwant:\n%s", pk, got, want)
		}
	}
	// The raw scan a replica sends a coordinator resolves, partition by
	// partition, to the same answer.
	raw, err := mr.tbl.ScanEntries(ScanQuery{Now: mr.now})
	if err != nil {
		mr.fail("raw scan: %v", err)
	}
	var resolved []*Partition
	for _, rp := range raw {
		p, err := ResolvePartition(mr.tbl.e.opts.Partitioner, mr.tbl.e.opts.SSTable.TokenLen, rp.Key, rp.Entries, ReadQuery{Now: mr.now})
		if err != nil {
			mr.fail("resolving the raw scan of %q: %v", rp.Key, err)
		}
		if !p.IsEmpty() {
			resolved = append(resolved, p)
		}
	}
	if len(resolved) != len(parts) {
		mr.fail("the raw scan resolves to %d partitions, the scan has %d", len(resolved), len(parts))
	}
	for i := range resolved {
		if render(resolved[i]) != render(parts[i]) {
			mr.fail("raw scan partition %q:\n%s\nthe scan:\n%s", parts[i].Key, render(resolved[i]), render(parts[i]))
		}
	}
}

// checkSlice reads a random clustering slice of partition pk with a random
// limit, in a random direction, and compares it with the full read whole,
// already checked against the model.
func (mr *modelRun) checkSlice(pk int, whole *Partition) {
	r := mr.r
	lo := r.IntN(10)
	hi := lo + r.IntN(10-lo)
	loIncl, hiIncl := r.IntN(2) == 0, r.IntN(2) == 0
	q := ReadQuery{Now: mr.now, Reverse: r.IntN(2) == 0, Limit: r.IntN(4),
		Start: mutation.StartBound(clusteringOf(lo), loIncl), End: mutation.EndBound(clusteringOf(hi), hiIncl)}
	var want []string
	for _, row := range whole.Rows {
		vals, _ := layout.Decode(row.Clustering)
		ck, _ := cqltype.DecodeInt(vals[0])
		if (int(ck) > lo || loIncl && int(ck) == lo) && (int(ck) < hi || hiIncl && int(ck) == hi) {
			want = append(want, string(row.Clustering))
		}
	}
	if q.Reverse {
		slices.Reverse(want)
	}
	if q.Limit > 0 && len(want) > q.Limit {
		want = want[:q.Limit]
	}
	got, err := mr.tbl.ReadPartition(pkOf(pk), q)
	if err != nil {
		mr.fail("slice read p%d: %v", pk, err)
	}
	var gotKeys []string
	for _, row := range got.Rows {
		gotKeys = append(gotKeys, string(row.Clustering))
	}
	what := fmt.Sprintf("slice read p%d [%d %v, %d %v] limit %d reverse %v", pk, lo, loIncl, hi, hiIncl, q.Limit, q.Reverse)
	if !slices.Equal(gotKeys, want) {
		mr.fail("%s: got rows %x, want %x", what, gotKeys, want)
	}
	if (got.Static == nil) != (whole.Static == nil) {
		mr.fail("%s: static row %v, the whole read has %v", what, got.Static, whole.Static)
	}
	// The raw entries a replica sends a coordinator resolve to the same
	// answer, whole and split in two (as two replicas' answers merge).
	raw, err := mr.tbl.ReadPartitionEntries(pkOf(pk), q)
	if err != nil {
		mr.fail("%s: raw entries: %v", what, err)
	}
	half := mr.r.IntN(len(raw) + 1)
	merged := append(append([]mutation.Entry(nil), raw[half:]...), raw[:half]...)
	slices.SortFunc(merged, func(a, b mutation.Entry) int { return bytes.Compare(a.Key, b.Key) })
	for _, entries := range [][]mutation.Entry{raw, merged} {
		resolved, err := ResolvePartition(mr.tbl.e.opts.Partitioner, mr.tbl.e.opts.SSTable.TokenLen, pkOf(pk), entries, q)
		if err != nil {
			mr.fail("%s: resolving raw entries: %v", what, err)
		}
		if render(resolved) != render(got) {
			mr.fail("%s: resolved raw entries:\n%s\nthe read:\n%s", what, render(resolved), render(got))
		}
	}
}

// checkLevels checks that no two SSTables of a level past 0 overlap.
func (mr *modelRun) checkLevels() {
	mr.tbl.mu.Lock()
	defer mr.tbl.mu.Unlock()
	ssts := mr.tbl.summaries()
	for i := range ssts {
		for j := i + 1; j < len(ssts); j++ {
			if ssts[i].level > 0 && ssts[i].level == ssts[j].level && ssts[i].overlaps(&ssts[j]) {
				mr.fail("level %d: SSTables %d and %d overlap", ssts[i].level, mr.tbl.mu.sstables[i].gen, mr.tbl.mu.sstables[j].gen)
			}
		}
	}
}

// compactionCoverage counts, per strategy, what the engine logged of its
// compactions, so that the model test can show it exercised each strategy.
type compactionCoverage struct {
	mu          sync.Mutex
	compactions [3]int
	maxLevel    [3]int
	maxOutputs  [3]int
}

// writer returns a log destination that counts strategy's compactions.
func (c *compactionCoverage) writer(strategy CompactionStrategy) zerolog.LevelWriter {
	return zerolog.LevelWriterAdapter{Writer: writerFunc(func(p []byte) (int, error) {
		var ev struct {
			Message string `json:"message"`
			Outputs int    `json:"outputs"`
			Level   int    `json:"output_level"`
		}
		if json.Unmarshal(p, &ev) == nil && ev.Message == "compacted" {
			c.mu.Lock()
			c.compactions[strategy]++
			c.maxLevel[strategy] = max(c.maxLevel[strategy], ev.Level)
			c.maxOutputs[strategy] = max(c.maxOutputs[strategy], ev.Outputs)
			c.mu.Unlock()
		}
		return len(p), nil
	})}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func runModel(t *testing.T, seed uint64, steps int, coverage *compactionCoverage) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	mr := &modelRun{t: t, r: r, fs: vfs.NewMem(), now: 1_000_000, seed: seed, parts: 1 + r.IntN(4)}
	mr.eopts = Options{
		FS: mr.fs, DataDir: "data", CommitLog: commitlogOptionsFor(r),
		MemtableSize:          int64(1+r.IntN(8)) << 10, // tiny, so flushes also happen on their own
		DisableAutoCompaction: r.IntN(2) == 0,
		CompactionThroughput:  0,
		Now:                   func() time.Time { return time.Unix(mr.clock.Load(), 0) },
	}
	mr.clock.Store(mr.now)
	mr.opts = TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t",
		Compaction: CompactionOptions{
			Strategy:     CompactionStrategy(r.IntN(3)),
			MinThreshold: 2 + r.IntN(3), MinSSTableSize: 1 << 20,
			// Small enough that leveled outputs are cut and levels fill.
			SSTableSize: int64(1+r.IntN(4)) << 8, Fanout: 2 + r.IntN(3),
			// The model's timestamps are ten to a clock second, so this is a
			// window of 1 to 4 seconds.
			Window: time.Duration(10*(1+r.IntN(4))) * time.Microsecond,
		}}
	logger := zerolog.New(coverage.writer(mr.opts.Compaction.Strategy)).Level(zerolog.DebugLevel)
	mr.eopts.Logger = &logger
	mr.opts.Indexes = modelIndexes(r)
	if r.IntN(2) == 0 {
		mr.opts.GCGraceSeconds = NoGCGrace
	} else {
		mr.opts.GCGraceSeconds = int64(1 + r.IntN(10))
	}
	mr.open()
	for i := 0; i < steps; i++ {
		mr.step()
		if i%5 == 0 {
			mr.check()
		}
	}
	mr.check()
	if err := mr.e.Close(); err != nil {
		mr.fail("close: %v", err)
	}
}

// TestModel runs random writes, deletes, TTLs, flushes, compactions and
// restarts against the engine and checks every read against the model.
func TestModel(t *testing.T) {
	seeds, steps := 24, 300
	if *modelLong {
		seeds, steps = 500, 3000
	}
	var coverage compactionCoverage
	ran := 0
	for s := 1; s <= seeds; s++ {
		seed := uint64(s)
		if t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runModel(t, seed, steps, &coverage) }) {
			ran++
		}
	}
	if ran < seeds {
		return // a failure, or -run chose some seeds: coverage means nothing
	}
	t.Logf("compactions by strategy %v, deepest level %v, most outputs %v",
		coverage.compactions, coverage.maxLevel, coverage.maxOutputs)
	for s := SizeTiered; s <= TimeWindow; s++ {
		if coverage.compactions[s] == 0 {
			t.Errorf("no seed ran a %v compaction", s)
		}
	}
	if coverage.maxLevel[Leveled] < 2 || coverage.maxOutputs[Leveled] < 2 {
		t.Errorf("leveled compactions reached level %d with at most %d outputs; the seeds should fill level 2 and cut outputs",
			coverage.maxLevel[Leveled], coverage.maxOutputs[Leveled])
	}
}
