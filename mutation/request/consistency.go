package request

import "fmt"

// Consistency is a request's consistency level, by its native protocol
// code: how many replicas must answer.
type Consistency uint16

// The consistency levels.
const (
	Any         Consistency = 0x0000
	One         Consistency = 0x0001
	Two         Consistency = 0x0002
	Three       Consistency = 0x0003
	Quorum      Consistency = 0x0004
	All         Consistency = 0x0005
	LocalQuorum Consistency = 0x0006
	EachQuorum  Consistency = 0x0007
	Serial      Consistency = 0x0008
	LocalSerial Consistency = 0x0009
	LocalOne    Consistency = 0x000A
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
func (c Consistency) IsSerial() bool { return c == Serial || c == LocalSerial }

// IsLocal reports whether c counts only the replicas of the
// coordinator's data centre.
func (c Consistency) IsLocal() bool { return c == LocalQuorum || c == LocalOne || c == LocalSerial }
