package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
)

// A schema object is kept as rows of the system_schema tables, one
// mutation per row written; dropping one deletes its rows. These functions
// make those mutations; Load reads the rows back.

func text(s string) []byte { return []byte(s) }

// TextMap is a map<text, text> value, its keys in order.
func TextMap(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ks, vs := make([][]byte, len(keys)), make([][]byte, len(keys))
	for i, k := range keys {
		ks[i], vs[i] = []byte(k), []byte(m[k])
	}
	return cqltype.EncodeMap(ks, vs)
}

func blobMap(m map[string][]byte) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ks, vs := make([][]byte, len(keys)), make([][]byte, len(keys))
	for i, k := range keys {
		ks[i], vs[i] = []byte(k), m[k]
	}
	return cqltype.EncodeMap(ks, vs)
}

func textList(items []string) []byte {
	elems := make([][]byte, len(items))
	for i, s := range items {
		elems[i] = []byte(s)
	}
	return cqltype.EncodeCollection(elems)
}

func double(f float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f))
}

// SystemKeyspaceMutations describe the system keyspaces, their tables and
// columns in the system_schema tables, as Cassandra does: drivers build
// their metadata from those rows, and cqlsh shows a table's rows only if
// it finds the table there.
func SystemKeyspaceMutations(w *CellWriter) ([]*mutation.Mutation, error) {
	var out []*mutation.Mutation
	for _, ks := range SystemKeyspaces() {
		m, err := KeyspaceMutation(ks, w)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		for _, name := range slices.Sorted(maps.Keys(ks.Tables)) {
			ms, err := TableMutations(ks.Tables[name], w)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
	}
	return out, nil
}

// KeyspaceMutation is the system_schema.keyspaces row of ks.
func KeyspaceMutation(ks *Keyspace, w *CellWriter) (*mutation.Mutation, error) {
	return KeyspacesTable.InsertMutation(map[string][]byte{
		"keyspace_name":  text(ks.Name),
		"durable_writes": cqltype.EncodeBoolean(ks.DurableWrites),
		"replication":    TextMap(ks.Replication.Map()),
	}, w)
}

// TableMutations are the system_schema.tables row of t and one
// system_schema.columns row per column.
func TableMutations(t *Table, w *CellWriter) ([]*mutation.Mutation, error) {
	o := t.Options
	flags := []string{"compound"}
	if t.IsCounter() {
		flags = append(flags, "counter") // drivers tell counter tables by it
	}
	row := map[string][]byte{
		"keyspace_name":               text(t.Keyspace),
		"table_name":                  text(t.Name),
		"id":                          t.ID[:],
		"flags":                       textList(flags),
		"comment":                     text(o.Comment),
		"gc_grace_seconds":            cqltype.EncodeInt(o.GCGraceSeconds),
		"default_time_to_live":        cqltype.EncodeInt(o.DefaultTimeToLive),
		"bloom_filter_fp_chance":      double(o.BloomFilterFPChance),
		"crc_check_chance":            double(o.CRCCheckChance),
		"dclocal_read_repair_chance":  double(0),
		"read_repair_chance":          double(0),
		"memtable_flush_period_in_ms": cqltype.EncodeInt(o.MemtableFlushPeriodMs),
		"min_index_interval":          cqltype.EncodeInt(o.MinIndexInterval),
		"max_index_interval":          cqltype.EncodeInt(o.MaxIndexInterval),
		"speculative_retry":           text(o.SpeculativeRetry),
		"additional_write_policy":     text(o.AdditionalWritePolicy),
		"read_repair":                 text(o.ReadRepair),
		"memtable":                    text("default"),
		"cdc":                         cqltype.EncodeBoolean(false),
		"caching":                     TextMap(o.Caching),
		"compaction":                  TextMap(o.Compaction),
		"compression":                 TextMap(o.Compression),
		"extensions":                  blobMap(o.Extensions),
	}
	m, err := TablesTable.InsertMutation(row, w)
	if err != nil {
		return nil, err
	}
	out := []*mutation.Mutation{m}
	for _, c := range t.Columns {
		cm, err := ColumnsTable.InsertMutation(c.SchemaRow(t), w)
		if err != nil {
			return nil, err
		}
		out = append(out, cm)
	}
	return out, nil
}

// SchemaRow is a column's row in system_schema.columns (and, for a
// virtual table's, in system_virtual_schema.columns), by column name.
func (c *Column) SchemaRow(t *Table) map[string][]byte {
	return map[string][]byte{
		"keyspace_name":     text(t.Keyspace),
		"table_name":        text(t.Name),
		"column_name":       text(c.Name),
		"clustering_order":  text(c.ClusteringOrder()),
		"column_name_bytes": text(c.Name),
		"kind":              text(c.Kind.String()),
		"position":          cqltype.EncodeInt(int32(c.Position)),
		"type":              text(c.Type.SchemaString()),
	}
}

// TypeMutation is the system_schema.types row of a user type.
func TypeMutation(t *cqltype.Type, w *CellWriter) (*mutation.Mutation, error) {
	if t.Kind != cqltype.UDT {
		return nil, fmt.Errorf("schema: %s is not a user type", t)
	}
	types := make([]string, len(t.Params))
	for i, p := range t.Params {
		types[i] = p.SchemaString()
	}
	return TypesTable.InsertMutation(map[string][]byte{
		"keyspace_name": text(t.Keyspace),
		"type_name":     text(t.Name),
		"field_names":   textList(t.FieldNames),
		"field_types":   textList(types),
	}, w)
}

// DropColumnMutations remove a column's row from system_schema.columns and
// record the drop in system_schema.dropped_columns.
func DropColumnMutations(t *Table, c *Column, w *CellWriter) ([]*mutation.Mutation, error) {
	clustering, err := ColumnsTable.layout.Encode(nil, [][]byte{text(t.Name), text(c.Name)})
	if err != nil {
		return nil, err
	}
	del := mutation.NewMutation(ColumnsTable.ID, text(t.Keyspace))
	row := mutation.NewRow()
	row.Deletion = mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
	del.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
	rec, err := DroppedColumnsTable.InsertMutation(map[string][]byte{
		"keyspace_name": text(t.Keyspace),
		"table_name":    text(t.Name),
		"column_name":   text(c.Name),
		// Rounded up to the millisecond the column stores: a write in the
		// drop's own millisecond, just before it, must stay hidden.
		"dropped_time": cqltype.EncodeTimestamp((w.Timestamp + 999) / 1000),
		"kind":         text(c.Kind.String()),
		"type":         text(c.Type.SchemaString()),
	}, w)
	if err != nil {
		return nil, err
	}
	return []*mutation.Mutation{del, rec}, nil
}

// DropKeyspaceMutations delete a keyspace's rows from every system_schema
// table: a partition deletion each, the keyspace name being their
// partition key.
func DropKeyspaceMutations(name string, w *CellWriter) []*mutation.Mutation {
	out := make([]*mutation.Mutation, 0, len(schemaTables))
	for _, st := range schemaTables {
		m := mutation.NewMutation(st.ID, text(name))
		m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
		out = append(out, m)
	}
	return out
}

// DropTableMutations delete a table's row in system_schema.tables and its
// rows in .columns (a range deletion over the table's clustering prefix).
func DropTableMutations(t *Table, w *CellWriter) ([]*mutation.Mutation, error) {
	del := mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
	var out []*mutation.Mutation
	for _, st := range []*Table{TablesTable, ColumnsTable, IndexesTable, TriggersTable, DroppedColumnsTable} {
		prefix, err := st.layout.Encode(nil, [][]byte{text(t.Name)})
		if err != nil {
			return nil, err
		}
		m := mutation.NewMutation(st.ID, text(t.Keyspace))
		m.RangeTombstones = []mutation.RangeTombstone{{
			Start: mutation.StartBound(prefix, true), End: mutation.EndBound(prefix, true), Deletion: del}}
		out = append(out, m)
	}
	return out, nil
}

// DropTypeMutation deletes a user type's row.
func DropTypeMutation(keyspace, name string, w *CellWriter) (*mutation.Mutation, error) {
	clustering, err := TypesTable.layout.Encode(nil, [][]byte{text(name)})
	if err != nil {
		return nil, err
	}
	m := mutation.NewMutation(TypesTable.ID, text(keyspace))
	row := mutation.NewRow()
	row.Deletion = mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
	m.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
	return m, nil
}

// RowReader returns every live row of a system table, as RowCells gives
// them.
type RowReader func(t *Table) ([]map[string]Cell, error)

// Unusable reports a part of a stored definition that Load could not use
// (written by an older build, or by hand) and replaced by its default:
// what it belongs to (keyspace or keyspace.table), the option, and why.
type Unusable func(what, option string, err error)

// Load rebuilds the user keyspaces from the system_schema rows read. A
// stored option the node cannot use does not keep it from starting: it is
// reported to unusable and its default used.
func Load(read RowReader, unusable Unusable) (map[string]*Keyspace, error) {
	out := map[string]*Keyspace{}
	rows, err := read(KeyspacesTable)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		name := string(r["keyspace_name"].Value)
		if IsSystemKeyspace(name) {
			continue // described for clients; defined by the code (SystemKeyspaces)
		}
		durable, _ := cqltype.DecodeBoolean(r["durable_writes"].Value)
		stored, err := decodeTextMap(r["replication"].Value)
		if err != nil {
			return nil, fmt.Errorf("schema: keyspace %s: replication: %w", name, err)
		}
		repl, err := ParseReplication(name, stored, nil, nil)
		if err != nil {
			unusable(name, "replication", err)
			repl = Replication{Class: SimpleStrategy, Factor: DefaultKeyspaceRF}
		}
		out[name] = NewKeyspace(name, repl, durable)
	}
	if err := loadTypes(read, out); err != nil {
		return nil, err
	}
	return out, loadTables(read, out, unusable)
}

func loadTypes(read RowReader, keyspaces map[string]*Keyspace) error {
	rows, err := read(TypesTable)
	if err != nil {
		return err
	}
	// A type may use another type of its keyspace: resolve in passes.
	pending := rows
	for len(pending) > 0 {
		var next []map[string]Cell
		var lastErr error
		for _, r := range pending {
			ks := keyspaces[string(r["keyspace_name"].Value)]
			if ks == nil {
				continue // a type of a dropped keyspace
			}
			t, err := decodeType(ks, r)
			if err != nil {
				next, lastErr = append(next, r), err
				continue
			}
			ks.Types[t.Name] = t
		}
		if len(next) == len(pending) {
			return lastErr
		}
		pending = next
	}
	return nil
}

func decodeType(ks *Keyspace, r map[string]Cell) (*cqltype.Type, error) {
	name := string(r["type_name"].Value)
	names, err := DecodeTextList(r["field_names"].Value)
	if err != nil {
		return nil, err
	}
	typeNames, err := DecodeTextList(r["field_types"].Value)
	if err != nil {
		return nil, err
	}
	if len(names) != len(typeNames) {
		return nil, fmt.Errorf("schema: type %s.%s: %d field names, %d field types", ks.Name, name, len(names), len(typeNames))
	}
	types := make([]*cqltype.Type, len(typeNames))
	for i, tn := range typeNames {
		if types[i], err = cqltype.Parse(tn, ks.Name, ks.ResolveType); err != nil {
			return nil, fmt.Errorf("schema: type %s.%s field %s: %w", ks.Name, name, names[i], err)
		}
	}
	return cqltype.UDTOf(ks.Name, name, names, types, false), nil
}

// ResolveType finds a user type of the keyspace, for cqltype.Parse: a
// table or type may only use the types of its own keyspace.
func (k *Keyspace) ResolveType(keyspace, name string) (*cqltype.Type, error) {
	if keyspace != k.Name {
		return nil, fmt.Errorf("Statement on keyspace %s cannot refer to a user type in keyspace %s; user types can only be used in the keyspace they are defined in", k.Name, keyspace)
	}
	t, ok := k.Types[name]
	if !ok {
		return nil, fmt.Errorf("Unknown type %s.%s", keyspace, name)
	}
	return t, nil
}

func loadTables(read RowReader, keyspaces map[string]*Keyspace, unusable Unusable) error {
	colRows, err := read(ColumnsTable)
	if err != nil {
		return err
	}
	columns := map[[2]string][]*Column{}
	for _, r := range colRows {
		key := [2]string{string(r["keyspace_name"].Value), string(r["table_name"].Value)}
		ks := keyspaces[key[0]]
		if ks == nil {
			continue
		}
		c, err := decodeColumn(ks, r)
		if err != nil {
			return fmt.Errorf("schema: %s.%s: %w", key[0], key[1], err)
		}
		columns[key] = append(columns[key], c)
	}
	tableRows, err := read(TablesTable)
	if err != nil {
		return err
	}
	for _, r := range tableRows {
		ksName, name := string(r["keyspace_name"].Value), string(r["table_name"].Value)
		ks := keyspaces[ksName]
		if ks == nil {
			continue
		}
		stored, err := decodeOptions(r)
		if err != nil {
			return fmt.Errorf("schema: %s.%s: %w", ksName, name, err)
		}
		opts, _ := stored.Sanitized(func(option string, err error) { unusable(ksName+"."+name, option, err) })
		var id mutation.TableID
		copy(id[:], r["id"].Value)
		t, err := NewTable(ksName, name, id, columns[[2]string{ksName, name}], opts)
		if err != nil {
			return fmt.Errorf("schema: %s.%s: %w", ksName, name, err)
		}
		ks.Tables[name] = t
	}
	dropped, err := read(DroppedColumnsTable)
	if err != nil {
		return err
	}
	for _, r := range dropped {
		t := tableOfRow(keyspaces, r)
		if t == nil {
			continue
		}
		ms, err := cqltype.DecodeTimestamp(r["dropped_time"].Value)
		if err != nil {
			return fmt.Errorf("schema: %s: dropped column %s: %w", t, r["column_name"].Value, err)
		}
		t.Dropped[string(r["column_name"].Value)] = ms * 1000
	}
	return loadIndexes(read, keyspaces)
}

// tableOfRow is the table a system_schema row of a table's part names,
// or nil when there is none (a row of a dropped table).
func tableOfRow(keyspaces map[string]*Keyspace, r map[string]Cell) *Table {
	if ks := keyspaces[string(r["keyspace_name"].Value)]; ks != nil {
		return ks.Tables[string(r["table_name"].Value)]
	}
	return nil
}

func decodeColumn(ks *Keyspace, r map[string]Cell) (*Column, error) {
	name := string(r["column_name"].Value)
	kind, err := parseColumnKind(string(r["kind"].Value))
	if err != nil {
		return nil, err
	}
	pos, err := cqltype.DecodeInt(r["position"].Value)
	if err != nil {
		return nil, fmt.Errorf("column %s: position: %w", name, err)
	}
	t, err := cqltype.Parse(string(r["type"].Value), ks.Name, ks.ResolveType)
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", name, err)
	}
	return &Column{Name: name, Type: t, Kind: kind, Position: int(pos),
		Descending: string(r["clustering_order"].Value) == "desc"}, nil
}

func decodeOptions(r map[string]Cell) (TableParams, error) {
	o := DefaultTableParams() // for what the row lacks
	var errs []error
	ints := map[string]*int32{"gc_grace_seconds": &o.GCGraceSeconds, "default_time_to_live": &o.DefaultTimeToLive,
		"memtable_flush_period_in_ms": &o.MemtableFlushPeriodMs, "min_index_interval": &o.MinIndexInterval,
		"max_index_interval": &o.MaxIndexInterval}
	for col, dst := range ints {
		if v := r[col].Value; v != nil {
			n, err := cqltype.DecodeInt(v)
			errs = append(errs, err)
			*dst = n
		}
	}
	for col, dst := range map[string]*float64{"bloom_filter_fp_chance": &o.BloomFilterFPChance, "crc_check_chance": &o.CRCCheckChance} {
		if v := r[col].Value; v != nil {
			f, err := cqltype.DecodeDouble(v)
			errs = append(errs, err)
			*dst = f
		}
	}
	for col, dst := range map[string]*string{"comment": &o.Comment, "speculative_retry": &o.SpeculativeRetry,
		"additional_write_policy": &o.AdditionalWritePolicy, "read_repair": &o.ReadRepair} {
		if v := r[col].Value; v != nil {
			*dst = string(v)
		}
	}
	var err error
	for col, dst := range map[string]*map[string]string{"caching": &o.Caching, "compaction": &o.Compaction, "compression": &o.Compression} {
		if v := r[col].Value; v != nil {
			if *dst, err = decodeTextMap(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", col, err))
			}
		}
	}
	if v := r["extensions"].Value; v != nil {
		keys, vals, err := cqltype.DecodeMap(v)
		errs = append(errs, err)
		o.Extensions = map[string][]byte{}
		for i, k := range keys {
			o.Extensions[string(k)] = append([]byte(nil), vals[i]...)
		}
	}
	return o, errors.Join(errs...)
}

func decodeTextMap(b []byte) (map[string]string, error) {
	keys, vals, err := cqltype.DecodeMap(b)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		m[string(k)] = string(vals[i])
	}
	return m, nil
}

// DecodeTextList reads a list<text> or set<text> value.
func DecodeTextList(b []byte) ([]string, error) {
	elems, err := cqltype.DecodeCollection(b)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = string(e)
	}
	return out, nil
}
