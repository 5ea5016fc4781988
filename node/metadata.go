package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

const (
	// metadataTimeout bounds how long a schema change waits for the
	// metadata log to commit it, and a join request for its answer.
	metadataTimeout = 10 * time.Second
	// metadataJoinWait is how long a node that has never been in the
	// metadata group tries to join one before it gives up starting.
	metadataJoinWait = time.Minute
)

// raftID is a node's id in the metadata group, from its host id (which
// never changes, where its address may).
func raftID(hostID []byte) uint64 {
	id := binary.BigEndian.Uint64(hostID[:8]) ^ binary.BigEndian.Uint64(hostID[8:])
	return max(id, 1)
}

// openMetadata opens the node's metadata log, before anything that could
// call on it runs (messaging's handlers, the coordinator's catching up).
func (n *Node) openMetadata() error {
	l, err := metadata.Open(metadata.Options{
		Self:             metadata.Member{ID: raftID(n.hostID), Endpoint: n.cfg.ListenAddress, DataCenter: n.cfg.DataCenter, Rack: n.cfg.Rack},
		FS:               n.cfg.FS,
		Dir:              n.cfg.MetadataDirectory,
		Network:          nodeNetwork{n},
		Applier:          metadataApplier{n},
		PartitionedAfter: time.Duration(n.cfg.PartitionedNodeTimeout),
		SnapshotEntries:  n.cfg.MetadataSnapshotEntries,
		Logger:           n.cfg.Logger,
	})
	if err != nil {
		return fmt.Errorf("metadata_directory: %w", err)
	}
	n.meta = l
	n.metrics.watchMetadata(l.Status)
	return nil
}

// startMetadata runs the node's metadata log: a node that
// has one takes up where it stopped (and applies what it committed since
// its snapshot); one that has none joins the group through its seeds and
// the live nodes gossip shows, or, the lowest-addressed seed with no peer
// that has a group, founds it. A node with no seeds runs a group of its
// own. Data written before the metadata log existed stays: the founder's
// schema is the group's first, and the others', the same schema, are left
// as they are.
func (n *Node) startMetadata() error {
	l := n.meta
	if n.messaging != nil {
		for verb, h := range l.Handlers() {
			if verb == messaging.VerbMetadataWait {
				h = n.afterAwait(h)
			}
			n.messaging.Handle(verb, h)
		}
	}
	if err := l.Start(); err != nil {
		return err
	}
	if !l.HasLog() {
		ms, err := n.schemaMutations()
		if err != nil {
			return err
		}
		_, newest := timestampBounds(ms)
		if n.messaging == nil {
			err = l.Bootstrap(newest)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), metadataJoinWait)
			founder, peers := n.foundsCluster(), n.metadataPeers
			if founder {
				// The founder asks only the nodes it sees running: a seed
				// that is down must not keep a cluster from starting.
				peers = n.livePeers
			}
			err = l.JoinOrBootstrap(ctx, peers, founder, newest)
			cancel()
			if err != nil {
				err = fmt.Errorf("%w; the lowest-addressed seed founds the metadata group: start it first", err)
			}
		}
		if err != nil {
			return err
		}
	}
	st := l.Status().State
	n.schemaMu.Lock()
	n.schema.Store(n.Schema().WithEpoch(st.SchemaEpoch))
	n.schemaMu.Unlock()
	// A snapshot and no entry after it: nothing applied has set the ring.
	n.topology.CompareAndSwap(nil, &topology{nodes: st.Nodes, epoch: st.RingEpoch})
	return nil
}

// metadataPeers are the nodes a join request may go to: the seeds, then
// every other node gossip sees up.
func (n *Node) metadataPeers() []string {
	var out []string
	for _, s := range n.cfg.Seeds {
		if h := seedHost(s); h != n.cfg.ListenAddress && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, e := range n.livePeers() {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
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
	slices.Sort(out)
	return out
}

// foundsCluster reports whether this node is the one that makes a new
// metadata group when no peer has one: the seed with the lowest address.
func (n *Node) foundsCluster() bool {
	var lowest net.IP
	for _, s := range n.cfg.Seeds {
		ip := net.ParseIP(seedHost(s))
		if ip != nil && (lowest == nil || bytes.Compare(ip.To16(), lowest.To16()) < 0) {
			lowest = ip
		}
	}
	return lowest != nil && lowest.Equal(net.ParseIP(n.cfg.ListenAddress))
}

func seedHost(seed string) string {
	if host, _, err := net.SplitHostPort(seed); err == nil {
		return host
	}
	return seed
}

// ApplySchema makes a schema change made against base: it commits through
// the metadata log, and returns once it has applied here and on every
// node gossip sees up (or metadataTimeout has passed), so that a client
// finds the change on whichever node it asks next, and a driver's wait
// for schema agreement ends at once. A node that is down applies it when
// its log catches up. A change another committed
// first refuses it (exec.ErrSchemaChanged: the statement is checked
// again). A change whose new tables cannot be opened here is undone, also
// through the log, so that a failed statement leaves nothing behind.
func (n *Node) ApplySchema(base *schema.Schema, ms []*mutation.Mutation) error {
	if base == nil {
		base = n.Schema()
	}
	c, err := ProposeSchema(n.meta, base.Epoch(), ms)
	if err != nil {
		return err
	}
	n.awaitPeers(c.Index)
	n.sendSchemaVersion()
	epoch := c.Epoch
	n.schemaMu.Lock()
	failed := n.unopened[epoch]
	delete(n.unopened, epoch)
	n.schemaMu.Unlock()
	if failed.err == nil {
		return nil
	}
	return errors.Join(failed.err, n.undoTables(failed.tables))
}

// ProposeSchema commits schema mutations made against the schema of
// schema epoch base through a metadata log, and returns once they have
// applied on its node. It refuses at once on a node cut off from the
// voters (the change could not commit), and with exec.ErrSchemaChanged
// when another change committed first.
func ProposeSchema(l *metadata.Log, base uint64, ms []*mutation.Mutation) (metadata.Committed, error) {
	if st := l.Status(); st.Partitioned {
		return metadata.Committed{}, fmt.Errorf("this node has not reached a majority of the cluster metadata voters for %s; schema changes are refused until it does",
			st.SinceContact.Round(time.Second))
	}
	lo, hi := timestampBounds(ms)
	ctx, cancel := context.WithTimeout(context.Background(), metadataTimeout)
	defer cancel()
	c, err := l.ProposeSchema(ctx, base, lo, hi, coordinator.EncodeMutations(ms))
	if errors.Is(err, metadata.ErrSchemaChanged) {
		return c, exec.ErrSchemaChanged
	}
	return c, err
}

// DecodeSchemaChange is the mutations of a committed schema change, their
// timestamps moved by the log's shift.
func DecodeSchemaChange(b []byte, shift int64) ([]*mutation.Mutation, error) {
	ms, err := coordinator.DecodeMutations(b)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		m.ShiftTimestamps(shift)
	}
	return ms, nil
}

// afterAwait is the await handler h, and once the change it waited for has
// applied here, the new schema version sent to every node
// (sendSchemaVersion) before the answer goes.
func (n *Node) afterAwait(h messaging.Handler) messaging.Handler {
	return func(ctx context.Context, from string, payload []byte) ([]byte, error) {
		answer, err := h(ctx, from, payload)
		if err == nil {
			n.sendSchemaVersion()
		}
		return answer, err
	}
}

// sendSchemaVersion sends this node's schema version to every live node
// at once, rather than with gossip's next round: a node that has applied a
// schema change tells the others before it says so to the change's
// proposer, so that when the DDL returns the system.peers rows drivers
// read for schema agreement already agree.
func (n *Node) sendSchemaVersion() {
	if n.gossip == nil {
		return
	}
	version := n.Schema().Version()
	n.gossip.SetNow(gossip.Schema, cqltype.UUIDType.Format(version[:]))
}

// awaitPeers waits, up to metadataTimeout, for the nodes gossip sees up to
// apply index. One that does not is only late: it applies the change as
// its log catches up.
func (n *Node) awaitPeers(index uint64) {
	peers := n.livePeers()
	if len(peers) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), metadataTimeout)
	defer cancel()
	if err := n.meta.AwaitApplied(ctx, index, peers); err != nil {
		n.cfg.Logger.Warn().Err(err).Msg("node: a schema change has not reached every node that is up; they apply it as their logs catch up")
	}
}

// undoTables drops, through the log, the tables a change of this node's
// client added that could not be opened here.
func (n *Node) undoTables(tables []*schema.Table) error {
	now := time.Now()
	w := &schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()}
	var undo []*mutation.Mutation
	for _, t := range tables {
		ms, err := schema.DropTableMutations(t, w)
		if err != nil {
			return err
		}
		undo = append(undo, ms...)
	}
	for range 10 {
		_, err := ProposeSchema(n.meta, n.Schema().Epoch(), undo)
		if !errors.Is(err, exec.ErrSchemaChanged) {
			if err != nil {
				return fmt.Errorf("node: undoing a schema change: %w", err)
			}
			return nil
		}
	}
	return errors.New("node: undoing a schema change: other changes kept committing first")
}

// timestampBounds are the smallest and largest write timestamps of ms.
func timestampBounds(ms []*mutation.Mutation) (lo, hi int64) {
	lo, hi = mutation.NoDeletionTime, mutation.NoTimestamp
	for _, m := range ms {
		if mlo, mhi := m.TimestampBounds(); mlo <= mhi {
			lo, hi = min(lo, mlo), max(hi, mhi)
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// metadataApplier applies the metadata log's changes to the node: schema
// changes to its system_schema tables, the ring to the ring it routes by.
type metadataApplier struct{ n *Node }

func (a metadataApplier) ApplySchema(b []byte, shift int64, epoch uint64, proposedHere bool) error {
	ms, err := DecodeSchemaChange(b, shift)
	if err != nil {
		return err
	}
	return a.n.applySchemaLocal(ms, epoch, proposedHere)
}

func (a metadataApplier) SchemaSnapshot() ([]byte, error) { return EncodeSchemaSnapshot(a.n.engine) }

func (a metadataApplier) RestoreSchema(b []byte, epoch uint64) error {
	ms, err := DecodeSchemaChange(b, 0)
	if err != nil {
		return err
	}
	return a.n.applySchemaLocal(ms, epoch, false)
}

func (a metadataApplier) ApplyTopology(nodes map[uint64]metadata.NodeRecord, epoch uint64) error {
	prev := a.n.topology.Swap(&topology{nodes: nodes, epoch: epoch})
	a.n.rebuildRing()
	for id, r := range nodes {
		if r.State == metadata.Left && r.Endpoint != a.n.cfg.ListenAddress && (prev == nil || prev.nodes[id].State != metadata.Left) {
			go a.n.forgetLeft(r.Endpoint)
		}
	}
	return nil
}

// registerTokens makes the metadata log's record of this node hold its
// tokens, and returns them: the record's, when the log has one for it (a
// restart); the stored ones, else (a node whose data predates the log);
// else tokens chosen against the log's ring, chosen again if another node
// took some of them first. A node with a new host id at the address of a
// node the log knows is refused, as Cassandra refuses it: that is a
// replacement. joining is true for a node that bootstraps (one new to a
// ring with nodes, or one whose bootstrap a restart cut short): it is
// recorded joining, and normal once it has streamed its ranges.
func (n *Node) registerTokens(stored []string) (tokens []string, joining bool, err error) {
	id := raftID(n.hostID)
	part := n.engine.Partitioner()
	movementDeadline := time.Now().Add(rangeMovementWait)
	for attempt := 1; ; attempt++ {
		nodes := n.meta.Status().State.Nodes
		rec, known := nodes[id]
		var replaced metadata.NodeRecord
		if !known && stored == nil && n.cfg.ReplaceAddressFirstBoot != "" {
			if replaced, err = n.replaced(nodes); err != nil {
				return nil, false, err
			}
			n.replacing.Store(replaced.ID)
		}
		for other, r := range nodes {
			if other != id && other != replaced.ID && other != rec.Replaces && r.Endpoint == n.cfg.ListenAddress && r.State != metadata.Left {
				return nil, false, fmt.Errorf("node: a node with address %s already exists in the cluster metadata (host id %s); a new node that replaces it starts with replace_address_first_boot (--replace-address) %s",
					r.Endpoint, cqltype.UUIDType.Format(r.HostID[:]), r.Endpoint)
			}
		}
		same := known && rec.Endpoint == n.cfg.ListenAddress && rec.DataCenter == n.cfg.DataCenter && rec.Rack == n.cfg.Rack
		switch {
		case known && rec.State == metadata.Left:
			return nil, false, errors.New("node: this node was decommissioned (or removed) and will not rejoin the ring; remove all of its data to bootstrap it again as a new node")
		case same && (rec.State == metadata.Normal || rec.State == metadata.Joining):
			if rec.State == metadata.Joining {
				n.replacing.Store(rec.Replaces) // a replacement a restart cut short
			}
			return rec.Tokens, rec.State == metadata.Joining, nil
		case same && rec.State == metadata.Leaving:
			// A decommission cut short: the node stays in the ring as it
			// was, and the nodes that took some of its ranges keep copies
			// that cleanup drops.
			n.cfg.Logger.Warn().Msg("node: a decommission of this node was cut short; it stays in the ring: run nodetool decommission again to leave")
			if err := n.proposeSelf(rec.Tokens, metadata.Normal); err != nil {
				return nil, false, fmt.Errorf("node: putting the node back in the ring after a decommission cut short: %w", err)
			}
			return rec.Tokens, false, nil
		}
		tokens := stored
		if known && len(rec.Tokens) > 0 {
			tokens = rec.Tokens
		}
		if tokens == nil {
			m, err := ringOf(part, nodes)
			if err != nil {
				return nil, false, err
			}
			tokens = n.allocateTokens(m)
		}
		state := metadata.Normal
		if known && rec.State == metadata.Joining || !known && stored == nil && n.bootstraps(nodes, id) {
			state = metadata.Joining
		}
		if replaced.ID != 0 {
			tokens, state = replaced.Tokens, metadata.Joining
		}
		err := n.proposeSelf(tokens, state)
		switch {
		case err == nil:
			return tokens, state == metadata.Joining, nil
		case errors.Is(err, metadata.ErrTokensTaken) && stored == nil && !known && attempt < 5:
			continue // chosen against a ring another node's join changed
		case errors.Is(err, metadata.ErrRangeMovement) && time.Now().Before(movementDeadline):
			n.cfg.Logger.Info().Msg("node: another node is joining or leaving; waiting to join after it")
			select {
			case <-time.After(time.Second):
			case <-n.stopped:
				return nil, false, errors.New("node: stopped while waiting to join")
			}
			attempt--
			continue
		}
		return nil, false, fmt.Errorf("node: recording the node's tokens in the cluster metadata: %w", err)
	}
}

// proposeSelf records this node in the metadata log with tokens, in
// state; while the node replaces another, the record says so.
func (n *Node) proposeSelf(tokens []string, state metadata.NodeState) error {
	r := metadata.NodeRecord{ID: raftID(n.hostID), Endpoint: n.cfg.ListenAddress, DataCenter: n.cfg.DataCenter, Rack: n.cfg.Rack, Tokens: tokens}
	if state == metadata.Joining || state == metadata.Normal {
		r.Replaces = n.replacing.Load()
	}
	copy(r.HostID[:], n.hostID)
	return n.proposeRecord(r, state)
}

// proposeRecord records a node (this one, or another on its behalf) in
// the metadata log in state.
func (n *Node) proposeRecord(r metadata.NodeRecord, state metadata.NodeState) error {
	r.State = state
	ctx, cancel := context.WithTimeout(context.Background(), metadataJoinWait)
	defer cancel()
	_, err := n.meta.ProposeNode(ctx, r)
	return err
}

// EncodeSchemaSnapshot is an engine's whole schema (SchemaMutations) as a
// snapshot of the metadata log carries it.
func EncodeSchemaSnapshot(e *storage.Engine) ([]byte, error) {
	ms, err := SchemaMutations(e, time.Now().Unix())
	if err != nil {
		return nil, err
	}
	return coordinator.EncodeMutations(ms), nil
}
