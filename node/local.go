package node

import (
	"crypto/rand"
	"encoding/binary"
	"net"
	"strconv"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// What the node tells drivers about itself in system.local. Drivers gate
// features on release_version, so Sibyl presents the Cassandra release whose
// behaviour it follows.
const (
	ReleaseVersion        = "4.1.6"
	CQLVersion            = "3.4.6"
	NativeProtocolVersion = "5"
	murmur3Class          = "org.apache.cassandra.dht.Murmur3Partitioner"
)

// writeLocal writes the system.local row. The host id and tokens chosen the
// first time are read back and kept.
func (n *Node) writeLocal() error {
	hostID, tokens, err := n.localIdentity()
	if err != nil {
		return err
	}
	ip := net.ParseIP(n.cfg.ListenAddress)
	inet := []byte(ip.To4())
	if inet == nil {
		inet = []byte(ip.To16())
	}
	tokenSet := make([][]byte, len(tokens))
	for i, t := range tokens {
		tokenSet[i] = []byte(t)
	}
	version := n.schema.Version()
	now := time.Now()
	w := &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()}
	m, err := schema.LocalTable.InsertMutation(map[string][]byte{
		"key":                     []byte("local"),
		"bootstrapped":            []byte("COMPLETED"),
		"broadcast_address":       inet,
		"broadcast_port":          cqltype.EncodeInt(7000),
		"cluster_name":            []byte(n.cfg.ClusterName),
		"cql_version":             []byte(CQLVersion),
		"data_center":             []byte(n.cfg.DataCenter),
		"gossip_generation":       cqltype.EncodeInt(int32(now.Unix())),
		"host_id":                 hostID,
		"listen_address":          inet,
		"listen_port":             cqltype.EncodeInt(7000),
		"native_protocol_version": []byte(NativeProtocolVersion),
		"partitioner":             []byte(murmur3Class),
		"rack":                    []byte(n.cfg.Rack),
		"release_version":         []byte(ReleaseVersion),
		"rpc_address":             inet,
		"rpc_port":                cqltype.EncodeInt(int32(n.cfg.NativePort)),
		"schema_version":          version[:],
		"tokens":                  cqltype.EncodeCollection(tokenSet),
	}, w)
	if err != nil {
		return err
	}
	return n.Apply([]*mutation.Mutation{m})
}

// localIdentity returns the host id and tokens system.local holds, or new
// ones: a random (version 4) host id and one random Murmur3 token (vnodes
// arrive with the cluster).
func (n *Node) localIdentity() ([]byte, []string, error) {
	rows, err := n.readRows(schema.LocalTable)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		if id := r["host_id"].Value; len(id) == 16 {
			tokens, err := cqltype.DecodeCollection(r["tokens"].Value)
			if err == nil && len(tokens) > 0 {
				out := make([]string, len(tokens))
				for i, t := range tokens {
					out[i] = string(t)
				}
				return id, out, nil
			}
		}
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	var b [8]byte
	_, _ = rand.Read(b[:])
	token := partitioner.Murmur3Token(int64(binary.BigEndian.Uint64(b[:])))
	return id, []string{strconv.FormatInt(token.Int64(), 10)}, nil
}
