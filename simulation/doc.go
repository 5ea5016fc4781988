// Package simulation runs a cluster of nodes in one process: each node
// its own storage engine (on an in-memory file system) and coordinator,
// the nodes joined by an in-memory network, every clock the simulation's
// and every random choice drawn from one seed. Faults are scripted per
// link (cut, one side of a partition, heal) and per node (crash,
// restart, a crash when a given verb arrives), and statements run through
// cql/exec on any node at any consistency level. The network delivers a
// request at once, in the sender's goroutine, or loses it (the sender's
// request times out at once) or refuses it (the node is down), so a run
// takes no real time and a script gives the same outcome every time.
//
// Membership is the simulation's: a node sees another up when it is up
// and the link between them is not cut (no failure detector runs), and a
// node that comes back in view gets its hints at once, as gossip's UP
// would bring them. Schema changes reach every node that is up.
//
// Owns: the simulated cluster, its network, clock and faults; the
// datadriven scripts' commands (testdata/*.txt); the randomized run's
// checks (no acknowledged write lost, no QUORUM read older than an
// acknowledged QUORUM write before it).
// Does not own: anything a node does (coordinator, storage, cql/exec).
// May import: node (for its engine wiring and schema loading) and
// everything below it.
// Must not import: tools, cmd.
//
// Deterministic: given the seed, the script and its faults, every
// outcome; the coordinators' own goroutines are waited for (Settle)
// between steps.
package simulation
