package ann

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Graph is an HNSW graph (Malkov and Yashunin): every vector is a node on
// level 0 and, with probability falling by a factor of M per level, on the
// levels above, each level linking a node to its nearest neighbours chosen
// so the links spread in different directions. A search descends greedily
// from the top level's entry node and explores level 0 keeping the ef
// nearest nodes found. Nodes are numbered in the order they were added.
// A Graph is not safe for concurrent use while nodes are added.
type Graph struct {
	sim            Similarity
	dim            int
	m              int // links per node above level 0; level 0 keeps 2m
	efConstruction int
	vectors        [][]float32 // normalized for cosine, as given otherwise
	links          [][][]int32 // links[node][level]
	entry          int32
	rng            *rand.Rand
	// adding is Add's visited set, kept between calls: searches of their
	// own may run at once, Add alone.
	adding visitedSet
}

// visitedSet marks the nodes a search has reached; reset clears only the
// words it set, so reusing one costs what the search touched.
type visitedSet struct {
	words   []uint64
	touched []int32
}

func (v *visitedSet) reset(nodes int) {
	for _, w := range v.touched {
		v.words[w] = 0
	}
	v.touched = v.touched[:0]
	if need := (nodes + 63) / 64; len(v.words) < need {
		v.words = append(v.words, make([]uint64, need-len(v.words))...)
	}
}

// visit marks id, and reports whether it was not marked yet.
func (v *visitedSet) visit(id int32) bool {
	w, bit := id/64, uint64(1)<<(id%64)
	if v.words[w]&bit != 0 {
		return false
	}
	if v.words[w] == 0 {
		v.touched = append(v.touched, w)
	}
	v.words[w] |= bit
	return true
}

// Graph parameters: Cassandra's defaults for its vector indexes (16
// links, a construction beam of 100).
const (
	DefaultM              = 16
	DefaultEfConstruction = 100
)

// NewGraph returns an empty graph of vectors with dim elements, whose
// levels are drawn from a generator seeded with seed.
func NewGraph(sim Similarity, dim int, seed uint64) *Graph {
	return &Graph{sim: sim, dim: dim, m: DefaultM, efConstruction: DefaultEfConstruction, entry: -1,
		rng: rand.New(rand.NewPCG(seed, uint64(dim)))}
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.vectors) }

// Similarity is the function the graph ranks by.
func (g *Graph) Similarity() Similarity { return g.sim }

// prepare returns v as the graph compares it: a unit vector for cosine.
func (g *Graph) prepare(v []float32) []float32 {
	if g.sim != Cosine {
		return v
	}
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = f * inv
	}
	return out
}

// closeness ranks b against a: higher is nearer.
func (g *Graph) closeness(a, b []float32) float32 {
	if g.sim == Euclidean {
		return -SquaredDistance(a, b)
	}
	return Dot(a, b)
}

// score turns a closeness into the similarity CQL reports.
func (g *Graph) score(c float32) float32 {
	if g.sim == Euclidean {
		return 1 / (1 - c)
	}
	return (1 + c) / 2
}

func (g *Graph) maxLinks(level int) int {
	if level == 0 {
		return 2 * g.m
	}
	return g.m
}

func (g *Graph) randomLevel() int {
	ml := 1 / math.Log(float64(g.m))
	level := int(-math.Log(1-g.rng.Float64()) * ml)
	return min(level, 30)
}

// Rankable reports why a graph of sim over dim-element vectors cannot
// rank v (a wrong length, a zero vector under cosine), or nil: the one
// rule for what a graph takes.
func Rankable(sim Similarity, dim int, v []float32) error {
	if len(v) != dim {
		return fmt.Errorf("ann: a vector of %d elements in a graph of %d", len(v), dim)
	}
	if sim == Cosine && IsZero(v) {
		return errors.New("ann: a zero vector has no cosine")
	}
	return nil
}

// Add adds v (dim elements; for cosine, not zero) as the next node and
// returns its number.
func (g *Graph) Add(v []float32) (int32, error) {
	if err := Rankable(g.sim, g.dim, v); err != nil {
		return 0, err
	}
	id := int32(len(g.vectors))
	q := g.prepare(v)
	level := g.randomLevel()
	g.vectors = append(g.vectors, q)
	g.links = append(g.links, make([][]int32, level+1))
	if g.entry < 0 {
		g.entry = id
		return id, nil
	}
	top := len(g.links[g.entry]) - 1
	cur := g.entry
	for l := top; l > level; l-- {
		cur = g.greedy(q, cur, l)
	}
	entries := []int32{cur}
	for l := min(level, top); l >= 0; l-- {
		found := g.searchLevel(q, entries, g.efConstruction, l, &g.adding)
		chosen := g.selectNeighbours(found, g.maxLinks(l))
		g.links[id][l] = chosen
		for _, n := range chosen {
			g.link(n, id, l)
		}
		entries = entries[:0]
		for _, c := range found {
			entries = append(entries, c.id)
		}
	}
	if level > top {
		g.entry = id
	}
	return id, nil
}

// link adds to to from's links at level, pruning from's links to the
// level's bound by the same rule that chose them.
func (g *Graph) link(from, to int32, level int) {
	ls := append(g.links[from][level], to)
	if len(ls) <= g.maxLinks(level) {
		g.links[from][level] = ls
		return
	}
	cands := make([]candidate, len(ls))
	for i, n := range ls {
		cands[i] = candidate{n, g.closeness(g.vectors[from], g.vectors[n])}
	}
	slices.SortFunc(cands, byCloseness)
	g.links[from][level] = g.selectNeighbours(cands, g.maxLinks(level))
}

// selectNeighbours keeps up to max of cands (sorted nearest first): a
// candidate nearer to an already kept one than to the node is passed
// over, so links point in different directions; passed-over candidates
// fill what room remains.
func (g *Graph) selectNeighbours(cands []candidate, max int) []int32 {
	out := make([]int32, 0, max)
	var skipped []int32
	for _, c := range cands {
		if len(out) == max {
			break
		}
		keep := true
		for _, r := range out {
			if g.closeness(g.vectors[c.id], g.vectors[r]) > c.closeness {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c.id)
		} else {
			skipped = append(skipped, c.id)
		}
	}
	for _, s := range skipped {
		if len(out) == max {
			break
		}
		out = append(out, s)
	}
	return out
}

// greedy walks level from cur to the node nearest q it can reach by
// always moving nearer.
func (g *Graph) greedy(q []float32, cur int32, level int) int32 {
	best := g.closeness(q, g.vectors[cur])
	for moved := true; moved; {
		moved = false
		for _, n := range g.links[cur][level] {
			if c := g.closeness(q, g.vectors[n]); c > best {
				best, cur, moved = c, n, true
			}
		}
	}
	return cur
}

type candidate struct {
	id        int32
	closeness float32
}

// byCloseness orders nearest first, ties by node number.
func byCloseness(a, b candidate) int {
	switch {
	case a.closeness > b.closeness:
		return -1
	case a.closeness < b.closeness:
		return 1
	}
	return int(a.id) - int(b.id)
}

// nearHeap pops the nearest candidate; farHeap pops the farthest.
type nearHeap []candidate
type farHeap []candidate

func (h nearHeap) Len() int           { return len(h) }
func (h nearHeap) Less(i, j int) bool { return byCloseness(h[i], h[j]) < 0 }
func (h nearHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nearHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *nearHeap) Pop() any          { o := *h; c := o[len(o)-1]; *h = o[:len(o)-1]; return c }
func (h farHeap) Len() int            { return len(h) }
func (h farHeap) Less(i, j int) bool  { return byCloseness(h[i], h[j]) > 0 }
func (h farHeap) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *farHeap) Push(x any)         { *h = append(*h, x.(candidate)) }
func (h *farHeap) Pop() any           { o := *h; c := o[len(o)-1]; *h = o[:len(o)-1]; return c }

// searchLevel explores level from entries, keeping the ef nodes nearest
// q; it returns them nearest first.
func (g *Graph) searchLevel(q []float32, entries []int32, ef, level int, visited *visitedSet) []candidate {
	visited.reset(len(g.vectors))
	var near nearHeap
	var found farHeap
	for _, e := range entries {
		visited.visit(e)
		c := candidate{e, g.closeness(q, g.vectors[e])}
		heap.Push(&near, c)
		heap.Push(&found, c)
	}
	for near.Len() > 0 {
		c := heap.Pop(&near).(candidate)
		if found.Len() >= ef && c.closeness < found[0].closeness {
			break
		}
		if level >= len(g.links[c.id]) {
			continue
		}
		for _, n := range g.links[c.id][level] {
			if !visited.visit(n) {
				continue
			}
			nc := candidate{n, g.closeness(q, g.vectors[n])}
			if found.Len() < ef || nc.closeness > found[0].closeness {
				heap.Push(&near, nc)
				heap.Push(&found, nc)
				if found.Len() > ef {
					heap.Pop(&found)
				}
			}
		}
	}
	out := []candidate(found)
	slices.SortFunc(out, byCloseness)
	return out
}

// Neighbour is a node a search found, with its similarity to the query.
type Neighbour struct {
	ID    int32
	Score float32
}

// Search returns up to k nodes nearest q, nearest first, exploring level
// 0 with a beam of ef (at least k) nodes. q must have the graph's
// dimension; a zero q under cosine finds nothing.
func (g *Graph) Search(q []float32, k, ef int) []Neighbour {
	if g.entry < 0 || k <= 0 || len(q) != g.dim || g.sim == Cosine && IsZero(q) {
		return nil
	}
	q = g.prepare(q)
	cur := g.entry
	for l := len(g.links[g.entry]) - 1; l > 0; l-- {
		cur = g.greedy(q, cur, l)
	}
	found := g.searchLevel(q, []int32{cur}, max(ef, k), 0, &visitedSet{})
	out := make([]Neighbour, 0, min(k, len(found)))
	for _, c := range found[:min(k, len(found))] {
		out = append(out, Neighbour{c.id, g.score(c.closeness)})
	}
	return out
}

// AppendBinary appends the graph's links (not its vectors):
// similarity, dimension, m, entry+1 and node count as uvarints, then for
// each node its level count and, per level, its link count and links.
func (g *Graph) AppendBinary(b []byte) []byte {
	for _, v := range []int{int(g.sim), g.dim, g.m, int(g.entry) + 1, len(g.links)} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, levels := range g.links {
		b = binary.AppendUvarint(b, uint64(len(levels)))
		for _, ls := range levels {
			b = binary.AppendUvarint(b, uint64(len(ls)))
			for _, n := range ls {
				b = binary.AppendUvarint(b, uint64(n))
			}
		}
	}
	return b
}

// DecodeGraph reads a graph AppendBinary wrote, over its vectors (as
// given to Add, in order). It checks every link names a node on that
// level, so a damaged graph is refused rather than searched.
func DecodeGraph(b []byte, vectors [][]float32) (*Graph, error) {
	bad := func(what string) error { return fmt.Errorf("ann: damaged graph: %s", what) }
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	var head [5]uint64
	for i := range head {
		v, ok := next()
		if !ok {
			return nil, bad("header")
		}
		head[i] = v
	}
	sim, dim, m, entry, count := head[0], head[1], head[2], head[3], head[4]
	switch {
	case sim > uint64(Euclidean):
		return nil, bad("similarity")
	case count != uint64(len(vectors)):
		return nil, bad(fmt.Sprintf("%d nodes for %d vectors", count, len(vectors)))
	case m < 2 || m > 1024 || entry > count || (entry == 0) != (count == 0):
		return nil, bad("parameters")
	}
	g := &Graph{sim: Similarity(sim), dim: int(dim), m: int(m), efConstruction: DefaultEfConstruction,
		entry: int32(entry) - 1, links: make([][][]int32, count), vectors: make([][]float32, count),
		rng: rand.New(rand.NewPCG(count, dim))}
	for i, v := range vectors {
		if err := Rankable(g.sim, g.dim, v); err != nil {
			return nil, bad(err.Error())
		}
		g.vectors[i] = g.prepare(v)
	}
	for i := range g.links {
		levels, ok := next()
		if !ok || levels == 0 || levels > 31 {
			return nil, bad("levels")
		}
		g.links[i] = make([][]int32, levels)
		for l := range g.links[i] {
			n, ok := next()
			if !ok || n > uint64(g.maxLinks(l)) {
				return nil, bad("link count")
			}
			ls := make([]int32, n)
			for j := range ls {
				v, ok := next()
				if !ok || v >= count {
					return nil, bad("link")
				}
				ls[j] = int32(v)
			}
			g.links[i][l] = ls
		}
	}
	if len(b) != 0 {
		return nil, bad("trailing bytes")
	}
	top := -1
	if g.entry >= 0 {
		top = len(g.links[g.entry]) - 1
	}
	for i, levels := range g.links {
		if len(levels)-1 > top {
			return nil, bad("a node above the entry")
		}
		for l, ls := range levels {
			for _, n := range ls {
				if len(g.links[n]) <= l {
					return nil, bad(fmt.Sprintf("node %d links to %d on level %d", i, n, l))
				}
			}
		}
	}
	return g, nil
}
