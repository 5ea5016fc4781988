package schema

import (
	"errors"
	"fmt"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// ColumnKind is a column's role in its table, named as system_schema.columns
// names it.
type ColumnKind uint8

// The column kinds.
const (
	PartitionKey ColumnKind = iota
	Clustering
	Regular
	Static
)

var columnKindNames = [...]string{"partition_key", "clustering", "regular", "static"}

func (k ColumnKind) String() string {
	if int(k) < len(columnKindNames) {
		return columnKindNames[k]
	}
	return fmt.Sprintf("ColumnKind(%d)", int(k))
}

func parseColumnKind(s string) (ColumnKind, error) {
	for i, n := range columnKindNames {
		if n == s {
			return ColumnKind(i), nil
		}
	}
	return 0, fmt.Errorf("schema: unknown column kind %q", s)
}

// Column is one column of a table.
type Column struct {
	Name string
	Type *cqltype.Type
	Kind ColumnKind
	// Position is the column's index among the partition key or clustering
	// columns; -1 for regular and static columns.
	Position int
	// Descending is the clustering order of a clustering column.
	Descending bool
	// Index is the column's place in its table's Columns (NewTable sets
	// it): rows read as RowValues are indexed by it.
	Index int
}

// IsPrimaryKey reports whether the column is part of the primary key.
func (c *Column) IsPrimaryKey() bool { return c.Kind == PartitionKey || c.Kind == Clustering }

// ClusteringOrder is system_schema.columns.clustering_order.
func (c *Column) ClusteringOrder() string {
	switch {
	case c.Kind != Clustering:
		return "none"
	case c.Descending:
		return "desc"
	}
	return "asc"
}

// Table is a table's definition.
type Table struct {
	Keyspace string
	Name     string
	ID       mutation.TableID
	// Columns in Cassandra's order: partition key, clustering, then the
	// others by name.
	Columns      []*Column
	PartitionKey []*Column
	Clustering   []*Column
	byName       map[string]*Column
	Options      TableParams
	// Compaction is Options.Compaction read for the engine.
	Compaction Compaction
	// Dropped maps each dropped column's name to when it was dropped
	// (microseconds): its cells written until then stay invisible even if
	// a column of that name comes back.
	Dropped map[string]int64
	// Indexes are the table's secondary indexes, by name.
	Indexes []*Index
	layout  mutation.ClusteringLayout
}

// NewTable builds a table from its columns and options, checking what
// Cassandra checks of a definition: valid options (Checked, whose
// canonical form the table keeps), at least one partition
// key column, unique names, key positions without gaps, no multi-cell
// (non-frozen) collection or user type in the primary key, no static column
// without clustering columns, and no counter column.
func NewTable(keyspace, name string, id mutation.TableID, columns []*Column, opts TableParams) (*Table, error) {
	t := &Table{Keyspace: keyspace, Name: name, ID: id, byName: map[string]*Column{}, Dropped: map[string]int64{}}
	var err error
	if t.Options, t.Compaction, err = opts.Checked(); err != nil {
		return nil, err
	}
	var errs []error
	var regular, static []*Column
	for _, c := range columns {
		c = new(*c) // the table's own: Index is its place here
		if _, dup := t.byName[c.Name]; dup {
			errs = append(errs, fmt.Errorf("Multiple definition of identifier %s", c.Name))
			continue
		}
		t.byName[c.Name] = c
		switch c.Kind {
		case PartitionKey:
			t.PartitionKey = append(t.PartitionKey, c)
		case Clustering:
			t.Clustering = append(t.Clustering, c)
		case Static:
			static = append(static, c)
		default:
			regular = append(regular, c)
		}
		if c.IsPrimaryKey() && c.Type.IsMultiCell() {
			errs = append(errs, fmt.Errorf("Invalid non-frozen collection type for PRIMARY KEY component %s", c.Name))
		}
		if c.IsPrimaryKey() && c.Type.Kind == cqltype.Counter {
			errs = append(errs, fmt.Errorf("counter type is not supported for PRIMARY KEY column '%s'", c.Name))
		}
	}
	counters := 0
	for _, c := range append(static, regular...) {
		if c.Type.Kind == cqltype.Counter {
			counters++
		}
	}
	if counters > 0 && counters < len(static)+len(regular) {
		errs = append(errs, errors.New("Cannot mix counter and non counter columns in the same table"))
	}
	if counters > 0 && t.Options.DefaultTimeToLive > 0 {
		errs = append(errs, errors.New("Cannot set default_time_to_live on a table with counters"))
	}
	if len(t.PartitionKey) == 0 {
		errs = append(errs, errors.New("No PRIMARY KEY specifed (exactly one required)"))
	}
	if len(static) > 0 && len(t.Clustering) == 0 {
		errs = append(errs, errors.New("Static columns are only useful (and thus allowed) if the table has at least one clustering column"))
	}
	for _, key := range [][]*Column{t.PartitionKey, t.Clustering} {
		sortByPosition(key)
		for i, c := range key {
			if c.Position != i {
				errs = append(errs, fmt.Errorf("schema: %s.%s: %s column %s has position %d, want %d", keyspace, name, c.Kind, c.Name, c.Position, i))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sortByName(static)
	sortByName(regular)
	t.Columns = append(append(append(append([]*Column(nil), t.PartitionKey...), t.Clustering...), static...), regular...)
	for i, c := range t.Columns {
		c.Index = i
	}
	for _, c := range t.Clustering {
		t.layout = append(t.layout, mutation.ClusteringColumn{Type: c.Type, Descending: c.Descending})
	}
	return t, nil
}

// Column returns the named column, or nil.
func (t *Table) Column(name string) *Column { return t.byName[name] }

// IsCounter reports whether t is a counter table: its columns outside the
// primary key are counters.
func (t *Table) IsCounter() bool {
	for _, c := range t.Columns {
		if !c.IsPrimaryKey() && c.Type.Kind == cqltype.Counter {
			return true
		}
	}
	return false
}

// HasStatic reports whether the table has static columns.
func (t *Table) HasStatic() bool {
	for _, c := range t.Columns {
		if c.Kind == Static {
			return true
		}
	}
	return false
}

// ClusteringLayout is the byte-comparable layout of the clustering columns.
func (t *Table) ClusteringLayout() mutation.ClusteringLayout { return t.layout }

// PartitionKeyBytes is the partition key as the partitioner hashes it and
// drivers route by it: the value itself for one column, Cassandra's
// composite encoding for several.
func (t *Table) PartitionKeyBytes(values [][]byte) ([]byte, error) {
	if len(values) != len(t.PartitionKey) {
		return nil, fmt.Errorf("schema: %s.%s has %d partition key columns, got %d values", t.Keyspace, t.Name, len(t.PartitionKey), len(values))
	}
	for i, v := range values {
		if v == nil {
			return nil, fmt.Errorf("Invalid null value in condition for column %s", t.PartitionKey[i].Name)
		}
		if len(values) > 1 && len(v) > partitioner.MaxComponentLen {
			return nil, fmt.Errorf("Key length of %d is longer than maximum of %d", len(v), partitioner.MaxComponentLen)
		}
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return partitioner.CompositeKey(values...), nil
}

// MaxKeyLength is the longest partition key, and the longest clustering
// column value, Cassandra accepts: keys are written with an unsigned short
// length.
const MaxKeyLength = partitioner.MaxComponentLen

// StatementKey is PartitionKeyBytes for the key of a statement's partition,
// with Cassandra's checks of one: it is not empty, and not longer than
// MaxKeyLength. (token() hashes any key, the empty one too.)
func (t *Table) StatementKey(values [][]byte) ([]byte, error) {
	key, err := t.PartitionKeyBytes(values)
	switch {
	case err != nil:
		return nil, err
	case len(key) == 0:
		return nil, errors.New("Key may not be empty")
	case len(key) > MaxKeyLength:
		return nil, fmt.Errorf("Key length of %d is longer than maximum of %d", len(key), MaxKeyLength)
	}
	return key, nil
}

// CheckClustering refuses the clustering of a row a statement writes when
// one of its values is longer than MaxKeyLength, naming their total length
// as Cassandra does.
func (t *Table) CheckClustering(clustering []byte) error {
	if len(clustering) <= MaxKeyLength {
		return nil // every value is shorter than its encoding
	}
	values, err := t.layout.Decode(clustering)
	if err != nil {
		return err
	}
	total, longest := 0, 0
	for _, v := range values {
		total += len(v)
		longest = max(longest, len(v))
	}
	if longest > MaxKeyLength {
		return fmt.Errorf("Key length of %d is longer than maximum of %d", total, MaxKeyLength)
	}
	return nil
}

// SplitPartitionKey returns the partition key column values of key.
func (t *Table) SplitPartitionKey(key []byte) ([][]byte, error) {
	if len(t.PartitionKey) == 1 {
		return [][]byte{key}, nil
	}
	parts, err := partitioner.SplitCompositeKey(key)
	if err != nil {
		return nil, err
	}
	if len(parts) != len(t.PartitionKey) {
		return nil, fmt.Errorf("schema: %s.%s: partition key has %d components, want %d", t.Keyspace, t.Name, len(parts), len(t.PartitionKey))
	}
	return parts, nil
}

func sortByPosition(cs []*Column) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Position < cs[j-1].Position; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

func sortByName(cs []*Column) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Name < cs[j-1].Name; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}
