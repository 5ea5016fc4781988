package mutation

import (
	"fmt"
	"math"
)

// NoTimestamp marks the absence of a write timestamp (an empty row marker).
const NoTimestamp int64 = math.MinInt64

// NoDeletionTime is the local deletion time of data that never expires.
const NoDeletionTime int64 = math.MaxInt64

// DeletionTime is a deletion: data written at or before MarkedForDeleteAt is
// shadowed. LocalDeletionTime (seconds) is when the deletion was made, which
// decides when compaction may purge it.
type DeletionTime struct {
	MarkedForDeleteAt int64
	LocalDeletionTime int64
}

// Live is the absence of a deletion.
var Live = DeletionTime{MarkedForDeleteAt: NoTimestamp, LocalDeletionTime: NoDeletionTime}

// IsLive reports whether d deletes nothing.
func (d DeletionTime) IsLive() bool { return d.MarkedForDeleteAt == NoTimestamp }

// Shadows reports whether data written at ts is deleted by d: ties go to the
// deletion.
func (d DeletionTime) Shadows(ts int64) bool {
	return !d.IsLive() && ts <= d.MarkedForDeleteAt
}

// Supersedes reports whether d wins over o: the later mark, then the later
// local deletion time.
func (d DeletionTime) Supersedes(o DeletionTime) bool {
	if d.MarkedForDeleteAt != o.MarkedForDeleteAt {
		return d.MarkedForDeleteAt > o.MarkedForDeleteAt
	}
	return d.LocalDeletionTime > o.LocalDeletionTime
}

// Max returns the deletion that supersedes the other.
func (d DeletionTime) Max(o DeletionTime) DeletionTime {
	if o.Supersedes(d) {
		return o
	}
	return d
}

func (d DeletionTime) String() string {
	if d.IsLive() {
		return "live"
	}
	return fmt.Sprintf("del@%d/%d", d.MarkedForDeleteAt, d.LocalDeletionTime)
}

// LivenessInfo is the row marker INSERT writes: it keeps a row alive even when
// all its regular columns are null. An empty marker has Timestamp NoTimestamp.
type LivenessInfo struct {
	Timestamp int64
	TTL       int32 // seconds; 0 when the marker does not expire
	ExpiresAt int64 // seconds; NoDeletionTime unless TTL > 0
}

// NoLiveness is the empty row marker.
var NoLiveness = LivenessInfo{Timestamp: NoTimestamp, ExpiresAt: NoDeletionTime}

// IsEmpty reports whether there is no marker.
func (l LivenessInfo) IsEmpty() bool { return l.Timestamp == NoTimestamp }

// IsExpiring reports whether the marker carries a TTL.
func (l LivenessInfo) IsExpiring() bool { return l.TTL > 0 }

// IsLive reports whether the marker keeps its row alive at now (seconds).
func (l LivenessInfo) IsLive(now int64) bool {
	return !l.IsEmpty() && (!l.IsExpiring() || now < l.ExpiresAt)
}

// Supersedes reports whether l wins over o: the later timestamp; at equal
// timestamps an expiring marker beats a plain one, and of two expiring markers
// the later expiry wins.
func (l LivenessInfo) Supersedes(o LivenessInfo) bool {
	if l.Timestamp != o.Timestamp {
		return l.Timestamp > o.Timestamp
	}
	if l.IsExpiring() != o.IsExpiring() {
		return l.IsExpiring()
	}
	return l.ExpiresAt > o.ExpiresAt
}

func (l LivenessInfo) String() string {
	switch {
	case l.IsEmpty():
		return "-"
	case l.IsExpiring():
		return fmt.Sprintf("@%d ttl=%d exp=%d", l.Timestamp, l.TTL, l.ExpiresAt)
	default:
		return fmt.Sprintf("@%d", l.Timestamp)
	}
}
