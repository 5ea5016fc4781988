package storage

import (
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/internal/workers"
	"github.com/sibyldb/sibyl/sstable"
)

// TableMetrics are a table's distributions on this node, as Cassandra's
// table metrics keep them: the local latencies of its reads, writes and
// range reads (microseconds, from the moment the engine takes the
// request), and what each partition read went through.
type TableMetrics struct {
	ReadLatency, WriteLatency, RangeLatency *histogram.Histogram
	// SSTablesPerRead counts the SSTables a partition read merged;
	// TombstonesPerRead the tombstones it went through (as the thresholds
	// count them); LivePerRead the live rows it returned.
	SSTablesPerRead, TombstonesPerRead, LivePerRead *histogram.Histogram
	// TombstoneWarnings and TombstoneFailures count the reads past
	// tombstone_warn_threshold, and those given up past
	// tombstone_failure_threshold.
	TombstoneWarnings, TombstoneFailures atomic.Int64
}

// maxLatency bounds the latencies kept: longer ones are recorded as it.
const maxLatency = int64(time.Hour / time.Microsecond)

// maxPerRead bounds the counts of a read.
const maxPerRead = 1 << 30

func newTableMetrics() *TableMetrics {
	return &TableMetrics{ReadLatency: histogram.New(maxLatency), WriteLatency: histogram.New(maxLatency), RangeLatency: histogram.New(maxLatency),
		SSTablesPerRead: histogram.New(maxPerRead), TombstonesPerRead: histogram.New(maxPerRead), LivePerRead: histogram.New(maxPerRead)}
}

// Metrics are the table's distributions.
func (t *Table) Metrics() *TableMetrics { return t.metrics }

// Rotate starts a new window of each of the table's recent figures.
func (m *TableMetrics) Rotate() {
	for _, h := range []*histogram.Histogram{m.ReadLatency, m.WriteLatency, m.RangeLatency, m.SSTablesPerRead, m.TombstonesPerRead, m.LivePerRead} {
		h.Rotate()
	}
}

// since is the microseconds since start.
func since(start time.Time) int64 { return time.Since(start).Microseconds() }

// Stages are the counts of the engine's background work: flushes and
// compactions.
func (e *Engine) Stages() (flushes, compactions workers.StageCounts) {
	return e.flushStage.Counts(), e.compactionStage.Counts()
}

// Tables are the engine's open tables.
func (e *Engine) Tables() []*Table { return e.tables() }

// SSTableHistograms merges the partition size and cell count histograms
// of the table's live SSTables (Cassandra's estimated histograms, which
// nodetool tablehistograms reads), and says how many SSTables there were.
func (t *Table) SSTableHistograms() (sizes, cells histogram.Estimated, sstables int) {
	v := t.acquireView()
	defer v.release()
	sizes, cells = histogram.NewEstimated(histogram.PartitionSizeBuckets), histogram.NewEstimated(histogram.CellCountBuckets)
	for _, s := range v.sstables {
		meta := s.meta()
		sizes.Merge(meta.PartitionSizes)
		cells.Merge(meta.CellCounts)
	}
	return sizes, cells, len(v.sstables)
}

// CacheStats are the block cache's figures.
func (e *Engine) CacheStats() sstable.CacheStats { return e.cache.Stats() }

// StageLimits are how many flushes and compactions may run at once.
func (e *Engine) StageLimits() (flushes, compactions int) {
	return cap(e.flushSlots), cap(e.compactionSlots)
}

// Compacted is how many compactions have finished since the start, and
// what they wrote.
func (e *Engine) Compacted() (compactions, bytes int64) {
	return e.compactions.Load(), e.compactedBytes.Load()
}

// PendingCompactions is the sum of the tables' PendingCompactions.
func (e *Engine) PendingCompactions() int {
	pending := 0
	for _, t := range e.tables() {
		pending += t.PendingCompactions()
	}
	return pending
}
