package exec

import "fmt"

// Consistency is a request's consistency level, by its native protocol
// code: how many replicas must answer. A single node is every replica
// of its data; the cluster's coordinator counts them.
type Consistency uint16

// The consistency levels.
const (
	ConsistencyAny         Consistency = 0x0000
	ConsistencyOne         Consistency = 0x0001
	ConsistencyTwo         Consistency = 0x0002
	ConsistencyThree       Consistency = 0x0003
	ConsistencyQuorum      Consistency = 0x0004
	ConsistencyAll         Consistency = 0x0005
	ConsistencyLocalQuorum Consistency = 0x0006
	ConsistencyEachQuorum  Consistency = 0x0007
	ConsistencySerial      Consistency = 0x0008
	ConsistencyLocalSerial Consistency = 0x0009
	ConsistencyLocalOne    Consistency = 0x000A
)

var consistencyNames = [...]string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
	"EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE"}

func (c Consistency) String() string {
	if int(c) < len(consistencyNames) {
		return consistencyNames[c]
	}
	return fmt.Sprintf("CONSISTENCY_%d", uint16(c))
}

// Valid reports whether c is a level of the protocol.
func (c Consistency) Valid() bool { return int(c) < len(consistencyNames) }

// IsSerial reports whether c is SERIAL or LOCAL_SERIAL, which only
// lightweight transactions take.
func (c Consistency) IsSerial() bool { return c == ConsistencySerial || c == ConsistencyLocalSerial }
