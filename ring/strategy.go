package ring

import (
	"slices"

	"github.com/sibyldb/sibyl/partitioner"
)

// Strategy places a keyspace's replicas on the ring.
type Strategy interface {
	// Replicas are the nodes that hold the data of token t, the first of
	// them the owner of t's range. There are fewer than the replication
	// factor when the ring has too few nodes.
	Replicas(m *Metadata, t partitioner.Token) []Endpoint
	// ReplicationFactor is the number of replicas of each token.
	ReplicationFactor() int
	// DataCenterFactor is the number of replicas in data centre dc, which
	// the LOCAL_ and EACH_ consistency levels count against. A strategy
	// that does not place by data centre answers its whole factor.
	DataCenterFactor(dc string) int
}

// SimpleStrategy puts replicas on the next distinct nodes clockwise, with
// no regard to data centres or racks.
type SimpleStrategy struct{ Factor int }

func (s SimpleStrategy) Replicas(m *Metadata, t partitioner.Token) []Endpoint {
	if len(m.tokens) == 0 || s.Factor == 0 {
		return nil
	}
	want := min(s.Factor, len(m.byNode))
	out := make([]Endpoint, 0, want)
	start := m.FirstIndex(t)
	for k := 0; k < len(m.tokens) && len(out) < want; k++ {
		if e := m.owners[(start+k)%len(m.tokens)]; !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func (s SimpleStrategy) ReplicationFactor() int      { return s.Factor }
func (s SimpleStrategy) DataCenterFactor(string) int { return s.Factor }

// NetworkTopologyStrategy keeps Factors[dc] replicas in each data centre,
// walking the ring clockwise once for every data centre at a time. A
// replica goes to a rack without one; a rack gets a second only when the
// data centre has fewer racks than replicas, and then the first nodes met
// on used racks take the surplus.
type NetworkTopologyStrategy struct{ Factors map[string]int }

func (s NetworkTopologyStrategy) Replicas(m *Metadata, t partitioner.Token) []Endpoint {
	if len(m.tokens) == 0 {
		return nil
	}
	// Each data centre's nodes bound how many replicas it can place; its
	// racks, how many may share a rack.
	nodes, racks := map[string]int{}, map[string]map[string]bool{}
	for e := range m.byNode {
		loc := m.locations[e]
		nodes[loc.DataCenter]++
		if racks[loc.DataCenter] == nil {
			racks[loc.DataCenter] = map[string]bool{}
		}
		racks[loc.DataCenter][loc.Rack] = true
	}
	type dcState struct {
		left        int             // replicas still to place
		rackRepeats int             // replicas that may still go to a rack already used
		usedRacks   map[string]bool // racks holding a replica
	}
	dcs := map[string]*dcState{}
	pending := 0
	for dc, rf := range s.Factors {
		if left := min(rf, nodes[dc]); left > 0 {
			dcs[dc] = &dcState{left: left, rackRepeats: rf - len(racks[dc]), usedRacks: map[string]bool{}}
			pending++
		}
	}
	var out []Endpoint
	start := m.FirstIndex(t)
	for k := 0; k < len(m.tokens) && pending > 0; k++ {
		e := m.owners[(start+k)%len(m.tokens)]
		loc := m.locations[e]
		st := dcs[loc.DataCenter]
		if st == nil || st.left == 0 || slices.Contains(out, e) {
			continue
		}
		switch {
		case !st.usedRacks[loc.Rack]:
			st.usedRacks[loc.Rack] = true
		case st.rackRepeats > 0:
			st.rackRepeats--
		default:
			continue // its rack has a replica, and other racks are still to come
		}
		out = append(out, e)
		if st.left--; st.left == 0 {
			pending--
		}
	}
	return out
}

func (s NetworkTopologyStrategy) ReplicationFactor() int {
	n := 0
	for _, rf := range s.Factors {
		n += rf
	}
	return n
}

func (s NetworkTopologyStrategy) DataCenterFactor(dc string) int { return s.Factors[dc] }

// LocalStrategy keeps the data on the node that writes it only: the
// system keyspaces, which every node has its own of.
type LocalStrategy struct{ Local Endpoint }

func (s LocalStrategy) Replicas(*Metadata, partitioner.Token) []Endpoint { return []Endpoint{s.Local} }
func (s LocalStrategy) ReplicationFactor() int                           { return 1 }
func (s LocalStrategy) DataCenterFactor(string) int                      { return 1 }
