package node

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// The schema lives in the system_schema tables of the node's own engine.
// Start-up reads it from their SSTables before replaying the commit log
// (replay needs every table open, and skips the records of tables it does
// not know), which holds because a schema change flushes system_schema
// before it is acknowledged (ApplySchema), as Cassandra does.

// loadSchema reads the user schema from the system_schema tables.
func (n *Node) loadSchema() (*schema.Schema, error) {
	s, err := LoadSchema(n.engine, time.Now().Unix(), func(what, option string, err error) {
		n.cfg.Logger.Error().Str("definition", what).Str("option", option).Err(err).
			Msg("node: the stored schema holds an option this node cannot use; using its default")
	})
	if err != nil {
		return nil, fmt.Errorf("node: loading the schema: %w", err)
	}
	return s, nil
}

// LoadSchema reads the schema an engine's system_schema tables hold, as
// of now (seconds), reporting what it cannot use to unusable.
func LoadSchema(e *storage.Engine, now int64, unusable schema.Unusable) (*schema.Schema, error) {
	user, err := schema.Load(func(def *schema.Table) ([]map[string]schema.Cell, error) { return readRows(e, def, now) }, unusable)
	if err != nil {
		return nil, err
	}
	return schema.New(user), nil
}

// readRows returns every live row of a table.
func (n *Node) readRows(def *schema.Table) ([]map[string]schema.Cell, error) {
	return readRows(n.engine, def, time.Now().Unix())
}

func readRows(e *storage.Engine, def *schema.Table, now int64) ([]map[string]schema.Cell, error) {
	t, err := e.Table(def.ID)
	if err != nil {
		return nil, err
	}
	parts, err := t.Scan(storage.ScanQuery{Now: now})
	if err != nil {
		return nil, err
	}
	var out []map[string]schema.Cell
	for _, p := range parts {
		for _, r := range p.Rows {
			cells, err := def.RowCells(p.Key, r.Clustering, r.Row, p.Static, now)
			if err != nil {
				return nil, fmt.Errorf("node: %s: %w", def, err)
			}
			out = append(out, cells)
		}
	}
	return out, nil
}

// openTables opens in the engine every table of s not open yet, and
// returns the first failure.
func (n *Node) openTables(s *schema.Schema) error {
	if err := OpenTables(n.engine, s); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nil
}

// OpenTables opens in an engine every table of a schema it has not open.
func OpenTables(e *storage.Engine, s *schema.Schema) error {
	for _, ks := range s.Keyspaces() {
		for _, t := range ks.Tables {
			if _, err := e.Table(t.ID); err == nil {
				continue
			}
			if _, err := e.OpenTable(StorageTableOptions(t)); err != nil {
				return err
			}
		}
	}
	return nil
}

// openStoredTables is openTables for the schema a node starts with. A
// table whose name is too long for a file name (an older build took such
// names) never had a file, nor a write: it is logged and left closed, so
// that it does not keep the node, and every other table, from starting.
// Any other failure stops the start, since replay would skip the table's
// records.
func (n *Node) openStoredTables(s *schema.Schema) error {
	for _, ks := range s.Keyspaces() {
		for _, t := range ks.Tables {
			if _, err := n.engine.Table(t.ID); err == nil {
				continue
			}
			_, err := n.engine.OpenTable(StorageTableOptions(t))
			switch {
			case errors.Is(err, syscall.ENAMETOOLONG):
				n.cfg.Logger.Error().Err(err).Str("table", t.String()).
					Msg("node: a table of the stored schema has a name too long for a file; it stays closed, and DROP TABLE removes it")
			case err != nil:
				return fmt.Errorf("node: %w", err)
			}
		}
	}
	return nil
}

// ApplySchema makes a schema change: here first, then on every live
// node of the cluster (see pushSchema).
func (n *Node) ApplySchema(ms []*mutation.Mutation) error {
	if err := n.applySchemaLocal(ms, true); err != nil {
		return err
	}
	n.pushSchema(ms)
	return nil
}

// applySchemaLocal writes schema mutations, flushes system_schema so that
// the next start-up finds them before replay, and opens the tables they
// add. Changes apply one at a time. A client's change (own) whose tables
// cannot be opened here is undone; one another node made, and applied
// there, is not: undoing it here would drop the table everywhere the
// deletion spreads.
func (n *Node) applySchemaLocal(ms []*mutation.Mutation, own bool) error {
	n.schemaMu.Lock()
	defer n.schemaMu.Unlock()
	for _, m := range ms {
		if err := n.engine.Apply(m); err != nil {
			return fmt.Errorf("node: schema change: %w", err)
		}
	}
	if err := n.flushSchema(); err != nil {
		return err
	}
	s, err := n.loadSchema()
	if err != nil {
		return err
	}
	old := n.Schema()
	if err := n.openTables(s); err != nil {
		if own {
			err = errors.Join(err, n.undoNewTables(old, s, ms))
		}
		return err
	}
	n.schema.Store(s)
	n.dropTables(old, s)
	if !own {
		n.announceSchema(old, s)
	}
	return n.writeLocal() // its schema_version follows the schema
}

// announceSchema tells this node's clients registered for SCHEMA_CHANGE of
// what a change another node made (pushed, or pulled) changed here, as
// Cassandra's nodes each announce what they apply: a driver whose control
// connection is on this node learns of DDL run through any node.
func (n *Node) announceSchema(old, cur *schema.Schema) {
	srv := n.events.Load()
	if srv == nil {
		return
	}
	for _, c := range schema.Changes(old, cur) {
		srv.SchemaEvent(&c)
	}
}

// undoNewTables takes out of the schema, and out of the engine, the tables
// a change added whose files could not be made, so that a DDL that failed
// leaves nothing behind and the next start-up does not trip on it. The
// deletions are stamped after everything the change wrote.
// REQUIRES: n.schemaMu held.
func (n *Node) undoNewTables(old, cur *schema.Schema, applied []*mutation.Mutation) error {
	w := &schema.CellWriter{Timestamp: maxTimestamp(applied) + 1, Now: time.Now().Unix()}
	var undo []*mutation.Mutation
	for _, ks := range cur.Keyspaces() {
		for _, t := range ks.Tables {
			if prev, err := old.Table(ks.Name, t.Name); err == nil && prev.ID == t.ID {
				continue
			}
			ms, err := schema.DropTableMutations(t, w)
			if err != nil {
				return err
			}
			undo = append(undo, ms...)
			if err := n.engine.DropTable(t.ID); err != nil && !errors.Is(err, storage.ErrUnknownTable) {
				n.cfg.Logger.Warn().Err(err).Str("table", t.String()).Msg("node: removing what a failed table creation left")
			}
		}
	}
	for _, m := range undo {
		if err := n.engine.Apply(m); err != nil {
			return fmt.Errorf("node: undoing a schema change: %w", err)
		}
	}
	return n.flushSchema()
}

// maxTimestamp is the newest write timestamp of ms.
func maxTimestamp(ms []*mutation.Mutation) int64 {
	newest := mutation.NoTimestamp
	for _, m := range ms {
		newest = max(newest, m.Deletion.MarkedForDeleteAt)
		for _, rt := range m.RangeTombstones {
			newest = max(newest, rt.Deletion.MarkedForDeleteAt)
		}
		if m.Static != nil {
			newest = max(newest, m.Static.MaxTimestamp())
		}
		for _, ru := range m.Rows {
			newest = max(newest, ru.Row.MaxTimestamp())
		}
	}
	return newest
}

// flushSchema flushes the system_schema tables, so that the next start-up
// finds the schema before replay.
func (n *Node) flushSchema() error {
	for _, t := range n.Schema().Keyspace(schema.SystemSchemaKeyspace).Tables {
		st, err := n.engine.Table(t.ID)
		if err != nil {
			return err
		}
		if err := st.Flush(); err != nil {
			return fmt.Errorf("node: flushing %s: %w", t, err)
		}
	}
	return nil
}

// dropTables removes from the engine, with their files, the tables the
// old schema had and the new one does not (DROP TABLE, DROP KEYSPACE). No
// snapshot is taken first, as Cassandra with auto_snapshot off; snapshots
// taken before stay.
func (n *Node) dropTables(old, cur *schema.Schema) {
	keep := map[mutation.TableID]bool{}
	for _, ks := range cur.Keyspaces() {
		for _, t := range ks.Tables {
			keep[t.ID] = true
		}
	}
	for _, ks := range old.Keyspaces() {
		for _, t := range ks.Tables {
			if keep[t.ID] {
				continue
			}
			if err := n.engine.DropTable(t.ID); err != nil {
				n.cfg.Logger.Warn().Err(err).Str("table", t.String()).Msg("node: removing a dropped table's files")
			}
		}
	}
}

// Schema is the node's current schema.
func (n *Node) Schema() *schema.Schema { return n.schema.Load() }

// StorageTableOptions are a table's definition as the engine takes it.
func StorageTableOptions(t *schema.Table) storage.TableOptions {
	opts := storage.TableOptions{ID: t.ID, Keyspace: t.Keyspace, Name: t.Name, GCGraceSeconds: int64(t.Options.GCGraceSeconds)}
	if t.Options.GCGraceSeconds == 0 {
		opts.GCGraceSeconds = storage.NoGCGrace // the engine's 0 is its default
	}
	c := t.Compaction
	opts.Compaction = storage.CompactionOptions{
		Disabled:       !c.Enabled,
		MinThreshold:   c.MinThreshold,
		MaxThreshold:   c.MaxThreshold,
		BucketLow:      c.BucketLow,
		BucketHigh:     c.BucketHigh,
		MinSSTableSize: c.MinSSTableSize,
		SSTableSize:    int64(c.SSTableSizeMiB) << 20,
		Fanout:         c.FanoutSize,
		Window:         time.Duration(c.WindowSize) * c.WindowUnit,
		TimestampUnit:  c.TimestampResolution,
	}
	switch c.Strategy {
	case schema.LeveledCompaction:
		opts.Compaction.Strategy = storage.Leveled
	case schema.TimeWindowCompaction:
		opts.Compaction.Strategy = storage.TimeWindow
	}
	return opts
}
