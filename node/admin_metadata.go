package node

import (
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
)

// AdminMetadata is what nodetool cms and describecluster show of the
// metadata log, as this node knows it.
type AdminMetadata struct {
	Epoch       uint64 `json:"epoch"`
	SchemaEpoch uint64 `json:"schema_epoch"`
	Term        uint64 `json:"term"`
	Commit      uint64 `json:"commit"`
	Applied     uint64 `json:"applied"`
	// Role is this node's: leader, follower, candidate, pre-candidate, or
	// learner (a member that does not vote).
	Role     string   `json:"role"`
	Leader   string   `json:"leader"` // "" when none is known
	Voters   []string `json:"voters"`
	Learners []string `json:"learners"`
	// Partitioned: the node has gone partitioned_node_timeout without a
	// leader; SecondsWithoutLeader is how long.
	Partitioned          bool    `json:"partitioned"`
	SecondsWithoutLeader float64 `json:"seconds_without_leader"`
	Policy               string  `json:"partitioned_node_policy"`
}

// AdminDescribeCluster is nodetool describecluster's.
type AdminDescribeCluster struct {
	Name        string `json:"name"`
	Snitch      string `json:"snitch"`
	Partitioner string `json:"partitioner"`
	// SchemaVersions are the nodes by the schema version each has, the
	// unreachable ones under UNREACHABLE, as Cassandra lists them.
	SchemaVersions map[string][]string `json:"schema_versions"`
	Live           int                 `json:"live"`
	Unreachable    int                 `json:"unreachable"`
	Joining        int                 `json:"joining"`
	Leaving        int                 `json:"leaving"`
	Moving         int                 `json:"moving"`
	// DataCenters are the nodes and those down, by data centre.
	DataCenters map[string][2]int `json:"data_centers"`
	// Versions are the nodes (address:storage port) by release version.
	Versions  map[string][]string `json:"versions"`
	Keyspaces []AdminKeyspace     `json:"keyspaces"`
	Metadata  AdminMetadata       `json:"metadata"`
}

// AdminKeyspace is a keyspace's replication, as describecluster shows it.
type AdminKeyspace struct {
	Name        string            `json:"name"`
	Class       string            `json:"class"`
	Replication map[string]string `json:"replication"`
}

func (n *Node) adminMetadata() AdminMetadata {
	st := n.meta.Status()
	endpoint := func(id uint64) string { return st.State.Members[id].Endpoint }
	out := AdminMetadata{Epoch: st.State.Epoch, SchemaEpoch: st.State.SchemaEpoch, Term: st.Term, Commit: st.Commit, Applied: st.Applied,
		Role: st.Role, Leader: endpoint(st.Leader), Partitioned: st.Partitioned, SecondsWithoutLeader: st.SinceContact.Seconds(),
		Policy: n.cfg.PartitionedNodePolicy, Voters: []string{}, Learners: []string{}}
	for _, id := range st.Voters {
		out.Voters = append(out.Voters, endpoint(id))
	}
	for _, id := range st.Learners {
		out.Learners = append(out.Learners, endpoint(id))
		if id == st.ID {
			out.Role = "learner"
		}
	}
	slices.SortFunc(out.Voters, compareAddresses)
	slices.SortFunc(out.Learners, compareAddresses)
	return out
}

func (n *Node) adminDescribeCluster(r *http.Request) (any, error) {
	v, err := n.adminStatuses(r)
	if err != nil {
		return nil, err
	}
	statuses := v.([]AdminStatus)
	out := AdminDescribeCluster{Name: n.cfg.ClusterName, Snitch: "org.apache.cassandra.locator.SimpleSnitch",
		Partitioner:    n.engine.Partitioner().Name(),
		SchemaVersions: map[string][]string{}, DataCenters: map[string][2]int{}, Versions: map[string][]string{}, Metadata: n.adminMetadata()}
	version := n.Schema().Version()
	for _, s := range statuses {
		schemaVersion := cqltype.UUIDType.Format(version[:])
		port := n.cfg.StoragePort
		if s.Address != n.cfg.ListenAddress && n.gossip != nil {
			g := n.gossip.Endpoint(s.Address)
			schemaVersion = g.Get(gossip.Schema)
			port = gossipedStoragePort(g)
		}
		dc := out.DataCenters[s.DataCenter]
		dc[0]++
		if s.Status == "Up" {
			out.Live++
		} else {
			out.Unreachable++
			dc[1]++
			schemaVersion = "UNREACHABLE"
		}
		out.DataCenters[s.DataCenter] = dc
		out.SchemaVersions[schemaVersion] = append(out.SchemaVersions[schemaVersion], s.Address)
		switch s.State {
		case "Joining":
			out.Joining++
		case "Leaving":
			out.Leaving++
		case "Moving":
			out.Moving++
		}
		addr := net.JoinHostPort(s.Address, strconv.Itoa(port))
		out.Versions[s.ReleaseVers] = append(out.Versions[s.ReleaseVers], addr)
	}
	for _, l := range out.SchemaVersions {
		slices.SortFunc(l, compareAddresses)
	}
	for _, ks := range n.Schema().Keyspaces() {
		repl := ks.Replication.Map()
		class := repl["class"]
		delete(repl, "class")
		out.Keyspaces = append(out.Keyspaces, AdminKeyspace{Name: ks.Name, Class: class, Replication: repl})
	}
	return out, nil
}
