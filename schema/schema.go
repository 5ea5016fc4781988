package schema

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
)

// Schema is every keyspace a node knows, system ones included, and the
// version that names this state. It is immutable: a change returns a new
// Schema.
type Schema struct {
	keyspaces map[string]*Keyspace
	version   [16]byte
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

// Keyspace returns a keyspace, or nil.
func (s *Schema) Keyspace(name string) *Keyspace { return s.keyspaces[name] }

// Keyspaces returns every keyspace, by name.
func (s *Schema) Keyspaces() []*Keyspace {
	names := slices.Sorted(maps.Keys(s.keyspaces))
	out := make([]*Keyspace, len(names))
	for i, n := range names {
		out[i] = s.keyspaces[n]
	}
	return out
}

// Table returns a table, with Cassandra's errors when it or its keyspace
// does not exist.
func (s *Schema) Table(keyspace, name string) (*Table, error) {
	ks := s.keyspaces[keyspace]
	if ks == nil {
		return nil, fmt.Errorf("Keyspace %s does not exist", keyspace)
	}
	t := ks.Tables[name]
	if t == nil {
		return nil, fmt.Errorf("unconfigured table %s", name)
	}
	return t, nil
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
		fmt.Fprintf(&b, "keyspace %s durable=%v replication=%s\n", ks.Name, ks.DurableWrites, sortedMap(ks.Replication.Map()))
		for _, n := range slices.Sorted(maps.Keys(ks.Types)) {
			fmt.Fprintf(&b, "type %s %s\n", n, ks.Types[n].SchemaString())
			for i, f := range ks.Types[n].FieldNames {
				fmt.Fprintf(&b, " field %s %s\n", f, ks.Types[n].Params[i].SchemaString())
			}
		}
		for _, n := range slices.Sorted(maps.Keys(ks.Tables)) {
			t := ks.Tables[n]
			o := t.Options
			fmt.Fprintf(&b, "table %s %x comment=%q gc=%d ttl=%d compaction=%s compression=%s caching=%s\n",
				n, t.ID, o.Comment, o.GCGraceSeconds, o.DefaultTimeToLive, sortedMap(o.Compaction), sortedMap(o.Compression), sortedMap(o.Caching))
			for _, c := range t.Columns {
				fmt.Fprintf(&b, " column %s %s %s %d %s\n", c.Name, c.Type.SchemaString(), c.Kind, c.Position, c.ClusteringOrder())
			}
		}
	}
	return nameUUID([]byte(b.String()))
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
