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
		if slices.Contains(localSystemKeyspaces, t.Keyspace) {
			continue
		}
		spans, ok := kept[t.Keyspace]
		if !ok {
			ks := sch.Keyspace(t.Keyspace)
			local := false
			if spans, local, err = n.replicatedSpans(m, ks); err != nil {
				return nil, err
			}
			if local {
				continue
			}
			if gaining, err := n.gainingRanges(m, ks); err != nil || gaining {
				if err != nil {
					return nil, err
				}
				return nil, badArgument("Node is involved in cluster membership changes. Not safe to run cleanup.")
			}
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
// replicates of ks under ring m; local for a keyspace every node keeps
// whole.
func (n *Node) replicatedSpans(m *ring.Metadata, ks *schema.Keyspace) (spans []storage.KeySpan, local bool, err error) {
	s, err := n.strategy(ks)
	if err != nil {
		return nil, false, err
	}
	if _, local := s.(ring.LocalStrategy); local {
		return nil, true, nil
	}
	part := n.engine.Partitioner()
	err = replicatedRanges(m, s, n.endpoint(), func(r partitioner.Range, _ []ring.Endpoint) error {
		for _, piece := range r.Unwrap(part) {
			spans = append(spans, tokenSpan(piece, part))
		}
		return nil
	})
	return mergeSpans(spans), false, err
}

// gainingRanges reports whether this node is being given some range of
// ks (it is a pending replica of it): the data it receives for them lies
// outside the ranges it replicates now, and a cleanup would drop it.
func (n *Node) gainingRanges(m *ring.Metadata, ks *schema.Keyspace) (bool, error) {
	future := m.Future()
	if future == nil {
		return false, nil
	}
	s, err := n.strategy(ks)
	if err != nil {
		return false, err
	}
	self := n.endpoint()
	// Each range of either ring ends at a token of one of them, and the
	// pending replicas are the same over all of it.
	for _, tok := range slices.Concat(m.SortedTokens(), future.SortedTokens()) {
		if slices.Contains(m.Pending(s, tok), self) {
			return true, nil
		}
	}
	return false, nil
}
