package node

import (
	"bytes"
	"fmt"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// The node coordinates the statements run through it: it finds each
// partition's replicas, checks the consistency level can be met, and
// writes to or reads from the replicas (replicas.go). A node alone is the
// only replica of everything.
var _ exec.Coordinator = (*Node)(nil)

// applyLocal writes mutations through this node's engine.
func (n *Node) applyLocal(ms []*mutation.Mutation) error {
	for _, m := range ms {
		if err := n.engine.Apply(m); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) storageTable(t *schema.Table) (*storage.Table, error) {
	st, err := n.engine.Table(t.ID)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", t, err)
	}
	return st, nil
}

// readLocal reads a slice of one partition from this node's engine.
func (n *Node) readLocal(t *schema.Table, key []byte, q exec.PartitionQuery) (*exec.Partition, error) {
	st, err := n.storageTable(t)
	if err != nil {
		return nil, err
	}
	p, err := st.ReadPartition(key, storageRead(q))
	if err != nil || p.IsEmpty() {
		return nil, err
	}
	return execPartition(p), nil
}

// scanLocal reads a table's partitions in token order from this node's
// engine.
func (n *Node) scanLocal(t *schema.Table, q exec.ScanQuery) ([]*exec.Partition, error) {
	st, err := n.storageTable(t)
	if err != nil {
		return nil, err
	}
	parts, err := st.Scan(n.storageScan(q))
	if err != nil {
		return nil, err
	}
	out := make([]*exec.Partition, len(parts))
	for i, p := range parts {
		out[i] = execPartition(p)
	}
	return out, nil
}

// scanEntriesLocal is scanLocal's raw form (storage.ScanEntries), what a
// replica answers a coordinator's range read.
func (n *Node) scanEntriesLocal(t *schema.Table, q exec.ScanQuery) ([]storage.RawPartition, error) {
	st, err := n.storageTable(t)
	if err != nil {
		return nil, err
	}
	return st.ScanEntries(n.storageScan(q))
}

// storageScan is a scan query as the engine takes it.
func (n *Node) storageScan(q exec.ScanQuery) storage.ScanQuery {
	sq := storage.ScanQuery{Limit: q.Limit, PerPartitionLimit: q.PerPartitionLimit, Now: q.Now}
	// Engine keys start with the token's bytes: a token bound is a key
	// bound.
	if q.From != nil {
		sq.From = q.From.AppendBytes(nil)
	}
	if q.After != nil {
		prefix := mutation.AppendPartitionPrefix(nil, n.engine.Partitioner().Token(q.After), q.After)
		if after := mutation.PartitionUpperBound(prefix); sq.From == nil || bytes.Compare(after, sq.From) > 0 {
			sq.From = after
		}
	}
	if q.To != nil {
		sq.To = q.To.AppendBytes(nil)
	}
	return sq
}

// storageRead is a partition query as the engine takes it.
func storageRead(q exec.PartitionQuery) storage.ReadQuery {
	return storage.ReadQuery{Start: q.Start, End: q.End, Reverse: q.Reverse, Limit: q.Limit, Now: q.Now}
}

func execPartition(p *storage.Partition) *exec.Partition {
	out := &exec.Partition{Key: p.Key, Static: p.Static, Rows: make([]exec.Row, len(p.Rows))}
	for i, r := range p.Rows {
		out.Rows[i] = exec.Row{Clustering: r.Clustering, Row: r.Row}
	}
	return out
}

// Partitioner is the partitioner of the node's engine: token() and the
// order of partitions follow it.
func (n *Node) Partitioner() partitioner.Partitioner { return n.engine.Partitioner() }

// Truncate removes every row of a table.
func (n *Node) Truncate(t *schema.Table) error {
	if n.messaging != nil && !schema.IsSystemKeyspace(t.Keyspace) {
		return n.truncateEverywhere(t)
	}
	return n.truncateLocal(t)
}

func (n *Node) truncateLocal(t *schema.Table) error {
	st, err := n.storageTable(t)
	if err != nil {
		return err
	}
	return st.Truncate()
}
