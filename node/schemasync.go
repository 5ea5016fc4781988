package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// schemaPushTimeout bounds how long DDL waits for the live nodes to take
// the change; one that does not answer pulls the schema later.
const schemaPushTimeout = 10 * time.Second

// startMessaging serves internode requests on storage_port: schema pushes
// and pulls.
func (n *Node) startMessaging() error {
	m, err := messaging.Start(messaging.Options{Name: n.cfg.ListenAddress, Port: n.cfg.StoragePort, Logger: n.cfg.Logger, Transport: n.cfg.Transport})
	if err != nil {
		return fmt.Errorf("storage_port: %w", err)
	}
	m.Handle(messaging.VerbSchemaPush, func(from string, payload []byte) ([]byte, error) {
		ms, err := coordinator.DecodeMutations(payload)
		if err != nil {
			return nil, err
		}
		return nil, n.applySchemaLocal(ms, false)
	})
	m.Handle(messaging.VerbSchemaPull, func(string, []byte) ([]byte, error) {
		ms, err := n.schemaMutations()
		if err != nil {
			return nil, err
		}
		return coordinator.EncodeMutations(ms), nil
	})
	for verb, h := range n.coord.Handlers() {
		m.Handle(verb, h)
	}
	n.messaging = m
	return nil
}

// livePeers are the other nodes gossip sees up.
func (n *Node) livePeers() []string {
	if n.gossip == nil {
		return nil
	}
	var out []string
	for e, s := range n.gossip.Endpoints() {
		if e != n.cfg.ListenAddress && s.Alive {
			out = append(out, e)
		}
	}
	return out
}

// pushSchema sends a schema change to every live node and waits for them
// to apply it, so that drivers waiting for schema agreement after DDL find
// it. A node that fails or is down catches up by pulling the schema when
// gossip shows it a version other than its own.
func (n *Node) pushSchema(ms []*mutation.Mutation) {
	peers := n.livePeers()
	if len(peers) == 0 {
		return
	}
	payload := coordinator.EncodeMutations(ms)
	ctx, cancel := context.WithTimeout(context.Background(), schemaPushTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func(p string) {
			defer wg.Done()
			if _, err := n.messaging.Request(ctx, p, messaging.VerbSchemaPush, payload); err != nil {
				n.cfg.Logger.Warn().Err(err).Str("peer", p).Msg("node: a schema change did not reach a node; it will pull it")
			}
		}(p)
	}
	wg.Wait()
}

// maybePullSchema pulls the schema of a live peer whose gossiped schema
// version differs from this node's, in the background, one pull per peer
// at a time. Applying what it sends merges the two (the cells' timestamps
// decide), so nodes converge whichever pulls from which.
func (n *Node) maybePullSchema(peer string, s *gossip.EndpointState) {
	version := n.Schema().Version()
	if !n.ready.Load() || n.messaging == nil || !s.Alive || s.Get(gossip.Schema) == "" || s.Get(gossip.Schema) == cqltype.UUIDType.Format(version[:]) {
		return
	}
	n.pullMu.Lock()
	if n.pulling[peer] {
		n.pullMu.Unlock()
		return
	}
	n.pulling[peer] = true
	n.pullMu.Unlock()
	go func() {
		defer func() {
			n.pullMu.Lock()
			delete(n.pulling, peer)
			n.pullMu.Unlock()
		}()
		if err := n.pullSchema(peer); err != nil && !errors.Is(err, messaging.ErrClosed) {
			n.cfg.Logger.Warn().Err(err).Str("peer", peer).Msg("node: pulling the schema")
		}
	}()
}

// syncSchema pulls from every live peer whose schema differs, once
// start-up is done (the changes gossip brought before were not acted on).
func (n *Node) syncSchema() {
	if n.gossip == nil {
		return
	}
	for e, s := range n.gossip.Endpoints() {
		if e != n.cfg.ListenAddress {
			n.maybePullSchema(e, s)
		}
	}
}

func (n *Node) pullSchema(peer string) error {
	ctx, cancel := context.WithTimeout(context.Background(), schemaPushTimeout)
	defer cancel()
	payload, err := n.messaging.Request(ctx, peer, messaging.VerbSchemaPull, nil)
	if err != nil {
		return err
	}
	ms, err := coordinator.DecodeMutations(payload)
	if err != nil {
		return err
	}
	return n.applySchemaLocal(ms, false)
}

// schemaMutations are this node's system_schema contents as mutations:
// every entry as the engine holds it, deletions included, so that a pull
// carries a DROP as well as a CREATE.
func (n *Node) schemaMutations() ([]*mutation.Mutation, error) {
	now := time.Now().Unix()
	tokenLen := n.engine.Partitioner().TokenBytesLen()
	var out []*mutation.Mutation
	for _, t := range n.Schema().Keyspace(schema.SystemSchemaKeyspace).Tables {
		st, err := n.storageTable(t)
		if err != nil {
			return nil, err
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
