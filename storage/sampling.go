package storage

import (
	"fmt"

	"github.com/sibyldb/sibyl/internal/topk"
)

// Sampling is one toppartitions session of a table: the partitions its
// local reads and writes touched, by partition key bytes, in bounded
// summaries (Cassandra's samplers: READS, WRITES, WRITE_SIZE and
// LOCAL_READ_TIME), and the Paxos contentions its coordinator reports
// (CAS_CONTENTIONS).
type Sampling struct {
	// Reads and Writes count the reads and writes of each partition.
	Reads, Writes *topk.Summary
	// WriteSize keeps each partition's largest write (encoded bytes);
	// ReadTime each partition's slowest read (microseconds).
	WriteSize, ReadTime *topk.Summary
	// CASContentions counts the lightweight transactions of each
	// partition that lost a Paxos round to another and tried again.
	CASContentions *topk.Summary
}

// StartSampling starts sampling the table's partitions, each summary
// keeping at most capacity of them, until StopSampling. One sampling
// runs at a time.
func (t *Table) StartSampling(capacity int) (*Sampling, error) {
	s := &Sampling{Reads: topk.New(capacity), Writes: topk.New(capacity), WriteSize: topk.New(capacity), ReadTime: topk.New(capacity),
		CASContentions: topk.New(capacity)}
	if !t.sampling.CompareAndSwap(nil, s) {
		return nil, fmt.Errorf("a sampling of %s.%s is already running", t.opts.Keyspace, t.opts.Name)
	}
	return s, nil
}

// StopSampling ends a sampling StartSampling began.
func (t *Table) StopSampling(s *Sampling) { t.sampling.CompareAndSwap(s, nil) }

// SampleContention counts a Paxos contention of one of the table's
// partitions in the sampling running, if any.
func (t *Table) SampleContention(key []byte) {
	if s := t.sampling.Load(); s != nil {
		s.CASContentions.Add(string(key), 1)
	}
}
