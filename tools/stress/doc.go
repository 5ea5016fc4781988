// Package stress is `sibyl stress`: a load generator in the spirit of
// cassandra-stress and YCSB, speaking CQL through gocql to any
// Cassandra-compatible cluster. Workloads: write, read, mixed, dynamo (B3
// of the benchmark rules), ycsb-a to ycsb-f, lwt (conditional
// rewrites: lightweight transactions) and counter (increments).
//
// Owns: workloads and their key choice (uniform, zipfian, sequential,
// latest), pacing, latency recording (HdrHistogram), the live line, the
// summary, the JSON and HTML reports, and --verify's ledger of
// acknowledged writes with its checks of reads against it.
// Does not own: anything of the server.
// May import: gocql, hdrhistogram-go.
// Must not import: any server package.
//
// Concurrency: Run starts the worker goroutines and returns once they are
// done.
package stress
