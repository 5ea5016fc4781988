package schema

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Replication strategy classes, by their full names as system_schema
// shows them.
const (
	SimpleStrategy          = "org.apache.cassandra.locator.SimpleStrategy"
	NetworkTopologyStrategy = "org.apache.cassandra.locator.NetworkTopologyStrategy"
	LocalStrategy           = "org.apache.cassandra.locator.LocalStrategy"
)

// DefaultKeyspaceRF is the replication factor a keyspace gets where its
// replication names none (Cassandra's default_keyspace_rf).
const DefaultKeyspaceRF = 1

// Replication is a keyspace's replication read and checked: the class by
// its full name, and the replication factor of SimpleStrategy or of each
// data centre of NetworkTopologyStrategy. The ring places replicas by it.
type Replication struct {
	Class string
	// Factor is SimpleStrategy's replication_factor.
	Factor int
	// DataCenters are NetworkTopologyStrategy's factors by data centre.
	DataCenters map[string]int
}

// Map is the replication as system_schema stores it.
func (r Replication) Map() map[string]string {
	m := map[string]string{"class": r.Class}
	switch r.Class {
	case SimpleStrategy:
		m["replication_factor"] = strconv.Itoa(r.Factor)
	case NetworkTopologyStrategy:
		for dc, n := range r.DataCenters {
			m[dc] = strconv.Itoa(n)
		}
	}
	return m
}

// SingleCopy reports whether the keyspace's data has one replica: its
// factor, or the sum of its data centres', is at most 1, or every node
// keeps its own (LocalStrategy).
func (r Replication) SingleCopy() bool {
	total := r.Factor
	for _, n := range r.DataCenters {
		total += n
	}
	return r.Class == LocalStrategy || total <= 1
}

// localReplication is the system keyspaces' replication.
var localReplication = Replication{Class: LocalStrategy}

// ParseReplication reads and checks a keyspace's replication map as
// Cassandra 4.1 does, with its messages (all configuration errors but the
// refusal of LocalStrategy, an invalid request). dataCenters are the data
// centres the cluster knows, which NetworkTopologyStrategy's
// replication_factor expands to and every data centre it names must be
// among; nil leaves them unchecked. previous is the keyspace's replication
// before an ALTER (nil for a CREATE), whose factors fill in what the new
// map leaves out.
func ParseReplication(keyspace string, given map[string]string, dataCenters []string, previous map[string]string) (Replication, error) {
	opts := maps.Clone(given)
	name, ok := opts["class"]
	if !ok {
		return Replication{}, configErrorf("Missing replication strategy class")
	}
	delete(opts, "class")
	class := name
	if !strings.Contains(name, ".") {
		class = "org.apache.cassandra.locator." + name
	}
	switch class {
	case SimpleStrategy, NetworkTopologyStrategy:
	case LocalStrategy:
		return Replication{}, errors.New("Unable to use given strategy class: LocalStrategy is reserved for internal use.")
	case "org.apache.cassandra.locator.OldNetworkTopologyStrategy":
		return Replication{}, configErrorf("The support for the OldNetworkTopologyStrategy has been removed in C* version 4.0. The keyspace strategy should be switch to NetworkTopologyStrategy")
	default:
		return Replication{}, configErrorf("Unable to find replication strategy class '%s'", class)
	}
	r := Replication{Class: class}
	if class == SimpleStrategy {
		if _, ok := opts["replication_factor"]; !ok {
			opts["replication_factor"] = strconv.Itoa(DefaultKeyspaceRF)
			if rf, ok := previous["replication_factor"]; ok {
				opts["replication_factor"] = rf
			}
		}
		n, err := parseReplicationFactor(opts["replication_factor"])
		if err != nil {
			return r, err
		}
		for _, k := range slices.Sorted(maps.Keys(opts)) {
			if k != "replication_factor" {
				return r, configErrorf("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s", k, keyspace)
			}
		}
		r.Factor = n
		return r, nil
	}
	expandDataCenters(opts, previous, dataCenters)
	r.DataCenters = map[string]int{}
	for _, dc := range slices.Sorted(maps.Keys(opts)) {
		if strings.EqualFold(dc, "replication_factor") {
			return r, configErrorf("replication_factor should not appear as an option at construction time for NetworkTopologyStrategy")
		}
		n, err := parseReplicationFactor(opts[dc])
		if err != nil {
			return r, err
		}
		r.DataCenters[dc] = n
	}
	if len(r.DataCenters) == 0 {
		return r, configErrorf("Configuration for at least one datacenter must be present")
	}
	if dataCenters != nil {
		for _, dc := range slices.Sorted(maps.Keys(r.DataCenters)) {
			if !slices.Contains(dataCenters, dc) {
				return r, configErrorf("Unrecognized strategy option {%s} passed to NetworkTopologyStrategy for keyspace %s", dc, keyspace)
			}
		}
	}
	return r, nil
}

// expandDataCenters does what NetworkTopologyStrategy makes of its map
// before reading it: replication_factor (or, with no data centre named,
// the previous one, or the default) becomes the factor of every known data
// centre the map leaves out; an ALTER keeps the data centres it does not
// name; and data centres of factor "0" go. A replication_factor that does
// not read leaves the data centres as they were named, as in Cassandra.
func expandDataCenters(opts, previous map[string]string, dataCenters []string) {
	if len(opts) == 0 {
		opts["replication_factor"] = strconv.Itoa(DefaultKeyspaceRF)
		if rf, ok := previous["replication_factor"]; ok {
			opts["replication_factor"] = rf
		}
	}
	rf, ok := opts["replication_factor"]
	delete(opts, "replication_factor")
	switch {
	case !ok && len(opts) == 0:
		rf, ok = previous["replication_factor"]
	case ok:
		for dc, n := range previous {
			if _, named := opts[dc]; !named && dc != "replication_factor" && dc != "class" {
				opts[dc] = n
			}
		}
	}
	if ok {
		if _, err := parseReplicationFactor(rf); err != nil {
			return
		}
		for _, dc := range dataCenters {
			if _, named := opts[dc]; !named {
				opts[dc] = rf
			}
		}
	}
	for dc, n := range opts {
		if n == "0" {
			delete(opts, dc)
		}
	}
}

// parseReplicationFactor reads a replication factor as Cassandra does,
// with its messages. "3/1" (three replicas, one transient) is Cassandra's
// transient replication, which it has off by default and Sibyl does not
// have.
func parseReplicationFactor(s string) (int, error) {
	full, transient, isTransient := strings.Cut(s, "/")
	if isTransient {
		if strings.Contains(transient, "/") || transient == "" {
			return 0, configErrorf("Replication factor format is <replicas> or <replicas>/<transient>")
		}
		for _, part := range []string{full, transient} {
			if _, err := strconv.ParseInt(part, 10, 32); err != nil {
				return 0, configErrorf("For input string: \"%s\"", part)
			}
		}
		return 0, configErrorf("Transient replication is not enabled on this node")
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, configErrorf("For input string: \"%s\"", s)
	}
	if n < 0 {
		return 0, configErrorf("Replication factor must be non-negative, found %d", n)
	}
	return int(n), nil
}
