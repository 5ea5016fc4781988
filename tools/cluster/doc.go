// Package cluster is sibyl cluster: a local cluster of Sibyl nodes on one
// machine, as ccm makes Cassandra ones. Node N listens on 127.0.0.N with
// the same ports as the others; its data, log and pid live under the
// cluster's directory (nodeN/), and cluster.json there remembers the
// cluster's shape so that later commands find it.
//
// Owns: starting and stopping node processes (the sibyl binary's server
// command), their directories, waiting for them to be up.
// Does not own: anything a node does; it asks nodes over the admin API,
// as nodetool does.
// May import: tools/nodetool.
// Must not import: node, or any other server package.
package cluster
