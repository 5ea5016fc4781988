package node

import (
	cryptorand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// What the node tells drivers about itself in system.local. Drivers gate
// features on release_version, so Sibyl presents the Cassandra release whose
// behaviour it follows.
const (
	ReleaseVersion        = "4.1.6"
	CQLVersion            = "3.4.6"
	NativeProtocolVersion = "5"
)

// inetBytes is an address as an inet value: 4 bytes for IPv4.
func inetBytes(addr string) []byte {
	b, _ := cqltype.InetType.FromString(addr)
	return b
}

// writeLocal writes the system.local row, with the host id and tokens the
// node chose at its first start (identify), and gossips the schema version.
func (n *Node) writeLocal() error {
	n.ringMu.Lock()
	hostID, tokens := n.hostID, n.tokens
	n.ringMu.Unlock()
	inet := inetBytes(n.cfg.ListenAddress)
	tokenSet := make([][]byte, len(tokens))
	for i, t := range tokens {
		tokenSet[i] = []byte(t)
	}
	version := n.Schema().Version()
	if n.gossip != nil {
		n.gossip.Set(gossip.Schema, cqltype.UUIDType.Format(version[:]))
	}
	now := time.Now()
	w := &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()}
	m, err := schema.LocalTable.InsertMutation(map[string][]byte{
		"key":                     []byte("local"),
		"bootstrapped":            []byte("COMPLETED"),
		"broadcast_address":       inet,
		"broadcast_port":          cqltype.EncodeInt(int32(n.cfg.StoragePort)),
		"cluster_name":            []byte(n.cfg.ClusterName),
		"cql_version":             []byte(CQLVersion),
		"data_center":             []byte(n.cfg.DataCenter),
		"gossip_generation":       cqltype.EncodeInt(int32(now.Unix())),
		"host_id":                 hostID,
		"listen_address":          inet,
		"listen_port":             cqltype.EncodeInt(int32(n.cfg.StoragePort)),
		"native_protocol_version": []byte(NativeProtocolVersion),
		"partitioner":             []byte(n.engine.Partitioner().Name()),
		"rack":                    []byte(n.cfg.Rack),
		"release_version":         []byte(ReleaseVersion),
		"rpc_address":             inetBytes(n.cfg.RPCAddress),
		"rpc_port":                cqltype.EncodeInt(int32(n.cfg.NativePort)),
		"schema_version":          version[:],
		"tokens":                  cqltype.EncodeCollection(tokenSet),
	}, w)
	if err != nil {
		return err
	}
	return n.applyLocal([]*mutation.Mutation{m})
}

// ClusterInfo tells DESCRIBE CLUSTER about the node's cluster: on a
// single node it owns every range its tokens end.
func (n *Node) ClusterInfo() exec.ClusterInfo {
	return exec.ClusterInfo{
		DataCenters: n.dataCenters(),
		Name:        n.cfg.ClusterName,
		Partitioner: n.engine.Partitioner().Name(),
		Snitch:      "DynamicEndpointSnitch",
		Ownership: func(keyspace string) map[string][]string {
			m := n.ring.Load()
			var s ring.Strategy = ring.SimpleStrategy{Factor: 1}
			if ks := n.Schema().Keyspace(keyspace); ks != nil {
				if ks, err := n.strategy(ks); err == nil {
					s = ks
				}
			}
			out := map[string][]string{}
			for _, t := range m.SortedTokens() {
				for _, e := range s.Replicas(m, t) {
					out[t.String()] = append(out[t.String()], "/"+net.JoinHostPort(string(e), strconv.Itoa(n.storagePortOf(e))))
				}
			}
			return out
		},
	}
}

// storedIdentity returns the host id and tokens system.local holds: at
// the first start, a new random (version 4) host id, kept, and no tokens. A node
// keeps the partitioner its data was written with: starting it with
// another is refused.
func (n *Node) storedIdentity() ([]byte, []string, error) {
	rows, err := n.readRows(schema.LocalTable)
	if err != nil {
		return nil, nil, err
	}
	part := n.engine.Partitioner()
	for _, r := range rows {
		if was := string(r["partitioner"].Value); was != "" && was != part.Name() {
			return nil, nil, fmt.Errorf("partitioner: this node's data was written with %s; it cannot start with %s", was, part.Name())
		}
		if id := r["host_id"].Value; len(id) == 16 {
			tokens, err := cqltype.DecodeCollection(r["tokens"].Value)
			if err != nil || len(tokens) == 0 {
				return id, nil, nil // a first start cut short: the same node
			}
			out := make([]string, len(tokens))
			for i, t := range tokens {
				out[i] = string(t)
			}
			return id, out, nil
		}
	}
	id := make([]byte, 16)
	_, _ = cryptorand.Read(id)
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	// Kept at once, flushed: a first start cut short (a bootstrap that
	// failed, a crash) starts again as the node the metadata log and
	// the other nodes already know, not as another at its address.
	now := time.Now()
	m, err := schema.LocalTable.InsertMutation(map[string][]byte{
		"key": []byte("local"), "host_id": id, "bootstrapped": []byte("IN_PROGRESS"), "partitioner": []byte(part.Name()),
	}, &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()})
	if err == nil {
		err = n.applyLocal([]*mutation.Mutation{m})
	}
	if err == nil {
		err = n.engine.Flush()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("node: keeping the new host id: %w", err)
	}
	return id, nil, nil
}

// allocateTokens chooses num_tokens tokens against the ring as it stands
// (this node alone, or the cluster gossip has shown it).
func (n *Node) allocateTokens(current *ring.Metadata) []string {
	var seed [32]byte
	_, _ = cryptorand.Read(seed[:])
	var tokens []string
	for _, t := range ring.AllocateTokens(current, n.cfg.NumTokens, rand.New(rand.NewChaCha8(seed))) {
		tokens = append(tokens, t.String())
	}
	return tokens
}

// dataCenters are this node's data centre and those of every node of its
// ring, sorted.
func (n *Node) dataCenters() []string {
	dcs := []string{n.cfg.DataCenter}
	m := n.ring.Load()
	for _, e := range m.Endpoints() {
		if dc := m.Location(e).DataCenter; dc != "" && !slices.Contains(dcs, dc) {
			dcs = append(dcs, dc)
		}
	}
	slices.Sort(dcs)
	return dcs
}

// endpoint is this node's name on the ring.
func (n *Node) endpoint() ring.Endpoint { return ring.Endpoint(n.cfg.ListenAddress) }
