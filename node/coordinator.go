package node

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/internal/ann"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/tracing"
)

// The node runs the statements of its clients through its coordinator
// (coordinator.Coordinator), which it wires to this node's engine, its
// messaging and its gossip; its own schema changes it applies itself. A
// node alone is the only replica of everything.
var _ exec.Coordinator = (*Node)(nil)

// newCoordinator wires the node's coordinator: this node's engine, the
// other nodes through messaging (for a node with seeds), liveness from
// gossip, the ring and the schema as they are at each request.
func (n *Node) newCoordinator() (*coordinator.Coordinator, error) {
	cfg := coordinator.Config{
		Self: n.endpoint(), DataCenter: n.cfg.DataCenter, Engine: localEngine{n.engine},
		Alive: func(e ring.Endpoint) bool {
			g := n.gossip
			// A node replacing a dead one at its address is the dead one
			// to the ring until it has its data: down, so that it is read
			// from by no one and its writes wait as hints.
			return g != nil && g.Alive(string(e)) && !n.replacingAt(string(e))
		},
		Ring:    n.ring.Load,
		CatchUp: func(ctx context.Context, epoch uint64) error { return n.meta.WaitEpoch(ctx, epoch) },
		Schema:  n.Schema,
		Timeouts: coordinator.Timeouts{Write: time.Duration(n.cfg.WriteRequestTimeout), Read: time.Duration(n.cfg.ReadRequestTimeout),
			Range: time.Duration(n.cfg.RangeRequestTimeout), Truncate: time.Duration(n.cfg.TruncateRequestTimeout),
			CAS: time.Duration(n.cfg.CASContentionTimeout), Counter: time.Duration(n.cfg.CounterWriteRequestTimeout)},
		HintedHandoff: coordinator.HintedHandoff{Disabled: !*n.cfg.HintedHandoffEnabled, MaxWindow: time.Duration(n.cfg.MaxHintWindow),
			Throttle: int64(*n.cfg.HintedHandoffThrottle), DeliveryThreads: n.cfg.MaxHintsDeliveryThreads},
		Downtime: func(e ring.Endpoint) time.Duration {
			if g := n.gossip; g != nil {
				return g.Downtime(string(e))
			}
			return 0
		},
		StoragePort: n.cfg.StoragePort,
		Logger:      *n.cfg.Logger,
		Tracer:      n.tracer,
		Contended: func(table mutation.TableID, key []byte) {
			if st, err := n.engine.Table(table); err == nil {
				st.SampleContention(key)
			}
		},
		CounterID: func() mutation.CounterID {
			if id := n.counterID.Load(); id != nil {
				return *id
			}
			return mutation.CounterID{}
		},
	}
	if len(n.cfg.Seeds) > 0 {
		cfg.Network = nodeNetwork{n}
		store, err := hints.Open(hints.Options{FS: n.cfg.FS, Dir: n.cfg.HintsDirectory, MaxFileSize: int64(n.cfg.MaxHintsFileSize),
			MaxSizePerHost: int64(*n.cfg.MaxHintsSizePerHost), Now: time.Now})
		if err != nil {
			return nil, fmt.Errorf("hints_directory: %w", err)
		}
		cfg.Hints, n.hints = store, store
	}
	return coordinator.New(cfg), nil
}

// nodeNetwork is the node's messaging, started with gossip before the
// node takes any request: the coordinator's network and the metadata
// log's.
type nodeNetwork struct{ n *Node }

func (nn nodeNetwork) Request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error) {
	m := nn.n.messaging
	if m == nil {
		return nil, messaging.ErrClosed
	}
	return m.Request(ctx, to, verb, payload)
}

func (nn nodeNetwork) Send(ctx context.Context, to string, verb messaging.Verb, payload []byte) error {
	m := nn.n.messaging
	if m == nil {
		return messaging.ErrClosed
	}
	return m.Send(ctx, to, verb, payload)
}

// Apply writes mutations at a consistency level (coordinator.Apply).
func (n *Node) Apply(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	if n.refusing() {
		for _, m := range ms {
			if t := n.Schema().TableByID(m.Table); t != nil {
				if err := n.refusePartitioned(t, cl); err != nil {
					return err
				}
			}
		}
	}
	return n.coord.Apply(ms, cl, tr)
}

// ReadPartition reads a slice of one partition at a consistency level
// (coordinator.ReadPartition).
func (n *Node) ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	if schema.IsVirtualKeyspace(t.Keyspace) {
		return n.virtual.ReadPartition(t, r)
	}
	if err := n.refusePartitioned(t, r.Consistency); err != nil {
		return nil, err
	}
	return n.coord.ReadPartition(t, r)
}

// Scan reads a table's partitions in token order at a consistency level
// (coordinator.Scan).
func (n *Node) Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error) {
	if schema.IsVirtualKeyspace(t.Keyspace) {
		return n.virtual.Scan(t, r)
	}
	if err := n.refusePartitioned(t, r.Consistency); err != nil {
		return nil, err
	}
	return n.coord.Scan(t, r)
}

// ApplyLogged writes a logged batch at a consistency level
// (coordinator.ApplyLogged).
func (n *Node) ApplyLogged(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	for _, m := range ms {
		if t := n.Schema().TableByID(m.Table); t != nil {
			if err := n.refusePartitioned(t, cl); err != nil {
				return err
			}
		}
	}
	return n.coord.ApplyLogged(ms, cl, tr)
}

// ApplyCounters writes mutations of counter tables at a consistency level
// (coordinator.ApplyCounters).
func (n *Node) ApplyCounters(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	for _, m := range ms {
		if t := n.Schema().TableByID(m.Table); t != nil {
			if err := n.refusePartitioned(t, cl); err != nil {
				return err
			}
		}
	}
	return n.coord.ApplyCounters(ms, cl, tr)
}

// CAS runs a conditional write of one partition (coordinator.CAS).
func (n *Node) CAS(t *schema.Table, op request.CAS) (*request.Partition, bool, error) {
	if err := n.refusePartitioned(t, op.Serial); err != nil {
		return nil, false, err
	}
	return n.coord.CAS(t, op)
}

// Truncate removes every row of a table, on every node of the ring.
func (n *Node) Truncate(t *schema.Table) error {
	if err := n.refusePartitioned(t, request.All); err != nil {
		return err
	}
	return n.coord.Truncate(t)
}

// refusePartitioned is Unavailable, with partitioned_node_policy refuse,
// for a request of a replicated table while this node is cut off from a
// majority of the metadata voters: what it knows of the ring may be stale,
// and a driver's retry policy takes the request to another node. The node's
// own tables (system, system_schema) stay readable, so that drivers still
// see what this node knows.
func (n *Node) refusePartitioned(t *schema.Table, cl request.Consistency) error {
	if !n.refusing() {
		return nil
	}
	err := PartitionedUnavailable(n.Schema(), t, cl, n.endpoint(), n.cfg.DataCenter)
	if err != nil {
		n.metrics.partitionRefusals.Add(1)
	}
	return err
}

// PartitionedUnavailable is the Unavailable a node that refuses while
// partitioned answers for a request of t at cl: no replica counts as
// alive. A table of the node's own system keyspaces is served (nil).
func PartitionedUnavailable(sch *schema.Schema, t *schema.Table, cl request.Consistency, self ring.Endpoint, dc string) error {
	if schema.IsSystemKeyspace(t.Keyspace) {
		return nil
	}
	required := 1
	if ks := sch.Keyspace(t.Keyspace); ks != nil {
		if s, err := coordinator.Strategy(ks, self); err == nil {
			required = coordinator.BlockFor(request.ReadLevel(cl), s, dc)
		}
	}
	return &request.Unavailable{Consistency: cl, Required: required, Alive: 0}
}

// applyLocal writes mutations through this node's engine.
func (n *Node) applyLocal(ms []*mutation.Mutation) error { return localEngine{n.engine}.Apply(ms) }

// Partitioner is the partitioner of the node's engine: token() and the
// order of partitions follow it.
func (n *Node) Partitioner() partitioner.Partitioner { return n.engine.Partitioner() }

// strategy is how keyspace ks places its replicas.
func (n *Node) strategy(ks *schema.Keyspace) (ring.Strategy, error) {
	return coordinator.Strategy(ks, n.endpoint())
}

// CoordinatorEngine is a storage engine as a coordinator uses it.
func CoordinatorEngine(e *storage.Engine) coordinator.Engine { return localEngine{e} }

// localEngine is the storage engine as the coordinator uses it.
type localEngine struct{ e *storage.Engine }

var _ coordinator.Engine = localEngine{}

func (l localEngine) Partitioner() partitioner.Partitioner { return l.e.Partitioner() }

func (l localEngine) Apply(ms []*mutation.Mutation) error {
	for _, m := range ms {
		if err := l.e.Apply(m); err != nil {
			return err
		}
	}
	return nil
}

func (l localEngine) table(id mutation.TableID) (*storage.Table, error) {
	st, err := l.e.Table(id)
	if err != nil {
		return nil, fmt.Errorf("node: table %x: %w", id, err)
	}
	return st, nil
}

func (l localEngine) Read(id mutation.TableID, key []byte, s request.Slice) (*request.Partition, error) {
	st, err := l.table(id)
	if err != nil {
		return nil, err
	}
	p, err := st.ReadPartition(key, s)
	if err != nil || p.IsEmpty() {
		return nil, err
	}
	return p, nil
}

func (l localEngine) ReadEntries(id mutation.TableID, key []byte, s request.Slice) ([]mutation.Entry, error) {
	st, err := l.table(id)
	if err != nil {
		return nil, err
	}
	return st.ReadPartitionEntries(key, s)
}

func (l localEngine) Scan(id mutation.TableID, r request.RangeRead) ([]*request.Partition, error) {
	st, err := l.table(id)
	if err != nil {
		return nil, err
	}
	if ix := r.Index; ix != nil {
		return st.IndexScan(storageIndexQuery(ix), l.storageScan(r))
	}
	return st.Scan(l.storageScan(r))
}

func (l localEngine) ScanEntries(id mutation.TableID, r request.RangeRead) ([]request.RawPartition, error) {
	st, err := l.table(id)
	if err != nil {
		return nil, err
	}
	if ix := r.Index; ix != nil {
		return st.IndexScanEntries(storageIndexQuery(ix), l.storageScan(r))
	}
	return st.ScanEntries(l.storageScan(r))
}

func storageIndexQuery(ix *request.IndexRead) storage.IndexQuery {
	q := storage.IndexQuery{Index: ix.Index, Lo: ix.Lo, Hi: ix.Hi, LoInclusive: ix.LoInclusive, HiInclusive: ix.HiInclusive}
	if ix.Vector != nil {
		// A vector that does not decode reads as no vector: the index then
		// offers every partition it holds a vector of.
		if v, err := ann.DecodeVector(ix.Vector, nil); err == nil {
			q.Vector, q.Nearest = v, max(ix.Nearest, 1)
		}
	}
	return q
}

func (l localEngine) Resolve(key []byte, entries []mutation.Entry, s request.Slice) (*request.Partition, error) {
	part := l.e.Partitioner()
	return storage.ResolvePartition(part, part.TokenBytesLen(), key, entries, s)
}

func (l localEngine) Truncate(id mutation.TableID) error {
	st, err := l.table(id)
	if err != nil {
		return err
	}
	return st.Truncate()
}

// storageScan is a range read as the engine takes it: token bounds are
// key bounds, since engine keys start with the token's bytes.
func (l localEngine) storageScan(r request.RangeRead) storage.ScanQuery {
	sq := storage.ScanQuery{Limit: r.Limit, PerPartitionLimit: r.PerPartitionLimit, Now: r.Now}
	if r.From != nil {
		sq.From = r.From.AppendBytes(nil)
	}
	if r.After != nil {
		prefix := mutation.AppendPartitionPrefix(nil, l.e.Partitioner().Token(r.After), r.After)
		if after := mutation.PartitionUpperBound(prefix); sq.From == nil || bytes.Compare(after, sq.From) > 0 {
			sq.From = after
		}
	}
	if r.To != nil {
		sq.To = r.To.AppendBytes(nil)
	}
	return sq
}

// storageTable is a table's engine table, for the admin API and schema
// sync, which name tables by their definition.
func (n *Node) storageTable(t *schema.Table) (*storage.Table, error) {
	st, err := n.engine.Table(t.ID)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", t, err)
	}
	return st, nil
}

// refusing reports whether the node refuses its clients' requests now:
// partitioned_node_policy refuse, and cut off from the metadata voters.
func (n *Node) refusing() bool {
	return n.cfg.PartitionedNodePolicy == PartitionedRefuse && n.meta != nil && n.meta.Status().Partitioned
}

// Settle waits for what the node's coordinator left running: writes
// still on their way past the consistency level, read repairs, hints.
func (n *Node) Settle() { n.coord.Settle() }

// Engine is the node's storage engine: its own data, whatever the ring
// says it should hold (for a harness that checks what each replica has).
func (n *Node) Engine() *storage.Engine { return n.engine }
