package mutation

import (
	"bytes"
	"fmt"
	"strings"
)

// Cell is one value of one column in one row: a simple column, or one
// element of a non-frozen collection or UDT (then Path names the element).
//
// A cell is exactly one of: live (no TTL), expiring (TTL > 0,
// LocalDeletionTime = expiry), or a tombstone (Tombstone set,
// LocalDeletionTime = when it was deleted, Value empty). A live cell of a
// counter column is a counter cell (Counter set): its value is a counter
// context (counter.go), and it never expires.
type Cell struct {
	Column            string
	Path              []byte // nil for a simple column
	Timestamp         int64  // microseconds
	TTL               int32  // seconds; 0 when the cell does not expire
	LocalDeletionTime int64  // seconds; NoDeletionTime for live cells
	Tombstone         bool
	Counter           bool
	Value             []byte
}

// CounterCell builds a live counter cell holding a counter context.
func CounterCell(column string, ts int64, context []byte) Cell {
	return Cell{Column: column, Timestamp: ts, LocalDeletionTime: NoDeletionTime, Counter: true, Value: context}
}

// LiveCell builds a live cell without TTL.
func LiveCell(column string, path []byte, ts int64, value []byte) Cell {
	return Cell{Column: column, Path: path, Timestamp: ts, LocalDeletionTime: NoDeletionTime, Value: value}
}

// ExpiringCell builds a cell that expires at now+ttl.
func ExpiringCell(column string, path []byte, ts int64, ttl int32, now int64, value []byte) Cell {
	return Cell{Column: column, Path: path, Timestamp: ts, TTL: ttl, LocalDeletionTime: now + int64(ttl), Value: value}
}

// TombstoneCell builds a cell deletion made at now.
func TombstoneCell(column string, path []byte, ts int64, now int64) Cell {
	return Cell{Column: column, Path: path, Timestamp: ts, LocalDeletionTime: now, Tombstone: true}
}

// IsExpiring reports whether c is a live cell with a TTL.
func (c *Cell) IsExpiring() bool { return !c.Tombstone && c.TTL > 0 }

// hasDeletionTime reports whether c carries a local deletion time: a
// tombstone or an expiring cell.
func (c *Cell) hasDeletionTime() bool { return c.Tombstone || c.TTL > 0 }

// IsLive reports whether c holds a value at now (seconds): expired cells read
// exactly like tombstones.
func (c *Cell) IsLive(now int64) bool {
	return !c.Tombstone && (c.TTL == 0 || now < c.LocalDeletionTime)
}

// compareCellPosition orders cells by column name, then by path.
func compareCellPosition(a, b *Cell) int {
	if c := strings.Compare(a.Column, b.Column); c != 0 {
		return c
	}
	return bytes.Compare(a.Path, b.Path)
}

// Reconcile returns whichever of two versions of the same cell wins, by
// Cassandra's (4.0 and later) rules, each applied only when the ones before
// it tie:
//  1. the higher write timestamp;
//  2. a cell with a deletion time (tombstone or expiring) over a plain live one;
//  3. a tombstone over an expiring cell;
//  4. the later local deletion time (for expiring cells: the later expiry);
//  5. the greater value, comparing bytes unsigned.
//
// Counter cells reconcile as Cassandra's do: a tombstone wins over a
// counter cell whatever their timestamps (a deleted counter stays
// deleted), and two counter cells merge into one holding every node's
// latest shard (MergeCounterContexts), at the later timestamp; that cell
// is a new one unless one of the two already was the merge.
//
// It is the only place that decides between two cells; every merge in Sibyl
// (memtable, read, compaction, repair) comes through it. When the two are
// identical it returns a.
func Reconcile(a, b *Cell) *Cell {
	if a.Counter || b.Counter {
		switch {
		case a.Counter && b.Counter:
			return mergeCounterCells(a, b)
		case a.Tombstone:
			return a
		case b.Tombstone:
			return b
		}
	}
	if a.Timestamp != b.Timestamp {
		if a.Timestamp > b.Timestamp {
			return a
		}
		return b
	}
	aDel, bDel := a.hasDeletionTime(), b.hasDeletionTime()
	if aDel != bDel {
		if aDel {
			return a
		}
		return b
	}
	if aDel {
		if a.Tombstone != b.Tombstone {
			if a.Tombstone {
				return a
			}
			return b
		}
		if a.LocalDeletionTime != b.LocalDeletionTime {
			if a.LocalDeletionTime > b.LocalDeletionTime {
				return a
			}
			return b
		}
	}
	if bytes.Compare(b.Value, a.Value) > 0 {
		return b
	}
	return a
}

// mergeCounterCells merges two counter cells.
func mergeCounterCells(a, b *Cell) *Cell {
	merged := MergeCounterContexts(a.Value, b.Value)
	ts := max(a.Timestamp, b.Timestamp)
	switch {
	case ts == a.Timestamp && bytes.Equal(merged, a.Value):
		return a
	case ts == b.Timestamp && bytes.Equal(merged, b.Value):
		return b
	}
	c := CounterCell(a.Column, ts, merged)
	c.Path = a.Path
	return &c
}

func (c Cell) String() string {
	var sb strings.Builder
	sb.WriteString(c.Column)
	if c.Path != nil {
		fmt.Fprintf(&sb, "[%x]", c.Path)
	}
	switch {
	case c.Tombstone:
		fmt.Fprintf(&sb, "=del@%d/%d", c.Timestamp, c.LocalDeletionTime)
	case c.TTL > 0:
		fmt.Fprintf(&sb, "=%x@%d ttl=%d exp=%d", c.Value, c.Timestamp, c.TTL, c.LocalDeletionTime)
	case c.Counter:
		fmt.Fprintf(&sb, "=counter %d (%x)@%d", CounterTotal(c.Value), c.Value, c.Timestamp)
	default:
		fmt.Fprintf(&sb, "=%x@%d", c.Value, c.Timestamp)
	}
	return sb.String()
}
