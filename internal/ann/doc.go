// Package ann finds approximate nearest neighbours among float vectors:
// the three similarity functions of CQL's vector search (cosine, dot
// product, euclidean, scored as Cassandra scores them, higher is nearer),
// the vector<float, n> byte form, and hierarchical navigable small world
// graphs (HNSW, Malkov and Yashunin) with their binary form.
//
// Owns: similarity scores, graph construction and search, the graph's
// encoding and its checks on decoding.
// Does not own: which vectors are indexed or where graphs are kept
// (storage), the CQL functions and ANN ordering (cql/exec).
// May import: nothing of Sibyl's.
// Must not import: any other Sibyl package.
//
// Determinism: a graph is the same for the same vectors added in the
// same order with the same seed, and a search reads it without changing
// it. Concurrency: a Graph may be searched concurrently, but not while a
// vector is added.
package ann
