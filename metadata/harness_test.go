package metadata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/messaging"
)

// schemaRecorder stands in for a node's system_schema: the changes
// applied, by epoch (applying one again, as a restart replays entries
// after its snapshot, changes nothing, as with system_schema's cells).
type schemaRecorder struct {
	mu       sync.Mutex
	changes  map[uint64]string
	restores int
	// fail, when set, is what applying a change returns (a disk gone bad).
	fail error
	// nodes are the ring as last applied, at nodesEpoch.
	nodes      map[uint64]NodeRecord
	nodesEpoch uint64
}

func newRecorder() *schemaRecorder { return &schemaRecorder{changes: map[uint64]string{}} }

func (r *schemaRecorder) ApplySchema(m []byte, shift int64, epoch uint64, _ bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.changes[epoch] = fmt.Sprintf("%s+%d", m, shift)
	return nil
}

func (r *schemaRecorder) SchemaSnapshot() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w wire.Writer
	for _, e := range slices.Sorted(maps.Keys(r.changes)) {
		w.Uint(e)
		w.String(r.changes[e])
	}
	return w.B, nil
}

func (r *schemaRecorder) RestoreSchema(b []byte, epoch uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rd := wire.Reader{B: b}
	for len(rd.B) > 0 && rd.Err == nil {
		e := rd.Uint()
		r.changes[e] = rd.String()
	}
	r.restores++
	return rd.Err
}

func (r *schemaRecorder) ApplyTopology(nodes map[uint64]NodeRecord, epoch uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodes, r.nodesEpoch = nodes, epoch
	return nil
}

func (r *schemaRecorder) history() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, e := range slices.Sorted(maps.Keys(r.changes)) {
		parts = append(parts, fmt.Sprintf("%d:%s", e, r.changes[e]))
	}
	return strings.Join(parts, " ")
}

// testGroup is a group of Logs joined by an in-memory network whose links
// can be cut. Names are endpoints; node i has Raft id i.
type testGroup struct {
	t         *testing.T
	mu        sync.Mutex
	logs      map[string]*Log
	recorders map[string]*schemaRecorder
	fss       map[string]vfs.FS
	cut       map[[2]string]bool
	snapEvery uint64
}

func newTestGroup(t *testing.T) *testGroup {
	return &testGroup{t: t, logs: map[string]*Log{}, recorders: map[string]*schemaRecorder{}, fss: map[string]vfs.FS{}, cut: map[[2]string]bool{}}
}

func endpoint(i int) string { return fmt.Sprintf("10.0.0.%d", i) }

func (g *testGroup) reachable(from, to string) *Log {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cut[[2]string{from, to}] || g.cut[[2]string{to, from}] {
		return nil
	}
	return g.logs[to]
}

// groupNetwork is one node's end of the group's network: a message or a
// request goes straight to the handler of the node it names, unless their
// link is cut.
type groupNetwork struct {
	g    *testGroup
	from string
}

func (n groupNetwork) Request(_ context.Context, to string, v messaging.Verb, b []byte) ([]byte, error) {
	l := n.g.reachable(n.from, to)
	if l == nil {
		return nil, errors.New("unreachable")
	}
	return l.Handlers()[v](context.Background(), n.from, b)
}

func (n groupNetwork) Send(ctx context.Context, to string, v messaging.Verb, b []byte) error {
	_, err := n.Request(ctx, to, v, b)
	return err
}

// open opens (or reopens, on the same disk) node i's log, not started.
func (g *testGroup) open(i int) *Log {
	name := endpoint(i)
	g.mu.Lock()
	fs, ok := g.fss[name]
	if !ok {
		fs = vfs.NewMem()
		g.fss[name] = fs
		g.recorders[name] = newRecorder()
	}
	rec := g.recorders[name]
	g.mu.Unlock()
	l, err := Open(Options{
		Self: Member{ID: uint64(i), Endpoint: name, DataCenter: "dc1", Rack: fmt.Sprintf("rack%d", i%3)},
		FS:   fs, Dir: "metadata", Applier: rec, SnapshotEntries: g.snapEvery,
		Network: groupNetwork{g, name},
	})
	if err != nil {
		g.t.Fatalf("opening node %d: %v", i, err)
	}
	g.mu.Lock()
	g.logs[name] = l
	g.mu.Unlock()
	return l
}

func (g *testGroup) log(i int) *Log {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.logs[endpoint(i)]
}

// start opens node i and makes it a member: node 1 founds the group, the
// others join through the nodes before them.
func (g *testGroup) start(i int) *Log {
	l := g.open(i)
	if err := l.Start(); err != nil {
		g.t.Fatal(err)
	}
	var peers []string
	for j := 1; j < i; j++ {
		peers = append(peers, endpoint(j))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.JoinOrBootstrap(ctx, func() []string { return peers }, i == 1, 0); err != nil {
		g.t.Fatalf("node %d joining: %v", i, err)
	}
	return l
}

// stop closes node i's log, as a crash would leave its disk (every write
// the log made was synced or is the torn tail a crash may leave).
func (g *testGroup) stop(i int) {
	g.mu.Lock()
	l := g.logs[endpoint(i)]
	delete(g.logs, endpoint(i))
	g.mu.Unlock()
	if err := l.Close(); err != nil {
		g.t.Fatal(err)
	}
}

func (g *testGroup) close() {
	g.mu.Lock()
	logs := slices.Collect(maps.Values(g.logs))
	g.logs = map[string]*Log{}
	g.mu.Unlock()
	for _, l := range logs {
		_ = l.Close()
	}
}

// partition cuts node i off from every other.
func (g *testGroup) partition(i int, nodes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for j := 1; j <= nodes; j++ {
		if j != i {
			g.cut[[2]string{endpoint(i), endpoint(j)}] = true
		}
	}
}

func (g *testGroup) heal() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.cut)
}

// eventually waits (in the bubble's time) until cond holds.
func (g *testGroup) eventually(what string, cond func() bool) {
	g.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	g.t.Fatalf("not within a minute: %s", what)
}

// propose proposes a schema change through node i against the schema
// epoch it has applied, again while another change came first (as a
// statement is checked again).
func (g *testGroup) propose(i int, change string) (uint64, error) {
	l := g.log(i)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		c, err := l.ProposeSchema(ctx, l.Status().State.SchemaEpoch, 1, 1, []byte(change))
		if !errors.Is(err, ErrSchemaChanged) {
			return c.Epoch, err
		}
	}
}

// awaitVoters waits until nodes 1 to n all know the same voters, voters of
// them, and none is still in a joint configuration (where the old voters
// must agree as well).
func (g *testGroup) awaitVoters(n, voters int) {
	g.t.Helper()
	g.eventually(fmt.Sprintf("%d nodes know %d voters", n, voters), func() bool {
		for i := 1; i <= n; i++ {
			l := g.log(i)
			if l == nil {
				return false
			}
			if st := l.Status(); len(st.Voters) != voters || len(st.VotersOutgoing) != 0 {
				return false
			}
		}
		return true
	})
}

// startGroup starts nodes 1 to n (node 1 founds the group), snapshots
// every snapEvery entries (0: the default), and waits until every node
// knows the voters the group's size calls for.
func startGroup(t *testing.T, n int, snapEvery uint64) *testGroup {
	g := newTestGroup(t)
	g.snapEvery = snapEvery
	for i := 1; i <= n; i++ {
		g.start(i)
	}
	g.awaitVoters(n, votersWanted(n))
	return g
}

// awaitSameApplied waits until nodes 2 to n have applied what node 1 has.
func (g *testGroup) awaitSameApplied(n int) {
	g.t.Helper()
	g.eventually("every node applied what node 1 has", func() bool {
		for i := 2; i <= n; i++ {
			if g.log(i).Applied() != g.log(1).Applied() {
				return false
			}
		}
		return true
	})
}
