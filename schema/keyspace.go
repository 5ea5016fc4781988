package schema

import (
	"maps"

	"github.com/sibyldb/sibyl/cqltype"
)

// Keyspace is a keyspace's definition with its tables and user types.
type Keyspace struct {
	Name          string
	Replication   Replication
	DurableWrites bool
	Tables        map[string]*Table
	Types         map[string]*cqltype.Type
}

// NewKeyspace returns an empty keyspace of a replication ParseReplication
// read.
func NewKeyspace(name string, replication Replication, durableWrites bool) *Keyspace {
	return &Keyspace{Name: name, Replication: replication, DurableWrites: durableWrites,
		Tables: map[string]*Table{}, Types: map[string]*cqltype.Type{}}
}

// withTable returns a copy of the keyspace with t added or replaced.
func (k *Keyspace) withTable(t *Table) *Keyspace {
	c := *k
	c.Tables = maps.Clone(k.Tables)
	c.Tables[t.Name] = t
	return &c
}

// withType returns a copy of the keyspace with a user type added or
// replaced.
func (k *Keyspace) withType(t *cqltype.Type) *Keyspace {
	c := *k
	c.Types = maps.Clone(k.Types)
	c.Types[t.Name] = t
	return &c
}
