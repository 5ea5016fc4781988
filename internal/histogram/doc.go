// Package histogram owns the node's distributions: request latencies,
// SSTables and tombstones per read, rows per read. Each is an
// HdrHistogram (github.com/HdrHistogram/hdrhistogram-go, two significant
// digits) of everything since the node started, which Prometheus's
// cumulative buckets are read from, and a few one-minute windows, which
// the percentiles operators look at are read from (nodetool's histograms,
// the latency virtual tables): recent, as Cassandra's decaying
// reservoirs are.
//
// Owns: Histogram (record, rotate, read), Summary (percentiles of the
// recent windows), and the cumulative buckets of Prometheus's form.
// Does not own: what is recorded where (the coordinator, storage), how
// often windows rotate (the node, each minute), the exposition
// (node/metrics.go).
// May import: hdrhistogram-go.
// Must not import: anything of Sibyl's.
//
// Concurrency: a Histogram is safe for concurrent use. Its memory is
// taken at its first record, so that the histograms of idle tables cost
// a pointer.
package histogram
