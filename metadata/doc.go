// Package metadata is the cluster metadata log: what every node must agree
// on, replicated with Raft (go.etcd.io/raft/v3), applied in the same order
// everywhere, and numbered by an epoch that grows with every change.
//
// The log's state machine holds the members of the group (each node's
// Raft id, address, data centre and rack), the ring's nodes (host id,
// address, location, tokens, state), the epoch, and the epochs of the
// last schema change and of the last ring change. A node's record is
// refused when another node holds one of its tokens. A schema change is
// an entry carrying the schema
// mutations a statement made and the schema epoch it was checked
// against: it applies only if no other schema change committed in
// between, so that of two conflicting statements one wins and the other
// is checked again against the schema the winner made. The schema itself
// lives where it always did, in system_schema, which the node writes as
// entries apply (the Applier); snapshots carry its whole contents.
//
// Up to five members vote, spread across racks and data centres; the rest
// are learners. A node joins by asking any member; the leader adds it as a
// learner and promotes learners that have caught up while voters are
// fewer than the group's size calls for.
//
// A member that hears from no leader for PartitionedAfter counts itself
// cut off from the group (Status.Partitioned).
//
// Owns: the Raft group (bootstrap, join, voter promotion), the log and
// snapshots on disk (through vfs: records with checksums, a torn tail cut
// off, snapshots written whole and renamed into place), the state machine
// and its encodings, proposals and waiting for them to apply (by index or
// epoch), the join and await exchanges with other nodes, knowing when it
// is cut off.
// Does not own: what a schema change means (schema, node), how messages
// travel (messaging, given as a Network), failure detection (gossip).
// May import: messaging (its verbs and handlers), internal/wire,
// internal/durable, internal/invariants, go.etcd.io/raft/v3, pebble's
// vfs, zerolog.
// Must not import: node, coordinator, storage, or anything above them.
//
// Deterministic: state.go and codec.go take no clock, randomness or
// network. log_driver.go runs Raft: its ticks come from a ticker, and
// its messages go out through the Network it is given.
package metadata
