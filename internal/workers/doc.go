// Package workers runs short tasks on goroutines kept for reuse.
//
// A request served on a fresh goroutine starts on a small stack and grows it
// (each growth copies the stack) on its way down through the CQL layer, the
// coordinator and the storage engine; under load that copying costs more than
// the request's own work. A worker that has served one request keeps its grown
// stack for the next.
//
// Owns: Pool (hand a task to an idle worker, or start one), and Stage (the
// counts of a kind of work, as nodetool tpstats shows them).
// Does not own: limits on how many tasks run at once (callers bound that) or
// what a task does when it fails.
// May import: the standard library only.
// Must not import: any other Sibyl package.
package workers
