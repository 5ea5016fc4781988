package request

import (
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/tracing"
)

// CAS is a conditional write of one partition (a lightweight
// transaction), or a read of one at a serial level: the coordinator reads
// the partition as a quorum of its replicas holds it, in a Paxos round,
// and writes what Decide makes of it in that same round.
type CAS struct {
	Key []byte
	// Reads are the slices of the partition the operation looks at (the
	// rows its conditions name; the static row comes with any slice).
	Reads []Slice
	// Serial is the level of the Paxos round (SERIAL or LOCAL_SERIAL);
	// Commit, the level its commit waits for.
	Serial, Commit Consistency
	// Decide sees the partition as it is (the live data of Reads; nil
	// when there is none) and says whether the conditions hold and, if so,
	// what the operation writes: mutations of this partition whose write
	// timestamp is ts, the round's (µs). It may be called once per try of
	// the round; an error ends the operation with that error.
	Decide func(current *Partition, ts int64) (updates []*mutation.Mutation, applied bool, err error)
	// Trace records the round's phases (nil: untraced).
	Trace *tracing.Trace
}
