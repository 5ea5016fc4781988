package simulation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// NodeConfig places one node.
type NodeConfig struct {
	Name       ring.Endpoint // its address, 127.0.0.N by convention
	DataCenter string
	Rack       string
}

// Config is a simulated cluster's shape.
type Config struct {
	Seed  uint64
	Nodes []NodeConfig
	// NumTokens is each node's vnodes; default 4.
	NumTokens int
}

// Cluster is a simulated cluster.
type Cluster struct {
	cfg    Config
	rand   *rand.Rand
	clock  *Clock
	ring   *ring.Metadata
	nodes  []*Node
	byName map[ring.Endpoint]*Node

	mu     sync.Mutex
	schema *schema.Schema
	sides  map[ring.Endpoint]int // partition sides; 0 unless placed
	cuts   map[[2]ring.Endpoint]bool
}

// Node is one simulated node.
type Node struct {
	c        *Cluster
	Name     ring.Endpoint
	Location ring.Location
	fs       vfs.FS

	mu       sync.Mutex
	up       bool
	engine   *storage.Engine
	coord    *coordinator.Coordinator
	handlers map[messaging.Verb]messaging.Handler
	crashOn  messaging.Verb // crash when a request of this verb arrives
	crashing bool
}

// Clock is the simulation's time: it moves only when told.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the time on.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// New starts a cluster: every node up, tokens drawn from the seed.
func New(cfg Config) (*Cluster, error) {
	if cfg.NumTokens == 0 {
		cfg.NumTokens = 4
	}
	c := &Cluster{cfg: cfg, rand: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)),
		clock:  &Clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		byName: map[ring.Endpoint]*Node{}, schema: schema.New(nil), sides: map[ring.Endpoint]int{}, cuts: map[[2]ring.Endpoint]bool{}}
	part := partitioner.Murmur3()
	var members []ring.Node
	for _, nc := range cfg.Nodes {
		m, err := ring.NewMetadata(part, members)
		if err != nil {
			return nil, err
		}
		members = append(members, ring.Node{Endpoint: nc.Name, Location: ring.Location{DataCenter: nc.DataCenter, Rack: nc.Rack},
			Tokens: ring.AllocateTokens(m, cfg.NumTokens, c.rand)})
	}
	m, err := ring.NewMetadata(part, members)
	if err != nil {
		return nil, err
	}
	c.ring = m
	for _, nc := range cfg.Nodes {
		n := &Node{c: c, Name: nc.Name, Location: ring.Location{DataCenter: nc.DataCenter, Rack: nc.Rack}, fs: vfs.NewMem()}
		c.nodes = append(c.nodes, n)
		c.byName[nc.Name] = n
		if err := n.start(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Node is the node named name, or nil.
func (c *Cluster) Node(name ring.Endpoint) *Node { return c.byName[name] }

// Clock is the cluster's clock.
func (c *Cluster) Clock() *Clock { return c.clock }

// Close stops every node.
func (c *Cluster) Close() error {
	var errs []error
	for _, n := range c.nodes {
		errs = append(errs, n.stop())
	}
	return errors.Join(errs...)
}

// start opens the node's engine on its file system (replaying its commit
// log after a crash), its tables, and a coordinator.
func (n *Node) start() error {
	nop := zerolog.Nop()
	e, err := storage.Open(storage.Options{FS: n.fs, DataDir: "data", Logger: &nop, Now: n.c.clock.Now,
		BlockCacheSize: 4 << 20, MemtableTotalSpace: 64 << 20, DisableAutoCompaction: true})
	if err != nil {
		return err
	}
	if err := node.OpenTables(e, n.c.currentSchema()); err != nil {
		return errors.Join(err, e.Close())
	}
	if _, err := e.Recover(); err != nil {
		return errors.Join(err, e.Close())
	}
	coord := coordinator.New(coordinator.Config{Self: n.Name, DataCenter: n.Location.DataCenter, Engine: node.CoordinatorEngine(e),
		Network: network{n}, Alive: n.sees, Ring: func() *ring.Metadata { return n.c.ring }, Schema: n.c.currentSchema,
		FS: n.fs, HintsDir: "hints", StoragePort: 7000, Logger: nop, Now: n.c.clock.Now})
	n.mu.Lock()
	n.engine, n.coord, n.handlers, n.up = e, coord, coord.Handlers(), true
	n.mu.Unlock()
	return nil
}

// stop closes the node's engine without a flush: what it had only in
// memtables comes back from its commit log at the next start, as after a
// crash.
func (n *Node) stop() error {
	n.mu.Lock()
	if !n.up {
		n.mu.Unlock()
		return nil
	}
	n.up = false
	e, coord := n.engine, n.coord
	n.mu.Unlock()
	coord.Settle()
	return e.Close()
}

// Up reports whether the node runs.
func (n *Node) Up() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.up
}

// Crash stops the node as a crash would.
func (n *Node) Crash() error { return n.stop() }

// Restart starts a crashed node again; the nodes that see it deliver its
// hints.
func (n *Node) Restart() error {
	if n.Up() {
		return fmt.Errorf("%s is up", n.Name)
	}
	if err := n.start(); err != nil {
		return err
	}
	n.c.reconnect()
	return nil
}

// CrashOn makes the node crash when the next request of verb reaches it:
// the request finds it gone, as one in flight when a node dies.
func (n *Node) CrashOn(verb messaging.Verb) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.crashOn = verb
}

// sees is the node's failure detector: another node is up to it when
// that node runs and the link between them is not cut.
func (n *Node) sees(e ring.Endpoint) bool {
	o := n.c.byName[e]
	return o != nil && o.Up() && !n.c.cut(n.Name, e)
}

// Partition puts the named nodes on one side and every other on the
// other: no message crosses until Heal.
func (c *Cluster) Partition(side ...ring.Endpoint) {
	c.mu.Lock()
	c.sides = map[ring.Endpoint]int{}
	for _, e := range side {
		c.sides[e] = 1
	}
	c.mu.Unlock()
}

// Cut cuts the link between two nodes, both ways.
func (c *Cluster) Cut(a, b ring.Endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cuts[linkKey(a, b)] = true
}

// Heal removes every partition and cut; nodes that see each other again
// deliver their hints.
func (c *Cluster) Heal() {
	c.mu.Lock()
	c.sides, c.cuts = map[ring.Endpoint]int{}, map[[2]ring.Endpoint]bool{}
	c.mu.Unlock()
	c.reconnect()
}

func linkKey(a, b ring.Endpoint) [2]ring.Endpoint {
	if b < a {
		a, b = b, a
	}
	return [2]ring.Endpoint{a, b}
}

func (c *Cluster) cut(a, b ring.Endpoint) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sides[a] != c.sides[b] || c.cuts[linkKey(a, b)]
}

// reconnect has every node that is up deliver its hints to the nodes it
// sees, as gossip's UP would, and waits for them.
func (c *Cluster) reconnect() {
	for _, n := range c.nodes {
		if !n.Up() {
			continue
		}
		for _, o := range c.nodes {
			if o != n && n.sees(o.Name) {
				n.coord.ReplicaUp(o.Name)
			}
		}
	}
	c.Settle()
}

// Settle waits for what every coordinator left running.
func (c *Cluster) Settle() {
	for _, n := range c.nodes {
		n.mu.Lock()
		coord, up := n.coord, n.up
		n.mu.Unlock()
		if up {
			coord.Settle()
		}
	}
}

func (c *Cluster) currentSchema() *schema.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.schema
}

// network is node from's side of the in-memory network.
type network struct{ from *Node }

var errRefused = errors.New("connection refused")

func (nw network) Request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error) {
	target := nw.from.c.byName[ring.Endpoint(to)]
	if target == nil {
		return nil, fmt.Errorf("messaging: %s unreachable: %w", to, errRefused)
	}
	if nw.from.c.cut(nw.from.Name, target.Name) {
		return nil, messaging.ErrTimeout // lost: the request's time runs out
	}
	target.mu.Lock()
	up, h := target.up, target.handlers[verb]
	crash := up && target.crashOn != 0 && target.crashOn == verb
	if crash {
		target.crashOn = 0
	}
	target.mu.Unlock()
	if crash {
		if err := target.stop(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("messaging: %s unreachable: connection reset", to)
	}
	if !up {
		return nil, fmt.Errorf("messaging: %s unreachable: %w", to, errRefused)
	}
	if h == nil {
		return nil, fmt.Errorf("messaging: %s has no handler for %s", to, verb)
	}
	return h(string(nw.from.Name), payload)
}

// session is a client session on node n: its statements are coordinated
// there, and their write timestamps come from the simulation's clock.
func (n *Node) session() *exec.Session {
	s := exec.NewSession(nodeCoordinator{n})
	s.Now = n.c.clock.Now
	return s
}

// Exec runs one statement on node n at a consistency level, then moves
// the clock on and lets every coordinator settle.
func (n *Node) Exec(text string, cl request.Consistency) (*exec.Result, error) {
	if !n.Up() {
		return nil, fmt.Errorf("%s is down", n.Name)
	}
	res, err := n.session().QueryText(text, exec.QueryParams{Consistency: cl})
	n.c.clock.Advance(time.Millisecond)
	n.c.Settle()
	return res, err
}

// nodeCoordinator is exec's view of a simulated node: its coordinator
// for data, and schema changes applied on every node that is up.
type nodeCoordinator struct{ n *Node }

func (nc nodeCoordinator) Schema() *schema.Schema { return nc.n.c.currentSchema() }

func (nc nodeCoordinator) ApplySchema(ms []*mutation.Mutation) error {
	c := nc.n.c
	for _, o := range c.nodes {
		if !o.Up() {
			continue
		}
		if err := node.CoordinatorEngine(o.engine).Apply(ms); err != nil {
			return err
		}
	}
	s, err := node.LoadSchema(nc.n.engine, c.clock.Now().Unix(), func(string, string, error) {})
	if err != nil {
		return err
	}
	for _, o := range c.nodes {
		if !o.Up() {
			continue
		}
		if err := node.OpenTables(o.engine, s); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.schema = s
	c.mu.Unlock()
	return nil
}

func (nc nodeCoordinator) Apply(ms []*mutation.Mutation, cl request.Consistency) error {
	return nc.n.coord.Apply(ms, cl)
}

func (nc nodeCoordinator) ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	return nc.n.coord.ReadPartition(t, r)
}

func (nc nodeCoordinator) Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error) {
	return nc.n.coord.Scan(t, r)
}

func (nc nodeCoordinator) Truncate(t *schema.Table) error { return nc.n.coord.Truncate(t) }

// Nodes are the cluster's nodes, in the order they were configured.
func (c *Cluster) Nodes() []*Node { return slices.Clone(c.nodes) }
