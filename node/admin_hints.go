package node

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/ring"
)

// AdminPendingHints is one replica's line in nodetool listpendinghints.
type AdminPendingHints struct {
	HostID string `json:"host_id"`
	// Address is the replica's address:storage port, as Cassandra's.
	Address    string `json:"address"`
	Rack       string `json:"rack"`
	DataCenter string `json:"data_center"`
	Status     string `json:"status"` // UP, DOWN or Unknown
	Files      int    `json:"total_files"`
	Bytes      int64  `json:"bytes"`
	// Newest and Oldest are the creation times of its newest and oldest
	// hints files, in ms since the epoch.
	Newest int64 `json:"newest"`
	Oldest int64 `json:"oldest"`
}

// AdminHandoff is nodetool statushandoff's.
type AdminHandoff struct {
	Enabled bool `json:"enabled"` // hints are kept
	Paused  bool `json:"paused"`  // hints are not delivered
}

func (n *Node) handleHints(handle func(pattern string, fn func(r *http.Request) (any, error))) {
	handle("GET /hints", func(*http.Request) (any, error) { return n.adminPendingHints(), nil })
	handle("POST /hints/truncate", n.adminTruncateHints)
	handle("GET /handoff", func(*http.Request) (any, error) {
		s := n.coord.Handoff()
		return AdminHandoff{Enabled: s.Enabled, Paused: s.Paused}, nil
	})
	handle("POST /handoff", func(r *http.Request) (any, error) {
		switch r.URL.Query().Get("action") {
		case "enable":
			n.coord.SetHandoff(true)
		case "disable":
			n.coord.SetHandoff(false)
		case "pause":
			n.coord.PauseHandoff(true)
		case "resume":
			n.coord.PauseHandoff(false)
		default:
			return nil, badRequest("handoff: %q is not one of enable, disable, pause, resume", r.URL.Query().Get("action"))
		}
		return nil, nil
	})
}

// adminPendingHints lists the replicas this node keeps hints for, placed
// by what gossip knows of them.
func (n *Node) adminPendingHints() []AdminPendingHints {
	if n.hints == nil {
		return []AdminPendingHints{}
	}
	out := []AdminPendingHints{}
	for _, p := range n.hints.Pending() {
		line := AdminPendingHints{Address: net.JoinHostPort(p.Host, strconv.Itoa(n.cfg.StoragePort)), Rack: "Unknown", DataCenter: "Unknown",
			Status: "Unknown", Files: p.Files, Bytes: p.Bytes, Newest: p.Newest.UnixMilli(), Oldest: p.Oldest.UnixMilli()}
		if s := n.peerState(p.Host); s != nil {
			line.HostID, line.Rack, line.DataCenter = s.Get(gossip.HostID), s.Get(gossip.Rack), s.Get(gossip.DataCenter)
			if addr := s.Get(gossip.InternalAddressAndPort); addr != "" {
				line.Address = addr
			}
			line.Status = "DOWN"
			if s.Alive {
				line.Status = "UP"
			}
		}
		out = append(out, line)
	}
	return out
}

func (n *Node) peerState(endpoint string) *gossip.EndpointState {
	g := n.gossiper()
	if g == nil {
		return nil
	}
	return g.Endpoint(endpoint)
}

// adminTruncateHints removes the hints kept for one replica
// (?endpoint=address), or for all.
func (n *Node) adminTruncateHints(r *http.Request) (any, error) {
	endpoint := r.URL.Query().Get("endpoint")
	if endpoint == "" {
		if n.hints == nil {
			return nil, nil
		}
		return nil, n.hints.Truncate("")
	}
	host := endpoint
	if h, _, err := net.SplitHostPort(endpoint); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, badArgument("java.net.UnknownHostException: %s: Name or service not known", endpoint)
	}
	host = ip.String()
	known := n.hints != nil && n.hints.Has(host) || n.peerState(host) != nil || n.ring.Load().Contains(ring.Endpoint(host))
	if !known {
		return nil, badArgument("Can't delete hints for unknown address /%s", net.JoinHostPort(host, strconv.Itoa(n.cfg.StoragePort)))
	}
	if n.hints == nil {
		return nil, nil
	}
	if err := n.hints.Truncate(host); err != nil {
		return nil, fmt.Errorf("truncating the hints of %s: %w", host, err)
	}
	return nil, nil
}
