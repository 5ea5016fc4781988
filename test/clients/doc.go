// Package clients holds the tests that drive a node as its clients do,
// over the native protocol: through gocql, the Go driver applications use,
// and with hand-made frames for what a driver never sends (bad versions,
// oversized and malformed frames).
//
// Owns: tests only (a node started in the test on a free loopback port;
// for the authentication flow, a native.Server with an authenticator over
// a node's sessions).
// Must not import: storage or schema; it talks to the node as a client
// does.
package clients
