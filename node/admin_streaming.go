package node

import (
	"context"
	"net/http"

	"github.com/sibyldb/sibyl/streaming"
)

// AdminNetstats is nodetool netstats's.
type AdminNetstats struct {
	Mode     string               `json:"mode"`
	Sessions []streaming.Progress `json:"sessions"`
	// ReadRepairAttempted counts the reads whose replicas disagreed, each
	// repaired before it answered (Cassandra 4 has no background repair).
	ReadRepairAttempted int64 `json:"read_repair_attempted"`
}

func (n *Node) handleStreaming(handle func(pattern string, fn func(r *http.Request) (any, error))) {
	handle("GET /netstats", func(*http.Request) (any, error) {
		out := AdminNetstats{Mode: "NORMAL", Sessions: []streaming.Progress{}, ReadRepairAttempted: n.coord.Stats.DigestMismatches.Load()}
		if n.drained.Load() {
			out.Mode = "DRAINED"
		}
		if n.streaming != nil {
			out.Sessions = n.streaming.Sessions()
		}
		return out, nil
	})
	handle("POST /rebuild", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		if !n.rebuilding.CompareAndSwap(false, true) {
			return nil, badArgument("Node is still rebuilding. Check nodetool netstats.")
		}
		defer n.rebuilding.Store(false)
		// A rebuild goes on if nodetool goes away, as Cassandra's does,
		// and stops with the node.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-n.stopped:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := n.Rebuild(ctx, RebuildRequest{SourceDC: q.Get("dc"), Keyspace: q.Get("keyspace")}); err != nil {
			return nil, badArgument("%s", err)
		}
		return nil, nil
	})
}
