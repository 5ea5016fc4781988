package storage

import (
	"github.com/sibyldb/sibyl/internal/ann"
	"github.com/sibyldb/sibyl/sstable"
)

// Vector indexes: a graph (internal/ann) over the vectors each source
// holds, whose nodes stand for the partitions holding them. A query asks
// each source for the partitions of its nearest vectors; the caller reads
// them and ranks the rows, so vectors since overwritten or deleted cost a
// read, not a wrong answer. To leave room for those, a source offers
// more than the query's limit (nearestMargin).

// graphSeed fixes the graphs' level draws: a source's graph is the same
// on every build.
const graphSeed = 0x5eed

// nearestWanted is how many of its nearest vectors a source offers for a
// query that wants k rows, and searchBeam how widely its graph is
// searched: past the limit, so that vectors a newer source overwrote, and
// near misses of the approximate search, leave the true nearest in.
func nearestWanted(k int) int { return k + max(k/2, 8) }
func searchBeam(k int) int    { return max(2*k, 100) }

// vectorGraph is one source's graph and the partition of each node.
type vectorGraph struct {
	g        *ann.Graph
	prefixes [][]byte
}

func newVectorGraph(spec *VectorIndex) *vectorGraph {
	return &vectorGraph{g: ann.NewGraph(spec.Similarity, spec.Dimension, graphSeed)}
}

// add puts a posting's vector in the graph; one the graph cannot rank (a
// zero vector under cosine, a wrong length) is left out, as the write
// path refuses those.
func (v *vectorGraph) add(p sstable.Posting) {
	vec, err := ann.DecodeVector(p.Term, nil)
	if err != nil {
		return
	}
	if _, err := v.g.Add(vec); err != nil {
		return
	}
	v.prefixes = append(v.prefixes, p.Prefix)
}

// nearest calls fn with the partitions of the vectors nearest q's: as
// many distinct partitions as nearestWanted asks, searching wider while
// one partition's rows (or a row's overwritten vectors, in a memtable)
// fill the nearest places, up to a bound.
func (v *vectorGraph) nearest(q IndexQuery, fn func(prefix []byte)) {
	want := nearestWanted(q.Nearest)
	var found []ann.Neighbour
	seen := map[string]bool{}
	for k := want; ; k *= 2 {
		found = v.g.Search(q.Vector, k, searchBeam(k))
		clear(seen)
		for _, n := range found {
			seen[string(v.prefixes[n.ID])] = true
		}
		if len(seen) >= want || len(found) < k || k >= max(maxNearestWidening*want, 1024) {
			break
		}
	}
	clear(seen)
	for _, n := range found {
		if len(seen) == want {
			return
		}
		if p := v.prefixes[n.ID]; !seen[string(p)] {
			seen[string(p)] = true
			fn(p)
		}
	}
}

// maxNearestWidening bounds how much wider than asked a search goes (a
// search of 1024 is always allowed). Past it, the partitions found hold
// the nearest rows themselves, which the caller ranks.
const maxNearestWidening = 16

// buildVectorGraph builds the graph of an SSTable's sorted postings, the
// attachment its index file keeps.
func buildVectorGraph(spec *VectorIndex, postings []sstable.Posting) *vectorGraph {
	v := newVectorGraph(spec)
	for _, p := range postings {
		v.add(p)
	}
	return v
}

// loadVectorGraph reads the graph an SSTable's index file keeps; nil when
// it is missing or does not fit the postings (the index is then built
// again).
func loadVectorGraph(spec *VectorIndex, idx *sstable.Index) *vectorGraph {
	a := idx.Attachment()
	if a == nil {
		return nil
	}
	v := &vectorGraph{}
	var vectors [][]float32
	for _, p := range idx.Postings() {
		vec, err := ann.DecodeVector(p.Term, nil)
		if err != nil || ann.Rankable(spec.Similarity, spec.Dimension, vec) != nil {
			continue // add left it out too
		}
		vectors = append(vectors, vec)
		v.prefixes = append(v.prefixes, p.Prefix)
	}
	g, err := ann.DecodeGraph(a, vectors)
	if err != nil || g.Similarity() != spec.Similarity {
		return nil
	}
	v.g = g
	return v
}
