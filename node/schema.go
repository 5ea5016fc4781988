package node

import (
	"errors"
	"fmt"
	"strconv"
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
	user, err := schema.Load(n.readRows)
	if err != nil {
		return nil, fmt.Errorf("node: loading the schema: %w", err)
	}
	return schema.New(user), nil
}

// readRows returns every live row of a table.
func (n *Node) readRows(def *schema.Table) ([]map[string]schema.Cell, error) {
	t, err := n.engine.Table(def.ID)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
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

// openTables opens in the engine every table of s not open yet.
func (n *Node) openTables(s *schema.Schema) error {
	for _, ks := range s.Keyspaces() {
		for _, t := range ks.Tables {
			if _, err := n.engine.Table(t.ID); err == nil {
				continue
			}
			opts, err := storageTableOptions(t)
			if err != nil {
				return fmt.Errorf("node: %s: %w", t, err)
			}
			if _, err := n.engine.OpenTable(opts); err != nil {
				return fmt.Errorf("node: %w", err)
			}
		}
	}
	return nil
}

// ApplySchema makes a schema change: here first, then on every live
// node of the cluster (see pushSchema).
func (n *Node) ApplySchema(ms []*mutation.Mutation) error {
	if err := n.applySchemaLocal(ms); err != nil {
		return err
	}
	n.pushSchema(ms)
	return nil
}

// applySchemaLocal writes schema mutations, flushes system_schema so that
// the next start-up finds them before replay, and opens the tables they
// add. Changes apply one at a time.
func (n *Node) applySchemaLocal(ms []*mutation.Mutation) error {
	n.schemaMu.Lock()
	defer n.schemaMu.Unlock()
	for _, m := range ms {
		if err := n.engine.Apply(m); err != nil {
			return fmt.Errorf("node: schema change: %w", err)
		}
	}
	ss := n.Schema().Keyspace(schema.SystemSchemaKeyspace)
	for _, t := range ss.Tables {
		st, err := n.engine.Table(t.ID)
		if err != nil {
			return err
		}
		if err := st.Flush(); err != nil {
			return fmt.Errorf("node: flushing %s: %w", t, err)
		}
	}
	s, err := n.loadSchema()
	if err != nil {
		return err
	}
	if err := n.openTables(s); err != nil {
		return err
	}
	old := n.Schema()
	n.schema.Store(s)
	n.dropTables(old, s)
	return n.writeLocal() // its schema_version follows the schema
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

// storageTableOptions turns a table's definition into the engine's options,
// its compaction map included.
func storageTableOptions(t *schema.Table) (storage.TableOptions, error) {
	opts := storage.TableOptions{ID: t.ID, Keyspace: t.Keyspace, Name: t.Name, GCGraceSeconds: int64(t.Options.GCGraceSeconds)}
	if t.Options.GCGraceSeconds == schema.ExplicitZeroGCGrace {
		opts.GCGraceSeconds = storage.NoGCGrace
	}
	c, err := compactionOptions(t.Options.Compaction)
	opts.Compaction = c
	return opts, err
}

// compactionOptions reads a compaction map (its sub-options as Cassandra
// names them).
func compactionOptions(m map[string]string) (storage.CompactionOptions, error) {
	var o storage.CompactionOptions
	class, err := schema.CompactionClass(m["class"])
	if err != nil {
		return o, err
	}
	switch class {
	case schema.LeveledClass:
		o.Strategy = storage.Leveled
	case schema.TimeWindowClass:
		o.Strategy = storage.TimeWindow
	}
	var errs []error
	integer := func(key string, set func(int64)) {
		if v, ok := m[key]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s is not a parsable int (base10) for %s", v, key))
				return
			}
			set(n)
		}
	}
	float := func(key string, set func(float64)) {
		if v, ok := m[key]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s is not a parsable float for %s", v, key))
				return
			}
			set(f)
		}
	}
	integer("min_threshold", func(n int64) { o.MinThreshold = int(n) })
	integer("max_threshold", func(n int64) { o.MaxThreshold = int(n) })
	integer("min_sstable_size", func(n int64) { o.MinSSTableSize = n })
	float("bucket_low", func(f float64) { o.BucketLow = f })
	float("bucket_high", func(f float64) { o.BucketHigh = f })
	integer("sstable_size_in_mb", func(n int64) { o.SSTableSize = n << 20 })
	integer("fanout_size", func(n int64) { o.Fanout = int(n) })
	size := int64(1)
	integer("compaction_window_size", func(n int64) { size = n })
	unit := time.Hour * 24
	switch u := m["compaction_window_unit"]; u {
	case "", "DAYS":
	case "MINUTES":
		unit = time.Minute
	case "HOURS":
		unit = time.Hour
	default:
		errs = append(errs, fmt.Errorf("%s is not valid for compaction_window_unit", u))
	}
	if o.Strategy == storage.TimeWindow {
		o.Window = time.Duration(size) * unit
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	return o, o.Validate()
}
