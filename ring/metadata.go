package ring

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sibyldb/sibyl/partitioner"
)

// Endpoint names a node by its listen address, as gossip and messaging
// reach it ("127.0.0.2").
type Endpoint string

// Location places a node for NetworkTopologyStrategy.
type Location struct {
	DataCenter string
	Rack       string
}

// Node is one member of the ring as Metadata is built from it.
type Node struct {
	Endpoint Endpoint
	Location Location
	Tokens   []partitioner.Token
}

// Metadata is the token ring at one moment: every node's tokens, sorted,
// and where each node stands. It is immutable.
type Metadata struct {
	part      partitioner.Partitioner
	tokens    []partitioner.Token // ascending
	owners    []Endpoint          // owners[i] holds tokens[i]
	locations map[Endpoint]Location
	byNode    map[Endpoint][]partitioner.Token
	endpoints []Endpoint // sorted
	epoch     uint64
	// future is the ring once the nodes joining or leaving have moved,
	// nil when none is: writes go to its replicas too (Pending).
	future *Metadata
}

// Epoch is the cluster metadata epoch whose ring this is (0 for a ring
// no metadata log made): requests routed by it carry it, so that a
// replica that knows a later ring says so.
func (m *Metadata) Epoch() uint64 { return m.epoch }

// WithEpoch is m as the ring of a metadata epoch.
func (m *Metadata) WithEpoch(epoch uint64) *Metadata {
	c := *m
	c.epoch = epoch
	return &c
}

// WithFuture is m with the ring it becomes once the nodes joining and
// leaving have moved their ranges (nil: none is moving).
func (m *Metadata) WithFuture(future *Metadata) *Metadata {
	c := *m
	c.future = future
	return &c
}

// Future is the ring m becomes once the moving nodes have moved; nil when
// none is moving.
func (m *Metadata) Future() *Metadata { return m.future }

// Pending are the nodes that replicate t under s in the future ring and
// not in m: they are being given t's range, so every write of it goes to
// them too, and each one counts on top of what the level needs (a write
// acknowledged by the old replicas alone would be lost once they hand
// the range over), as Cassandra's pending endpoints do.
func (m *Metadata) Pending(s Strategy, t partitioner.Token) []Endpoint {
	if m.future == nil {
		return nil
	}
	now := s.Replicas(m, t)
	var out []Endpoint
	for _, e := range s.Replicas(m.future, t) {
		if !slices.Contains(now, e) {
			out = append(out, e)
		}
	}
	return out
}

// NewMetadata builds the ring of nodes. A token held twice, a node listed
// twice or a token of another partitioner is an error naming it.
func NewMetadata(p partitioner.Partitioner, nodes []Node) (*Metadata, error) {
	m := &Metadata{part: p, locations: map[Endpoint]Location{}, byNode: map[Endpoint][]partitioner.Token{}}
	type held struct {
		tok   partitioner.Token
		owner Endpoint
	}
	var all []held
	for _, n := range nodes {
		if _, dup := m.locations[n.Endpoint]; dup {
			return nil, fmt.Errorf("ring: node %s is listed twice", n.Endpoint)
		}
		m.locations[n.Endpoint] = n.Location
		toks := slices.Clone(n.Tokens)
		slices.SortFunc(toks, partitioner.Compare)
		m.byNode[n.Endpoint] = toks
		for _, t := range toks {
			if t.Kind() != p.Kind() {
				return nil, fmt.Errorf("ring: node %s has token %v, not a %s token", n.Endpoint, t, p.Name())
			}
			all = append(all, held{t, n.Endpoint})
		}
	}
	for e := range m.byNode {
		m.endpoints = append(m.endpoints, e)
	}
	slices.Sort(m.endpoints)
	sort.Slice(all, func(i, j int) bool { return all[i].tok.Less(all[j].tok) })
	for i, h := range all {
		if i > 0 && partitioner.Compare(all[i-1].tok, h.tok) == 0 {
			return nil, fmt.Errorf("ring: token %v is held by both %s and %s", h.tok, all[i-1].owner, h.owner)
		}
		m.tokens = append(m.tokens, h.tok)
		m.owners = append(m.owners, h.owner)
	}
	return m, nil
}

// Partitioner is the ring's partitioner.
func (m *Metadata) Partitioner() partitioner.Partitioner { return m.part }

// SortedTokens are every token of the ring, ascending. The caller must not
// change them.
func (m *Metadata) SortedTokens() []partitioner.Token { return m.tokens }

// Owner is the node holding tokens[i].
func (m *Metadata) Owner(i int) Endpoint { return m.owners[i] }

// Endpoints are the ring's nodes, sorted. The caller must not change
// them.
func (m *Metadata) Endpoints() []Endpoint { return m.endpoints }

// TokensOf are a node's tokens, ascending (nil for a node not in the ring).
func (m *Metadata) TokensOf(e Endpoint) []partitioner.Token { return m.byNode[e] }

// Location is where a node stands, a joining one's included (zero for a
// node in neither ring).
func (m *Metadata) Location(e Endpoint) Location {
	if l, ok := m.locations[e]; ok || m.future == nil {
		return l
	}
	return m.future.locations[e]
}

// Contains reports whether a node is in the ring.
func (m *Metadata) Contains(e Endpoint) bool {
	_, ok := m.byNode[e]
	return ok
}

// FirstIndex is the index of the token whose range holds t: the first
// token at or after t, wrapping to 0 past the last. The ring must not be
// empty.
func (m *Metadata) FirstIndex(t partitioner.Token) int {
	i := sort.Search(len(m.tokens), func(i int) bool { return !m.tokens[i].Less(t) })
	if i == len(m.tokens) {
		return 0
	}
	return i
}

// RangeOf is the range that tokens[i] closes: (the token before it,
// tokens[i]], wrapping around the ring for the first.
func (m *Metadata) RangeOf(i int) partitioner.Range {
	prev := m.tokens[(i+len(m.tokens)-1)%len(m.tokens)]
	return partitioner.Range{Start: prev, End: m.tokens[i]}
}

// rangeFraction is the share of the ring in (start, end], the whole ring
// when they are equal.
func rangeFraction(p partitioner.Partitioner, start, end partitioner.Token) float64 {
	f := p.RingFraction(end) - p.RingFraction(start)
	if f <= 0 {
		f++
	}
	return f
}

// Ownership is each node's share of the ring through its primary ranges
// (what nodetool status shows as Owns with no keyspace): the shares add up
// to 1.
func (m *Metadata) Ownership() map[Endpoint]float64 {
	out := make(map[Endpoint]float64, len(m.byNode))
	for e := range m.byNode {
		out[e] = 0
	}
	for i := range m.tokens {
		r := m.RangeOf(i)
		out[m.owners[i]] += rangeFraction(m.part, r.Start, r.End)
	}
	return out
}

// EffectiveOwnership is each node's share of the data of a keyspace
// replicated by s: the ranges it holds as any replica, so the shares add up
// to the replication factor (nodetool status <keyspace>'s Owns
// (effective)).
func (m *Metadata) EffectiveOwnership(s Strategy) map[Endpoint]float64 {
	out := make(map[Endpoint]float64, len(m.byNode))
	for e := range m.byNode {
		out[e] = 0
	}
	for i := range m.tokens {
		r := m.RangeOf(i)
		f := rangeFraction(m.part, r.Start, r.End)
		for _, e := range s.Replicas(m, m.tokens[i]) {
			out[e] += f
		}
	}
	return out
}
