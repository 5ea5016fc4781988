// Package histogram owns the node's distributions: request latencies,
// SSTables and tombstones per read, rows per read. Each is a few
// one-minute windows of HdrHistograms (github.com/HdrHistogram/hdrhistogram-go,
// two significant digits), which the percentiles operators look at are
// read from (nodetool's histograms): recent, as Cassandra's decaying
// reservoirs are. The windows rotated out are merged into one more, and
// everything since the start, which Prometheus's cumulative buckets are
// read from, is that and the windows: a value is recorded once.
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
