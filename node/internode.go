package node

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// startMessaging serves internode requests on storage_port: the
// coordinator's verbs (the metadata log's are added as it starts).
func (n *Node) startMessaging() error {
	transport := n.cfg.Transport
	if opts, ok := n.cfg.ServerEncryptionOptions.tls(); ok && transport == nil {
		t, err := n.tlsServer(&n.internodeTLS, "server_encryption_options", "internode", opts)
		if err != nil {
			return err
		}
		transport = messaging.TCP{TLS: &messaging.TCPTLS{Server: t, Dial: n.internodeDialTLS, AllowPlaintext: n.internodePlaintextAllowed}}
	}
	m, err := messaging.Start(messaging.Options{Name: n.cfg.ListenAddress, Port: n.cfg.StoragePort, Logger: n.cfg.Logger, Transport: transport,
		Expiry: n.messageExpiry})
	if err != nil {
		return fmt.Errorf("storage_port: %w", err)
	}
	for verb, h := range n.coord.Handlers() {
		m.Handle(verb, h)
	}
	n.metrics.watchMessaging(m)
	n.messaging = m
	return nil
}

// internodeDialTLS is the TLS to dial a peer with, as internode_encryption
// says: every peer (all), those of another data centre (dc), or of
// another rack (rack); a peer the ring does not know yet gets TLS.
func (n *Node) internodeDialTLS(addr string) *tls.Config {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if n.plaintextPeer(host) {
		return nil
	}
	return n.internodeTLS.PeerConfig(host, n.cfg.ServerEncryptionOptions.RequireEndpointVerification)
}

// plaintextPeer reports whether internode_encryption lets this node and
// the node at host speak plaintext: one of the ring in this node's data
// centre (dc), and rack (rack). A host the ring does not hold is not one.
func (n *Node) plaintextPeer(host string) bool {
	enc := n.cfg.ServerEncryptionOptions.InternodeEncryption
	if enc != InternodeDC && enc != InternodeRack {
		return false
	}
	if top := n.topology.Load(); top != nil {
		for _, r := range top.nodes {
			if r.Endpoint == host && r.State != metadata.Left && r.DataCenter == n.cfg.DataCenter &&
				(enc == InternodeDC || r.Rack == n.cfg.Rack) {
				return true
			}
		}
	}
	return false
}

// internodePlaintextAllowed says whether a peer may speak plaintext to
// the storage port (internode_encryption dc or rack): a node of the ring
// in this node's data centre (and rack, for rack). Anyone else is
// refused, logged and counted with the refused handshakes.
func (n *Node) internodePlaintextAllowed(host string) bool {
	if n.plaintextPeer(host) {
		return true
	}
	n.internodeTLS.HandshakeFailures.Add(1)
	n.cfg.Logger.Warn().Str("client", host).Msg("tls: a plaintext internode connection from a node that must use TLS, or from no node, was refused")
	return false
}

// schemaMutations are this node's system_schema contents as mutations
// (SchemaMutations).
func (n *Node) schemaMutations() ([]*mutation.Mutation, error) {
	return SchemaMutations(n.engine, time.Now().Unix())
}

// SchemaMutations are an engine's system_schema and system_auth contents as mutations:
// every entry as the engine holds it, deletions included, so that a
// snapshot of the metadata log carries a DROP as well as a CREATE.
func SchemaMutations(e *storage.Engine, now int64) ([]*mutation.Mutation, error) {
	tokenLen := e.Partitioner().TokenBytesLen()
	var out []*mutation.Mutation
	for _, t := range schema.ReplicatedMetadataTables() {
		st, err := e.Table(t.ID)
		if err != nil {
			return nil, fmt.Errorf("node: %s: %w", t, err)
		}
		parts, err := st.ScanEntries(storage.ScanQuery{Now: now})
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			m, err := mutation.FromEntries(t.ID, p.Key, p.Entries, tokenLen)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// messageExpiry is how long a request of a verb may wait on this replica
// before it is dropped unanswered: its coordinator's timeout, as
// Cassandra drops the messages their coordinator no longer waits for.
// Gossip-like, metadata, streaming and repair messages never expire.
func (n *Node) messageExpiry(v messaging.Verb) time.Duration {
	switch v {
	case messaging.VerbMutation, messaging.VerbHint, messaging.VerbBatchStore, messaging.VerbBatchRemove,
		messaging.VerbPaxosPrepare, messaging.VerbPaxosPropose, messaging.VerbPaxosCommit:
		return time.Duration(n.cfg.WriteRequestTimeout)
	case messaging.VerbCounterMutation:
		return time.Duration(n.cfg.CounterWriteRequestTimeout)
	case messaging.VerbRead:
		return time.Duration(n.cfg.ReadRequestTimeout)
	case messaging.VerbRangeRead:
		return time.Duration(n.cfg.RangeRequestTimeout)
	case messaging.VerbTruncate:
		return time.Duration(n.cfg.TruncateRequestTimeout)
	}
	return 0
}
