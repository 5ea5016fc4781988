package gossip

import (
	"maps"
	"strings"
	"time"
)

// ApplicationState names a fact a node gossips about itself, with
// Cassandra's names and value formats (nodetool gossipinfo prints them).
type ApplicationState string

// The facts a Sibyl node gossips, in Cassandra's order (the order
// nodetool gossipinfo prints them in).
const (
	Status                 ApplicationState = "STATUS"                    // "NORMAL,<first token>", "BOOT", "LEAVING,<first token>", "shutdown,true"
	Load                   ApplicationState = "LOAD"                      // bytes on disk, as a double ("1024.0")
	Schema                 ApplicationState = "SCHEMA"                    // the schema version, a UUID
	DataCenter             ApplicationState = "DC"                        // the data centre
	Rack                   ApplicationState = "RACK"                      // the rack
	ReleaseVersion         ApplicationState = "RELEASE_VERSION"           // the Cassandra release it answers as
	RPCAddress             ApplicationState = "RPC_ADDRESS"               // where clients connect
	NetVersion             ApplicationState = "NET_VERSION"               // the messaging version
	HostID                 ApplicationState = "HOST_ID"                   // a UUID, kept across restarts
	Tokens                 ApplicationState = "TOKENS"                    // the node's tokens, comma-separated
	RPCReady               ApplicationState = "RPC_READY"                 // "true" once clients may connect
	InternalAddressAndPort ApplicationState = "INTERNAL_ADDRESS_AND_PORT" // "ip:port" of internode messaging
	NativeAddressAndPort   ApplicationState = "NATIVE_ADDRESS_AND_PORT"   // "ip:port" of the native protocol
	StatusWithPort         ApplicationState = "STATUS_WITH_PORT"          // as STATUS
)

// Activity is a node's latest sample of its activity (request rates and
// latencies, background work), as JSON, for the admin dashboard of any
// node. Cassandra has no such state: it is not in Order, so nodetool
// gossipinfo does not show it. It changes every few seconds and means
// nothing to the ring, so a new sample alone does not call OnChange.
const Activity ApplicationState = "SIBYL_ACTIVITY"

// Order is Cassandra's order of the application states.
var Order = []ApplicationState{Status, Load, Schema, DataCenter, Rack, ReleaseVersion, RPCAddress, NetVersion,
	HostID, Tokens, RPCReady, InternalAddressAndPort, NativeAddressAndPort, StatusWithPort}

// The kinds of STATUS, the part before its first comma.
const (
	StatusNormal   = "NORMAL"
	StatusBoot     = "BOOT"
	StatusLeaving  = "LEAVING"
	StatusLeft     = "LEFT"
	StatusShutdown = "shutdown"
)

// StatusKind is the kind of a STATUS value: "NORMAL" of "NORMAL,-42".
func StatusKind(status string) string {
	kind, _, _ := strings.Cut(status, ",")
	return kind
}

// VersionedValue is one fact and the version it was set at.
type VersionedValue struct {
	Value   string `json:"v"`
	Version int64  `json:"n"`
}

// EndpointState is what is known of one node.
type EndpointState struct {
	// Generation grows with each start of the node (its start time in
	// seconds, as Cassandra's).
	Generation int64 `json:"g"`
	// Heartbeat grows while the node runs.
	Heartbeat int64                               `json:"h"`
	States    map[ApplicationState]VersionedValue `json:"s"`
	// Alive is the failure detector's view, not gossiped: memberlist
	// sees the node as alive (or only suspect).
	Alive bool `json:"-"`
	// DownSince is when the failure detector last saw it go down (zero
	// while it is up, or before it was ever seen).
	DownSince time.Time `json:"-"`
}

// Get returns a fact's value ("" when unknown).
func (s *EndpointState) Get(k ApplicationState) string { return s.States[k].Value }

// clone copies the state, so that readers never share a map with the
// gossiper.
func (s *EndpointState) clone() *EndpointState {
	c := *s
	c.States = maps.Clone(s.States)
	return &c
}

// merge folds remote, what another node says of the same endpoint, into
// s, and reports whether anything that matters to the ring changed (a
// new Activity sample alone does not). A later generation replaces s; in
// the same generation each fact keeps its highest version.
func (s *EndpointState) merge(remote *EndpointState) bool {
	switch {
	case remote.Generation < s.Generation:
		return false
	case remote.Generation > s.Generation:
		alive := s.Alive
		*s = *remote.clone()
		s.Alive = alive
		return true
	}
	changed := false
	if remote.Heartbeat > s.Heartbeat {
		s.Heartbeat = remote.Heartbeat
	}
	for k, v := range remote.States {
		if cur, ok := s.States[k]; !ok || v.Version > cur.Version {
			if s.States == nil {
				s.States = map[ApplicationState]VersionedValue{}
			}
			s.States[k] = v
			changed = changed || k != Activity
		}
	}
	return changed
}
