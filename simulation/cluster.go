package simulation

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/streaming"
	"github.com/sibyldb/sibyl/tracing"
)

// NodeConfig places one node.
type NodeConfig struct {
	Name       ring.Endpoint // its address, 127.0.0.N by convention
	DataCenter string
	Rack       string
	// Later leaves the node out of New: Restart starts it, a node joining
	// the running cluster (with Whole).
	Later bool
}

// Config is a simulated cluster's shape.
type Config struct {
	Seed  uint64
	Nodes []NodeConfig
	// NumTokens is each node's vnodes; default 4.
	NumTokens int
	// SnapshotEntries is how often the metadata logs take a snapshot (in
	// entries); default the log's own.
	SnapshotEntries uint64
	// Handoff are the nodes' hint settings; default the coordinator's.
	Handoff coordinator.HintedHandoff
	// StreamThroughput is the nodes' stream_throughput_outbound and
	// entire_sstable_stream_throughput_outbound in bytes a second; 0 for
	// no bound.
	StreamThroughput int64
	// Authenticator and Authorizer are whole nodes' authenticator and
	// authorizer (default AllowAll); with PasswordAuthenticator the
	// default superuser is made as the nodes start.
	Authenticator, Authorizer string
	// Whole runs each node as package node runs it (node.Open: its
	// metadata log choosing its tokens and deciding the ring, its
	// bootstrap, decommission, removenode, replace and repair) over the
	// simulated network and disks, in place of the simulation's own wiring
	// of a node's parts over a fixed ring.
	Whole bool
}

// newDisk is an empty in-memory disk for node n, whose writes fail while
// n's disk is failing.
func newDisk(n *Node) vfs.FS {
	return errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op, _ string) error {
		if n.diskFailing.Load() && (op == errorfs.OpFileWrite || op == errorfs.OpFileSync) {
			return errorfs.ErrInjected
		}
		return nil
	}))
}

// Cluster is a simulated cluster. Its clock is the synctest bubble's it
// is made in: time moves on only while every goroutine of the cluster
// waits (a request for its answer or its timeout, gossip for its next
// round), so seconds of failure detection and timeouts take no real time.
type Cluster struct {
	cfg    Config
	rand   *rand.Rand
	ring   *ring.Metadata
	nodes  []*Node
	byName map[ring.Endpoint]*Node

	mu     sync.Mutex
	sides  map[ring.Endpoint]int // partition sides; 0 unless placed
	cuts   map[[2]ring.Endpoint]bool
	delays map[[2]ring.Endpoint]time.Duration // one way, [from, to]
	// requests counts the requests delivered, by verb.
	requests map[messaging.Verb]int

	// inFlight are the network's own goroutines: each connection's
	// delivery of its frames, gossip packets on a delayed link.
	inFlight sync.WaitGroup
	// traces are the nodes' trace records.
	traces traceLog
}

// gossipPort is every simulated node's gossip port.
const gossipPort = 7001

// Node is one simulated node.
type Node struct {
	c        *Cluster
	Name     ring.Endpoint
	Location ring.Location
	fs       vfs.FS
	// tracer records the node's part of traced requests in the cluster's
	// trace log.
	tracer *tracing.Tracer
	// diskFailing makes every write and sync of the node's files fail,
	// as a disk gone bad does.
	diskFailing atomic.Bool

	// id is the node's id in the metadata group.
	id uint64
	// schema is the node's schema, as its metadata log has applied it;
	// schemaMu makes the changes one at a time.
	schema   atomic.Pointer[schema.Schema]
	schemaMu sync.Mutex
	// refuse is partitioned_node_policy refuse: while cut off from the
	// metadata voters, the node answers Unavailable.
	refuse atomic.Bool

	mu     sync.Mutex
	up     bool
	starts int
	meta   *metadata.Log
	engine *storage.Engine
	coord  *coordinator.Coordinator
	hints  *hints.Store
	// streaming sends and receives token ranges' data, as a node's does.
	streaming *streaming.Service
	// stopHints ends the loop that goes on with hint deliveries, as a
	// node's does every few seconds; hintsLoop waits for it.
	stopHints chan struct{}
	hintsLoop sync.WaitGroup
	messaging *messaging.Service
	// seenAlive are the peers the node's gossip last showed alive.
	seenAlive map[string]bool
	listener  *frameListener
	conns     map[*frameConn]bool // this end of each of its connections
	gossip    *gossip.Gossiper
	inbox     *gossipTransport
	crashOn   messaging.Verb // crash when a request of this verb arrives
	// crashOnAnswer: crash when the answer to a request of this verb
	// arrives.
	crashOnAnswer messaging.Verb
	// whole is the node as package node runs it (Config.Whole), once
	// node.Open has returned.
	whole *node.Node
	// crashGroup, when set, is shared by the nodes of a CrashOneOf: only
	// the first to get the verb crashes.
	crashGroup *atomic.Bool
	// replace is the address the node's next first start replaces
	// (ReplaceWith).
	replace string
	// released is closed once a stopped start's parts are closed (a
	// crash in a handler closes them on a goroutine of its own), and
	// releaseErr is what closing them came to.
	released   chan struct{}
	releaseErr error
}

// storagePort is every simulated node's messaging port.
const storagePort = 7000

// New starts a cluster: every node up, tokens drawn from the seed.
func New(cfg Config) (*Cluster, error) {
	if cfg.NumTokens == 0 {
		cfg.NumTokens = 4
	}
	c := &Cluster{cfg: cfg, rand: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)),
		byName: map[ring.Endpoint]*Node{}, sides: map[ring.Endpoint]int{}, cuts: map[[2]ring.Endpoint]bool{},
		delays: map[[2]ring.Endpoint]time.Duration{}}
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
	// Every node is known before any starts: gossip looks them up.
	for i, nc := range cfg.Nodes {
		n := &Node{c: c, Name: nc.Name, Location: ring.Location{DataCenter: nc.DataCenter, Rack: nc.Rack}, id: uint64(i + 1)}
		n.fs = newDisk(n)
		n.tracer = n.newTracer()
		c.nodes = append(c.nodes, n)
		c.byName[nc.Name] = n
	}
	for i, n := range c.nodes {
		if cfg.Nodes[i].Later {
			continue
		}
		if err := n.start(); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	if err := c.AwaitMembership(time.Minute); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// AwaitMembership waits, up to limit, until every node that is up has
// seen up exactly the nodes that are up and reachable from it for
// settledFor without a change, and has delivered the hints it holds for
// them. (A view can be right for a moment and then flap: a suspicion
// raised during a partition may still run out after the heal.)
func (c *Cluster) AwaitMembership(limit time.Duration) error {
	const settledFor = 3 * time.Second
	deadline := time.Now().Add(limit)
	var rightSince time.Time
	for {
		wrong := c.wrongViews()
		switch {
		case len(wrong) > 0:
			rightSince = time.Time{}
		case rightSince.IsZero():
			rightSince = time.Now()
		case time.Since(rightSince) >= settledFor:
			c.Settle()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("membership not settled after %s: %v", limit, wrong)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wrongViews lists, for each node up, the nodes it sees wrongly.
func (c *Cluster) wrongViews() []string {
	var wrong []string
	for _, n := range c.nodes {
		if !n.Up() {
			continue
		}
		for _, o := range c.nodes {
			reachable := o.Up() && !c.cut(n.Name, o.Name)
			if o != n && n.sees(o.Name) != reachable {
				wrong = append(wrong, fmt.Sprintf("%s sees %s up=%v", n.Name, o.Name, !reachable))
			}
		}
	}
	return wrong
}

// Membership is each node's view of the others, a line per node up:
// "127.0.0.1: 127.0.0.2 UP, 127.0.0.3 DOWN".
func (c *Cluster) Membership() string {
	var lines []string
	for _, n := range c.nodes {
		if !n.Up() {
			lines = append(lines, fmt.Sprintf("%s: (down)", n.Name))
			continue
		}
		var views []string
		for _, o := range c.nodes {
			if o == n {
				continue
			}
			state := "DOWN"
			if n.sees(o.Name) {
				state = "UP"
			}
			views = append(views, fmt.Sprintf("%s %s", o.Name, state))
		}
		lines = append(lines, fmt.Sprintf("%s: %s", n.Name, strings.Join(views, ", ")))
	}
	return strings.Join(lines, "\n")
}

// Node is the node named name, or nil.
func (c *Cluster) Node(name ring.Endpoint) *Node { return c.byName[name] }

// Close stops every node, and waits for what is still on its way.
func (c *Cluster) Close() error {
	var errs []error
	for _, n := range c.nodes {
		n.stop()
		n.mu.Lock()
		released := n.released
		n.mu.Unlock()
		if released != nil {
			<-released
			n.mu.Lock()
			errs = append(errs, n.releaseErr)
			n.mu.Unlock()
		}
	}
	c.inFlight.Wait()
	// memberlist's goroutines end on their own timers (a probe's, a
	// dial's) after it shuts down; they must end inside the bubble.
	time.Sleep(time.Minute)
	return errors.Join(errs...)
}

// start opens the node's engine on its file system (replaying its commit
// log after a crash), its tables, its messaging service, a coordinator
// and its gossip.
func (n *Node) start() error {
	n.mu.Lock()
	released := n.released
	n.mu.Unlock()
	if released != nil {
		<-released // the last start's parts are closed
	}
	if n.c.cfg.Whole {
		return n.startWhole()
	}
	nop := zerolog.Nop()
	e, err := storage.Open(storage.Options{FS: n.fs, DataDir: "data", Logger: &nop, Now: time.Now,
		BlockCacheSize: 4 << 20, MemtableTotalSpace: 64 << 20, DisableAutoCompaction: true})
	if err != nil {
		return err
	}
	sch, err := openSchema(e)
	if err != nil {
		return errors.Join(err, e.Close())
	}
	if _, err := e.Recover(); err != nil {
		return errors.Join(err, e.Close())
	}
	if sch, err = openSchema(e); err != nil {
		return errors.Join(err, e.Close())
	}
	n.schema.Store(sch)
	svc, err := messaging.Start(messaging.Options{Name: string(n.Name), Port: storagePort, Transport: messagingTransport{n.c}, Logger: &nop})
	if err != nil {
		return errors.Join(err, e.Close())
	}
	store, err := hints.Open(hints.Options{FS: n.fs, Dir: "hints", Now: time.Now})
	if err != nil {
		return errors.Join(err, svc.Close(), e.Close())
	}
	coord := coordinator.New(coordinator.Config{Self: n.Name, DataCenter: n.Location.DataCenter, Engine: node.CoordinatorEngine(e),
		Network: svc, Alive: n.sees, Downtime: n.downtime, Ring: func() *ring.Metadata { return n.c.ring }, Schema: n.currentSchema,
		Hints: store, HintedHandoff: n.c.cfg.Handoff, StoragePort: storagePort, Logger: nop, Now: time.Now, Tracer: n.tracer,
		CounterID: func() mutation.CounterID { return mutation.CounterID(md5.Sum([]byte(n.Name))) }})
	for v, h := range coord.Handlers() {
		svc.Handle(v, n.crashingOn(v, h))
	}
	streams, err := streaming.New(streaming.Options{Network: svc, Tables: e, Partitioner: e.Partitioner(),
		Throughput: n.c.cfg.StreamThroughput, EntireSSTableThroughput: n.c.cfg.StreamThroughput, ChunkSize: 16 << 10, Now: time.Now})
	if err != nil {
		return errors.Join(err, svc.Close(), store.Close(), e.Close())
	}
	for v, h := range streams.Handlers() {
		svc.Handle(v, n.crashingOn(v, h))
	}
	meta, err := n.openMetadata(svc, e)
	if err != nil {
		return errors.Join(err, svc.Close(), store.Close(), e.Close())
	}
	inbox := newGossipTransport(n)
	n.mu.Lock()
	n.engine, n.coord, n.hints, n.messaging, n.inbox, n.meta, n.up = e, coord, store, svc, inbox, meta, true
	n.streaming = streams
	n.conns, n.released = map[*frameConn]bool{}, make(chan struct{})
	n.stopHints = make(chan struct{})
	n.hintsLoop.Add(1)
	go n.deliverHints(coord, streams, n.stopHints)
	n.starts++
	restart := n.starts > 1
	n.mu.Unlock()
	// Every node's seed is the first, as in sibyl cluster; a node
	// restarted knows the others from its last run (system.peers).
	var peers []string
	if restart {
		for _, o := range n.c.nodes {
			if o != n {
				peers = append(peers, net.JoinHostPort(string(o.Name), strconv.Itoa(gossipPort)))
			}
		}
	}
	g, err := gossip.Start(gossip.Options{Name: string(n.Name), Port: gossipPort, ClusterName: "simulation",
		Seeds: []string{net.JoinHostPort(string(n.c.nodes[0].Name), strconv.Itoa(gossipPort))}, Generation: time.Now().UnixNano(),
		States: map[gossip.ApplicationState]string{gossip.Status: gossip.StatusNormal + ",0"}, Peers: peers,
		OnChange: n.gossipChanged, Logger: &nop, Transport: inbox})
	if err != nil {
		return errors.Join(err, n.stop())
	}
	n.mu.Lock()
	n.gossip = g
	n.mu.Unlock()
	if err := n.joinMetadata(); err != nil {
		return errors.Join(err, n.stop())
	}
	return nil
}

// crashingOn is handler h of verb v, unless the node is to crash when a
// request of v arrives: then the node goes down there and then, and the
// request gets no answer (its connection is closed before the handler
// returns).
func (n *Node) crashingOn(v messaging.Verb, h messaging.Handler) messaging.Handler {
	return func(ctx context.Context, from string, payload []byte) ([]byte, error) {
		n.mu.Lock()
		crash := n.up && n.crashOn == v
		if crash {
			n.crashOn = 0
		}
		n.mu.Unlock()
		if crash && n.halt() {
			// The service waits for its handlers, this one included, as
			// it closes: the rest of the crash cannot run here.
			go n.release()
			return nil, errors.New("crashed")
		}
		return h(ctx, from, payload)
	}
}

// addConn registers this node's end of a new connection, closed if the
// node is down.
func (n *Node) addConn(e *frameConn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.up {
		e.Close()
		return
	}
	n.conns[e] = true
}

// gossipChanged is the node's gossip telling it of a change: a node seen
// up again is dialled at once and gets the hints held for it, as a real
// node's does.
func (n *Node) gossipChanged(endpoint string) {
	n.mu.Lock()
	g, coord, svc, up := n.gossip, n.coord, n.messaging, n.up
	alive := up && g != nil && g.Alive(endpoint)
	cameUp := alive && !n.seenAlive[endpoint]
	if n.seenAlive == nil {
		n.seenAlive = map[string]bool{}
	}
	n.seenAlive[endpoint] = alive
	n.mu.Unlock()
	if cameUp {
		svc.Redial(endpoint)
	}
	if alive {
		coord.ReplicaUp(ring.Endpoint(endpoint))
	}
}

// stop stops the node as a crash would: it closes its connections and
// its gossip at once (no leave: peers find it dead by probing), then its
// engine without a flush, so that what it had only in memtables comes
// back from its commit log at the next start.
func (n *Node) stop() error {
	if !n.halt() {
		return nil
	}
	return n.release()
}

// halt takes the node off the network: it refuses connections, and its
// open ones close. It reports whether the node was up.
func (n *Node) halt() bool {
	n.mu.Lock()
	if !n.up {
		n.mu.Unlock()
		return false
	}
	n.up = false
	l, conns := n.listener, n.conns
	n.conns = nil
	n.mu.Unlock()
	if l != nil {
		l.Close()
	}
	for e := range conns {
		e.Close()
	}
	return true
}

// release closes what a halted node ran: its gossip, its messaging (once
// its handlers return), its coordinator's sends, its engine.
func (n *Node) release() error {
	if n.c.cfg.Whole {
		return n.releaseWhole()
	}
	n.mu.Lock()
	e, coord, store, svc, g, meta, released := n.engine, n.coord, n.hints, n.messaging, n.gossip, n.meta, n.released
	streams := n.streaming
	n.gossip = nil
	close(n.stopHints)
	n.mu.Unlock()
	n.hintsLoop.Wait()
	var errs []error
	if g != nil {
		errs = append(errs, g.Close())
	}
	errs = append(errs, meta.Close())
	errs = append(errs, svc.Close())
	streams.Close()
	coord.Settle()
	errs = append(errs, store.Close())
	err := errors.Join(append(errs, e.Close())...)
	n.mu.Lock()
	n.releaseErr = err
	n.mu.Unlock()
	close(released)
	return err
}

// Up reports whether the node runs.
func (n *Node) Up() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.up
}

// Crash stops the node as a crash would.
func (n *Node) Crash() error { return n.stop() }

// Restart starts a crashed node again: it rejoins through gossip, and the
// nodes that see it up deliver its hints. It also starts, for the first
// time, a node New left out (NodeConfig.Later), or a whole node whose
// start failed.
func (n *Node) Restart() error {
	if n.Up() {
		return fmt.Errorf("%s is up", n.Name)
	}
	return n.start()
}

// FailDisk makes every write and sync of the node's files fail (failing
// true) or succeed again.
func (n *Node) FailDisk(failing bool) { n.diskFailing.Store(failing) }

// CrashOn makes the node crash when the next request of verb reaches it:
// the request finds it gone, as one in flight when a node dies.
func (n *Node) CrashOn(verb messaging.Verb) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.crashOn = verb
}

// CrashOnAnswer makes the node crash when the answer to its next request
// of verb reaches it: the request was served, and the node dies before it
// learns so (a coordinator killed after its batchlog write, say).
func (n *Node) CrashOnAnswer(verb messaging.Verb) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.crashOnAnswer = verb
}

// crashesOnAnswer crashes the node, if it is to crash when an answer of
// the frame's verb reaches it, and reports whether it did (the frame is
// then lost with it).
func (n *Node) crashesOnAnswer(f messaging.Frame) bool {
	if f.Kind != messaging.KindResponse {
		return false
	}
	n.mu.Lock()
	crash := n.up && n.crashOnAnswer == f.Verb && f.Verb != 0
	if crash {
		n.crashOnAnswer = 0
	}
	n.mu.Unlock()
	if crash && n.halt() {
		go n.release()
	}
	return crash
}

// sees is the node's failure detector, its gossip's view.
// deliverHints goes on with the coordinator's hint deliveries every 10
// s, as a node does, until stop closes.
func (n *Node) deliverHints(coord *coordinator.Coordinator, streams *streaming.Service, stop chan struct{}) {
	defer n.hintsLoop.Done()
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			coord.DeliverHints()
			coord.ReplayBatches()
			streams.Reap()
		case <-stop:
			return
		}
	}
}

// downtime is how long the node's gossip has seen e down.
func (n *Node) downtime(e ring.Endpoint) time.Duration {
	n.mu.Lock()
	g := n.gossip
	n.mu.Unlock()
	if g == nil {
		return 0
	}
	return g.Downtime(string(e))
}

func (n *Node) sees(e ring.Endpoint) bool {
	if e == n.Name {
		return true
	}
	n.mu.Lock()
	g, whole := n.gossip, n.whole
	n.mu.Unlock()
	if whole != nil {
		return whole.Sees(string(e))
	}
	return g != nil && g.Alive(string(e))
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

// Heal removes every partition and cut; gossip finds the nodes again, and
// those that see each other up deliver their hints.
func (c *Cluster) Heal() {
	c.mu.Lock()
	c.sides, c.cuts = map[ring.Endpoint]int{}, map[[2]ring.Endpoint]bool{}
	c.mu.Unlock()
}

// Delay makes what goes from one node to another (messaging's frames,
// gossip's packets) take d on its way; 0 removes the delay. Frames keep
// their order within a connection, as TCP's do.
func (c *Cluster) Delay(from, to ring.Endpoint, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d == 0 {
		delete(c.delays, [2]ring.Endpoint{from, to})
		return
	}
	c.delays[[2]ring.Endpoint{from, to}] = d
}

func (c *Cluster) delay(from, to ring.Endpoint) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delays[[2]ring.Endpoint{from, to}]
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

// Settle waits for what every coordinator left running.
func (c *Cluster) Settle() {
	for _, n := range c.nodes {
		n.mu.Lock()
		coord, whole, up := n.coord, n.whole, n.up
		n.mu.Unlock()
		switch {
		case up && whole != nil:
			whole.Settle()
		case up && coord != nil:
			coord.Settle()
		}
	}
}

// currentSchema is the node's schema.
func (n *Node) currentSchema() *schema.Schema { return n.schema.Load() }

// session is a client session on node n: its statements are coordinated
// there, and their write timestamps come from the bubble's clock. A whole
// node still starting has none.
func (n *Node) session() (*exec.Session, error) {
	n.mu.Lock()
	whole := n.whole
	n.mu.Unlock()
	switch {
	case whole != nil:
		return exec.NewSession(whole), nil
	case n.c.cfg.Whole:
		return nil, fmt.Errorf("%s is still starting", n.Name)
	}
	return exec.NewSession(nodeCoordinator{n}), nil
}

// Exec runs one statement on node n at a consistency level, then lets a
// millisecond pass (the next statement's timestamp is later) and every
// coordinator settle.
func (n *Node) Exec(text string, cl request.Consistency) (*exec.Result, error) {
	if !n.Up() {
		return nil, fmt.Errorf("%s is down", n.Name)
	}
	session, err := n.session()
	if err != nil {
		return nil, err
	}
	res, err := session.QueryText(text, exec.QueryParams{Consistency: cl})
	time.Sleep(time.Millisecond)
	n.c.Settle()
	return res, err
}

// nodeCoordinator is exec's view of a simulated node: its coordinator
// for data, and its metadata log for schema changes. With the refuse
// policy, a node cut off from the metadata voters answers Unavailable, as
// a real node does.
type nodeCoordinator struct{ n *Node }

func (nc nodeCoordinator) Schema() *schema.Schema { return nc.n.currentSchema() }

func (nc nodeCoordinator) ApplySchema(base *schema.Schema, ms []*mutation.Mutation) error {
	return nc.n.proposeSchema(base, ms)
}

func (nc nodeCoordinator) refused(t *schema.Table, cl request.Consistency) error {
	if !nc.n.refuse.Load() || !nc.n.meta.Status().Partitioned {
		return nil
	}
	return node.PartitionedUnavailable(nc.n.currentSchema(), t, cl, nc.n.Name, nc.n.Location.DataCenter)
}

func (nc nodeCoordinator) Apply(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	for _, m := range ms {
		if t := nc.n.currentSchema().TableByID(m.Table); t != nil {
			if err := nc.refused(t, cl); err != nil {
				return err
			}
		}
	}
	return nc.n.coord.Apply(ms, cl, tr)
}

func (nc nodeCoordinator) ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	if err := nc.refused(t, r.Consistency); err != nil {
		return nil, err
	}
	return nc.n.coord.ReadPartition(t, r)
}

func (nc nodeCoordinator) Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error) {
	if err := nc.refused(t, r.Consistency); err != nil {
		return nil, err
	}
	return nc.n.coord.Scan(t, r)
}

func (nc nodeCoordinator) ApplyLogged(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	for _, m := range ms {
		if t := nc.n.currentSchema().TableByID(m.Table); t != nil {
			if err := nc.refused(t, cl); err != nil {
				return err
			}
		}
	}
	return nc.n.coord.ApplyLogged(ms, cl, tr)
}

func (nc nodeCoordinator) ApplyCounters(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	for _, m := range ms {
		if t := nc.n.currentSchema().TableByID(m.Table); t != nil {
			if err := nc.refused(t, cl); err != nil {
				return err
			}
		}
	}
	return nc.n.coord.ApplyCounters(ms, cl, tr)
}

func (nc nodeCoordinator) CAS(t *schema.Table, op request.CAS) (*request.Partition, bool, error) {
	if err := nc.refused(t, op.Serial); err != nil {
		return nil, false, err
	}
	return nc.n.coord.CAS(t, op)
}

func (nc nodeCoordinator) Truncate(t *schema.Table) error {
	if err := nc.refused(t, request.All); err != nil {
		return err
	}
	return nc.n.coord.Truncate(t)
}

// Nodes are the cluster's nodes, in the order they were configured.
func (c *Cluster) Nodes() []*Node { return slices.Clone(c.nodes) }

// Requests is how many requests of verb v the network has delivered.
func (c *Cluster) Requests(v messaging.Verb) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests[v]
}

// delivered counts a frame the network hands over.
func (c *Cluster) delivered(f messaging.Frame) {
	if f.Kind != messaging.KindRequest {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests == nil {
		c.requests = map[messaging.Verb]int{}
	}
	c.requests[f.Verb]++
}
