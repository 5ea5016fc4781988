// Package differential tests a node from the wire down against a model of
// Cassandra's semantics: random schemas of every CQL type, random
// statements with random values in every spelling a driver may send
// (repeated and unsorted collection elements, nulls, unset, empty values,
// boundary numbers), run through gocql against a node in a child process,
// with flushes, compactions, restarts and kill -9 between steps, and every
// read compared with what the model says Cassandra returns.
//
// Owns: tests only: the model (model_test.go), the value and statement
// generators, and the child node.
// Must not import: storage or schema; it talks to the node as a client
// does (and starts it through package node in the child).
package differential
