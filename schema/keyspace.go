package schema

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
)

// Replication strategy classes, by their full names as system_schema
// shows them.
const (
	SimpleStrategy          = "org.apache.cassandra.locator.SimpleStrategy"
	NetworkTopologyStrategy = "org.apache.cassandra.locator.NetworkTopologyStrategy"
	LocalStrategy           = "org.apache.cassandra.locator.LocalStrategy"
)

// Keyspace is a keyspace's definition with its tables and user types.
type Keyspace struct {
	Name          string
	Replication   map[string]string // "class" and the strategy's options
	DurableWrites bool
	Tables        map[string]*Table
	Types         map[string]*cqltype.Type
}

// NewKeyspace checks and normalizes a replication map (the class by its
// short or full name) and returns an empty keyspace.
func NewKeyspace(name string, replication map[string]string, durableWrites bool) (*Keyspace, error) {
	r, err := NormalizeReplication(replication)
	if err != nil {
		return nil, err
	}
	return &Keyspace{Name: name, Replication: r, DurableWrites: durableWrites,
		Tables: map[string]*Table{}, Types: map[string]*cqltype.Type{}}, nil
}

// NormalizeReplication validates a replication map the way Cassandra's
// strategies do and returns it with the class's full name.
func NormalizeReplication(replication map[string]string) (map[string]string, error) {
	r := maps.Clone(replication)
	class, ok := r["class"]
	if !ok {
		return nil, errors.New("Missing replication strategy class")
	}
	full := ""
	for _, c := range []string{SimpleStrategy, NetworkTopologyStrategy, LocalStrategy} {
		if class == c || strings.HasSuffix(c, "."+class) {
			full = c
		}
	}
	switch full {
	case "":
		return nil, fmt.Errorf("Unable to find replication strategy class '%s'", class)
	case LocalStrategy:
		return nil, errors.New("Unable to use given strategy class: LocalStrategy is reserved for internal use.")
	}
	r["class"] = full
	var errs []error
	for k, v := range r {
		if k == "class" {
			continue
		}
		if full == SimpleStrategy && k != "replication_factor" {
			errs = append(errs, fmt.Errorf("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace", k))
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("Replication factor must be non-negative; found %s", v))
		}
	}
	if _, ok := r["replication_factor"]; full == SimpleStrategy && !ok {
		errs = append(errs, errors.New("SimpleStrategy requires a replication_factor strategy option."))
	}
	return r, errors.Join(errs...)
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
