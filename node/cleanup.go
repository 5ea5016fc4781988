package node

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// errRingMoved stops a cleanup whose ring changed under it: the ranges it
// computed may no longer be this node's to drop.
var errRingMoved = errors.New("the ring changed while cleanup ran; run it again")

// localSystemKeyspaces are the keyspaces each node keeps for itself,
// which cleanup refuses as Cassandra does.
var localSystemKeyspaces = []string{schema.SystemKeyspace, schema.SystemSchemaKeyspace, "system_views", "system_virtual_schema"}

// adminCleanup is nodetool cleanup [keyspace [tables]]: the selected
// tables of every keyspace replicated by the ring drop the partitions of
// the ranges this node no longer replicates (those moved to nodes that
// joined since they were written).
func (n *Node) adminCleanup(r *http.Request) (any, error) {
	if ks := r.URL.Query().Get("keyspace"); slices.Contains(localSystemKeyspaces, ks) {
		return nil, badArgument("Cleanup of the system keyspace is neither necessary nor wise")
	}
	tables, err := n.selectedTables(r)
	if err != nil {
		return nil, err
	}
	m := n.ring.Load()
	if len(m.SortedTokens()) == 0 || !m.Contains(n.endpoint()) {
		return nil, badArgument("Cleanup cannot run before a node has joined the ring")
	}
	sch := n.Schema()
	kept := map[string][]storage.KeySpan{}
	for _, t := range tables {
		// As the coordinator places them: on this node alone.
		if schema.IsSystemKeyspace(t.Keyspace) {
			continue
		}
		spans, ok := kept[t.Keyspace]
		if !ok {
			s, err := n.ringStrategy(sch.Keyspace(t.Keyspace))
			if err != nil {
				return nil, err
			}
			if s == nil {
				continue
			}
			if n.gainingRanges(m, s) {
				return nil, badArgument("Node is involved in cluster membership changes. Not safe to run cleanup.")
			}
			spans = n.replicatedSpans(m, s)
			kept[t.Keyspace] = spans
		}
		st, err := n.storageTable(t)
		if err != nil {
			return nil, err
		}
		if n.ring.Load().Epoch() != m.Epoch() {
			return nil, badArgument("%v", errRingMoved)
		}
		if err := st.Cleanup(spans); err != nil {
			return nil, fmt.Errorf("cleanup of %s: %w", t, err)
		}
	}
	return nil, nil
}

// replicatedSpans is the engine key spans of the ranges this node
// replicates under ring m and strategy s.
func (n *Node) replicatedSpans(m *ring.Metadata, s ring.Strategy) []storage.KeySpan {
	var spans []storage.KeySpan
	_ = replicatedRanges(m, s, n.endpoint(), func(r partitioner.Range, _ []ring.Endpoint) error {
		spans = n.appendRangeSpans(spans, r)
		return nil
	})
	return mergeSpans(spans)
}

// gainingRanges reports whether this node is being given some range
// placed by s (it is a pending replica of it): the data it receives for
// them lies outside the ranges it replicates now, and a cleanup would
// drop it.
func (n *Node) gainingRanges(m *ring.Metadata, s ring.Strategy) bool {
	future := m.Future()
	if future == nil {
		return false
	}
	self := n.endpoint()
	// Each range of either ring ends at a token of one of them, and the
	// pending replicas are the same over all of it.
	for _, tok := range slices.Concat(m.SortedTokens(), future.SortedTokens()) {
		if slices.Contains(m.Pending(s, tok), self) {
			return true
		}
	}
	return false
}
