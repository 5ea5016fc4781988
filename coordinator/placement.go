package coordinator

import (
	"fmt"
	"slices"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// Strategy is how keyspace ks places its replicas; self is this node, the
// one replica of a LocalStrategy keyspace.
func Strategy(ks *schema.Keyspace, self ring.Endpoint) (ring.Strategy, error) {
	switch r := ks.Replication; r.Class {
	case schema.SimpleStrategy:
		return ring.SimpleStrategy{Factor: r.Factor}, nil
	case schema.NetworkTopologyStrategy:
		return ring.NetworkTopologyStrategy{Factors: r.DataCenters}, nil
	case schema.LocalStrategy:
		return ring.LocalStrategy{Local: self}, nil
	}
	return nil, fmt.Errorf("coordinator: keyspace %s: no replication strategy %q", ks.Name, ks.Replication.Class)
}

// sortedDCs are a strategy's data centres in name order, so that the data
// centre a failure names does not depend on a map's order.
func sortedDCs(nts ring.NetworkTopologyStrategy) []string {
	dcs := make([]string, 0, len(nts.Factors))
	for dc := range nts.Factors {
		dcs = append(dcs, dc)
	}
	slices.Sort(dcs)
	return dcs
}

// placement is where a partition of a table lives: its replicas and how
// the keyspace places them.
type placement struct {
	replicas []ring.Endpoint
	// pending are the nodes being given the partition's range: writes go
	// to them too (the write path fills it in), reads do not.
	pending  []ring.Endpoint
	strategy ring.Strategy
}

// lookups are the tables by id and the keyspaces' strategies of one
// schema, made once per schema.
type lookups struct {
	schema     *schema.Schema
	tables     map[mutation.TableID]*schema.Table
	strategies map[string]ring.Strategy
	errs       map[string]error
}

func newLookups(sch *schema.Schema, self ring.Endpoint) *lookups {
	l := &lookups{schema: sch, tables: map[mutation.TableID]*schema.Table{}, strategies: map[string]ring.Strategy{}, errs: map[string]error{}}
	for _, ks := range sch.Keyspaces() {
		for _, t := range ks.Tables {
			l.tables[t.ID] = t
		}
		if s, err := Strategy(ks, self); err != nil {
			l.errs[ks.Name] = err
		} else {
			l.strategies[ks.Name] = s
		}
	}
	return l
}

func (l *lookups) strategy(keyspace string) (ring.Strategy, error) {
	if s, ok := l.strategies[keyspace]; ok {
		return s, nil
	}
	if err := l.errs[keyspace]; err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("coordinator: no keyspace %s", keyspace)
}

// place finds the replicas of a table's partition at token: a table of a
// node-local system keyspace lives on this node alone.
func (l *lookups) place(t *schema.Table, token partitioner.Token, m *ring.Metadata, self ring.Endpoint) (placement, error) {
	if schema.IsNodeLocal(t.Keyspace) {
		return placement{replicas: []ring.Endpoint{self}, strategy: ring.LocalStrategy{Local: self}}, nil
	}
	s, err := l.strategy(t.Keyspace)
	if err != nil {
		return placement{}, err
	}
	return placement{replicas: s.Replicas(m, token), strategy: s}, nil
}

// ReadContacts chooses the replicas a read at level l asks first, and the
// spares that replace any of them that fails: only live replicas whose
// answers count towards the level (the local data centre's for the LOCAL_
// levels), this node first, then the local data centre's, then the
// others', each in ring order. EACH_QUORUM asks a quorum in every data
// centre.
//
// score, when given, orders the replicas of each of those groups fastest
// first (orderByScore: only when ring order is far from the best), as a
// dynamic snitch does.
func ReadContacts(l request.Consistency, s ring.Strategy, localDC string, self ring.Endpoint, replicas []ring.Endpoint,
	alive func(ring.Endpoint) bool, locate func(ring.Endpoint) ring.Location, score func(ring.Endpoint) float64) (contacts, spares []ring.Endpoint) {
	var ordered, local, remote []ring.Endpoint
	for _, r := range replicas {
		if !alive(r) || !counts(l, s, localDC, r, locate) {
			continue
		}
		switch {
		case r == self:
			ordered = append(ordered, r)
		case locate(r).DataCenter == localDC || !placesByDC(s):
			local = append(local, r)
		default:
			remote = append(remote, r)
		}
	}
	ordered = append(ordered, orderByScore(local, score, defaultBadness)...)
	ordered = append(ordered, orderByScore(remote, score, defaultBadness)...)
	if nts, ok := eachQuorum(l, s); ok {
		need := map[string]int{}
		for dc, f := range nts.Factors {
			if f > 0 {
				need[dc] = quorum(f)
			}
		}
		for _, r := range ordered {
			if dc := locate(r).DataCenter; need[dc] > 0 {
				need[dc]--
				contacts = append(contacts, r)
			} else {
				spares = append(spares, r)
			}
		}
		return contacts, spares
	}
	n := min(BlockFor(l, s, localDC), len(ordered))
	return ordered[:n], ordered[n:]
}

// spareFor takes from spares the replica that best replaces failed one:
// for EACH_QUORUM one of its data centre, else the first.
func spareFor(l request.Consistency, s ring.Strategy, failed ring.Endpoint, spares []ring.Endpoint, locate func(ring.Endpoint) ring.Location) (ring.Endpoint, []ring.Endpoint, bool) {
	_, each := eachQuorum(l, s)
	for i, r := range spares {
		if !each || locate(r).DataCenter == locate(failed).DataCenter {
			return r, slices.Delete(slices.Clone(spares), i, i+1), true
		}
	}
	return "", spares, false
}
