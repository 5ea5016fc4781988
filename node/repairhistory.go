package node

import (
	"fmt"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
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
	for _, r := range rows {
		rg, table, at, err := decodeRepaired(part, r)
		if err != nil {
			n.cfg.Logger.Warn().Err(err).Msg("node: a row of system.repair_history is passed over")
			continue
		}
		n.history.Record(table, []partitioner.Range{rg}, at)
		n.historyWritten = max(n.historyWritten, r["repaired_at"].Timestamp)
	}
	return nil
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
// replica of table's ranges agree: REPAIR_RECORD's handler, and the
// repairing node's own record.
func (n *Node) recordRepair(table mutation.TableID, ranges []partitioner.Range, at int64) error {
	n.historyMu.Lock()
	defer n.historyMu.Unlock()
	stretches := n.history.Record(table, ranges, at)
	// The table's partition is written whole: a deletion just before rows
	// of the stretches as they now stand.
	now := time.Now()
	ts := max(now.UnixMicro(), n.historyWritten+2)
	n.historyWritten = ts
	del := mutation.NewMutation(schema.RepairHistoryTable.ID, table[:])
	del.Deletion = mutation.DeletionTime{MarkedForDeleteAt: ts - 1, LocalDeletionTime: now.Unix()}
	ms := []*mutation.Mutation{del}
	var keyspace, name []byte
	if t := n.Schema().TableByID(table); t != nil {
		keyspace, name = []byte(t.Keyspace), []byte(t.Name)
	}
	w := &schema.CellWriter{Timestamp: ts, Now: now.Unix()}
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
	now := time.Now()
	ts := max(now.UnixMicro(), n.historyWritten+1)
	n.historyWritten = ts
	del := mutation.NewMutation(schema.RepairHistoryTable.ID, table[:])
	del.Deletion = mutation.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: now.Unix()}
	return n.applyLocal([]*mutation.Mutation{del})
}
