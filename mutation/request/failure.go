package request

import (
	"fmt"
	"strings"
)

// Unavailable is a request refused before anything was sent: fewer
// replicas alive than its level needs.
type Unavailable struct {
	Consistency Consistency
	Required    int // replicas the level needs (in DataCenter for EACH_QUORUM)
	Alive       int // of those, alive
	// DataCenter names the data centre short of replicas, for EACH_QUORUM.
	DataCenter string
}

func (e *Unavailable) Error() string {
	if e.DataCenter != "" {
		return fmt.Sprintf("Cannot achieve consistency level %s in DC %s", e.Consistency, e.DataCenter)
	}
	return fmt.Sprintf("Cannot achieve consistency level %s", e.Consistency)
}

// The write types of WriteTimeout and WriteFailure, as the protocol names
// them.
const (
	WriteSimple        = "SIMPLE"
	WriteBatch         = "BATCH"
	WriteUnloggedBatch = "UNLOGGED_BATCH"
	WriteBatchLog      = "BATCH_LOG"
	// WriteCAS is a lightweight transaction's Paxos round (and, as
	// Cassandra 4.1's Paxos reports it, its commit).
	WriteCAS = "CAS"
	// WriteCounter is a write of counter tables.
	WriteCounter = "COUNTER"
)

// WriteTimeout is a write that had fewer acknowledgements than its level
// needs when its time ran out.
type WriteTimeout struct {
	Consistency Consistency
	Received    int // acknowledgements, at most BlockFor-1 as Cassandra reports them
	BlockFor    int
	WriteType   string
	// Contentions is how many times a lightweight transaction's round was
	// beaten by another and tried again (WriteCAS).
	Contentions int
}

func (e *WriteTimeout) Error() string {
	if e.WriteType == WriteCAS {
		return fmt.Sprintf("CAS operation timed out: received %d of %d required responses after %d contention retries",
			e.Received, e.BlockFor, e.Contentions)
	}
	return fmt.Sprintf("Operation timed out - received only %d responses.", e.Received)
}

// CASWriteUnknown is a lightweight transaction whose proposal some
// replicas accepted, but not a quorum, before a later round got in: the
// later round may or may not finish it, so whether it applied is unknown.
type CASWriteUnknown struct {
	Consistency Consistency
	Received    int // replicas that accepted
	BlockFor    int
}

func (e *CASWriteUnknown) Error() string {
	return fmt.Sprintf("CAS operation result is unknown - proposal accepted by %d but not a quorum.", e.Received)
}

// ReadTimeout is a read that had fewer answers than its level needs when
// its time ran out.
type ReadTimeout struct {
	Consistency Consistency
	Received    int
	BlockFor    int
	DataPresent bool // the replica asked for the data answered
}

func (e *ReadTimeout) Error() string {
	return fmt.Sprintf("Operation timed out - received only %d responses.", e.Received)
}

// FailureReason is why a replica failed a request, by the protocol's
// reason code.
type FailureReason uint16

// The reasons Sibyl reports (Cassandra's RequestFailureReason codes).
const (
	ReasonUnknown            FailureReason = 0 // also an unreachable replica's
	ReasonTooManyTombstones  FailureReason = 1
	ReasonTimeout            FailureReason = 2
	ReasonIncompatibleSchema FailureReason = 3
)

var reasonNames = [...]string{"UNKNOWN", "READ_TOO_MANY_TOMBSTONES", "TIMEOUT", "INCOMPATIBLE_SCHEMA"}

func (r FailureReason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("REASON_%d", uint16(r))
}

// ReplicaFailed is one replica's failure of a request.
type ReplicaFailed struct {
	Replica string // its address
	Reason  FailureReason
}

// Failure is a read or write that enough replicas failed (rather than
// did not answer in time) that its level can no longer be met.
type Failure struct {
	Write       bool // a WriteFailure; else a ReadFailure
	Consistency Consistency
	Received    int
	BlockFor    int
	Failures    []ReplicaFailed
	DataPresent bool   // a read's: the replica asked for the data answered
	WriteType   string // a write's
	// Port is the internode port the replicas' addresses are shown with.
	Port int
}

func (e *Failure) Error() string {
	reasons := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		reasons[i] = fmt.Sprintf("%s from /%s:%d", f.Reason, f.Replica, e.Port)
	}
	return fmt.Sprintf("Operation failed - received %d responses and %d failures: %s", e.Received, len(e.Failures), strings.Join(reasons, ", "))
}

// TombstoneOverwhelming is a read a replica gave up because it met more
// tombstones than tombstone_failure_threshold allows; the coordinator
// answers it with a ReadFailure naming READ_TOO_MANY_TOMBSTONES.
type TombstoneOverwhelming struct {
	Tombstones int
	// Query is the read as CQL, Token and Key where it stopped: for the
	// replica's log.
	Query, Token, Key string
}

// TombstoneOverwhelmingPrefix starts TombstoneOverwhelming's message,
// by which a coordinator knows it in a remote replica's failure.
const TombstoneOverwhelmingPrefix = "Scanned over "

func (e *TombstoneOverwhelming) Error() string {
	return fmt.Sprintf(TombstoneOverwhelmingPrefix+"%d tombstones during query '%s' (last scanned row token was %s and partion key was (%s)); query aborted",
		e.Tombstones, e.Query, e.Token, e.Key)
}

// TruncateFailure is a truncate a node failed.
type TruncateFailure struct{ Err error }

func (e *TruncateFailure) Error() string { return "Error during truncate: " + e.Err.Error() }
func (e *TruncateFailure) Unwrap() error { return e.Err }
