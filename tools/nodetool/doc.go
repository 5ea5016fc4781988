// Package nodetool is `sibyl nodetool`: Cassandra's nodetool commands,
// with their names, arguments and output layouts, run against a node's
// admin API (HTTP and JSON on port 7199).
//
// Owns: parsing nodetool's command lines, calling the admin API, and
// printing as nodetool 4.1 prints.
// Does not own: what the commands do (the node does).
// May import: nothing of Sibyl's (it talks to the admin API).
// Must not import: any server package.
//
// Concurrency: one command at a time.
package nodetool
