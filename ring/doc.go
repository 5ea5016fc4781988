// Package ring owns token metadata: which node holds which tokens (vnodes),
// the ranges between them, who owns how much of the ring, the choice of a
// joining node's tokens, and the replication strategies (SimpleStrategy,
// NetworkTopologyStrategy, LocalStrategy) that name the replicas of a
// token for a keyspace.
//
// A Metadata is an immutable snapshot: gossip's view of the cluster is
// turned into a new one whenever it changes, and readers keep the one they
// started with. Nodes are named by Endpoint, their listen address, and
// placed by a Location (data centre and rack).
//
// Owns: token ranges and their owners, ownership, token allocation,
// replica placement.
// Does not own: where the ring's facts come from (gossip, node).
// May import: partitioner.
// Must not import: gossip, messaging, storage, or anything above them.
//
// Deterministic: no clocks, no goroutines; randomness comes in as a
// *rand.Rand.
package ring
