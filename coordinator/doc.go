// Package coordinator runs a statement's requests against the replicas of
// its data, and answers as a replica the requests other coordinators send:
// for a write, every live replica is sent the mutation (a hint kept for
// each one down) and the level's acknowledgements awaited; for a
// partition read, as many replicas as the level needs are asked (one for
// the data, the others for digests), a failed one replaced by a spare,
// divergent answers merged with the one reconcile and the stale replicas
// repaired before the answer; range reads merge every node's answer; a
// truncate reaches every node. Failures are the request package's:
// Unavailable before anything is sent, WriteTimeout and ReadTimeout when
// the time ran out, WriteFailure and ReadFailure when replicas failed so
// that the level cannot be met.
//
// Owns: consistency arithmetic and which data centres count (BlockFor,
// CheckAvailable, Acks), replica selection (ReadContacts), replica
// placement per keyspace (Strategy), fan-out and waiting, digests, read
// repair, hints, the internode verbs' payload codecs and their handlers.
// Does not own: where tokens are (ring), how messages travel
// (messaging), how data is stored (storage, behind Engine), liveness
// (gossip, behind Config.Alive); node wires them.
// May import: ring, messaging, schema, mutation, mutation/request,
// partitioner.
// Must not import: storage, gossip, cql, node, tools.
//
// Deterministic: the pure decisions (consistency.go, placement.go,
// reconcile.go, codec.go, verbs.go) take no clock, start no goroutine and
// set no timeout; the code that sends and waits is in the *_driver.go
// files.
package coordinator
