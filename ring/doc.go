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
package ring
