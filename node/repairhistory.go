package node

import (
	"fmt"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// The repair history (system.repair_history) is where repairs made every
// replica of a table agree, and when: tables with tombstone_gc = {'mode':
// 'repair'} purge only there. Each replica of a repaired range keeps its
// own, told by the node that ran the repair (REPAIR_RECORD); one that
// missed the news only purges less.

// loadRepairHistory reads the stored history into the one the engine
// purges by. A row it cannot read is reported and passed over: its
// tombstones wait for the next repair.
func (n *Node) loadRepairHistory() error {
	rows, err := n.readRows(schema.RepairHistoryTable)
	if err != nil {
		return fmt.Errorf("node: reading the repair history: %w", err)
	}
	part := n.engine.Partitioner()
	n.historyMu.Lock()
	defer n.historyMu.Unlock()
	now := time.Now().Unix()
	for _, r := range rows {
		// A row passed over must still be shadowed by the next rewrite.
		for _, c := range r {
			n.historyWritten = max(n.historyWritten, c.Timestamp)
		}
		rg, table, at, err := decodeRepaired(part, r)
		if err == nil && at <= 0 {
			err = fmt.Errorf("repaired_at %d is not a time", at)
		}
		if err != nil {
			n.cfg.Logger.Warn().Err(err).Msg("node: a row of system.repair_history is passed over")
			continue
		}
		n.history.Record(table, []partitioner.Range{rg}, min(at, now)) // a clock that went back holds nothing early
	}
	return nil
}

// maxRepairClockAhead is how far past this node's clock the start of a
// repair it is told of may be: further is a wrong clock or a forged
// record, and would let tombstones go before their time.
const maxRepairClockAhead = 60 // seconds

// acceptRepairRecord is REPAIR_RECORD's handler: the sender must be in
// the ring, the table known and replicated, and every range one this
// node replicates; recordRepair checks the time.
func (n *Node) acceptRepairRecord(from string, table mutation.TableID, ranges []partitioner.Range, at int64) error {
	m := n.ring.Load()
	if m == nil || !m.Contains(ring.Endpoint(from)) {
		return fmt.Errorf("node: a repair record from /%s, which is not in this node's ring", from)
	}
	sch := n.Schema()
	t := sch.TableByID(table)
	if t == nil {
		return fmt.Errorf("node: a repair record of table %s, which this node does not know", table)
	}
	s, err := n.ringStrategy(sch.Keyspace(t.Keyspace))
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("node: a repair record of %s, whose keyspace every node holds whole", t)
	}
	self := n.endpoint()
	for _, r := range ranges {
		if !slices.Contains(s.Replicas(m, r.End), self) {
			return fmt.Errorf("node: a repair record of %s for range %s, which this node does not replicate", t, r)
		}
	}
	return n.recordRepair(table, ranges, at)
}

func decodeRepaired(part partitioner.Partitioner, r map[string]schema.Cell) (partitioner.Range, mutation.TableID, int64, error) {
	var table mutation.TableID
	if len(r["table_id"].Value) != len(table) {
		return partitioner.Range{}, table, 0, fmt.Errorf("a table id of %d bytes", len(r["table_id"].Value))
	}
	copy(table[:], r["table_id"].Value)
	start, err := part.ParseToken(string(r["range_start"].Value))
	if err != nil {
		return partitioner.Range{}, table, 0, err
	}
	end, err := part.ParseToken(string(r["range_end"].Value))
	if err != nil {
		return partitioner.Range{}, table, 0, err
	}
	ms, err := cqltype.DecodeTimestamp(r["repaired_at"].Value)
	if err != nil {
		return partitioner.Range{}, table, 0, fmt.Errorf("repaired_at: %w", err)
	}
	if partitioner.Compare(start, end) >= 0 {
		return partitioner.Range{}, table, 0, fmt.Errorf("the stretch (%s, %s] is empty or wraps", start, end)
	}
	return partitioner.Range{Start: start, End: end}, table, ms / 1000, nil
}

// recordRepair keeps that a repair begun at at (Unix seconds) made every
// replica of table's ranges agree: the repairing node's own record, and
// what acceptRepairRecord lets through.
func (n *Node) recordRepair(table mutation.TableID, ranges []partitioner.Range, at int64) error {
	now := time.Now().Unix()
	if at <= 0 || at > now+maxRepairClockAhead {
		return fmt.Errorf("node: a repair record begun at %d, and this node's clock says %d", at, now)
	}
	at = min(at, now)
	n.historyMu.Lock()
	defer n.historyMu.Unlock()
	t := n.Schema().TableByID(table)
	if t == nil {
		return fmt.Errorf("node: a repair record of table %s, which this node does not know (dropped?)", table)
	}
	stretches := n.history.Record(table, ranges, at)
	// The table's partition is written whole: a deletion just before rows
	// of the stretches as they now stand.
	del, ts := n.historyDeletion(table)
	ms := []*mutation.Mutation{del}
	keyspace, name := []byte(t.Keyspace), []byte(t.Name)
	w := &schema.CellWriter{Timestamp: ts, Now: now}
	for _, s := range stretches {
		m, err := schema.RepairHistoryTable.InsertMutation(map[string][]byte{
			"table_id":      table[:],
			"range_start":   []byte(s.Range.Start.String()),
			"range_end":     []byte(s.Range.End.String()),
			"repaired_at":   cqltype.EncodeTimestamp(s.At * 1000),
			"keyspace_name": keyspace,
			"table_name":    name,
		}, w)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	if err := n.applyLocal(ms); err != nil {
		return fmt.Errorf("node: writing the repair history: %w", err)
	}
	return nil
}

// forgetRepairHistory drops a dropped table's history.
func (n *Node) forgetRepairHistory(table mutation.TableID) error {
	n.historyMu.Lock()
	defer n.historyMu.Unlock()
	n.history.Forget(table)
	del, _ := n.historyDeletion(table)
	return n.applyLocal([]*mutation.Mutation{del})
}

// historyDeletion is the deletion of table's partition of the stored
// history, and the timestamp after it that rows written with it take:
// both later than every write of the history before.
// REQUIRES: n.historyMu held.
func (n *Node) historyDeletion(table mutation.TableID) (*mutation.Mutation, int64) {
	now := time.Now()
	ts := max(now.UnixMicro(), n.historyWritten+2)
	n.historyWritten = ts
	del := mutation.NewMutation(schema.RepairHistoryTable.ID, table[:])
	del.Deletion = mutation.DeletionTime{MarkedForDeleteAt: ts - 1, LocalDeletionTime: now.Unix()}
	return del, ts
}
