// Package cqlsh is the shell behind `sibyl cqlsh`: Apache Cassandra's
// cqlsh, rebuilt on gocql, with its flags, prompt, shell commands and
// output formats, so that its users find what they know. It is a client:
// it talks CQL to any node (Sibyl's or Cassandra's) and knows nothing of
// the server's insides.
//
// Owns: reading statements (spanning lines until ';', with strings and
// comments), the shell commands (CONSISTENCY, PAGING, EXPAND, SHOW,
// DESCRIBE's printing, HELP, EXIT), and printing results as cqlsh does.
// Does not own: executing CQL (the server does, DESCRIBE included), value
// encodings (cqltype).
// May import: gocql, cqltype.
// Must not import: any server package (node, storage, schema, cql/...).
//
// Concurrency: a Shell is used by one goroutine.
package cqlsh
