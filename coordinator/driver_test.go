package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// The drivers run here against replicas in one process: each a
// Coordinator over a counting engine, reached through a network that
// answers, refuses, or stays silent until the request's time is up, per
// replica.

// countingEngine is a replica's engine that keeps no data: it counts the
// writes it took, and every read finds nothing.
type countingEngine struct {
	mu      sync.Mutex
	applied int
}

func (e *countingEngine) Partitioner() partitioner.Partitioner { return partitioner.Murmur3() }
func (e *countingEngine) Apply(ms []*mutation.Mutation) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applied += len(ms)
	return nil
}
func (e *countingEngine) writes() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applied
}
func (e *countingEngine) Read(mutation.TableID, []byte, request.Slice) (*request.Partition, error) {
	return nil, nil
}
func (e *countingEngine) ReadEntries(mutation.TableID, []byte, request.Slice) ([]mutation.Entry, error) {
	return nil, nil
}
func (e *countingEngine) Scan(mutation.TableID, request.RangeRead) ([]*request.Partition, error) {
	return nil, nil
}
func (e *countingEngine) ScanEntries(mutation.TableID, request.RangeRead) ([]request.RawPartition, error) {
	return nil, nil
}
func (e *countingEngine) Resolve(key []byte, _ []mutation.Entry, _ request.Slice) (*request.Partition, error) {
	return &request.Partition{Key: key}, nil
}
func (e *countingEngine) Truncate(mutation.TableID) error { return nil }

// behaviour is how a replica meets the requests sent to it.
type behaviour int

const (
	answers behaviour = iota
	refuses           // as a node whose port is closed
	silent            // as a node that stopped, until the request's time is up
	slow              // answers, 50 ms later on the test's clock
)

// testCluster is replicas at one token range each, all of whom hold every
// partition (each keyspace's factor is its node count).
type testCluster struct {
	t        *testing.T
	ring     *ring.Metadata
	schema   *schema.Schema
	table    *schema.Table
	engines  map[ring.Endpoint]*countingEngine
	replicas map[ring.Endpoint]*Coordinator

	mu    sync.Mutex
	how   map[ring.Endpoint]behaviour
	reads map[ring.Endpoint]int // READ requests sent to each replica
	now   time.Time             // the coordinators' clock: only slow replicas move it
}

func (c *testCluster) clock() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func newTestCluster(t *testing.T, replication schema.Replication, locations map[ring.Endpoint]ring.Location) *testCluster {
	t.Helper()
	var nodes []ring.Node
	i := int64(0)
	for e, loc := range locations {
		nodes = append(nodes, ring.Node{Endpoint: e, Location: loc, Tokens: []partitioner.Token{partitioner.Murmur3Token(math.MinInt64/2 + i*1e15)}})
		i++
	}
	m, err := ring.NewMetadata(partitioner.Murmur3(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	ks := schema.NewKeyspace("ks", replication, true)
	tbl, err := schema.NewTable("ks", "t", mutation.TableID{7}, []*schema.Column{
		{Name: "k", Type: cqltype.IntType, Kind: schema.PartitionKey, Position: 0},
		{Name: "v", Type: cqltype.IntType, Kind: schema.Regular, Position: -1},
	}, schema.DefaultTableParams())
	if err != nil {
		t.Fatal(err)
	}
	ks.Tables["t"] = tbl
	c := &testCluster{t: t, ring: m, schema: schema.New(map[string]*schema.Keyspace{"ks": ks}), table: tbl,
		engines: map[ring.Endpoint]*countingEngine{}, replicas: map[ring.Endpoint]*Coordinator{},
		how: map[ring.Endpoint]behaviour{}, reads: map[ring.Endpoint]int{}}
	for e, loc := range locations {
		c.engines[e] = &countingEngine{}
		c.replicas[e] = c.coordinator(e, loc.DataCenter, time.Second)
	}
	return c
}

// coordinator is the coordinator of node self, whose requests wait at
// most timeout.
func (c *testCluster) coordinator(self ring.Endpoint, dc string, timeout time.Duration, opts ...func(*Config)) *Coordinator {
	store, err := hints.Open(hints.Options{FS: vfs.Default, Dir: c.t.TempDir(), Now: time.Now})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = store.Close() })
	cfg := Config{Self: self, DataCenter: dc, Engine: c.engines[self], Network: c,
		Alive: func(ring.Endpoint) bool { return true }, Ring: func() *ring.Metadata { return c.ring },
		Schema: func() *schema.Schema { return c.schema }, Hints: store, StoragePort: 7000, Logger: zerolog.Nop(),
		Timeouts: Timeouts{Write: timeout, Read: timeout, Range: timeout, Truncate: timeout}, Now: c.clock}
	for _, o := range opts {
		o(&cfg)
	}
	co := New(cfg)
	c.t.Cleanup(co.Settle) // before the hints directory goes
	return co
}

func (c *testCluster) set(how behaviour, replicas ...ring.Endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range replicas {
		c.how[r] = how
	}
}

// readsSent is how many reads replica r was sent.
func (c *testCluster) readsSent(r ring.Endpoint) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[r]
}

// readsSentSettled is readsSent once the asks a read left in flight have
// gone out: a read returns when enough replicas answered, and a spare it
// asked at the same time may be sent to after that.
func (c *testCluster) readsSentSettled(r ring.Endpoint, want int) int {
	for deadline := time.Now().Add(5 * time.Second); c.readsSent(r) < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return c.readsSent(r)
}

// readContacts are the replicas a read of the test's key at level l from
// node self asks first, and its spares.
func (c *testCluster) readContacts(self ring.Endpoint, l request.Consistency) (contacts, spares []ring.Endpoint) {
	s, err := Strategy(c.schema.Keyspace("ks"), self)
	if err != nil {
		c.t.Fatal(err)
	}
	replicas := s.Replicas(c.ring, partitioner.Murmur3().Token(cqltype.EncodeInt(1)))
	return ReadContacts(l, s, c.ring.Location(self).DataCenter, self, replicas, func(ring.Endpoint) bool { return true }, c.ring.Location, nil)
}

func (c *testCluster) Request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error) {
	c.mu.Lock()
	how := c.how[ring.Endpoint(to)]
	if verb == messaging.VerbRead {
		c.reads[ring.Endpoint(to)]++
	}
	c.mu.Unlock()
	switch how {
	case refuses:
		return nil, fmt.Errorf("messaging: %s unreachable: connection refused", to)
	case silent:
		<-ctx.Done()
		return nil, messaging.ErrTimeout
	case slow:
		c.mu.Lock()
		c.now = c.now.Add(50 * time.Millisecond)
		c.mu.Unlock()
	}
	return c.replicas[ring.Endpoint(to)].Handlers()[verb](ctx, "test", payload)
}

func (c *testCluster) write(from *Coordinator, l request.Consistency) error {
	m := mutation.NewMutation(c.table.ID, cqltype.EncodeInt(1))
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, cqltype.EncodeInt(1))}
	m.Rows = []mutation.RowUpdate{{Row: row}}
	return from.Apply([]*mutation.Mutation{m}, l, nil)
}

func (c *testCluster) read(from *Coordinator, l request.Consistency) error {
	_, err := from.ReadPartition(c.table, request.PartitionRead{Key: cqltype.EncodeInt(1), Consistency: l})
	return err
}

var threeNodes = map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1"}, "b": {DataCenter: "dc1"}, "c": {DataCenter: "dc1"}}

// A write every replica acknowledged never reports a timeout, however
// the answers and the end of the wait interleave.
func TestAcknowledgedWritesNeverTimeOut(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	for _, l := range []request.Consistency{request.All, request.Quorum, request.One} {
		for i := range 2000 {
			if err := c.write(c.replicas["a"], l); err != nil {
				t.Fatalf("write %d at %s with every replica up: %v", i, l, err)
			}
		}
	}
}

func TestWriteFailuresAndTimeouts(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	a := c.coordinator("a", "dc1", 50*time.Millisecond)
	c.engines["a"] = &countingEngine{}

	c.set(refuses, "b", "c")
	var f *request.Failure
	// The failure is reported once the level is out of reach, with the
	// acknowledgements in by then: a's own may or may not be.
	failedWrite := regexp.MustCompile(`^Operation failed - received [01] responses and 2 failures: UNKNOWN from /[bc]:7000, UNKNOWN from /[bc]:7000$`)
	if err := c.write(a, request.Quorum); !errors.As(err, &f) || !f.Write || f.Received > 1 || f.BlockFor != 2 || len(f.Failures) != 2 ||
		!failedWrite.MatchString(f.Error()) {
		t.Errorf("QUORUM with two replicas refusing: %v", err)
	}
	if err := c.write(a, request.One); err != nil {
		t.Errorf("ONE with two replicas refusing: %v", err)
	}
	// ONE returns at a's own acknowledgement; the refusals come after.
	for deadline := time.Now().Add(10 * time.Second); a.Stats.HintsStored.Load() < 4 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := a.Stats.HintsStored.Load(); got != 4 {
		t.Errorf("%d hints kept for the two refusing replicas over two writes, want 4", got)
	}

	c.set(answers, "b")
	c.set(silent, "c")
	var wt *request.WriteTimeout
	if err := c.write(a, request.All); !errors.As(err, &wt) || wt.Received != 2 || wt.BlockFor != 3 || wt.WriteType != request.WriteSimple {
		t.Errorf("ALL with a silent replica: %v (%+v)", err, wt)
	}
	if err := c.write(a, request.Quorum); err != nil {
		t.Errorf("QUORUM with one silent replica: %v", err)
	}
}

func TestReadReplacesFailedReplica(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	a := c.coordinator("a", "dc1", 50*time.Millisecond)
	// a asks itself and another; when that one refuses, the spare answers
	// in its place.
	contacts, spares := c.readContacts("a", request.Quorum)
	if len(contacts) != 2 || contacts[0] != "a" || len(spares) != 1 {
		t.Fatalf("QUORUM of three from a: contacts %v, spares %v", contacts, spares)
	}
	c.set(refuses, contacts[1])
	if err := c.read(a, request.Quorum); err != nil {
		t.Fatalf("QUORUM with one of three replicas refusing: %v", err)
	}
	if c.readsSent(contacts[1]) != 1 || c.readsSent(spares[0]) != 1 {
		t.Errorf("%s was asked %d times, %s %d; want once each", contacts[1], c.readsSent(contacts[1]), spares[0], c.readsSent(spares[0]))
	}
	c.set(refuses, "b", "c")
	var f *request.Failure
	if err := c.read(a, request.Quorum); !errors.As(err, &f) || f.Write || f.Received > 1 || f.BlockFor != 2 || len(f.Failures) != 2 ||
		f.DataPresent != (f.Received == 1) {
		t.Errorf("QUORUM with two of three replicas refusing: %v (%+v)", err, f)
	}
	c.set(silent, "b", "c")
	var rt *request.ReadTimeout
	if err := c.read(a, request.Quorum); !errors.As(err, &rt) || rt.Received != 1 || rt.BlockFor != 2 || !rt.DataPresent {
		t.Errorf("QUORUM with two silent replicas: %v (%+v)", err, rt)
	}
	if err := c.read(a, request.One); err != nil {
		t.Errorf("ONE from a replica: %v", err)
	}
}

var twoDataCentres = map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1"}, "b": {DataCenter: "dc1"}, "c": {DataCenter: "dc1"},
	"x": {DataCenter: "dc2"}, "y": {DataCenter: "dc2"}, "z": {DataCenter: "dc2"}}

// LOCAL_QUORUM is met only by the local data centre, EACH_QUORUM only by a
// quorum in each; remote acknowledgements do not stand in for them.
func TestConsistencyByDataCentre(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 3, "dc2": 3}}, twoDataCentres)
	a := c.coordinator("a", "dc1", 50*time.Millisecond)
	c.set(silent, "b", "c")
	var wt *request.WriteTimeout
	if err := c.write(a, request.LocalQuorum); !errors.As(err, &wt) || wt.Received != 1 || wt.BlockFor != 2 {
		t.Errorf("LOCAL_QUORUM with dc1 down to its coordinator and dc2 all up: %v", err)
	}
	if err := c.write(a, request.Quorum); err != nil {
		t.Errorf("QUORUM (4 of 6) with four up: %v", err)
	}
	c.set(answers, "b", "c")
	c.set(silent, "y", "z")
	if err := c.write(a, request.EachQuorum); !errors.As(err, &wt) || wt.BlockFor != 4 {
		t.Errorf("EACH_QUORUM with dc2 down to one: %v", err)
	}
	if err := c.write(a, request.LocalQuorum); err != nil {
		t.Errorf("LOCAL_QUORUM with dc1 up: %v", err)
	}
	before := c.readsSent("x") + c.readsSent("y") + c.readsSent("z")
	for _, l := range []request.Consistency{request.LocalQuorum, request.LocalOne} {
		if err := c.read(a, l); err != nil {
			t.Errorf("%s read with dc1 up: %v", l, err)
		}
	}
	if after := c.readsSent("x") + c.readsSent("y") + c.readsSent("z"); after != before {
		t.Errorf("LOCAL_ reads sent %d requests to dc2", after-before)
	}
	c.set(silent, "b", "c")
	c.set(answers, "y", "z")
	var rt *request.ReadTimeout
	if err := c.read(a, request.LocalQuorum); !errors.As(err, &rt) || rt.BlockFor != 2 {
		t.Errorf("LOCAL_QUORUM read with dc1's others silent: %v", err)
	}
}

// Reads go to the replicas that answer fastest: a replica found slow is
// asked in its turn no more, while its peer in the same data centre is.
func TestReadsAvoidASlowReplica(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	a := c.coordinator("a", "dc1", time.Second)
	contacts, spares := c.readContacts("a", request.Quorum)
	slowOne, other := contacts[1], spares[0]
	c.set(slow, slowOne)
	for range 20 {
		if err := c.read(a, request.Quorum); err != nil {
			t.Fatal(err)
		}
	}
	if c.readsSent(slowOne) != 1 || c.readsSent(other) != 19 {
		t.Errorf("the slow replica was asked %d times, the other %d; want 1 and 19", c.readsSent(slowOne), c.readsSent(other))
	}
}

// Which missed writes become hints: none for a replica down past
// max_hint_window, none while handoff is disabled, none for a table whose
// gc_grace_seconds is 0; and the hints kept reach their replica once it
// answers again, without it going down and up.
func TestHintsBoundedAndDelivered(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	var store *hints.Store
	a := c.coordinator("a", "dc1", 50*time.Millisecond, func(cfg *Config) {
		store = cfg.Hints
		cfg.HintedHandoff.MaxWindow = time.Hour
		cfg.Downtime = func(e ring.Endpoint) time.Duration {
			if e == "b" {
				return 2 * time.Hour
			}
			return 0
		}
	})
	c.set(refuses, "b", "c")
	if err := c.write(a, request.One); err != nil {
		t.Fatal(err)
	}
	a.Settle()
	if a.Stats.HintsStored.Load() != 1 || a.Stats.HintsPastWindow.Load() != 1 || store.Has("b") || !store.Has("c") {
		t.Fatalf("stored %d, past the window %d; want c's hint alone, b down for 2 h of a 1 h window",
			a.Stats.HintsStored.Load(), a.Stats.HintsPastWindow.Load())
	}
	a.SetHandoff(false)
	if err := c.write(a, request.One); err != nil {
		t.Fatal(err)
	}
	a.Settle()
	if a.Stats.HintsStored.Load() != 1 {
		t.Fatalf("%d hints stored with handoff disabled, want the earlier 1", a.Stats.HintsStored.Load())
	}
	a.SetHandoff(true)
	c.table.Options.GCGraceSeconds = 0
	if err := c.write(a, request.One); err != nil {
		t.Fatal(err)
	}
	a.Settle()
	c.table.Options.GCGraceSeconds = 864000
	if a.Stats.HintsStored.Load() != 1 || a.Stats.HintsExpired.Load() != 1 {
		t.Fatalf("stored %d, expired %d with gc_grace_seconds 0; want 1 and 1", a.Stats.HintsStored.Load(), a.Stats.HintsExpired.Load())
	}
	c.set(answers, "b", "c")
	a.DeliverHints()
	a.Settle()
	if a.Stats.HintsDelivered.Load() != 1 || store.Has("c") {
		t.Fatalf("delivered %d, c still has hints: %v", a.Stats.HintsDelivered.Load(), store.Has("c"))
	}
}

// joiningCluster is four nodes at RF 3, the ring of all four (full), and
// the ring without the one (joining) that is the first replica of the
// key written (int 1): the ring before it joins.
func joiningCluster(t *testing.T) (c *testCluster, full, current *ring.Metadata, joining ring.Endpoint) {
	t.Helper()
	fourNodes := map[ring.Endpoint]ring.Location{"a": {DataCenter: "dc1"}, "b": {DataCenter: "dc1"}, "c": {DataCenter: "dc1"}, "d": {DataCenter: "dc1"}}
	c = newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, fourNodes)
	full = c.ring
	joining = ring.SimpleStrategy{Factor: 3}.Replicas(full, partitioner.Murmur3().Token(cqltype.EncodeInt(1)))[0]
	var before []ring.Node
	for _, e := range full.Endpoints() {
		if e != joining {
			before = append(before, ring.Node{Endpoint: e, Location: full.Location(e), Tokens: full.TokensOf(e)})
		}
	}
	current, err := ring.NewMetadata(partitioner.Murmur3(), before)
	if err != nil {
		t.Fatal(err)
	}
	return c, full, current, joining
}

// TestWritesReachPendingReplicas: while a node is being given a range, a
// write of it goes to that node too and needs its answer on top of the
// level's: ALL waits for four, and QUORUM is not met by two of the old
// replicas once it is silent.
func TestWritesReachPendingReplicas(t *testing.T) {
	c, full, current, joining := joiningCluster(t)
	tok := partitioner.Murmur3().Token(cqltype.EncodeInt(1))
	s := ring.SimpleStrategy{Factor: 3}
	c.ring = current.WithFuture(full)
	old := s.Replicas(current, tok)
	self := old[0]
	co := c.coordinator(self, "dc1", 50*time.Millisecond)
	c.engines[self] = &countingEngine{}

	if err := c.write(co, request.All); err != nil {
		t.Fatalf("ALL with the pending replica up: %v", err)
	}
	if got := c.engines[joining].writes(); got != 1 {
		t.Fatalf("the pending replica %s took %d writes, want 1", joining, got)
	}
	c.set(silent, joining)
	var wt *request.WriteTimeout
	if err := c.write(co, request.All); !errors.As(err, &wt) || wt.Received != 3 || wt.BlockFor != 4 {
		t.Errorf("ALL with the pending replica silent: %v (%+v)", err, wt)
	}
	if err := c.write(co, request.Quorum); err != nil {
		t.Errorf("QUORUM with the three old replicas up: %v", err)
	}
	c.set(silent, old[1])
	if err := c.write(co, request.Quorum); !errors.As(err, &wt) || wt.Received != 2 || wt.BlockFor != 3 {
		t.Errorf("QUORUM with the pending replica and one old one silent: %v (%+v)", err, wt)
	}
}

// missWrite writes the test's key from co at QUORUM with replica silent,
// so that co keeps a hint for it; the replica then answers again.
func (c *testCluster) missWrite(co *Coordinator, replica ring.Endpoint) {
	c.t.Helper()
	c.set(silent, replica)
	if err := c.write(co, request.Quorum); err != nil {
		c.t.Fatal(err)
	}
	co.Settle()
	if !co.cfg.Hints.Has(string(replica)) {
		c.t.Fatalf("no hint kept for the silent replica %s", replica)
	}
	c.set(answers, replica)
}

// deliverHints hands replica the hints co keeps for it, and waits.
func deliverHints(co *Coordinator, replica ring.Endpoint) {
	co.ReplicaUp(replica)
	co.Settle()
}

// TestHintsReachPendingReplicas: a hint delivered while its range moves
// goes on to the node being given the range too, since the stream that
// fills that node may have left the hinted replica before the hint came.
func TestHintsReachPendingReplicas(t *testing.T) {
	c, full, current, joining := joiningCluster(t)
	old := ring.SimpleStrategy{Factor: 3}.Replicas(current, partitioner.Murmur3().Token(cqltype.EncodeInt(1)))
	self, missed := old[0], old[1]
	c.ring = current
	co := c.coordinator(self, "dc1", 50*time.Millisecond)
	c.missWrite(co, missed)
	if c.engines[joining].writes() != 0 {
		t.Fatalf("before the move, the node not yet joining took %d writes", c.engines[joining].writes())
	}
	c.ring = current.WithFuture(full)
	deliverHints(co, missed)
	if co.cfg.Hints.Has(string(missed)) || c.engines[missed].writes() != 1 || c.engines[joining].writes() != 1 || co.cfg.Hints.Has(string(joining)) {
		t.Fatalf("hints delivered while %s joins: still held %v, the replica took %d writes, the joining node %d (hinted: %v)",
			joining, co.cfg.Hints.Has(string(missed)), c.engines[missed].writes(), c.engines[joining].writes(), co.cfg.Hints.Has(string(joining)))
	}

	// The joining node down: it is hinted rather than sent to.
	c.ring = current
	down := c.coordinator(self, "dc1", 50*time.Millisecond, func(cfg *Config) { cfg.Alive = func(e ring.Endpoint) bool { return e != joining } })
	c.missWrite(down, missed)
	c.ring = current.WithFuture(full)
	deliverHints(down, missed)
	if down.cfg.Hints.Has(string(missed)) || c.engines[missed].writes() != 2 || c.engines[joining].writes() != 1 || !down.cfg.Hints.Has(string(joining)) {
		t.Fatalf("hints delivered while %s joins, down: still held %v, the replica took %d writes, the joining node %d (hinted: %v)",
			joining, down.cfg.Hints.Has(string(missed)), c.engines[missed].writes(), c.engines[joining].writes(), down.cfg.Hints.Has(string(joining)))
	}

	// The joining node already knows the ring it has joined: it refuses
	// the send, and gets the write placed by that ring, not a hint.
	moving, joined := current.WithFuture(full).WithEpoch(2), full.WithEpoch(3)
	c.ring = current.WithEpoch(1)
	c.replicas[joining] = c.coordinator(joining, "dc1", time.Second, func(cfg *Config) { cfg.Ring = func() *ring.Metadata { return joined } })
	var mine atomic.Pointer[ring.Metadata]
	mine.Store(c.ring)
	behind := c.coordinator(self, "dc1", 50*time.Millisecond, func(cfg *Config) {
		cfg.Ring = mine.Load
		cfg.CatchUp = func(context.Context, uint64) error { mine.Store(joined); return nil }
	})
	c.missWrite(behind, missed)
	mine.Store(moving)
	deliverHints(behind, missed)
	if behind.cfg.Hints.Has(string(missed)) || c.engines[joining].writes() != 2 || behind.cfg.Hints.Has(string(joining)) {
		t.Fatalf("hints delivered while %s joins, which knows it joined: still held %v, the joining node took %d writes (hinted: %v)",
			joining, behind.cfg.Hints.Has(string(missed)), c.engines[joining].writes(), behind.cfg.Hints.Has(string(joining)))
	}
}

// speculationTimer is a coordinator's timer for speculation that fires at
// once, recording the waits it was asked for.
type speculationTimer struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *speculationTimer) install(cfg *Config) {
	fired := make(chan time.Time)
	close(fired)
	cfg.After = func(d time.Duration) <-chan time.Time {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.waits = append(s.waits, d)
		return fired
	}
}

func (s *speculationTimer) asked() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

// A read still waiting for a replica past its table's speculative_retry
// threshold asks a spare and answers from whichever replicas answer
// first; the threshold is the policy's: half the read timeout for a
// percentile before any read was timed, then the percentile of the
// table's reads, or the fixed wait. NEVER waits for the replica it asked.
func TestReadsSpeculate(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	timer := &speculationTimer{}
	a := c.coordinator("a", "dc1", time.Second, timer.install)
	contacts, spares := c.readContacts("a", request.Quorum)
	c.set(silent, contacts[1])
	if err := c.read(a, request.Quorum); err != nil {
		t.Fatalf("QUORUM with the replica asked silent and a spare: %v", err)
	}
	retries := &a.Stats.TableLatency(c.table.ID).SpeculativeRetries
	if waits := timer.asked(); !slices.Equal(waits, []time.Duration{500 * time.Millisecond}) || c.readsSent(spares[0]) != 1 || retries.Load() != 1 {
		t.Errorf("99p before any read was timed: waited %v, spare asked %d times, %d speculative retries; want 500ms, once, 1",
			waits, c.readsSent(spares[0]), retries.Load())
	}

	for _, policy := range []struct {
		option string
		wait   time.Duration
	}{{"50p", 3 * time.Millisecond}, {"20ms", 20 * time.Millisecond}, {"MIN(50p,20ms)", 3 * time.Millisecond}} {
		c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
		c.table.Options.SpeculativeRetry = policy.option
		timer := &speculationTimer{}
		a := c.coordinator("a", "dc1", time.Second, timer.install)
		for range 100 {
			a.Stats.TableLatency(c.table.ID).Read.Record(3000) // µs
		}
		if err := c.read(a, request.Quorum); err != nil {
			t.Fatal(err)
		}
		// The first read's threshold serves for the next ones.
		if err := c.read(a, request.Quorum); err != nil {
			t.Fatal(err)
		}
		// The histogram keeps latencies to within 1%.
		near := func(d time.Duration) bool { return d >= policy.wait && d <= policy.wait+policy.wait/100 }
		if waits := timer.asked(); len(waits) != 2 || !near(waits[0]) || waits[1] != waits[0] {
			t.Errorf("%s: waited %v, want %v (within 1%%) twice", policy.option, waits, policy.wait)
		}
	}

	// ALWAYS asks the spare with the others, without a timer.
	c = newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	c.table.Options.SpeculativeRetry = "ALWAYS"
	timer = &speculationTimer{}
	a = c.coordinator("a", "dc1", time.Second, timer.install)
	if err := c.read(a, request.Quorum); err != nil {
		t.Fatal(err)
	}
	_, spares = c.readContacts("a", request.Quorum)
	if sent := c.readsSentSettled(spares[0], 1); len(timer.asked()) != 0 || sent != 1 {
		t.Errorf("ALWAYS: %d timers, the spare asked %d times; want none and once", len(timer.asked()), sent)
	}

	c = newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	c.table.Options.SpeculativeRetry = "NEVER"
	timer = &speculationTimer{}
	a = c.coordinator("a", "dc1", 50*time.Millisecond, timer.install)
	contacts, spares = c.readContacts("a", request.Quorum)
	c.set(silent, contacts[1])
	var rt *request.ReadTimeout
	if err := c.read(a, request.Quorum); !errors.As(err, &rt) || len(timer.asked()) != 0 || c.readsSent(spares[0]) != 0 {
		t.Errorf("NEVER with the replica asked silent: %v, %d timers, spare asked %d times; want a ReadTimeout, none, never",
			err, len(timer.asked()), c.readsSent(spares[0]))
	}
}

// A coordinator that is not a replica asks one for the data; when that one
// is silent, the spare it speculates on is asked for the data too, and its
// answer is the read's.
func TestSpeculationAsksForMissingData(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 2}, threeNodes)
	var outside ring.Endpoint
	for e := range threeNodes {
		if contacts, _ := c.readContacts(e, request.One); contacts[0] != e {
			outside = e
		}
	}
	if outside == "" {
		t.Fatal("every node is a replica of the key")
	}
	timer := &speculationTimer{}
	co := c.coordinator(outside, "dc1", time.Second, timer.install)
	contacts, spares := c.readContacts(outside, request.One)
	c.set(silent, contacts[0])
	if err := c.read(co, request.One); err != nil {
		t.Fatalf("ONE with the replica asked silent: %v", err)
	}
	if c.readsSent(spares[0]) != 1 || len(timer.asked()) != 1 {
		t.Errorf("spare asked %d times after %d timers; want once after one", c.readsSent(spares[0]), len(timer.asked()))
	}
}

// TestHintsOfALeftNodeGoToItsRangesReplicas: the hints kept for a node that
// has left the ring go to the replicas its ranges went to, the one that
// did not have the write among them, and are kept no longer.
func TestHintsOfALeftNodeGoToItsRangesReplicas(t *testing.T) {
	c, full, current, leaving := joiningCluster(t)
	tok := partitioner.Murmur3().Token(cqltype.EncodeInt(1))
	before, after := ring.SimpleStrategy{Factor: 3}.Replicas(full, tok), ring.SimpleStrategy{Factor: 3}.Replicas(current, tok)
	var heir ring.Endpoint
	for _, r := range after {
		if !slices.Contains(before, r) {
			heir = r
		}
	}
	if heir == "" || before[0] != leaving {
		t.Fatalf("replicas %v with %s, %v without it: no node takes its place", before, leaving, after)
	}
	self := before[1]
	c.ring = full
	co := c.coordinator(self, "dc1", 50*time.Millisecond)
	c.missWrite(co, leaving)
	if c.engines[heir].writes() != 0 {
		t.Fatalf("before %s left, %s took %d writes", leaving, heir, c.engines[heir].writes())
	}
	c.ring = current
	var outcome error = errors.New("not told")
	co.RehomeHints(leaving, func(err error) { outcome = err })
	co.Settle()
	if outcome != nil || co.cfg.Hints.Has(string(leaving)) || c.engines[heir].writes() != 1 || co.cfg.Hints.Has(string(heir)) {
		t.Fatalf("after %s left: %v, its hints still kept %v, %s took %d writes (hinted: %v)",
			leaving, outcome, co.cfg.Hints.Has(string(leaving)), heir, c.engines[heir].writes(), co.cfg.Hints.Has(string(heir)))
	}
}
