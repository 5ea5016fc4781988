// Package hints owns the hints a coordinator keeps for replicas that could
// not take a write (hinted handoff): their files on disk, the bounds on
// them (space per replica, expiry with the table's gc_grace_seconds, the
// age of the oldest), and their delivery, pipelined, throttled and resumed
// where it stopped.
//
// A replica's hints are a sequence of files, <replica>-<ms>-2.hints, each
// written once from its start and never appended to after a restart (a
// file of a process that crashed may end in a torn record, which ends it).
// A record is | length (4) | CRC32C of the body (4) | body |, and a body
// is | creation time, ms (8) | gc grace, s (4) | the mutation in the
// commit log's encoding |. Files of the first format, <replica>.hints,
// whose bodies are the mutation alone, are still read and delivered.
//
// Owns: Store (writing, bounding, listing and truncating hints) and
// Deliver (sending one replica's hints in pages, throttled, resuming
// after the last page it took).
// Does not own: when a hint is kept or delivered (package coordinator
// decides from gossip's view of the replica and the hinted-handoff
// settings), the mutation encoding (package mutation).
// May import: mutation, pebble/vfs, golang.org/x/time/rate.
// Must not import: coordinator, gossip, messaging, storage, node.
//
// Concurrency: Store methods are safe for concurrent use; one Deliver
// per replica runs at a time.
package hints
