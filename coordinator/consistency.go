package coordinator

import (
	"fmt"

	"github.com/sibyldb/sibyl/ring"
)

// Level is a consistency level, by its native protocol code.
type Level uint16

// The levels.
const (
	Any         Level = 0
	One         Level = 1
	Two         Level = 2
	Three       Level = 3
	Quorum      Level = 4
	All         Level = 5
	LocalQuorum Level = 6
	EachQuorum  Level = 7
	Serial      Level = 8
	LocalSerial Level = 9
	LocalOne    Level = 10
)

var levelNames = [...]string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM",
	"SERIAL", "LOCAL_SERIAL", "LOCAL_ONE"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("LEVEL_%d", uint16(l))
}

// isLocal reports whether a level counts only the coordinator's data
// centre.
func (l Level) isLocal() bool { return l == LocalQuorum || l == LocalOne || l == LocalSerial }

func quorum(n int) int { return n/2 + 1 }

// BlockFor is how many replicas must answer a request at level l for a
// keyspace replicated by s (Cassandra's counts; a strategy that does not
// place by data centre counts its whole factor as local). ANY is one: for
// a write, any replica's acknowledgement (there are no hints yet to count
// instead); reads never take it.
func BlockFor(l Level, s ring.Strategy, localDC string) int {
	rf := s.ReplicationFactor()
	switch l {
	case Any, One, LocalOne:
		return 1
	case Two:
		return 2
	case Three:
		return 3
	case Quorum, Serial:
		return quorum(rf)
	case All:
		return rf
	case LocalQuorum, LocalSerial:
		return quorum(s.DataCenterFactor(localDC))
	case EachQuorum:
		nts, ok := s.(ring.NetworkTopologyStrategy)
		if !ok {
			return quorum(rf)
		}
		n := 0
		for _, f := range nts.Factors {
			n += quorum(f)
		}
		return n
	}
	return rf
}

// Unavailable is a request refused before anything was sent: fewer
// replicas alive than its level needs.
type Unavailable struct {
	Level    Level
	Required int // replicas the level needs (in DataCenter for EACH_QUORUM)
	Alive    int // of those, alive
	// DataCenter names the data centre short of replicas, for EACH_QUORUM.
	DataCenter string
}

func (e *Unavailable) Error() string {
	if e.DataCenter != "" {
		return fmt.Sprintf("Cannot achieve consistency level %s in DC %s", e.Level, e.DataCenter)
	}
	return fmt.Sprintf("Cannot achieve consistency level %s", e.Level)
}

// CheckAvailable refuses a request at level l when too few of its
// replicas are alive: the replicas of the local data centre for the
// LOCAL_ levels, each data centre's for EACH_QUORUM, all of them
// otherwise. locate places a replica.
func CheckAvailable(l Level, s ring.Strategy, localDC string, replicas []ring.Endpoint, alive func(ring.Endpoint) bool, locate func(ring.Endpoint) ring.Location) error {
	if l == EachQuorum {
		if nts, ok := s.(ring.NetworkTopologyStrategy); ok {
			for dc, f := range nts.Factors {
				live := 0
				for _, r := range replicas {
					if locate(r).DataCenter == dc && alive(r) {
						live++
					}
				}
				if need := quorum(f); f > 0 && live < need {
					return &Unavailable{Level: l, Required: need, Alive: live, DataCenter: dc}
				}
			}
			return nil
		}
	}
	need := BlockFor(l, s, localDC)
	live := 0
	for _, r := range replicas {
		if alive(r) && (!l.isLocal() || locate(r).DataCenter == localDC || !placesByDC(s)) {
			live++
		}
	}
	if live < need {
		return &Unavailable{Level: l, Required: need, Alive: live}
	}
	return nil
}

// placesByDC reports whether a strategy knows data centres.
func placesByDC(s ring.Strategy) bool {
	_, ok := s.(ring.NetworkTopologyStrategy)
	return ok
}

// WriteTimeout is a write that had fewer acknowledgements than its level
// needs when its time ran out.
type WriteTimeout struct {
	Level    Level
	Received int // acknowledgements, at most BlockFor-1 as Cassandra reports them
	BlockFor int
	// WriteType is the protocol's: SIMPLE, BATCH, UNLOGGED_BATCH, ...
	WriteType string
}

func (e *WriteTimeout) Error() string {
	return fmt.Sprintf("Operation timed out - received only %d responses.", e.Received)
}

// ReadTimeout is a read that had fewer answers than its level needs when
// its time ran out.
type ReadTimeout struct {
	Level       Level
	Received    int
	BlockFor    int
	DataPresent bool // the replica asked for the data answered
}

func (e *ReadTimeout) Error() string {
	return fmt.Sprintf("Operation timed out - received only %d responses.", e.Received)
}

// Acks counts a write's acknowledgements towards its level.
type Acks struct {
	blockFor, acked, failed, sent int
}

// NewAcks counts towards blockFor acknowledgements of a write sent to sent
// replicas.
func NewAcks(blockFor, sent int) *Acks { return &Acks{blockFor: blockFor, sent: sent} }

// Ack records one replica's answer and reports whether the write is now
// complete.
func (a *Acks) Ack(ok bool) (done bool) {
	if ok {
		a.acked++
	} else {
		a.failed++
	}
	return a.Done()
}

// Done reports whether enough replicas acknowledged.
func (a *Acks) Done() bool { return a.acked >= a.blockFor }

// Hopeless reports whether so many replicas failed that the level can no
// longer be met.
func (a *Acks) Hopeless() bool { return a.sent-a.failed < a.blockFor }

// Timeout is the WriteTimeout to report now, with the count clamped as
// Cassandra clamps it.
func (a *Acks) Timeout(l Level, writeType string) *WriteTimeout {
	return &WriteTimeout{Level: l, Received: min(a.acked, a.blockFor-1), BlockFor: a.blockFor, WriteType: writeType}
}
