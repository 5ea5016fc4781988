package node

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// seedWait is how long a node that is not a seed waits for a seed to
// answer before it gives up starting.
const seedWait = 30 * time.Second

// identify settles the node's host id and tokens: those system.local
// keeps, or at the first start a new host id and tokens chosen against
// the ring. A node with seeds joins the cluster (gossip, then the
// metadata log) first, so that the ring it chooses against is the
// cluster's; its tokens are then the log's record of it.
func (n *Node) identify() error {
	hostID, tokens, err := n.storedIdentity()
	if err != nil {
		return err
	}
	n.hostID = hostID
	var counterID mutation.CounterID
	copy(counterID[:], hostID)
	n.counterID.Store(&counterID) // the node's counters' shards are its own
	if err := n.openMetadata(); err != nil {
		return err
	}
	if err := n.startGossip(tokens); err != nil {
		return err
	}
	if err := n.startMetadata(); err != nil {
		return err
	}
	tokens, joining, err := n.registerTokens(tokens)
	if err != nil {
		return err
	}
	n.ringMu.Lock()
	n.tokens = tokens
	n.ringMu.Unlock()
	if joining {
		if n.gossip != nil {
			n.gossip.SetNow(gossip.Tokens, strings.Join(tokens, ","))
		}
		if err := n.bootstrap(tokens); err != nil {
			return err
		}
	}
	n.rebuildRing()
	if n.gossip != nil {
		// Sent at once: the next node to join chooses its tokens against
		// these.
		n.gossip.SetNow(gossip.Tokens, strings.Join(tokens, ","))
		n.gossip.SetNow(gossip.Status, n.normalStatus())
		n.gossip.SetNow(gossip.StatusWithPort, n.normalStatus())
		go n.gossipLoad()
		go n.housekeeping()
		if n.cfg.AutoRepair.Enabled {
			n.startAutoRepair()
		}
	}
	return nil
}

// normalStatus is STATUS for a node in the ring: NORMAL and its first
// token.
func (n *Node) normalStatus() string {
	return gossip.StatusNormal + "," + n.firstToken()
}

// loadState is LOAD's value: the bytes on disk, as a double.
func (n *Node) loadState() string { return strconv.FormatFloat(float64(n.engine.Load()), 'f', 1, 64) }

// startGossip joins the cluster through the seeds and waits until a seed
// has answered (a seed itself does not wait). A node with no seeds runs
// alone.
func (n *Node) startGossip(tokens []string) error {
	if len(n.cfg.Seeds) == 0 {
		return nil
	}
	if err := n.startMessaging(); err != nil {
		return err
	}
	if err := n.startStreaming(); err != nil {
		return err
	}
	keys, err := n.cfg.gossipKeys() // checked by Validate
	if err != nil {
		return err
	}
	g, err := gossip.Start(gossip.Options{EncryptionKeys: keys,
		Name: n.cfg.ListenAddress, Port: n.cfg.GossipPort, Seeds: n.cfg.Seeds, ClusterName: n.cfg.ClusterName, Generation: n.started.Unix(),
		States: n.selfStates(tokens), OnChange: n.gossipChanged, Logger: n.cfg.Logger, Peers: n.savedPeers(), Transport: n.cfg.GossipTransport,
	})
	if err != nil {
		return fmt.Errorf("gossip_port: %w", err)
	}
	n.ringMu.Lock() // gossip's OnChange may already be running
	n.gossip = g
	n.ringMu.Unlock()
	select {
	case <-g.Joined():
		return nil
	case <-time.After(seedWait):
		return fmt.Errorf("seeds: none of %s answered in %s; start a seed first", strings.Join(n.cfg.Seeds, ", "), seedWait)
	}
}

// savedPeers are the peers system.peers holds from an earlier run, on
// this node's gossip port (a local cluster's nodes share it): gossip
// reaches out to them, so that a restarted node whose seeds are only
// itself finds the cluster again.
func (n *Node) savedPeers() []string {
	rows, err := n.readRows(schema.PeersTable)
	if err != nil {
		n.cfg.Logger.Warn().Err(err).Msg("node: reading system.peers for gossip's contact points")
		return nil
	}
	var out []string
	for _, r := range rows {
		if ip := net.IP(r["peer"].Value); len(ip) == net.IPv4len || len(ip) == net.IPv6len {
			out = append(out, net.JoinHostPort(ip.String(), strconv.Itoa(n.cfg.GossipPort)))
		}
	}
	return out
}

// selfStates are the facts this node gossips about itself; with no tokens
// yet it is booting.
func (n *Node) selfStates(tokens []string) map[gossip.ApplicationState]string {
	version := n.Schema().Version()
	states := map[gossip.ApplicationState]string{
		gossip.Status:                 gossip.StatusBoot,
		gossip.Load:                   n.loadState(),
		gossip.Schema:                 cqltype.UUIDType.Format(version[:]),
		gossip.DataCenter:             n.cfg.DataCenter,
		gossip.Rack:                   n.cfg.Rack,
		gossip.ReleaseVersion:         ReleaseVersion,
		gossip.RPCAddress:             n.cfg.RPCAddress,
		gossip.NetVersion:             "12",
		gossip.HostID:                 cqltype.UUIDType.Format(n.hostID),
		gossip.RPCReady:               "false", // true once StartNative serves
		gossip.InternalAddressAndPort: net.JoinHostPort(n.cfg.ListenAddress, strconv.Itoa(n.cfg.StoragePort)),
		gossip.NativeAddressAndPort:   net.JoinHostPort(n.cfg.RPCAddress, strconv.Itoa(n.cfg.NativePort)),
	}
	states[gossip.StatusWithPort] = states[gossip.Status]
	if tokens != nil {
		// A restart: the node is in the ring from the start.
		states[gossip.Tokens] = strings.Join(tokens, ",")
		states[gossip.Status] = gossip.StatusNormal + "," + lowestToken(n.engine.Partitioner(), tokens)
		states[gossip.StatusWithPort] = states[gossip.Status]
	}
	return states
}

// gossipInfo is what nodetool gossipinfo shows: every node's gossiped
// state, by address. A node that does not gossip (no seeds) shows its own
// facts, numbered in order.
func (n *Node) gossipInfo() []AdminGossip {
	var out []AdminGossip
	if n.gossip == nil {
		g := AdminGossip{Endpoint: n.cfg.ListenAddress, Port: n.cfg.StoragePort, Generation: n.started.Unix()}
		states := n.selfStates(n.tokens)
		for i, k := range gossip.Order {
			if v, ok := states[k]; ok {
				g.States = append(g.States, AdminGossipState{Name: string(k), Version: int64(i + 1), Value: v})
			}
		}
		return append(out, g)
	}
	for e, s := range n.gossip.Endpoints() {
		g := AdminGossip{Endpoint: e, Port: gossipedStoragePort(s), Generation: s.Generation, Heartbeat: s.Heartbeat}
		for _, k := range gossip.Order {
			if v, ok := s.States[k]; ok {
				g.States = append(g.States, AdminGossipState{Name: string(k), Version: v.Version, Value: v.Value})
			}
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b AdminGossip) int { return compareAddresses(a.Endpoint, b.Endpoint) })
	return out
}

// gossipLoad spreads the node's load (bytes on disk) every few seconds.
func (n *Node) gossipLoad() {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n.gossip.Set(gossip.Load, n.loadState())
		case <-n.stopped:
			return
		}
	}
}

// housekeeping runs every few seconds: it goes on with the deliveries of
// hints to replicas that are up (Cassandra's dispatch trigger runs every
// 10 s), so that a delivery a failure stopped resumes without waiting for
// its replica to go down and up again, replays the logged batches whose
// coordinator did not see them through (Cassandra's batchlog replay runs
// every 10 s too), and lets go of the streaming sessions whose receivers
// left.
func (n *Node) housekeeping() {
	t := time.NewTicker(hintDeliveryInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n.coord.DeliverHints()
			n.coord.ReplayBatches()
			n.streaming.Reap()
		case <-n.stopped:
			return
		}
	}
}

// hintDeliveryInterval is how often deliverHints looks.
const hintDeliveryInterval = 10 * time.Second

// leaveCluster tells the other nodes this one is going, and stops gossip.
func (n *Node) leaveCluster() error {
	select {
	case <-n.stopped:
		return nil
	default:
		close(n.stopped)
	}
	var err error
	if n.gossip != nil {
		if lerr := n.gossip.Leave(2 * time.Second); lerr != nil {
			err = fmt.Errorf("node: leaving the cluster: %w", lerr)
		}
	}
	if n.messaging != nil {
		err = errors.Join(err, n.messaging.Close())
	}
	return err
}

// gossiper is the node's gossip, nil without seeds or before it starts;
// under ringMu, as gossip's OnChange may run while it is set.
func (n *Node) gossiper() *gossip.Gossiper {
	n.ringMu.Lock()
	defer n.ringMu.Unlock()
	return n.gossip
}

// gossipRunning reports whether the node takes part in its cluster's
// membership: until a storage failure, its departure or its stop ends it.
// A node alone (no seeds) is a cluster of one, as Cassandra's gossips
// with itself.
func (n *Node) gossipRunning() bool {
	select {
	case <-n.stopped:
		return false
	default:
	}
	g := n.gossiper()
	if g != nil {
		return !g.Suspended()
	}
	return len(n.cfg.Seeds) == 0 && !n.gossipOff.Load()
}

// disableGossip is nodetool disablegossip: the node stops gossiping (the
// others see it down, shut down) until enableGossip, and keeps serving
// clients and replica requests with what it knew of the cluster.
func (n *Node) disableGossip() error {
	if mode := n.operationMode(); mode != "NORMAL" {
		return badRequest("Unable to stop gossip because the node is not in the normal state. Try to stop the node instead.")
	}
	if !n.gossipRunning() {
		return nil
	}
	n.cfg.Logger.Warn().Msg("node: stopping gossip by operator request")
	if n.nativeRunning() {
		n.cfg.Logger.Warn().Msg("node: disabling gossip while the native transport is still active is unsafe")
	}
	g := n.gossiper()
	if g == nil {
		n.gossipOff.Store(true)
		return nil
	}
	return g.Suspend(2 * time.Second)
}

// enableGossip is nodetool enablegossip: gossip starts again, as a newer
// generation of the node.
func (n *Node) enableGossip() error {
	if n.gossipRunning() {
		return nil
	}
	n.cfg.Logger.Warn().Msg("node: starting gossip by operator request")
	g := n.gossiper()
	if g == nil {
		n.gossipOff.Store(false)
		return nil
	}
	return g.Resume()
}

// gossipChanged follows a change gossip saw: the peers tables drivers
// read, the events clients hear, hints for a node back up.
func (n *Node) gossipChanged(endpoint string) {
	g := n.gossiper()
	if g == nil || endpoint == n.cfg.ListenAddress {
		return
	}
	s := g.Endpoint(endpoint)
	if s == nil {
		return
	}
	if err := n.writePeer(endpoint, s); err != nil {
		n.cfg.Logger.Error().Err(err).Str("peer", endpoint).Msg("node: updating the peers tables")
	}
	n.announce(endpoint, s)
	if n.cameUp(endpoint, s.Alive) && n.messaging != nil {
		n.messaging.Redial(endpoint)
	}
	if s.Alive {
		n.coord.ReplicaUp(ring.Endpoint(endpoint))
	}
}

// cameUp records whether gossip shows a peer alive, and reports whether
// it did not before.
func (n *Node) cameUp(endpoint string, alive bool) bool {
	n.viewMu.Lock()
	defer n.viewMu.Unlock()
	if n.seenAlive == nil {
		n.seenAlive = map[string]bool{}
	}
	was := n.seenAlive[endpoint]
	n.seenAlive[endpoint] = alive
	return alive && !was
}

// inRing reports whether a node's gossiped status puts its tokens in the
// ring: a node that is up, or down after a shutdown, still owns them; one
// still booting or gone does not.
func inRing(s *gossip.EndpointState) bool {
	switch gossip.StatusKind(s.Get(gossip.Status)) {
	case gossip.StatusNormal, gossip.StatusShutdown, gossip.StatusLeaving:
		return s.Get(gossip.Tokens) != ""
	}
	return false
}

// rebuildRing makes the ring the node routes by: the nodes the metadata
// log has applied (normal or leaving: a node that is down still owns its
// tokens). Gossip says which of them are up, not which tokens they own.
func (n *Node) rebuildRing() {
	n.ringMu.Lock()
	defer n.ringMu.Unlock()
	t := n.topology.Load()
	if t == nil {
		t = &topology{}
	}
	m, err := ringOf(n.engine.Partitioner(), t.nodes)
	if err != nil {
		n.cfg.Logger.Error().Err(err).Msg("node: the metadata log's ring does not make a ring; keeping the previous one")
		if n.ring.Load() != nil {
			return
		}
		m, _ = ring.NewMetadata(n.engine.Partitioner(), nil)
	}
	n.ring.Store(m.WithEpoch(t.epoch))
}

// leftRing reports whether the metadata log has the node at endpoint as
// left (decommissioned or removed), and no other node there since.
func (n *Node) leftRing(endpoint string) bool {
	t := n.topology.Load()
	if t == nil {
		return false
	}
	left := false
	for _, r := range t.nodes {
		if r.Endpoint == endpoint {
			if r.State != metadata.Left {
				return false
			}
			left = true
		}
	}
	return left
}

// replacingAt reports whether a node is joining at endpoint in place of
// the dead node that had that address.
func (n *Node) replacingAt(endpoint string) bool {
	t := n.topology.Load()
	if t == nil {
		return false
	}
	for _, r := range t.nodes {
		if r.State == metadata.Joining && r.Replaces != 0 && r.Endpoint == endpoint && t.nodes[r.Replaces].Endpoint == endpoint {
			return true
		}
	}
	return false
}

// recordIn reports whether the metadata log has a node at endpoint in
// state (two may share an address: a dead node and its replacement).
func (n *Node) recordIn(endpoint string, state metadata.NodeState) bool {
	if t := n.topology.Load(); t != nil {
		for _, r := range t.nodes {
			if r.Endpoint == endpoint && r.State == state {
				return true
			}
		}
	}
	return false
}

// forgetLeft follows a node's leaving the ring: the hints held for it go
// to the replicas of the ranges it had (those that cannot are dropped),
// and the peers tables and the clients lose it.
func (n *Node) forgetLeft(endpoint string) {
	if !n.leftRing(endpoint) {
		return
	}
	if n.hints != nil {
		n.coord.RehomeHints(ring.Endpoint(endpoint), func(err error) {
			if err == nil {
				return
			}
			n.cfg.Logger.Warn().Err(err).Str("peer", endpoint).Msg("node: dropping the hints of a node that left, which its ranges' replicas did not all take")
			if err := n.hints.Truncate(endpoint); err != nil {
				n.cfg.Logger.Warn().Err(err).Str("peer", endpoint).Msg("node: dropping the hints of a node that left")
			}
		})
	}
	n.gossipChanged(endpoint)
}

// topology is the metadata log's ring as last applied here: its nodes,
// and the epoch of its last change.
type topology struct {
	nodes map[uint64]metadata.NodeRecord
	epoch uint64
}

// ringOf is the ring of the metadata log's nodes that own tokens (the
// normal and leaving ones) and, while some node is joining or leaving,
// the future ring it moves to (the normal and joining ones), whose
// replicas writes go to as well.
func ringOf(part partitioner.Partitioner, nodes map[uint64]metadata.NodeRecord) (*ring.Metadata, error) {
	current, err := ringOfNodes(part, nodes, func(r metadata.NodeRecord) bool { return r.State == metadata.Normal || r.State == metadata.Leaving })
	if err != nil {
		return nil, err
	}
	replaced := map[uint64]bool{}
	moving := false
	for _, rec := range nodes {
		moving = moving || rec.State == metadata.Joining || rec.State == metadata.Leaving
		if rec.State == metadata.Joining && rec.Replaces != 0 {
			replaced[rec.Replaces] = true
		}
	}
	if !moving {
		return current, nil
	}
	// The future: a node joining in place of another holds its tokens.
	future, err := ringOfNodes(part, nodes, func(r metadata.NodeRecord) bool {
		return (r.State == metadata.Normal || r.State == metadata.Joining) && !replaced[r.ID]
	})
	if err != nil {
		return nil, err
	}
	return current.WithFuture(future), nil
}

// ringOfNodes is the ring of the nodes in.
func ringOfNodes(part partitioner.Partitioner, nodes map[uint64]metadata.NodeRecord, in func(metadata.NodeRecord) bool) (*ring.Metadata, error) {
	var members []ring.Node
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		rec := nodes[id]
		if !in(rec) {
			continue
		}
		node := ring.Node{Endpoint: ring.Endpoint(rec.Endpoint), Location: ring.Location{DataCenter: rec.DataCenter, Rack: rec.Rack}}
		for _, v := range rec.Tokens {
			t, err := part.ParseToken(v)
			if err != nil {
				return nil, fmt.Errorf("node %s: token %q: %w", rec.Endpoint, v, err)
			}
			node.Tokens = append(node.Tokens, t)
		}
		members = append(members, node)
	}
	return ring.NewMetadata(part, members)
}

// writePeer keeps a peer's rows in system.peers and system.peers_v2 as
// gossip describes it, as Cassandra does; a node that left the ring loses
// them.
func (n *Node) writePeer(endpoint string, s *gossip.EndpointState) error {
	if s.Get(gossip.HostID) == "" {
		return nil
	}
	now := time.Now()
	w := &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()}
	peer := inetBytes(endpoint)
	if kind := gossip.StatusKind(s.Get(gossip.Status)); kind == gossip.StatusLeft || n.leftRing(endpoint) || !inRing(s) && kind != gossip.StatusBoot {
		var ms []*mutation.Mutation
		for _, t := range []*schema.Table{schema.PeersTable, schema.PeersV2Table} {
			m := mutation.NewMutation(t.ID, peer)
			m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: w.Timestamp, LocalDeletionTime: w.Now}
			ms = append(ms, m)
		}
		return n.applyLocal(ms)
	}
	if !inRing(s) {
		return nil // still booting: it has no tokens to show yet
	}
	hostID, err := cqltype.UUIDType.FromString(s.Get(gossip.HostID))
	if err != nil {
		return fmt.Errorf("host id %q: %w", s.Get(gossip.HostID), err)
	}
	values := map[string][]byte{
		"peer":            peer,
		"data_center":     []byte(s.Get(gossip.DataCenter)),
		"host_id":         hostID,
		"rack":            []byte(s.Get(gossip.Rack)),
		"release_version": []byte(s.Get(gossip.ReleaseVersion)),
		"tokens":          tokenSet(s.Get(gossip.Tokens)),
	}
	if v, err := cqltype.UUIDType.FromString(s.Get(gossip.Schema)); err == nil {
		values["schema_version"] = v
	}
	rpc := inetBytes(s.Get(gossip.RPCAddress))
	v1, err := schema.PeersTable.InsertMutation(withValues(values, map[string][]byte{"rpc_address": rpc}), w)
	if err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(s.Get(gossip.NativeAddressAndPort))
	nativePort, _ := strconv.Atoi(port)
	peerPort := gossipedStoragePort(s)
	v2, err := schema.PeersV2Table.InsertMutation(withValues(values, map[string][]byte{
		"peer_port": cqltype.EncodeInt(int32(peerPort)), "native_address": rpc, "native_port": cqltype.EncodeInt(int32(nativePort)),
	}), w)
	if err != nil {
		return err
	}
	return n.applyLocal([]*mutation.Mutation{v1, v2})
}

// withValues is base with more added, base unchanged.
func withValues(base, more map[string][]byte) map[string][]byte {
	out := maps.Clone(base)
	maps.Copy(out, more)
	return out
}

// tokenSet is a gossiped token list as a set<text> value.
func tokenSet(tokens string) []byte {
	var elems [][]byte
	for _, t := range strings.Split(tokens, ",") {
		if t != "" {
			elems = append(elems, []byte(t))
		}
	}
	slices.SortFunc(elems, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
	return cqltype.EncodeCollection(elems)
}

// peerView is what clients were told of a peer: whether it is up (alive
// to the failure detector and serving clients), and whether its joining
// was announced.
type peerView struct{ up, announced bool }

// announce tells the clients registered for cluster events of a peer's
// change, as Cassandra does: TOPOLOGY_CHANGE NEW_NODE once it is in the
// ring and serves clients (RPC_READY, so that a driver that connects at
// the news finds it listening) and REMOVED_NODE when it leaves the ring;
// STATUS_CHANGE UP once it is alive and serves clients (after NEW_NODE for
// a new node, and again after a restart), DOWN when it is not. A restart
// does not announce the node again.
func (n *Node) announce(endpoint string, s *gossip.EndpointState) {
	host, port, err := net.SplitHostPort(s.Get(gossip.NativeAddressAndPort))
	if err != nil {
		return
	}
	gone := n.leftRing(endpoint)
	ringed := inRing(s) && !gone
	serving := ringed && s.Get(gossip.RPCReady) == "true"
	left := gone || !ringed && gossip.StatusKind(s.Get(gossip.Status)) == gossip.StatusLeft
	n.viewMu.Lock()
	prev := n.views[endpoint]
	now := peerView{up: s.Alive && serving, announced: prev.announced && !left || serving}
	n.views[endpoint] = now
	n.viewMu.Unlock()
	srv := n.events.Load()
	if srv == nil {
		return
	}
	p, _ := strconv.Atoi(port)
	ip := net.ParseIP(host)
	switch {
	case now.announced && !prev.announced:
		srv.NodeEvent("TOPOLOGY_CHANGE", "NEW_NODE", ip, p)
	case left && prev.announced:
		srv.NodeEvent("TOPOLOGY_CHANGE", "REMOVED_NODE", ip, p)
	}
	if now.announced && now.up != prev.up {
		change := "DOWN"
		if now.up {
			change = "UP"
		}
		srv.NodeEvent("STATUS_CHANGE", change, ip, p)
	}
}

// gossipedStoragePort is the storage port a peer gossips in its
// INTERNAL_ADDRESS_AND_PORT, or Cassandra's default when it gossips none.
func gossipedStoragePort(s *gossip.EndpointState) int {
	if _, port, err := net.SplitHostPort(s.Get(gossip.InternalAddressAndPort)); err == nil {
		if p, err := strconv.Atoi(port); err == nil {
			return p
		}
	}
	return 7000
}

// storagePortOf is the storage port of a node of the ring: this node's
// own, or the one a peer gossips.
func (n *Node) storagePortOf(e ring.Endpoint) int {
	if e == n.endpoint() || n.gossip == nil {
		return n.cfg.StoragePort
	}
	if s := n.gossip.Endpoint(string(e)); s != nil {
		return gossipedStoragePort(s)
	}
	return n.cfg.StoragePort
}
