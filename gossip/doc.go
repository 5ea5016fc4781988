// Package gossip owns cluster membership: which nodes exist, which are up,
// and each node's versioned facts (its status, tokens, schema version, host
// id, data centre, rack, addresses, release version and load), spread to
// every node.
//
// hashicorp/memberlist does the transport and the failure detection (SWIM:
// probes, suspicion, and push-pull of full state over TCP). On top of it
// each node's facts are Cassandra's application states: values with a
// version that grows with every change, within a generation that grows with
// every start. A newer generation replaces what was known of a node; within
// one generation the higher version of each fact wins, so state merges the
// same whichever way it arrives (a broadcast of one change, or the full
// state in a push-pull).
//
// Seeds are contact points only: a node joins through any of them and
// retries until one answers. A clean shutdown announces itself (STATUS
// shutdown, then memberlist's leave), so peers mark the node down at once
// rather than after suspicion.
//
// Owns: membership, liveness, the application states and their merge rule.
// Does not own: what the states mean for the ring (ring, node) or for
// clients (node's peers tables).
// May import: nothing of Sibyl's.
// Must not import: any Sibyl package.
//
// The merge of states (state.go) is deterministic; memberlist_driver.go
// runs the goroutines and timers around it. A Gossiper is safe for
// concurrent use; OnChange is called from one goroutine.
package gossip
