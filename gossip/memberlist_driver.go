package gossip

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// Options configure a Gossiper.
type Options struct {
	// Name is the node's endpoint, its listen address; it is also the
	// address gossip binds.
	Name string
	// Port is the gossip port (TCP and UDP); 0 picks a free one.
	Port int
	// Seeds are contact points, "host" (on Port) or "host:port". The node
	// itself may be among them.
	Seeds []string
	// ClusterName is the cluster's name (cluster_name): every packet and
	// stream carries it, and gossip from a node of another cluster (one
	// that reached this node's port by mistake) is dropped, as Cassandra
	// refuses gossip whose cluster name is not its own. Empty: unlabelled
	// gossip, which labelled nodes refuse too.
	ClusterName string
	// Generation is this start's generation; default: the time now in
	// seconds.
	Generation int64
	// States are the node's facts at start.
	States map[ApplicationState]string
	// OnChange is told the endpoint whose state or liveness changed. It
	// is called from one goroutine, in order, and may block briefly.
	OnChange func(endpoint string)
	Logger   *zerolog.Logger

	// Timings; the defaults suit a LAN (memberlist's), tests shorten them.
	ProbeInterval    time.Duration // default 1s
	PushPullInterval time.Duration // full-state exchange with one peer; default 2s
	GossipInterval   time.Duration // default 200ms
	// DeadGossipTime is how long memberlist still gossips to a member it
	// found dead before it forgets it; default 30s (memberlist's).
	DeadGossipTime time.Duration
	// ReconnectInterval is how often the node reaches out to one member
	// it sees down, or a seed it is not in touch with, as Cassandra's
	// gossiper keeps contacting unreachable endpoints and seeds: a healed
	// partition, or a restarted node, comes back by itself. Default 1s.
	ReconnectInterval time.Duration
	// Peers are nodes known from an earlier run ("host:port"), reached
	// like members seen down until they answer: a restarted node whose
	// seeds are only itself finds the cluster through them.
	Peers []string
	// Transport replaces memberlist's UDP/TCP transport (the simulation's
	// network, tests).
	Transport Transport
	// EncryptionKeys, when given, encrypt and authenticate every packet
	// and stream (AES-GCM, memberlist's keyring; 16, 24 or 32 bytes each):
	// the first encrypts what this node sends, any of them opens what it
	// receives, so that a key is rotated by adding it, then putting it
	// first, then removing the old one, a node at a time. Gossip not
	// sealed with one of them (from outside the cluster) is dropped and
	// counted (Gossiper.Refused).
	EncryptionKeys [][]byte
}

// Transport carries gossip's packets and streams: memberlist's, named
// here so that callers need not import memberlist.
type Transport = memberlist.Transport

// EnsureDefaults fills in what was left out.
func (o *Options) EnsureDefaults() {
	if o.Generation == 0 {
		o.Generation = time.Now().Unix()
	}
	if o.ProbeInterval == 0 {
		o.ProbeInterval = time.Second
	}
	if o.PushPullInterval == 0 {
		o.PushPullInterval = 2 * time.Second
	}
	if o.GossipInterval == 0 {
		o.GossipInterval = 200 * time.Millisecond
	}
	if o.DeadGossipTime == 0 {
		o.DeadGossipTime = 30 * time.Second
	}
	if o.ReconnectInterval == 0 {
		o.ReconnectInterval = time.Second
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
}

// Validate refuses options gossip cannot start with.
func (o *Options) Validate() error {
	if net.ParseIP(o.Name) == nil {
		return fmt.Errorf("gossip: the node's name %q is not an IP address", o.Name)
	}
	for i, k := range o.EncryptionKeys {
		if err := CheckKey(k); err != nil {
			return fmt.Errorf("gossip: encryption key %d is %w", i+1, err)
		}
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("gossip: port %d is out of range", o.Port)
	}
	return nil
}

// clusterLabel is the memberlist label of a cluster name: the name
// itself, or, past memberlist's limit, its SHA-256 in hex.
func clusterLabel(name string) string {
	if len(name) <= memberlist.LabelMaxSize {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Gossiper is one node's membership in the cluster.
type Gossiper struct {
	opts Options
	// ml is the running memberlist: a new one each time gossip starts
	// again after Suspend.
	ml atomic.Pointer[memberlist.Memberlist]
	q  *memberlist.TransmitLimitedQueue

	mu        sync.Mutex
	endpoints map[string]*EndpointState // every node known, this one included
	version   int64                     // the last version given to a fact of ours
	// addrs are the gossip addresses ("host:port") of the nodes memberlist
	// has shown, and of Options.Peers, for reaching them once they are down.
	addrs map[string]string
	// reconnects counts the rounds reconnect has run, to take the
	// candidates in turn.
	reconnects int
	// seeds are the other seeds ("host:port"); isSeed, whether this node
	// is one itself. Both are set once, before the goroutines start.
	seeds  []string
	isSeed bool

	// kr is memberlist's keyring; nil when gossip is not sealed.
	kr *memberlist.Keyring
	// refused counts the packets and streams dropped for their cluster
	// label or their encryption: sent by no node of this cluster.
	refused atomic.Int64

	pending    map[string]bool // endpoints changed since OnChange last ran (under mu)
	wake       chan struct{}
	joined     chan struct{} // closed once a seed has answered, or at once for a seed
	joinedOnce sync.Once
	stop       chan struct{}
	done       sync.WaitGroup

	// lifeMu orders Suspend, Resume and Close. While suspended the node
	// gossips nothing: runStop is closed and the memberlist shut down;
	// saved holds the STATUS facts it had, which Resume gossips again.
	lifeMu    sync.Mutex
	suspended bool
	saved     map[ApplicationState]string
	runStop   chan struct{}
	runDone   sync.WaitGroup
}

// Start joins the cluster: it binds the gossip port, then reaches the
// seeds in the background until one answers.
func Start(opts Options) (*Gossiper, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	g := &Gossiper{opts: opts, endpoints: map[string]*EndpointState{}, pending: map[string]bool{}, addrs: map[string]string{},
		wake: make(chan struct{}, 1), joined: make(chan struct{}), stop: make(chan struct{})}
	for _, p := range opts.Peers {
		if host, _, err := net.SplitHostPort(p); err == nil && host != opts.Name {
			g.addrs[host] = p
		}
	}
	self := &EndpointState{Generation: opts.Generation, States: map[ApplicationState]VersionedValue{}, Alive: true}
	for k, v := range opts.States {
		g.version++
		self.States[k] = VersionedValue{Value: v, Version: g.version}
	}
	g.endpoints[opts.Name] = self

	if len(opts.EncryptionKeys) > 0 {
		kr, err := memberlist.NewKeyring(opts.EncryptionKeys, opts.EncryptionKeys[0])
		if err != nil {
			return nil, fmt.Errorf("gossip: %w", err)
		}
		g.kr = kr
	}
	// The queue is there before memberlist listens: a peer's ping can
	// come the moment it does (a restarted node's peers are probing its
	// address), and the answer takes broadcasts from the queue.
	g.q = &memberlist.TransmitLimitedQueue{RetransmitMult: memberlist.DefaultLANConfig().RetransmitMult, NumNodes: func() int {
		if ml := g.ml.Load(); ml != nil {
			return ml.NumMembers()
		}
		return 1
	}}
	if err := g.listen(); err != nil {
		return nil, err
	}
	g.seeds, g.isSeed = otherSeeds(opts.Seeds, opts.Name, strconv.Itoa(g.Port()))
	g.done.Add(1)
	go g.notify()
	g.startRun(false)
	return g, nil
}

// listen makes and starts a memberlist on the gossip port.
func (g *Gossiper) listen() error {
	opts := &g.opts
	cfg := memberlist.DefaultLANConfig()
	cfg.Name = opts.Name
	cfg.BindAddr, cfg.AdvertiseAddr = opts.Name, opts.Name
	cfg.BindPort, cfg.AdvertisePort = opts.Port, opts.Port
	cfg.ProbeInterval = opts.ProbeInterval
	cfg.ProbeTimeout = opts.ProbeInterval / 2
	cfg.PushPullInterval = opts.PushPullInterval
	cfg.GossipInterval = opts.GossipInterval
	cfg.GossipToTheDeadTime = opts.DeadGossipTime
	cfg.Label = clusterLabel(opts.ClusterName)
	cfg.Delegate = (*delegate)(g)
	cfg.Events = (*events)(g)
	cfg.LogOutput = logWriter{opts.Logger, &g.refused}
	if g.kr != nil {
		cfg.Keyring, cfg.GossipVerifyIncoming, cfg.GossipVerifyOutgoing = g.kr, true, true
	}
	switch {
	case opts.Transport != nil && g.ml.Load() != nil: // a start again
		return errors.New("gossip: a transport given in the options serves one start only")
	case opts.Transport != nil:
		cfg.Transport = opts.Transport
	default:
		nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{opts.Name}, BindPort: opts.Port,
			Logger: log.New(logWriter{opts.Logger, &g.refused}, "", 0)})
		if err != nil {
			return fmt.Errorf("gossip: cannot listen on %s: %w", net.JoinHostPort(opts.Name, strconv.Itoa(opts.Port)), err)
		}
		port := nt.GetAutoBindPort()
		cfg.BindPort, cfg.AdvertisePort = port, port
		cfg.Transport = boundTransport{nt, net.ParseIP(opts.Name)}
	}
	ml, err := memberlist.Create(cfg)
	if err != nil {
		return fmt.Errorf("gossip: cannot listen on %s: %w", net.JoinHostPort(opts.Name, strconv.Itoa(opts.Port)), err)
	}
	g.ml.Store(ml)
	if opts.Port == 0 {
		opts.Port = int(ml.LocalNode().Port) // a start again binds the same port
	}
	return nil
}

// startRun starts the heartbeat, the join and the reconnections; again
// says gossip starts again after Suspend, and reaches every node known.
func (g *Gossiper) startRun(again bool) {
	g.runStop = make(chan struct{})
	g.runDone.Add(3)
	go g.heartbeat(g.runStop)
	go g.join(g.runStop, again)
	go g.reconnect(g.runStop)
}

// Joined is closed once the node is in the cluster: a seed answered, and
// its full state (every node it knows) has been merged. A node listed
// among its own seeds, or with no other seeds, is in at once: it may be
// the first.
func (g *Gossiper) Joined() <-chan struct{} { return g.joined }

// Port is the port gossip listens on.
func (g *Gossiper) Port() int { return int(g.ml.Load().LocalNode().Port) }

// Name is this node's endpoint.
func (g *Gossiper) Name() string { return g.opts.Name }

// Set changes one of this node's facts and spreads it.
func (g *Gossiper) Set(k ApplicationState, value string) {
	if msg := g.set(k, value); msg != nil && len(msg) < 1000 {
		// A fact too large for a UDP packet (many tokens) travels in the
		// next push-pull instead.
		g.q.QueueBroadcast(&broadcast{key: g.opts.Name + "/" + string(k), msg: msg})
	}
}

// SetNow changes one of this node's facts and sends it to every live node
// directly (over TCP) before returning, for what others must know at once:
// a joining node's tokens, before the next node chooses its own. The fact
// goes out even when Set had already changed it (and gossip not yet
// carried it).
func (g *Gossiper) SetNow(k ApplicationState, value string) {
	g.set(k, value)
	g.mu.Lock()
	self := g.endpoints[g.opts.Name]
	delta := &EndpointState{Generation: self.Generation, States: map[ApplicationState]VersionedValue{k: self.States[k]}}
	g.mu.Unlock()
	msg, _ := json.Marshal(map[string]*EndpointState{g.opts.Name: delta})
	g.sendToAll(msg)
}

// sendToAll sends a message to every other live node; one that misses it
// learns it by gossip.
func (g *Gossiper) sendToAll(msg []byte) {
	ml := g.ml.Load()
	for _, n := range ml.Members() {
		if n.Name != g.opts.Name {
			_ = ml.SendReliable(n, msg)
		}
	}
}

// set records a fact of this node's and returns the message that carries
// the change (nil when the value is unchanged).
func (g *Gossiper) set(k ApplicationState, value string) []byte {
	g.mu.Lock()
	self := g.endpoints[g.opts.Name]
	if cur, ok := self.States[k]; ok && cur.Value == value {
		g.mu.Unlock()
		return nil
	}
	g.version++
	v := VersionedValue{Value: value, Version: g.version}
	self.States[k] = v
	delta := &EndpointState{Generation: self.Generation, States: map[ApplicationState]VersionedValue{k: v}}
	g.pendingLocked(g.opts.Name)
	g.mu.Unlock()
	msg, _ := json.Marshal(map[string]*EndpointState{g.opts.Name: delta})
	return msg
}

// Endpoints is a copy of everything known: each node's state by endpoint,
// this one included.
func (g *Gossiper) Endpoints() map[string]*EndpointState {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]*EndpointState, len(g.endpoints))
	for e, s := range g.endpoints {
		out[e] = s.clone()
	}
	return out
}

// Endpoint is a copy of what is known of one node (nil when nothing is).
func (g *Gossiper) Endpoint(endpoint string) *EndpointState {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.endpoints[endpoint]; s != nil {
		return s.clone()
	}
	return nil
}

// Alive reports whether a node is up as the failure detector sees it
// (this node always is), without copying any state.
func (g *Gossiper) Alive(endpoint string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.endpoints[endpoint]
	return s != nil && s.Alive
}

// Leave announces a clean shutdown and stops: STATUS shutdown goes to
// every live peer directly, then memberlist's leave, waiting up to timeout
// for it to go out. A leave that finds no one left to tell (every peer
// went away while it waited, as when a whole cluster stops at once) is
// not a failure: memberlist then has nobody to send it to and times out.
func (g *Gossiper) Leave(timeout time.Duration) error {
	// A node that left the ring goes as LEFT: shutdown would put its
	// tokens back in the others' view.
	if self := g.Endpoint(g.opts.Name); StatusKind(self.Get(Status)) != StatusLeft {
		g.SetNow(Status, StatusShutdown+",true")
		g.SetNow(StatusWithPort, StatusShutdown+",true")
	}
	err := g.ml.Load().Leave(timeout)
	if err != nil && !g.anyPeerAlive() {
		err = nil
	}
	return errors.Join(err, g.Close())
}

// Suspend stops gossiping until Resume, as Cassandra's nodetool
// disablegossip does: STATUS shutdown goes to every live peer, which then
// see the node down, and the node leaves and stops its memberlist. What
// it knew of the others stays as it was.
func (g *Gossiper) Suspend(timeout time.Duration) error {
	g.lifeMu.Lock()
	defer g.lifeMu.Unlock()
	if g.suspended || g.closed() {
		return nil
	}
	self := g.Endpoint(g.opts.Name)
	g.saved = map[ApplicationState]string{Status: self.Get(Status), StatusWithPort: self.Get(StatusWithPort)}
	g.SetNow(Status, StatusShutdown+",true")
	g.SetNow(StatusWithPort, StatusShutdown+",true")
	ml := g.ml.Load()
	err := ml.Leave(timeout)
	if err != nil && !g.anyPeerAlive() {
		err = nil
	}
	close(g.runStop)
	g.runDone.Wait()
	g.suspended = true
	return errors.Join(err, ml.Shutdown())
}

// Resume gossips again after Suspend, as a newer generation of the node
// (what it says then replaces what the others knew of it), with the
// STATUS it had, and reaches every node it knows.
func (g *Gossiper) Resume() error {
	g.lifeMu.Lock()
	defer g.lifeMu.Unlock()
	if !g.suspended || g.closed() {
		return nil
	}
	g.mu.Lock()
	self := g.endpoints[g.opts.Name]
	self.Generation = max(self.Generation+1, time.Now().Unix())
	self.Heartbeat = 0
	for k, v := range g.saved {
		g.version++
		self.States[k] = VersionedValue{Value: v, Version: g.version}
	}
	g.mu.Unlock()
	if err := g.listen(); err != nil {
		return err
	}
	g.suspended = false
	g.startRun(true)
	return nil
}

// Suspended reports whether Suspend stopped the node's gossip.
func (g *Gossiper) Suspended() bool {
	g.lifeMu.Lock()
	defer g.lifeMu.Unlock()
	return g.suspended
}

// closed reports whether Close has run.
func (g *Gossiper) closed() bool {
	select {
	case <-g.stop:
		return true
	default:
		return false
	}
}

// anyPeerAlive reports whether any other node is up in this one's view.
func (g *Gossiper) anyPeerAlive() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, s := range g.endpoints {
		if name != g.opts.Name && s.Alive {
			return true
		}
	}
	return false
}

// Close stops gossiping at once, as a crash would: peers find the node
// dead by probing it.
func (g *Gossiper) Close() error {
	g.lifeMu.Lock()
	defer g.lifeMu.Unlock()
	if g.closed() {
		return nil
	}
	close(g.stop)
	var err error
	if !g.suspended {
		close(g.runStop)
		err = g.ml.Load().Shutdown()
	}
	g.done.Wait()
	g.runDone.Wait()
	return err
}

// pendingLocked notes a change for OnChange; memberlist's goroutines
// never wait for it. g.mu is held.
func (g *Gossiper) pendingLocked(endpoint string) {
	g.pending[endpoint] = true
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// notify calls OnChange for the endpoints changed, each once however many
// changes came since the last call.
func (g *Gossiper) notify() {
	defer g.done.Done()
	for {
		select {
		case <-g.wake:
			g.mu.Lock()
			changed := slices.Sorted(maps.Keys(g.pending))
			clear(g.pending)
			g.mu.Unlock()
			for _, e := range changed {
				if g.opts.OnChange != nil {
					g.opts.OnChange(e)
				}
			}
		case <-g.stop:
			return
		}
	}
}

// heartbeat counts up while the node runs; it spreads with the full state.
func (g *Gossiper) heartbeat(stop <-chan struct{}) {
	defer g.runDone.Done()
	t := time.NewTicker(g.opts.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			g.mu.Lock()
			g.endpoints[g.opts.Name].Heartbeat++
			g.mu.Unlock()
		case <-stop:
			return
		}
	}
}

// join reaches the seeds, retrying until one answers; a node that is its
// only seed starts a cluster of its own.
// otherSeeds are the seeds other than this node (name on port), as
// "host:port" (a seed given as a host is on port), and whether this node
// is among them.
func otherSeeds(seeds []string, name, port string) (others []string, isSeed bool) {
	for _, s := range seeds {
		host, p, err := net.SplitHostPort(s)
		if err != nil {
			host, p = s, port
		}
		if host == name && p == port {
			isSeed = true
			continue
		}
		others = append(others, net.JoinHostPort(host, p))
	}
	return others, isSeed
}

func (g *Gossiper) join(stop <-chan struct{}, again bool) {
	defer g.runDone.Done()
	joined := func() { g.joinedOnce.Do(func() { close(g.joined) }) }
	seeds, isSeed := g.seeds, g.isSeed
	if again {
		// Gossip starting again after Suspend: every node known is a
		// contact point.
		g.mu.Lock()
		seeds = append(slices.Clone(seeds), slices.Sorted(maps.Values(g.addrs))...)
		g.mu.Unlock()
	}
	if isSeed || len(seeds) == 0 {
		joined()
	}
	if len(seeds) == 0 {
		return
	}
	for {
		if n, err := g.ml.Load().Join(seeds); n > 0 {
			joined()
			return
		} else {
			g.opts.Logger.Warn().Err(err).Strs("seeds", seeds).Msg("gossip: no seed answered; trying again")
		}
		select {
		case <-time.After(time.Second):
		case <-stop:
			return
		}
	}
}

// reconnect reaches out, every ReconnectInterval, to one node this one
// is not in touch with: a member it sees down (not one that left the
// cluster), a peer of an earlier run it has not heard from, or a seed it
// does not see up, taken in turn. memberlist alone stops contacting a
// member once it is found dead, so two sides of a healed partition, or a
// restarted node the others gave up on, would never meet again.
func (g *Gossiper) reconnect(stop <-chan struct{}) {
	defer g.runDone.Done()
	t := time.NewTicker(g.opts.ReconnectInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-stop:
			return
		}
		if addr := g.reconnectCandidate(); addr != "" {
			// An answer merges the two sides' states; the node is then
			// alive again to memberlist and to OnChange.
			_, _ = g.ml.Load().Join([]string{addr})
		}
	}
}

// reconnectCandidate is the next address reconnect tries, or "" when the
// node is in touch with every node it knows and every seed.
func (g *Gossiper) reconnectCandidate() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	set := map[string]bool{}
	for name, addr := range g.addrs {
		s := g.endpoints[name]
		if s == nil || !s.Alive && StatusKind(s.Get(Status)) != StatusLeft {
			set[addr] = true
		}
	}
	for _, seed := range g.seeds {
		host, _, _ := net.SplitHostPort(seed)
		if s := g.endpoints[host]; s == nil || !s.Alive {
			set[seed] = true
		}
	}
	if len(set) == 0 {
		return ""
	}
	candidates := slices.Sorted(maps.Keys(set))
	g.reconnects++
	return candidates[g.reconnects%len(candidates)]
}

// mergeRemote folds what a peer sent (endpoint -> state) into what is
// known, and tells OnChange of each endpoint that changed. What a peer
// says of this node is ignored: this node knows better.
func (g *Gossiper) mergeRemote(remote map[string]*EndpointState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for e, rs := range remote {
		if e == g.opts.Name || rs == nil {
			continue
		}
		cur := g.endpoints[e]
		if cur == nil {
			cur = &EndpointState{Generation: rs.Generation, States: map[ApplicationState]VersionedValue{}}
			g.endpoints[e] = cur
			cur.merge(rs)
			g.pendingLocked(e)
			continue
		}
		if cur.merge(rs) {
			g.pendingLocked(e)
		}
	}
}

func (g *Gossiper) setAlive(endpoint string, alive bool) {
	if endpoint == g.opts.Name {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.endpoints[endpoint]
	if s == nil {
		s = &EndpointState{States: map[ApplicationState]VersionedValue{}}
		g.endpoints[endpoint] = s
	}
	if s.Alive != alive {
		s.Alive = alive
		s.DownSince = time.Time{}
		if !alive {
			s.DownSince = time.Now()
		}
		g.pendingLocked(endpoint)
	}
}

// Downtime is how long a node has been down as the failure detector sees
// it: 0 for one up, or never seen (max_hint_window's measure).
func (g *Gossiper) Downtime(endpoint string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.endpoints[endpoint]
	if s == nil || s.Alive || s.DownSince.IsZero() {
		return 0
	}
	return time.Since(s.DownSince)
}

// delegate is memberlist's hook for our state.
type delegate Gossiper

func (d *delegate) NodeMeta(int) []byte { return nil }

func (d *delegate) NotifyMsg(msg []byte) {
	var remote map[string]*EndpointState
	if json.Unmarshal(msg, &remote) == nil {
		(*Gossiper)(d).mergeRemote(remote)
	}
}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.q.GetBroadcasts(overhead, limit)
}

func (d *delegate) LocalState(bool) []byte {
	g := (*Gossiper)(d)
	g.mu.Lock()
	defer g.mu.Unlock()
	b, _ := json.Marshal(g.endpoints)
	return b
}

func (d *delegate) MergeRemoteState(buf []byte, _ bool) {
	d.NotifyMsg(buf)
}

// events is memberlist's hook for liveness.
type events Gossiper

func (e *events) NotifyJoin(n *memberlist.Node) {
	g := (*Gossiper)(e)
	g.mu.Lock()
	g.addrs[n.Name] = n.Address()
	g.mu.Unlock()
	g.setAlive(n.Name, true)
}
func (e *events) NotifyLeave(n *memberlist.Node)  { (*Gossiper)(e).setAlive(n.Name, false) }
func (e *events) NotifyUpdate(n *memberlist.Node) {}

// broadcast is one change on its way to the other nodes; a newer change
// of the same fact replaces it.
type broadcast struct {
	key string
	msg []byte
}

func (b *broadcast) Invalidates(o memberlist.Broadcast) bool {
	ob, ok := o.(*broadcast)
	return ok && ob.key == b.key
}
func (b *broadcast) Message() []byte { return b.msg }
func (b *broadcast) Finished()       {}

// logWriter passes memberlist's log lines ("[LEVEL] memberlist: ...") to
// the node's logger at their level, and counts in refused those that say
// it dropped gossip from outside the cluster: memberlist tells of them
// only in its log.
type logWriter struct {
	l       *zerolog.Logger
	refused *atomic.Int64
}

// refusalLines are what memberlist logs when it drops a packet or a
// stream for its label or its encryption.
var refusalLines = [][]byte{[]byte("unacceptable label"), []byte("Decrypt packet failed"),
	[]byte("remote state is not encrypted"), []byte("remote state is encrypted and encryption is not configured"),
	[]byte("no installed keys could decrypt")}

func (w logWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimSpace(p))
	for _, r := range refusalLines {
		if bytes.Contains(p, r) {
			w.refused.Add(1)
			break
		}
	}
	ev := w.l.Debug()
	switch {
	case bytes.Contains(p, []byte("[ERR]")):
		ev = w.l.Error()
	case bytes.Contains(p, []byte("[WARN]")):
		ev = w.l.Warn()
	case bytes.Contains(p, []byte("[INFO]")):
		ev = w.l.Info()
	}
	ev.Msg(line)
	return len(p), nil
}

var _ io.Writer = logWriter{}

// Refused is how many packets and streams gossip dropped for their cluster
// label or their encryption: sent from outside the cluster.
func (g *Gossiper) Refused() int64 { return g.refused.Load() }

// boundTransport is memberlist's transport with its streams dialled from
// the node's own address (memberlist's own dials from whichever address
// the system picks, so a peer, or a firewall rule on the node's address,
// would see them come from elsewhere). Packets already leave from the
// bound UDP socket.
type boundTransport struct {
	*memberlist.NetTransport
	local net.IP
}

func (t boundTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (t boundTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if t.local != nil {
		d.LocalAddr = &net.TCPAddr{IP: t.local}
	}
	return d.Dial("tcp", a.Addr)
}

// CheckKey refuses what cannot be an encryption key: AES takes 16, 24 or
// 32 bytes.
func CheckKey(key []byte) error {
	if n := len(key); n != 16 && n != 24 && n != 32 {
		return fmt.Errorf("%d bytes: AES takes 16, 24 or 32", n)
	}
	return nil
}

// ErrNotEncrypted refuses a key change on a node whose gossip is not
// sealed (no EncryptionKeys at start).
var ErrNotEncrypted = errors.New("gossip is not encrypted: start the nodes with gossip_encryption_keys")

// Keys are the keys that open gossip, the one that seals first.
func (g *Gossiper) Keys() ([][]byte, error) {
	if g.kr == nil {
		return nil, ErrNotEncrypted
	}
	return g.kr.GetKeys(), nil
}

// InstallKey adds a key that opens gossip, UseKey makes one of those the
// key that seals, RemoveKey drops one (not the sealing one): the steps of
// a rotation, node by node, at run time. They last until the node
// restarts with gossip_encryption_keys.
func (g *Gossiper) InstallKey(key []byte) error {
	return g.changeKeys((*memberlist.Keyring).AddKey, key)
}

// UseKey makes an installed key the one that seals.
func (g *Gossiper) UseKey(key []byte) error { return g.changeKeys((*memberlist.Keyring).UseKey, key) }

// RemoveKey drops an installed key that does not seal.
func (g *Gossiper) RemoveKey(key []byte) error {
	return g.changeKeys((*memberlist.Keyring).RemoveKey, key)
}

func (g *Gossiper) changeKeys(change func(*memberlist.Keyring, []byte) error, key []byte) error {
	if g.kr == nil {
		return ErrNotEncrypted
	}
	return change(g.kr, key)
}
