package simulation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// A simulated node's metadata log is a real one (package metadata), on the
// node's file system and over its messaging: schema changes commit
// through it and apply on every node in the log's order, as on real
// nodes; node 1 founds the group, the others join it as they start.

// openSchema opens the system tables of an engine and the tables of the
// schema its system_schema holds, and returns that schema.
func openSchema(e *storage.Engine) (*schema.Schema, error) {
	if err := node.OpenTables(e, schema.New(nil)); err != nil {
		return nil, err
	}
	s, err := node.LoadSchema(e, time.Now().Unix(), func(string, string, error) {})
	if err != nil {
		return nil, err
	}
	return s, node.OpenTables(e, s)
}

// openMetadata opens and starts the node's metadata log over svc.
func (n *Node) openMetadata(svc *messaging.Service, e *storage.Engine) (*metadata.Log, error) {
	nop := zerolog.Nop()
	l, err := metadata.Open(metadata.Options{
		Self: metadata.Member{ID: n.id, Endpoint: string(n.Name), DataCenter: n.Location.DataCenter, Rack: n.Location.Rack},
		FS:   n.fs, Dir: "metadata", Applier: simApplier{n, e}, Logger: &nop, SnapshotEntries: n.c.cfg.SnapshotEntries,
		Network: svc,
	})
	if err != nil {
		return nil, err
	}
	for v, h := range l.Handlers() {
		svc.Handle(v, n.crashingOn(v, h))
	}
	if err := l.Start(); err != nil {
		return nil, err
	}
	return l, nil
}

// joinMetadata makes a node that has no log a member: node 1 founds the
// group, the others join through node 1 and the nodes they see up.
func (n *Node) joinMetadata() error {
	n.mu.Lock()
	l := n.meta
	n.mu.Unlock()
	if !l.HasLog() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		first := n.c.nodes[0]
		peers := func() []string {
			var out []string
			for _, o := range n.c.nodes {
				if o != n && (o == first || n.sees(o.Name)) {
					out = append(out, string(o.Name))
				}
			}
			return out
		}
		if err := l.JoinOrBootstrap(ctx, peers, n == first, 0); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	n.schemaMu.Lock()
	n.schema.Store(n.currentSchema().WithEpoch(l.Status().State.SchemaEpoch))
	n.schemaMu.Unlock()
	return nil
}

// proposeSchema commits a schema change through the node's log, and
// waits for the nodes it sees up to apply it.
func (n *Node) proposeSchema(base *schema.Schema, ms []*mutation.Mutation) error {
	n.mu.Lock()
	l := n.meta
	n.mu.Unlock()
	c, err := node.ProposeSchema(l, base.Epoch(), ms)
	if err != nil {
		return err
	}
	var peers []string
	for _, o := range n.c.nodes {
		if o != n && n.sees(o.Name) {
			peers = append(peers, string(o.Name))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = l.AwaitApplied(ctx, c.Index, peers) // one that has not applied it yet will
	return nil
}

// SetPartitionedPolicy sets the node's partitioned_node_policy: refuse
// (true) or serve.
func (n *Node) SetPartitionedPolicy(refuse bool) { n.refuse.Store(refuse) }

// Metadata is what the node's metadata log knows.
func (n *Node) Metadata() *metadata.Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.meta.Status()
}

// simApplier applies the log's schema changes to the engine of one start
// of a node.
type simApplier struct {
	n *Node
	e *storage.Engine
}

func (a simApplier) ApplySchema(b []byte, shift int64, epoch uint64, _ bool) error {
	ms, err := node.DecodeSchemaChange(b, shift)
	if err != nil {
		return err
	}
	return a.n.applySchema(a.e, ms, epoch)
}

func (a simApplier) SchemaSnapshot() ([]byte, error) { return node.EncodeSchemaSnapshot(a.e) }

func (a simApplier) RestoreSchema(b []byte, epoch uint64) error {
	ms, err := node.DecodeSchemaChange(b, 0)
	if err != nil {
		return err
	}
	return a.n.applySchema(a.e, ms, epoch)
}

// ApplyTopology has nothing to apply: a simulated cluster's ring is the
// one New drew from its seed, and its nodes do not record tokens in the
// log.
func (a simApplier) ApplyTopology(map[uint64]metadata.NodeRecord, uint64) error { return nil }

// applySchema writes a committed schema change to the node's engine and
// takes the schema it makes.
func (n *Node) applySchema(e *storage.Engine, ms []*mutation.Mutation, epoch uint64) error {
	n.schemaMu.Lock()
	defer n.schemaMu.Unlock()
	if err := node.WriteSchema(e, ms); err != nil {
		return err
	}
	s, err := node.LoadSchema(e, time.Now().Unix(), func(string, string, error) {})
	if err != nil {
		return err
	}
	if err := node.OpenTables(e, s); err != nil {
		return err
	}
	n.schema.Store(s.WithEpoch(epoch))
	return nil
}

var _ exec.Coordinator = nodeCoordinator{}

// MetadataViews is each node's view of the metadata log, a line per node:
// "127.0.0.1: voters=3 learners=0 schema_epoch=7 partitioned=false".
func (c *Cluster) MetadataViews() string {
	var lines []string
	for _, n := range c.nodes {
		if !n.Up() {
			lines = append(lines, fmt.Sprintf("%s: (down)", n.Name))
			continue
		}
		st := n.Metadata()
		lines = append(lines, fmt.Sprintf("%s: voters=%d learners=%d schema_epoch=%d partitioned=%v",
			n.Name, len(st.Voters), len(st.Learners), st.State.SchemaEpoch, st.Partitioned))
	}
	return strings.Join(lines, "\n")
}

// SchemaViews is each node's user tables, a line per node, and then
// whether the nodes up agree on the schema: one version, one id per table.
func (c *Cluster) SchemaViews() string {
	var lines []string
	versions := map[[16]byte]bool{}
	ids := map[string]map[mutation.TableID]bool{}
	for _, n := range c.nodes {
		if !n.Up() {
			lines = append(lines, fmt.Sprintf("%s: (down)", n.Name))
			continue
		}
		s := n.currentSchema()
		versions[s.Version()] = true
		var tables []string
		for _, ks := range s.Keyspaces() {
			if schema.IsSystemKeyspace(ks.Name) {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(ks.Tables)) {
				t := ks.Tables[name]
				tables = append(tables, t.String())
				if ids[t.String()] == nil {
					ids[t.String()] = map[mutation.TableID]bool{}
				}
				ids[t.String()][t.ID] = true
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %s", n.Name, strings.Join(tables, " ")))
	}
	agree := len(versions) == 1
	for _, set := range ids {
		agree = agree && len(set) == 1
	}
	if agree {
		lines = append(lines, "the nodes up agree: one schema version, one id per table")
	} else {
		lines = append(lines, fmt.Sprintf("the nodes up disagree: %d schema versions, table ids %v", len(versions), ids))
	}
	return strings.Join(lines, "\n")
}
