package schema

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
)

// Schema is every keyspace a node knows, system ones included, and the
// version that names this state. It is immutable: a change returns a new
// Schema.
type Schema struct {
	keyspaces map[string]*Keyspace
	version   [16]byte
	epoch     uint64
}

// New returns the schema of the given user keyspaces plus the system ones.
func New(user map[string]*Keyspace) *Schema {
	s := &Schema{keyspaces: maps.Clone(user)}
	if s.keyspaces == nil {
		s.keyspaces = map[string]*Keyspace{}
	}
	for _, ks := range SystemKeyspaces() {
		s.keyspaces[ks.Name] = ks
	}
	s.version = s.digest()
	return s
}

// Version is the schema version: a name-based UUID of the user schema's
// definitions, so that nodes with the same schema agree on it, and every
// change gives a new one.
func (s *Schema) Version() [16]byte { return s.version }

// Epoch is the cluster metadata epoch of the last schema change this
// schema holds (0 when it was made from nothing or from disk alone): a
// change made against it commits only if no other came in between.
func (s *Schema) Epoch() uint64 { return s.epoch }

// WithEpoch is s as the schema of a metadata epoch.
func (s *Schema) WithEpoch(epoch uint64) *Schema {
	c := *s
	c.epoch = epoch
	return &c
}

// Keyspace returns a keyspace, virtual ones included, or nil.
func (s *Schema) Keyspace(name string) *Keyspace {
	if ks := s.keyspaces[name]; ks != nil {
		return ks
	}
	return virtualKeyspaces[name]
}

// Keyspaces returns every keyspace but the virtual ones, by name.
func (s *Schema) Keyspaces() []*Keyspace {
	names := slices.Sorted(maps.Keys(s.keyspaces))
	out := make([]*Keyspace, len(names))
	for i, n := range names {
		out[i] = s.keyspaces[n]
	}
	return out
}

// Table returns a table, with Cassandra 4.1's errors when it or its
// keyspace does not exist (those of the statements that read and write
// rows: SELECT, INSERT, UPDATE, DELETE, BATCH, TRUNCATE).
func (s *Schema) Table(keyspace, name string) (*Table, error) {
	ks := s.Keyspace(keyspace)
	if ks == nil {
		return nil, fmt.Errorf("keyspace %s does not exist", keyspace)
	}
	t := ks.Tables[name]
	if t == nil {
		return nil, fmt.Errorf("table %s does not exist", name)
	}
	return t, nil
}

// TableByID finds a table by its id, or nil.
func (s *Schema) TableByID(id mutation.TableID) *Table {
	for _, ks := range s.keyspaces {
		for _, t := range ks.Tables {
			if t.ID == id {
				return t
			}
		}
	}
	return nil
}

// User returns the user keyspaces (what Load gives back).
func (s *Schema) User() map[string]*Keyspace {
	out := map[string]*Keyspace{}
	for n, ks := range s.keyspaces {
		if !IsSystemKeyspace(n) {
			out[n] = ks
		}
	}
	return out
}

// WithKeyspace returns the schema with ks added or replaced.
func (s *Schema) WithKeyspace(ks *Keyspace) *Schema {
	user := s.User()
	user[ks.Name] = ks
	return New(user)
}

// WithoutKeyspace returns the schema without a keyspace.
func (s *Schema) WithoutKeyspace(name string) *Schema {
	user := s.User()
	delete(user, name)
	return New(user)
}

// WithTable returns the schema with t added to (or replaced in) its
// keyspace, which must exist.
func (s *Schema) WithTable(t *Table) (*Schema, error) {
	ks := s.keyspaces[t.Keyspace]
	if ks == nil {
		return nil, fmt.Errorf("Keyspace %s does not exist", t.Keyspace)
	}
	return s.WithKeyspace(ks.withTable(t)), nil
}

// WithoutTable returns the schema without a table.
func (s *Schema) WithoutTable(keyspace, name string) *Schema {
	ks := s.keyspaces[keyspace]
	if ks == nil {
		return s
	}
	c := *ks
	c.Tables = maps.Clone(ks.Tables)
	delete(c.Tables, name)
	return s.WithKeyspace(&c)
}

// WithType returns the schema with a user type added or replaced.
func (s *Schema) WithType(t *cqltype.Type) (*Schema, error) {
	ks := s.keyspaces[t.Keyspace]
	if ks == nil {
		return nil, fmt.Errorf("Keyspace %s does not exist", t.Keyspace)
	}
	return s.WithKeyspace(ks.withType(t)), nil
}

// digest hashes a canonical rendering of the user schema.
func (s *Schema) digest() [16]byte {
	var b strings.Builder
	for _, ks := range s.Keyspaces() {
		if IsSystemKeyspace(ks.Name) {
			continue
		}
		b.WriteString(keyspaceDescription(ks))
		for _, n := range slices.Sorted(maps.Keys(ks.Types)) {
			b.WriteString(typeDescription(ks.Types[n]))
		}
		for _, n := range slices.Sorted(maps.Keys(ks.Tables)) {
			b.WriteString(tableDescription(ks.Tables[n]))
		}
	}
	return nameUUID([]byte(b.String()))
}

// keyspaceDescription, typeDescription and tableDescription spell out a
// definition: equal definitions give equal text. The schema version is
// their digest, and Changes compares them.
func keyspaceDescription(ks *Keyspace) string {
	return fmt.Sprintf("keyspace %s durable=%v replication=%s\n", ks.Name, ks.DurableWrites, sortedMap(ks.Replication.Map()))
}

func typeDescription(t *cqltype.Type) string {
	var b strings.Builder
	fmt.Fprintf(&b, "type %s %s\n", t.Name, t.SchemaString())
	for i, f := range t.FieldNames {
		fmt.Fprintf(&b, " field %s %s\n", f, t.Params[i].SchemaString())
	}
	return b.String()
}

func tableDescription(t *Table) string {
	var b strings.Builder
	o := t.Options
	fmt.Fprintf(&b, "table %s %x comment=%q gc=%d ttl=%d compaction=%s compression=%s caching=%s\n",
		t.Name, t.ID, o.Comment, o.GCGraceSeconds, o.DefaultTimeToLive, sortedMap(o.Compaction), sortedMap(o.Compression), sortedMap(o.Caching))
	for _, c := range t.Columns {
		fmt.Fprintf(&b, " column %s %s %s %d %s\n", c.Name, c.Type.SchemaString(), c.Kind, c.Position, c.ClusteringOrder())
	}
	return b.String()
}

// Change is one schema change as clients hear of it (a Schema_change
// result, a SCHEMA_CHANGE event).
type Change struct {
	Change   string // CREATED, UPDATED, DROPPED
	Target   string // KEYSPACE, TABLE, TYPE
	Keyspace string
	Name     string // the table or type; empty for a keyspace
}

// Changes are the changes of the user schema from old to cur, in the
// order Cassandra announces them: a keyspace created before its types and
// tables, one dropped after them.
func Changes(old, cur *Schema) []Change {
	var out []Change
	names := map[string]bool{}
	for n := range old.User() {
		names[n] = true
	}
	for n := range cur.User() {
		names[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		was, is := old.keyspaces[name], cur.keyspaces[name]
		var wasTypes, isTypes map[string]*cqltype.Type
		var wasTables, isTables map[string]*Table
		if was != nil {
			wasTypes, wasTables = was.Types, was.Tables
		}
		if is != nil {
			isTypes, isTables = is.Types, is.Tables
		}
		switch {
		case was == nil:
			out = append(out, Change{Change: "CREATED", Target: "KEYSPACE", Keyspace: name})
		case is != nil && keyspaceDescription(was) != keyspaceDescription(is):
			out = append(out, Change{Change: "UPDATED", Target: "KEYSPACE", Keyspace: name})
		}
		out = append(out, elementChanges(name, "TYPE", wasTypes, isTypes, typeDescription)...)
		out = append(out, elementChanges(name, "TABLE", wasTables, isTables, tableDescription)...)
		if is == nil {
			out = append(out, Change{Change: "DROPPED", Target: "KEYSPACE", Keyspace: name})
		}
	}
	return out
}

// elementChanges are the types or tables of one keyspace created,
// changed or dropped from was to is, by name.
func elementChanges[T any](keyspace, target string, was, is map[string]T, describe func(T) string) []Change {
	var out []Change
	names := slices.Sorted(maps.Keys(was))
	for n := range is {
		if _, ok := was[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		w, inWas := was[n]
		i, inIs := is[n]
		switch {
		case !inWas:
			out = append(out, Change{Change: "CREATED", Target: target, Keyspace: keyspace, Name: n})
		case !inIs:
			out = append(out, Change{Change: "DROPPED", Target: target, Keyspace: keyspace, Name: n})
		case describe(w) != describe(i):
			out = append(out, Change{Change: "UPDATED", Target: target, Keyspace: keyspace, Name: n})
		}
	}
	return out
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + m[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}
