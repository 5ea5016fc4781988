// Package messaging is internode RPC: a node asks another to apply a
// mutation, read, or pull the schema, and gets an answer or a timeout.
//
// Messages are frames (an id, a verb, a kind and an opaque payload) that
// travel over a Transport: TCP on storage_port (7000) by default, where
// each frame carries its length and a CRC32C, after a handshake that
// names the protocol version and the sending node. A Service keeps one
// connection per peer, dialled on first use and again after a failure;
// requests and their responses share it, answered as they complete.
// Tests wrap the Transport (FaultyTransport) to drop, delay or cut the
// messages between chosen nodes.
//
// Owns: framing, connections, request ids, timeouts, verbs as numbers.
// Does not own: what payloads mean (their owners encode them).
// May import: nothing of Sibyl's.
// Must not import: any Sibyl package.
//
// A Service is safe for concurrent use. Handlers run each in a goroutine
// of its own.
package messaging
