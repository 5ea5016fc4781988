package node

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/sibyldb/sibyl/internal/ann"
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
			if _, err := e.OpenTable(StorageTableOptions(ks, t)); err != nil {
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
			_, err := n.engine.OpenTable(StorageTableOptions(ks, t))
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

// unopenedTables are the tables a schema change added that could not be
// opened here, and why.
type unopenedTables struct {
	tables []*schema.Table
	err    error
}

// applySchemaLocal applies a committed schema change (or a snapshot's
// schema) of the metadata log: it writes the schema mutations, flushes
// system_schema so that the next start-up finds them before replay, and
// opens the tables they add, as the schema of epoch. A table that cannot
// be opened stays closed, and is kept in unopened for the statement that
// made it (this node's client's) to undo. Changes apply one at a time, in
// the log's order.
func (n *Node) applySchemaLocal(ms []*mutation.Mutation, epoch uint64, proposedHere bool) error {
	n.schemaMu.Lock()
	defer n.schemaMu.Unlock()
	if err := WriteSchema(n.engine, ms); err != nil {
		return err
	}
	if touchesAuth(ms) {
		if err := n.loadRoles(); err != nil {
			return err
		}
	}
	s, err := n.loadSchema()
	if err != nil {
		return err
	}
	s = s.WithEpoch(epoch)
	old := n.Schema()
	if failed := n.openNewTables(s); failed.err != nil {
		n.cfg.Logger.Error().Err(failed.err).Uint64("epoch", epoch).Msg("node: a schema change added tables this node cannot open")
		if proposedHere {
			n.unopened[epoch] = failed
		}
	}
	n.reconfigureTables(s)
	n.schema.Store(s)
	n.dropTables(old, s)
	if !proposedHere {
		n.announceSchema(old, s)
	}
	return n.writeLocal() // its schema_version follows the schema
}

// reconfigureTables gives each open table of cur the options an ALTER
// may have changed while it was open (gc_grace_seconds, tombstone_gc, a
// keyspace's replication).
func (n *Node) reconfigureTables(cur *schema.Schema) {
	for _, ks := range cur.Keyspaces() {
		for _, t := range ks.Tables {
			st, err := n.engine.Table(t.ID)
			if err != nil {
				continue // it did not open: openNewTables reported it
			}
			if err := st.Reconfigure(StorageTableOptions(ks, t)); err != nil {
				n.cfg.Logger.Error().Err(err).Str("table", t.String()).Msg("node: the engine refused a table's changed options")
			}
		}
	}
}

// openNewTables opens every table of cur the engine does not have open,
// and returns those it could not.
func (n *Node) openNewTables(cur *schema.Schema) unopenedTables {
	var out unopenedTables
	for _, ks := range cur.Keyspaces() {
		for _, t := range ks.Tables {
			if _, err := n.engine.Table(t.ID); err == nil {
				continue
			}
			if _, err := n.engine.OpenTable(StorageTableOptions(ks, t)); err != nil {
				out.tables = append(out.tables, t)
				out.err = errors.Join(out.err, fmt.Errorf("node: %w", err))
			}
		}
	}
	return out
}

// announceSchema tells this node's clients registered for SCHEMA_CHANGE of
// what a change another node made changed here, as Cassandra's nodes each
// announce what they apply: a driver whose control connection is on this
// node learns of DDL run through any node. (The native server announces
// this node's own clients' changes with their results.)
func (n *Node) announceSchema(old, cur *schema.Schema) {
	srv := n.events.Load()
	if srv == nil {
		return
	}
	for _, c := range schema.Changes(old, cur) {
		srv.SchemaEvent(&c)
	}
}

// WriteSchema writes the mutations of a change of the metadata log to an
// engine's system_schema and system_auth tables and flushes them, so that
// the next start-up finds the schema before replay.
func WriteSchema(e *storage.Engine, ms []*mutation.Mutation) error {
	for _, m := range ms {
		if err := e.Apply(m); err != nil {
			return fmt.Errorf("node: schema change: %w", err)
		}
	}
	for _, t := range schema.ReplicatedMetadataTables() {
		st, err := e.Table(t.ID)
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
			if err := n.forgetRepairHistory(t.ID); err != nil {
				n.cfg.Logger.Warn().Err(err).Str("table", t.String()).Msg("node: removing a dropped table's repair history")
			}
		}
	}
}

// Schema is the node's current schema.
func (n *Node) Schema() *schema.Schema { return n.schema.Load() }

// StorageTableOptions are the definition of table t of keyspace ks as the
// engine takes it.
func StorageTableOptions(ks *schema.Keyspace, t *schema.Table) storage.TableOptions {
	opts := storage.TableOptions{ID: t.ID, Keyspace: t.Keyspace, Name: t.Name, GCGraceSeconds: int64(t.Options.GCGraceSeconds)}
	for _, ix := range t.Indexes {
		terms, err := ix.Terms(t)
		if err != nil {
			continue // a definition this build cannot read: queries read without it
		}
		spec := storage.IndexSpec{Name: ix.StorageName(), Terms: terms}
		if name, dim, ok := ix.VectorSimilarity(t); ok {
			sim, known := ann.ParseSimilarity(name)
			if !known {
				continue
			}
			spec.Vector = &storage.VectorIndex{Similarity: sim, Dimension: dim}
		}
		opts.Indexes = append(opts.Indexes, spec)
	}
	if t.Options.GCGraceSeconds == 0 {
		opts.GCGraceSeconds = storage.NoGCGrace // the engine's 0 is its default
	}
	switch g := t.Options.TombstoneGC(); g.Mode {
	case schema.TombstoneGCRepair:
		// With one replica there is nothing to repair with, and nothing a
		// tombstone must reach: it may go at once, as ScyllaDB lets it.
		opts.TombstoneGC = storage.TombstoneGC{Mode: storage.GCAfterRepair, PropagationDelay: g.PropagationDelaySeconds}
		if ks.Replication.SingleCopy() {
			opts.TombstoneGC = storage.TombstoneGC{Mode: storage.GCImmediately}
		}
	case schema.TombstoneGCDisabled:
		opts.TombstoneGC.Mode = storage.GCNever
	case schema.TombstoneGCImmediate:
		opts.TombstoneGC.Mode = storage.GCImmediately
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
