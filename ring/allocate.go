package ring

import (
	"math/rand/v2"
	"slices"

	"github.com/sibyldb/sibyl/partitioner"
)

// AllocateTokens chooses n tokens for a node joining the ring m so that
// ownership evens out. An empty ring gets n evenly spaced tokens from a
// random offset. Otherwise each new token takes its share, 1/(nodes+1)/n
// of the ring, from the largest range of the node that owns the most at
// that moment (at most three quarters of that range), so the nodes already
// there give up equal amounts: three nodes joining one after another own a
// third each.
//
// This is not Cassandra's replication-aware allocator; like it, it needs
// the ring as it stands, so nodes join one at a time.
func AllocateTokens(m *Metadata, n int, r *rand.Rand) []partitioner.Token {
	p := m.part
	taken := map[partitioner.Token]bool{}
	for _, t := range m.tokens {
		taken[t] = true
	}
	var out []partitioner.Token
	// place adds the token at fraction f, moved past any token already
	// there (or the minimum token, which no key has).
	place := func(f float64) {
		for {
			t := p.TokenAtFraction(f)
			if !taken[t] && !t.IsMinimum() {
				taken[t] = true
				out = append(out, t)
				return
			}
			f += 1e-15
			if f >= 1 {
				f = 0
			}
		}
	}
	if len(m.tokens) == 0 {
		offset := r.Float64() / float64(n)
		for i := 0; i < n; i++ {
			place(offset + float64(i)/float64(n))
		}
		slices.SortFunc(out, partitioner.Compare)
		return out
	}
	type span struct {
		start, length float64 // the range (start, start+length], as ring fractions
	}
	spans := map[Endpoint][]span{}
	owned := map[Endpoint]float64{}
	for i := range m.tokens {
		r := m.RangeOf(i)
		f := rangeFraction(p, r.Start, r.End)
		e := m.owners[i]
		spans[e] = append(spans[e], span{p.RingFraction(r.Start), f})
		owned[e] += f
	}
	share := 1 / float64(len(spans)+1) / float64(n)
	for i := 0; i < n; i++ {
		// The most loaded node (by name on a tie, for a stable choice)
		// gives up part of its largest range.
		var donor Endpoint
		for e, o := range owned {
			if donor == "" || o > owned[donor] || o == owned[donor] && e < donor {
				donor = e
			}
		}
		largest := 0
		for j, s := range spans[donor] {
			if s.length > spans[donor][largest].length {
				largest = j
			}
		}
		s := &spans[donor][largest]
		take := min(share, 0.75*s.length)
		start := s.start + take
		if start >= 1 {
			start--
		}
		place(start)
		// The new token closes (s.start, start]: the donor keeps the rest.
		s.start, s.length = start, s.length-take
		owned[donor] -= take
	}
	slices.SortFunc(out, partitioner.Compare)
	return out
}
