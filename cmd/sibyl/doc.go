// Command sibyl is the one binary of Sibyl: a database node (sibyl server) and,
// as they arrive, the tools around it (cqlsh, nodetool, stress, cluster).
//
// Owns: cobra commands, flag parsing, process-wide logging set-up.
// Does not own: any logic; each command calls into node or tools.
// May import: node, tools, cobra, zerolog.
// Must not import: storage and the packages below it directly.
package main
