package coordinator

import (
	"cmp"
	"encoding/binary"
	"fmt"

	"github.com/sibyldb/sibyl/cqltype"
)

// Ballot numbers the rounds of Paxos on a partition: a coordinator's
// round may go on only while no replica of its quorum has seen a later
// one. Its time is also the write timestamp of what the round commits, so
// that the commits of a partition's rounds reconcile in the order they were
// decided.
type Ballot struct {
	// Micros is a time in Unix microseconds.
	Micros int64
	// Tie tells apart ballots of one microsecond: random, in 62 bits (a
	// timeuuid's clock sequence and node, less its variant).
	Tie uint64
}

// tieBits is how much of a timeuuid's low half a ballot's Tie fills.
const tieBits = 62

// IsZero reports whether b is no ballot at all (every ballot follows it).
func (b Ballot) IsZero() bool { return b == Ballot{} }

// Compare orders ballots by time, then by Tie.
func (b Ballot) Compare(o Ballot) int {
	if c := cmp.Compare(b.Micros, o.Micros); c != 0 {
		return c
	}
	return cmp.Compare(b.Tie, o.Tie)
}

// After reports whether b is later than o.
func (b Ballot) After(o Ballot) bool { return b.Compare(o) > 0 }

func (b Ballot) String() string { return fmt.Sprintf("%d.%x", b.Micros, b.Tie) }

// latestBallot is the later of a and b.
func latestBallot(a, b Ballot) Ballot {
	if b.After(a) {
		return b
	}
	return a
}

// UUID is the ballot as the version 1 timeuuid system.paxos stores: its
// time in 100 ns ticks, its Tie in the clock sequence and node (variant
// bits 10). Equal times order as the Ties do in the timeuuid's bytes.
func (b Ballot) UUID() []byte {
	return cqltype.TimeUUIDAt(b.Micros*10, 1<<63|b.Tie&(1<<tieBits-1))
}

// BallotFromUUID reads a ballot back from its timeuuid.
func BallotFromUUID(u []byte) (Ballot, error) {
	ticks, low, err := cqltype.TimeUUIDTicks(u)
	if err != nil {
		return Ballot{}, err
	}
	if ticks%10 != 0 || low>>tieBits != 2 {
		return Ballot{}, fmt.Errorf("coordinator: timeuuid %x is not a ballot", u)
	}
	return Ballot{Micros: ticks / 10, Tie: low & (1<<tieBits - 1)}, nil
}

// appendBallot and readBallot are a ballot's fixed-width encoding in the
// Paxos payloads and records: big-endian, so that encodings compare as
// the ballots do.
func appendBallot(dst []byte, b Ballot) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.Micros)^1<<63)
	return binary.BigEndian.AppendUint64(dst, b.Tie)
}

const ballotLen = 16

func ballotFrom(b []byte) (Ballot, error) {
	if len(b) != ballotLen {
		return Ballot{}, fmt.Errorf("coordinator: a ballot of %d bytes", len(b))
	}
	return Ballot{Micros: int64(binary.BigEndian.Uint64(b) ^ 1<<63), Tie: binary.BigEndian.Uint64(b[8:])}, nil
}

// nextBallot is the ballot a coordinator takes for a new round at time
// now (µs): later than every ballot it took before (last) and than min, a
// ballot a replica was seen to hold, so that the round has a chance to be
// promised. tie is fresh randomness.
func nextBallot(now, last int64, min Ballot, tie uint64) Ballot {
	micros := max(now, last+1, min.Micros+1)
	return Ballot{Micros: micros, Tie: tie & (1<<tieBits - 1)}
}
