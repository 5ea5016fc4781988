package request

import (
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/tracing"
)

// Slice shapes what a read takes of one partition.
type Slice struct {
	// Start and End bound the clustering rows, as mutation.StartBound and
	// mutation.EndBound encode them; nil is open.
	Start, End []byte
	// Reverse returns rows in descending clustering order.
	Reverse bool
	// Limit is the most live rows returned; 0 is no limit.
	Limit int
	// Now is the read's time in seconds: TTLs expire against it.
	Now int64
	// Trace records what the read does, on this node (nil: untraced). It
	// is not sent: a replica joins the trace its message carries.
	Trace *tracing.Trace
	// Warnings collects what a read on this node tells the client (a
	// tombstone warning); nil takes none. It is not sent: as in Cassandra
	// 4.1 (read_thresholds_enabled false), other replicas' warnings stay
	// in their logs.
	Warnings *[]string
}

// PartitionRead reads a slice of one partition.
type PartitionRead struct {
	Key []byte // the partition key bytes
	Slice
	// Consistency is how many replicas must answer; ANY (the zero value,
	// which no client may send for a read) reads at ONE.
	Consistency Consistency
}

// RangeRead reads a table's partitions in token order.
type RangeRead struct {
	Limit int // live rows at most over all partitions; 0: no limit
	// PerPartitionLimit is the most live rows of each partition; 0: no
	// limit.
	PerPartitionLimit int
	Now               int64
	// After, when set, is a partition key: the read starts with the
	// partition after it.
	After []byte
	// From and To bound the partitions by token: From inclusive, To
	// exclusive; nil is open.
	From, To *partitioner.Token
	// Consistency is how many replicas must answer.
	Consistency Consistency
	// Trace records what the read does (nil: untraced), as Slice's.
	Trace *tracing.Trace
	// Index, when set, reads only the partitions a secondary index finds
	// its terms in (and any a replica cannot rule out): the caller keeps
	// the rows that match.
	Index *IndexRead
}

// IndexRead is a secondary index's part of a range read: the index (its
// storage name) and the terms wanted, between Lo and Hi (nil: open), each
// bound included when its flag says.
type IndexRead struct {
	Index                    string
	Lo, Hi                   []byte
	LoInclusive, HiInclusive bool
	// Vector, of a vector index, asks instead for the partitions of the
	// Nearest vectors to it (a vector<float, n> value) each source has.
	Vector  []byte
	Nearest int
}

// ReadLevel is the level a read runs at: ANY, the zero value, is ONE.
func ReadLevel(c Consistency) Consistency {
	if c == Any {
		return One
	}
	return c
}

// Partition is what a read found of a partition: live data only.
type Partition struct {
	Key []byte
	// Static is the live static row, or nil.
	Static *mutation.Row
	Rows   []Row
}

// IsEmpty reports whether nothing live was found.
func (p *Partition) IsEmpty() bool { return p.Static == nil && len(p.Rows) == 0 }

// Row is a live clustering row.
type Row struct {
	Clustering []byte // the clustering, as mutation encodes it
	Row        *mutation.Row
}

// RawPartition is a replica's answer to a range read before
// reconciliation: a partition's entries as the replica holds them,
// deletions and all, in key order.
type RawPartition struct {
	Key     []byte
	Entries []mutation.Entry
}
