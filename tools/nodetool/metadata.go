package nodetool

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// metadataState is the admin API's /metadata: the node's view of the
// cluster metadata log.
type metadataState struct {
	Epoch                uint64   `json:"epoch"`
	SchemaEpoch          uint64   `json:"schema_epoch"`
	Term                 uint64   `json:"term"`
	Commit               uint64   `json:"commit"`
	Applied              uint64   `json:"applied"`
	Role                 string   `json:"role"`
	Leader               string   `json:"leader"`
	Voters               []string `json:"voters"`
	Learners             []string `json:"learners"`
	Partitioned          bool     `json:"partitioned"`
	SecondsWithoutLeader float64  `json:"seconds_without_leader"`
	Policy               string   `json:"partitioned_node_policy"`
}

// describeCluster prints nodetool describecluster: Cassandra's sections,
// then the metadata log's.
func (c *client) describeCluster([]string) error {
	var in struct {
		Name           string              `json:"name"`
		Snitch         string              `json:"snitch"`
		Partitioner    string              `json:"partitioner"`
		SchemaVersions map[string][]string `json:"schema_versions"`
		Live           int                 `json:"live"`
		Unreachable    int                 `json:"unreachable"`
		Joining        int                 `json:"joining"`
		Leaving        int                 `json:"leaving"`
		Moving         int                 `json:"moving"`
		DataCenters    map[string][2]int   `json:"data_centers"`
		Versions       map[string][]string `json:"versions"`
		Keyspaces      []struct {
			Name        string            `json:"name"`
			Class       string            `json:"class"`
			Replication map[string]string `json:"replication"`
		} `json:"keyspaces"`
		Metadata metadataState `json:"metadata"`
	}
	if err := c.call("GET", "/describecluster", nil, &in); err != nil {
		return err
	}
	w := c.out
	fmt.Fprintf(w, "Cluster Information:\n\tName: %s\n\tSnitch: %s\n\tDynamicEndPointSnitch: enabled\n\tPartitioner: %s\n\tSchema versions:\n",
		in.Name, in.Snitch, in.Partitioner)
	for _, v := range slices.Sorted(maps.Keys(in.SchemaVersions)) {
		fmt.Fprintf(w, "\t\t%s: [%s]\n\n", v, strings.Join(in.SchemaVersions[v], ", "))
	}
	fmt.Fprintf(w, "Stats for all nodes:\n\tLive: %d\n\tJoining: %d\n\tMoving: %d\n\tLeaving: %d\n\tUnreachable: %d\n\n",
		in.Live, in.Joining, in.Moving, in.Leaving, in.Unreachable)
	fmt.Fprintf(w, "Data Centers: \n")
	for _, dc := range slices.Sorted(maps.Keys(in.DataCenters)) {
		fmt.Fprintf(w, "\t%s #Nodes: %d #Down: %d\n", dc, in.DataCenters[dc][0], in.DataCenters[dc][1])
	}
	fmt.Fprintf(w, "\nDatabase versions:\n")
	for _, v := range slices.Sorted(maps.Keys(in.Versions)) {
		fmt.Fprintf(w, "\t%s: [%s]\n\n", v, strings.Join(in.Versions[v], ", "))
	}
	fmt.Fprintf(w, "Keyspaces:\n")
	for _, ks := range in.Keyspaces {
		var opts []string
		for _, k := range slices.Sorted(maps.Keys(ks.Replication)) {
			opts = append(opts, k+"="+ks.Replication[k])
		}
		fmt.Fprintf(w, "\t%s -> Replication class: %s {%s}\n", ks.Name, shortClass(ks.Class), strings.Join(opts, ", "))
	}
	fmt.Fprintln(w)
	c.printMetadata(in.Metadata)
	return nil
}

// shortClass is a replication class without its package, as
// describecluster prints it.
func shortClass(class string) string { return class[strings.LastIndexByte(class, '.')+1:] }

// cms prints the metadata log's state (Cassandra 5.1's nodetool cms
// describe; describe is the only subcommand).
func (c *client) cms(args []string) error {
	if len(args) > 0 && args[0] != "describe" {
		return usef("cms: unknown subcommand %q; try describe", args[0])
	}
	var m metadataState
	if err := c.call("GET", "/metadata", nil, &m); err != nil {
		return err
	}
	c.printMetadata(m)
	return nil
}

func (c *client) printMetadata(m metadataState) {
	leader := m.Leader
	if leader == "" {
		leader = "none known"
	}
	fmt.Fprintf(c.out, "Cluster Metadata Service:\n\tMembers: %s\n\tLearners: %s\n\tLeader: %s\n\tThis node: %s\n\tEpoch: %d\n\tSchema epoch: %d\n",
		strings.Join(m.Voters, ", "), strings.Join(m.Learners, ", "), leader, m.Role, m.Epoch, m.SchemaEpoch)
	fmt.Fprintf(c.out, "\tTerm: %d\n\tCommitted: %d\n\tApplied: %d\n\tPartitioned: %v (%.0fs without a leader; policy %s)\n",
		m.Term, m.Commit, m.Applied, m.Partitioned, m.SecondsWithoutLeader, m.Policy)
}
