package mutation

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// A counter cell's value is a counter context: one shard per node that
// ever led an increment of it, each the node's counter id, a logical clock
// and the node's count, in Cassandra's layout (a two-byte header, here
// always zero, then 32-byte shards sorted by counter id). The value a
// client reads is the sum of the counts. A node's increments replace its
// shard with one of the next clock; two versions of a cell merge shard by
// shard, the later clock winning, so merging is commutative, associative
// and idempotent, and every replica ends with every node's latest count.

// CounterID names a node's shard in counter contexts (its host id).
type CounterID [16]byte

const (
	counterHeaderLen = 2
	counterShardLen  = 32
)

// CounterShard is one node's part of a counter.
type CounterShard struct {
	ID    CounterID
	Clock int64
	Count int64
}

// CounterContext is the context of a counter holding the shards given,
// which must be in counter id order, each id once.
func CounterContext(shards ...CounterShard) []byte {
	b := make([]byte, counterHeaderLen, counterHeaderLen+counterShardLen*len(shards))
	for _, s := range shards {
		b = append(b, s.ID[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(s.Clock))
		b = binary.BigEndian.AppendUint64(b, uint64(s.Count))
	}
	return b
}

// CheckCounterContext reports how b is not a counter context: a header
// other than Sibyl's, a length that is not whole shards, shards out of
// order or repeated.
func CheckCounterContext(b []byte) error {
	if len(b) < counterHeaderLen || (len(b)-counterHeaderLen)%counterShardLen != 0 {
		return fmt.Errorf("a counter context of %d bytes", len(b))
	}
	if b[0] != 0 || b[1] != 0 {
		return fmt.Errorf("a counter context with %d header elements", binary.BigEndian.Uint16(b))
	}
	for at := counterHeaderLen + counterShardLen; at < len(b); at += counterShardLen {
		if bytes.Compare(b[at-counterShardLen:at-counterShardLen+16], b[at:at+16]) >= 0 {
			return fmt.Errorf("a counter context whose shards are out of order")
		}
	}
	return nil
}

// counterShards calls f for each shard of a context (checked).
func counterShards(b []byte, f func(s CounterShard)) {
	for at := counterHeaderLen; at+counterShardLen <= len(b); at += counterShardLen {
		var s CounterShard
		copy(s.ID[:], b[at:at+16])
		s.Clock = int64(binary.BigEndian.Uint64(b[at+16:]))
		s.Count = int64(binary.BigEndian.Uint64(b[at+24:]))
		f(s)
	}
}

// CounterTotal is a counter's value: the sum of its shards' counts
// (wrapping as Cassandra's long does).
func CounterTotal(b []byte) int64 {
	var total int64
	counterShards(b, func(s CounterShard) { total += s.Count })
	return total
}

// CounterShardOf is the shard of counter id in a context, if it has one.
func CounterShardOf(b []byte, id CounterID) (CounterShard, bool) {
	var found CounterShard
	ok := false
	counterShards(b, func(s CounterShard) {
		if s.ID == id {
			found, ok = s, true
		}
	})
	return found, ok
}

// MergeCounterContexts merges two contexts shard by shard: of two shards
// of one counter id the one with the later clock, and of equal clocks the
// greater count (equal clocks with different counts come only from a lost
// shard's replacement; the choice keeps the merge commutative). It returns
// a or b itself when the other adds nothing to it.
func MergeCounterContexts(a, b []byte) []byte {
	if bytes.Equal(a, b) {
		return a
	}
	var out []CounterShard
	aWins, bWins := true, true // the result is a's (b's) shards exactly
	ia, ib := counterHeaderLen, counterHeaderLen
	shard := func(ctx []byte, at int) CounterShard {
		var s CounterShard
		copy(s.ID[:], ctx[at:at+16])
		s.Clock = int64(binary.BigEndian.Uint64(ctx[at+16:]))
		s.Count = int64(binary.BigEndian.Uint64(ctx[at+24:]))
		return s
	}
	for ia < len(a) || ib < len(b) {
		switch {
		case ib >= len(b) || ia < len(a) && bytes.Compare(a[ia:ia+16], b[ib:ib+16]) < 0:
			out = append(out, shard(a, ia))
			ia += counterShardLen
			bWins = false
		case ia >= len(a) || bytes.Compare(a[ia:ia+16], b[ib:ib+16]) > 0:
			out = append(out, shard(b, ib))
			ib += counterShardLen
			aWins = false
		default:
			sa, sb := shard(a, ia), shard(b, ib)
			switch {
			case sa.Clock > sb.Clock || sa.Clock == sb.Clock && sa.Count >= sb.Count:
				out = append(out, sa)
				if sa != sb {
					bWins = false
				}
			default:
				out = append(out, sb)
				aWins = false
			}
			ia += counterShardLen
			ib += counterShardLen
		}
	}
	switch {
	case aWins:
		return a
	case bWins:
		return b
	}
	return CounterContext(out...)
}

// A counter update, what a statement asks of a counter (add delta), is a
// counter cell holding the delta's 8 bytes, which are no context: the
// engine refuses it (Check), and only the counter write path takes it,
// turning it into the leading replica's shard.

// CounterUpdate is a counter update cell adding delta.
func CounterUpdate(column string, ts, delta int64) Cell {
	return CounterCell(column, ts, binary.BigEndian.AppendUint64(nil, uint64(delta)))
}

// CounterDelta is a counter update cell's delta.
func CounterDelta(c *Cell) (int64, bool) {
	if !c.Counter || len(c.Value) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(c.Value)), true
}

// CounterIncrement is the context a leading replica writes for an
// increment of delta by node id, given the counter's live context where
// it leads (nil: none): its shard at the next clock, holding its count
// plus delta.
func CounterIncrement(current []byte, id CounterID, delta int64) []byte {
	s, _ := CounterShardOf(current, id)
	return CounterContext(CounterShard{ID: id, Clock: s.Clock + 1, Count: s.Count + delta})
}

// CounterShards is the write a leading replica makes of a counter write:
// each counter update becomes node id's shard (CounterIncrement), given
// by read the counter's live context where the leader is (nil: none), by
// its row (nil clustering: the static row) and column; other cells
// (deletions) pass as they are.
func (m *Mutation) CounterShards(id CounterID, read func(clustering []byte, column string) ([]byte, error)) (*Mutation, error) {
	out := &Mutation{Table: m.Table, Key: m.Key, Deletion: m.Deletion, RangeTombstones: m.RangeTombstones}
	convert := func(clustering []byte, r *Row) (*Row, error) {
		if r == nil {
			return nil, nil
		}
		row := *r
		row.Cells = make([]Cell, len(r.Cells))
		for i, c := range r.Cells {
			delta, ok := CounterDelta(&c)
			if !ok {
				row.Cells[i] = c
				continue
			}
			current, err := read(clustering, c.Column)
			if err != nil {
				return nil, err
			}
			row.Cells[i] = CounterCell(c.Column, c.Timestamp, CounterIncrement(current, id, delta))
		}
		return &row, nil
	}
	var err error
	if out.Static, err = convert(nil, m.Static); err != nil {
		return nil, err
	}
	for _, ru := range m.Rows {
		row, err := convert(ru.Clustering, ru.Row)
		if err != nil {
			return nil, err
		}
		out.Rows = append(out.Rows, RowUpdate{Clustering: ru.Clustering, Row: row})
	}
	return out, out.Check()
}
