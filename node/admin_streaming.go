package node

import (
	"net/http"
	"strconv"
	"strings"

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

// AdminStreamThroughput is stream_throughput_outbound and
// entire_sstable_stream_throughput_outbound, 0 for no bound.
type AdminStreamThroughput struct {
	BytesPerSecond              int64 `json:"bytes_per_second"`
	EntireSSTableBytesPerSecond int64 `json:"entire_sstable_bytes_per_second"`
}

// setStreamThroughput changes stream_throughput_outbound (or, entire,
// entire_sstable_stream_throughput_outbound) while the node runs; a
// restart goes back to the configured value, as Cassandra's does.
func (n *Node) setStreamThroughput(bps int64, entire bool) {
	if entire {
		n.entireSSTableStreamThroughput.Store(bps)
	} else {
		n.streamThroughput.Store(bps)
	}
	if n.streaming == nil {
		return
	}
	if entire {
		n.streaming.SetEntireSSTableThroughput(bps)
	} else {
		n.streaming.SetThroughput(bps)
	}
}

// operationMode is the mode nodetool netstats shows: NORMAL, JOINING,
// LEAVING, DECOMMISSIONED or DRAINED.
func (n *Node) operationMode() string {
	if m, _ := n.mode.Load().(string); m != "" {
		return m
	}
	if n.drained.Load() {
		return "DRAINED"
	}
	return "NORMAL"
}

func (n *Node) handleStreaming(handle func(pattern string, fn func(r *http.Request) (any, error))) {
	handle("GET /netstats", func(*http.Request) (any, error) {
		out := AdminNetstats{Mode: n.operationMode(), Sessions: []streaming.Progress{}, ReadRepairAttempted: n.coord.Stats.DigestMismatches.Load()}
		if n.streaming != nil {
			out.Sessions = n.streaming.Sessions()
		}
		return out, nil
	})
	handle("GET /streamthroughput", func(*http.Request) (any, error) {
		return AdminStreamThroughput{BytesPerSecond: n.streamThroughput.Load(), EntireSSTableBytesPerSecond: n.entireSSTableStreamThroughput.Load()}, nil
	})
	handle("POST /streamthroughput", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		v, err := strconv.ParseInt(q.Get("bytes_per_second"), 10, 64)
		if err != nil || v < 0 {
			return nil, badRequest("stream throughput: %q is not a count of bytes a second", q.Get("bytes_per_second"))
		}
		n.setStreamThroughput(v, q.Get("entire_sstable") == "true")
		return nil, nil
	})
	handle("POST /decommission", func(r *http.Request) (any, error) {
		// As a rebuild, a decommission goes on if nodetool goes away.
		ctx, cancel := n.untilStopped()
		defer cancel()
		if err := n.Decommission(ctx, r.URL.Query().Get("force") == "true"); err != nil {
			return nil, badArgument("%s", err)
		}
		return nil, nil
	})
	handle("GET /removenode", func(*http.Request) (any, error) {
		return map[string]string{"status": n.RemovalStatus()}, nil
	})
	handle("POST /removenode", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		var err error
		if q.Get("force") == "true" {
			err = n.ForceRemoval()
		} else {
			ctx, cancel := n.untilStopped()
			defer cancel()
			err = n.RemoveNode(ctx, q.Get("host_id"))
		}
		if err != nil {
			return nil, badArgument("%s", err)
		}
		return nil, nil
	})
	handle("POST /repair", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		req := RepairRequest{Keyspace: q.Get("keyspace"), PrimaryRange: q.Get("pr") == "true", Start: q.Get("st"), End: q.Get("et")}
		if v := q.Get("tables"); v != "" {
			req.Tables = strings.Split(v, ",")
		}
		if v := q.Get("dc"); v != "" {
			req.DataCenters = strings.Split(v, ",")
		}
		ctx, cancel := n.untilStopped()
		defer cancel()
		sum, err := n.Repair(ctx, req)
		if err != nil {
			return nil, badArgument("%s", err)
		}
		return map[string]any{"summary": sum, "lines": repairLines(sum)}, nil
	})
	handle("POST /rebuild", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		if !n.rebuilding.CompareAndSwap(false, true) {
			return nil, badArgument("Node is still rebuilding. Check nodetool netstats.")
		}
		defer n.rebuilding.Store(false)
		// A rebuild goes on if nodetool goes away, as Cassandra's does,
		// and stops with the node.
		ctx, cancel := n.untilStopped()
		defer cancel()
		if err := n.Rebuild(ctx, RebuildRequest{SourceDC: q.Get("dc"), Keyspace: q.Get("keyspace")}); err != nil {
			return nil, badArgument("%s", err)
		}
		return nil, nil
	})
}
