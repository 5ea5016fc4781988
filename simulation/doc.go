// Package simulation runs a cluster of nodes in one process: each node
// its own storage engine (on an in-memory file system), coordinator,
// messaging service and gossip (the real messaging and gossip packages,
// memberlist inside), the nodes joined by an in-memory network that
// carries both. A cluster is made inside a testing/synctest
// bubble, and every clock is the bubble's: time moves only while every
// goroutine of the cluster waits, so write_request_timeout, failure
// detection and late messages run in simulated seconds that take no real
// time.
//
// Faults are scripted per link (cut, one side of a partition, a delay
// each way, heal) and per node (crash, restart, a crash when a given verb
// arrives, a disk whose writes fail). A connection to a node that is
// down is refused; a frame on a cut link is lost (its request waits out
// its deadline and times out); one on a delayed link arrives late, in
// order with the rest of its connection (the replica applies a late write
// whether or not its sender gave up, and a write through another
// coordinator may overtake it); a crash closes the node's connections, so
// the requests in flight to it fail at once. Gossip's packets and streams
// cross the same links: a
// node sees another down once its failure detector has, and up again
// once gossip finds it (a healed partition, a restarted seed), and then
// delivers the hints it holds, as a real node does. Statements run
// through cql/exec on any node at any consistency level. Each node runs a
// real metadata log (package metadata) on its own disk and over the same
// network: schema changes commit through it and apply on every node in
// its order, a node cut off from the voters knows it (and refuses, with
// the refuse policy), a restarted node takes up its log again.
//
// With Config.Whole each node is instead a whole node.Node (node.Open on
// the node's in-memory disk, messaging and gossip over the same network):
// its metadata log chooses its tokens and decides the ring, and its
// bootstrap, decommission, removenode, replace and repair run as they do
// in a real process, with the same faults (a crash when a verb arrives,
// cuts, restarts). A whole node's crash takes it off the network and then
// stops it, flushing its memtables; a node still in node.Open (a join
// under way) cannot be crashed.
//
// Owns: the simulated cluster, its network (messaging's and gossip's
// transports over it) and its faults; the datadriven scripts' commands (testdata/*.txt); the
// randomized run's checks (no acknowledged write lost, no QUORUM read
// older than an acknowledged QUORUM write before it); the range movements'
// checks (every acknowledged write readable at ALL, each node holding
// exactly the rows of its ranges).
// Does not own: anything a node does (coordinator, storage, messaging,
// gossip, cql/exec).
// May import: node (for its engine wiring, schema loading and schema
// changes) and everything below it.
// Must not import: tools, cmd.
//
// Deterministic: the steps, faults, tokens and statement timestamps of a
// run come from its seed and the bubble's clock. Two things do not: the
// order in which goroutines woken at the same simulated instant run, and
// memberlist's own random choices (which member to probe next). A replay
// of a seed repeats its steps and faults, not every interleaving; the
// scripts' outcomes are those every interleaving gives (a script waits
// for membership to settle before it relies on it).
package simulation
