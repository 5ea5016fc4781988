package simulation

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
)

var (
	casSeeds = flag.Int("simulation.cas.seeds", 3, "seeds of the lightweight transaction linearizability run, from -simulation.cas.seed on")
	casSeed  = flag.Uint64("simulation.cas.seed", 1, "the first seed of the lightweight transaction linearizability run")
	casOps   = flag.Int("simulation.cas.ops", 30, "operations of each client in each seed")
	casLong  = flag.Duration("simulation.cas.long", 0, "run seeds for this long instead of -simulation.cas.seeds")
)

// casModel is each key's register as lightweight transactions must keep
// it (testutil.RegisterStep).
var casModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		return testutil.GroupBy(history, func(op porcupine.Operation) int { return op.Input.(testutil.RegisterInput).Key })
	},
	Init:              func() any { return 0 },
	Step:              testutil.RegisterStep,
	DescribeOperation: testutil.DescribeRegisterOp,
}

// TestCASLinearizable has clients run conditional inserts, updates and
// deletes and serial reads of a few keys through every node of three
// (RF 3) while nodes are cut off, links cut and delayed, and nodes
// crashed and restarted, and checks the history with porcupine against a
// register per key: every acknowledged operation takes effect at one
// moment between its call and its return, every refused one saw the value
// of such a moment. A write whose outcome never came back may take effect
// or not. A failure writes porcupine's visualization and prints the seed.
func TestCASLinearizable(t *testing.T) {
	last := *casSeed
	for seed := range testutil.Seeds(*casSeed, *casSeeds, *casLong) {
		var ops []porcupine.Operation
		var counts map[string]int
		var err error
		inBubble(t, func(*testing.T) { ops, counts, err = casRun(seed, *casOps) })
		replay := fmt.Sprintf("go test ./simulation -run TestCASLinearizable -simulation.cas.seed %d -simulation.cas.seeds 1", seed)
		if err != nil {
			t.Fatalf("seed %d: %v\nreplay: %s", seed, err, replay)
		}
		res, info := porcupine.CheckOperationsVerbose(casModel, ops, time.Minute)
		if res != porcupine.Ok {
			path := filepath.Join(t.TempDir(), fmt.Sprintf("cas-%d.html", seed))
			if f, ferr := os.Create(path); ferr == nil {
				_ = porcupine.Visualize(casModel, info, f)
				_ = f.Close()
			}
			t.Fatalf("seed %d: the history of %d operations is %v (not linearizable); visualization: %s\nreplay: %s", seed, len(ops), res, path, replay)
		}
		if counts["applied"] == 0 || counts["refused"] == 0 || counts["read"] == 0 {
			t.Fatalf("seed %d: the run exercised too little: %v", seed, counts)
		}
		t.Logf("seed %d: %d operations, linearizable; %v", seed, len(ops), counts)
		last = seed
	}
	t.Logf("ran seeds %d to %d", *casSeed, last)
}

// regTable is the table of the registers the clients write.
const regTable = "CREATE TABLE ks.reg (k int PRIMARY KEY, v int)"

// casRun is one seed's run, in a synctest bubble: six clients, each
// doing ops operations on two keys through random nodes over links of a
// few milliseconds, while a nemesis injects faults; then, everything
// healed, a serial read of each key. It returns the history and what the operations came to.
func casRun(seed uint64, ops int) ([]porcupine.Operation, map[string]int, error) {
	c, err := newThreeNodes(seed, regTable)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	nodes := c.Nodes()
	var (
		clock   atomic.Int64
		mu      sync.Mutex
		history []porcupine.Operation
		counts  = map[string]int{}
		failure error
	)
	record := func(client int, in testutil.RegisterInput, out testutil.RegisterOutput, call, ret int64, kind string) {
		mu.Lock()
		defer mu.Unlock()
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
		counts[kind]++
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failure == nil {
			failure = err
		}
	}
	const keys, clients = 2, 6
	// Every link takes a few milliseconds, so that rounds overlap.
	latency := rand.New(rand.NewPCG(seed, 0x1a7))
	base := map[[2]*Node]time.Duration{}
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				base[[2]*Node{a, b}] = time.Duration(1+latency.IntN(15)) * time.Millisecond
			}
		}
	}
	resetDelays := func() {
		for link, d := range base {
			c.Delay(link[0].Name, link[1].Name, d)
		}
	}
	resetDelays()
	const serial = request.Serial
	nextValue := atomic.Int64{}
	// run runs one operation and records it; it returns what the client
	// learnt of the key's value, if anything.
	run := func(client int, n *Node, in testutil.RegisterInput, r *rand.Rand) (value int, learnt bool) {
		if in.Op != testutil.RegisterRead {
			in.Value = int(nextValue.Add(1))
		}
		commit := []request.Consistency{request.Quorum, request.One, request.Any}[r.IntN(3)]
		call := clock.Add(1)
		out, kind, err := casOperation(n, in, commit, serial)
		ret := clock.Add(1)
		switch {
		case err != nil:
			fail(fmt.Errorf("client %d, %+v on %s: %w", client, in, n.Name, err))
		case kind == "skipped":
		case out.Unknown:
			record(client, in, out, call, math.MaxInt64, kind)
		default:
			record(client, in, out, call, ret, kind)
		}
		switch {
		case err != nil || kind == "skipped" || out.Unknown:
			return 0, false
		case !out.Applied:
			return out.Seen, true
		case in.Op == testutil.RegisterDelete:
			return 0, true
		}
		return in.Value, true
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for client := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(client)))
			seen := map[int]int{} // the last value this client saw of each key
			for range ops {
				n := nodes[r.IntN(len(nodes))]
				if !n.Up() {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				k := r.IntN(keys)
				in := testutil.RegisterInput{Key: k, Old: seen[k]}
				switch x := r.IntN(100); {
				case x < 25:
					in.Op = testutil.RegisterInsert
				case x < 60:
					in.Op = testutil.RegisterUpdate
				case x < 75:
					in.Op = testutil.RegisterDelete
				default:
					in.Op = testutil.RegisterRead
				}
				if v, ok := run(client, n, in, r); ok {
					seen[k] = v
				}
				time.Sleep(time.Duration(r.IntN(60)) * time.Millisecond)
			}
		}()
	}
	nemesis := rand.New(rand.NewPCG(seed, 0x6e656d))
	var nemesisDone sync.WaitGroup
	nemesisDone.Add(1)
	go func() {
		defer nemesisDone.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(200+nemesis.IntN(800)) * time.Millisecond):
			}
			a, b := nodes[nemesis.IntN(3)], nodes[nemesis.IntN(3)]
			switch x := nemesis.IntN(100); {
			case x < 20:
				c.Partition(a.Name)
			case x < 35 && a != b:
				c.Cut(a.Name, b.Name)
			case x < 50 && a != b:
				c.Delay(a.Name, b.Name, time.Duration(50+nemesis.IntN(500))*time.Millisecond)
			case x < 65:
				if a.Up() && upCount(nodes) == 3 {
					if err := a.Crash(); err != nil {
						fail(fmt.Errorf("crashing %s: %w", a.Name, err))
					}
				}
			default:
				c.Heal()
				resetDelays()
				for _, n := range nodes {
					if !n.Up() {
						if err := n.Restart(); err != nil {
							fail(fmt.Errorf("restarting %s: %w", n.Name, err))
						}
					}
				}
			}
		}
	}()
	wg.Wait()
	close(done)
	nemesisDone.Wait()
	c.Heal()
	resetDelays()
	for _, n := range nodes {
		if !n.Up() {
			if err := n.Restart(); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := c.AwaitMembership(time.Minute); err != nil {
		return nil, nil, err
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for k := range keys {
		run(clients, nodes[k%len(nodes)], testutil.RegisterInput{Op: testutil.RegisterRead, Key: k}, r)
	}
	c.Settle()
	return history, counts, failure
}

func upCount(nodes []*Node) int {
	n := 0
	for _, x := range nodes {
		if x.Up() {
			n++
		}
	}
	return n
}

// casOperation runs one operation on node n and says what it came to:
// kind is applied, refused or read, unknown for a write whose outcome is
// not known, or skipped for one that certainly did nothing (Unavailable
// before anything was sent, a read that timed out, a node that went
// down). An error is a failure no client should see.
func casOperation(n *Node, in testutil.RegisterInput, commit, serial request.Consistency) (out testutil.RegisterOutput, kind string, err error) {
	session, err := n.session()
	if err != nil {
		return out, "skipped", nil
	}
	var stmt string
	switch in.Op {
	case testutil.RegisterInsert:
		stmt = fmt.Sprintf("INSERT INTO ks.reg (k, v) VALUES (%d, %d) IF NOT EXISTS", in.Key, in.Value)
	case testutil.RegisterUpdate:
		stmt = fmt.Sprintf("UPDATE ks.reg SET v = %d WHERE k = %d IF v = %s", in.Value, in.Key, casLiteral(in.Old))
	case testutil.RegisterDelete:
		stmt = fmt.Sprintf("DELETE FROM ks.reg WHERE k = %d IF v = %s", in.Key, casLiteral(in.Old))
	case testutil.RegisterRead:
		stmt = fmt.Sprintf("SELECT v FROM ks.reg WHERE k = %d", in.Key)
	}
	level := commit
	if in.Op == testutil.RegisterRead {
		level = serial
	}
	res, err := session.QueryText(stmt, exec.QueryParams{Consistency: level, SerialConsistency: &serial})
	if !n.Up() && err != nil {
		err = nil // gone with its node: unknown below, as for a timeout
		if in.Op == testutil.RegisterRead {
			return out, "skipped", nil
		}
		return testutil.RegisterOutput{Unknown: true}, "unknown", nil
	}
	var e *exec.Error
	switch {
	case err == nil:
	case errors.As(err, &e) && e.Code == exec.Unavailable:
		return out, "skipped", nil
	case errors.As(err, &e) && (e.Code == exec.ReadTimeout || e.Code == exec.ReadFailure) && in.Op == testutil.RegisterRead:
		return out, "skipped", nil
	case errors.As(err, &e) && (e.Code == exec.WriteTimeout || e.Code == exec.WriteFailure || e.Code == exec.CASWriteUnknown) && in.Op != testutil.RegisterRead:
		return testutil.RegisterOutput{Unknown: true}, "unknown", nil
	default:
		return out, "", err
	}
	if in.Op == testutil.RegisterRead {
		if len(res.Rows) > 0 {
			out.Seen, err = casValue(res.Rows[0][0])
		}
		return out, "read", err
	}
	if len(res.Rows) != 1 || len(res.Columns) == 0 || res.Columns[0].Name != "[applied]" {
		return out, "", fmt.Errorf("a conditional write answered %d rows of %d columns", len(res.Rows), len(res.Columns))
	}
	applied, err := cqltype.DecodeBoolean(res.Rows[0][0])
	if err != nil {
		return out, "", err
	}
	if applied {
		return testutil.RegisterOutput{Applied: true}, "applied", nil
	}
	for i, col := range res.Columns {
		if col.Name == "v" {
			out.Seen, err = casValue(res.Rows[0][i])
		}
	}
	return out, "refused", err
}

func casLiteral(v int) string {
	if v == 0 {
		return "null"
	}
	return fmt.Sprint(v)
}

func casValue(b []byte) (int, error) {
	if b == nil {
		return 0, nil
	}
	v, err := cqltype.DecodeInt(b)
	return int(v), err
}

// TestExactlyOneWinner has eight clients race INSERT ... IF NOT EXISTS on
// each of twenty keys through random nodes: for each key at most one
// client is told it applied, a serial read afterwards finds its value (or,
// when a contended round's outcome was unknown to its client, that
// client's), and every client told it did not apply was told that value.
// Most keys have a client told it applied.
func TestExactlyOneWinner(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c := threeNodes(t, 7, regTable)
		defer c.Close()
		nodes := c.Nodes()
		delayLinks(c, rand.New(rand.NewPCG(7, 7)), 10)
		const keys, clients = 20, 8
		type outcome struct {
			applied, unknown bool
			seen             int
		}
		results := make([][clients]outcome, keys)
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for client := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(client), 1))
				serial := request.Serial
				for k := range keys {
					n := nodes[r.IntN(len(nodes))]
					out, kind, err := casOperation(n, testutil.RegisterInput{Op: testutil.RegisterInsert, Key: k, Value: client + 1}, request.Quorum, serial)
					if err == nil && kind == "skipped" {
						err = errors.New("an insert without faults was skipped")
					}
					if err != nil {
						errs <- fmt.Errorf("client %d, key %d: %w", client, k, err)
						return
					}
					results[k][client] = outcome{out.Applied, out.Unknown, out.Seen}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		decided := 0
		for k := range keys {
			out, _, err := casOperation(nodes[k%3], testutil.RegisterInput{Op: testutil.RegisterRead, Key: k}, request.Quorum, request.Serial)
			if err != nil {
				t.Fatalf("key %d: a serial read: %v", k, err)
			}
			winner := 0
			for client, o := range results[k] {
				if o.applied {
					if winner != 0 {
						t.Fatalf("key %d: clients %d and %d both applied", k, winner-1, client)
					}
					winner = client + 1
				}
			}
			switch {
			case winner != 0 && out.Seen != winner:
				t.Fatalf("key %d: a serial read found %d, the winner wrote %d", k, out.Seen, winner)
			case winner == 0 && (out.Seen == 0 || !results[k][out.Seen-1].unknown):
				t.Fatalf("key %d: no client applied, and a serial read found %d: %+v", k, out.Seen, results[k])
			case winner != 0:
				decided++
			}
			for client, o := range results[k] {
				if !o.applied && !o.unknown && o.seen != out.Seen {
					t.Fatalf("key %d: client %d was told %d, the row holds %d", k, client, o.seen, out.Seen)
				}
			}
		}
		if decided < keys/2 {
			t.Fatalf("only %d keys of %d had a client told it applied", decided, keys)
		}
		t.Logf("%d keys of %d had a client told it applied; the others' winners' rounds ended unknown to them", decided, keys)
	})
}

// TestPaxosRepairFinishesProposals: a coordinator dies the moment a
// replica accepts its conditional insert, so the proposal is accepted and
// committed nowhere, and a plain read at ALL finds no row. Restarted, a
// repair from another node finishes the proposal before it compares the
// data (Cassandra 4.1's Paxos repair): the row then reads at ALL on every
// replica without a serial read, and a second repair finds nothing to
// finish.
func TestPaxosRepairFinishesProposals(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		// The crash on the first answer usually leaves the proposal
		// committed nowhere; now and then the coordinator gets as far as
		// committing on a replica as it goes down (as a real one may).
		// Such a run proves nothing here: a fresh cluster tries again.
		var c *Cluster
		var first, second *Node
		for seed := uint64(31); ; seed++ {
			if seed == 36 {
				t.Fatal("five coordinators in a row committed before their crash")
			}
			c = wholeClusterWith(t, Config{Seed: seed, Handoff: coordinator.HintedHandoff{Disabled: true}}, 0)
			first, second = c.Node("127.0.0.1"), c.Node("127.0.0.2")
			first.CrashOnAnswer(messaging.VerbPaxosPropose)
			if _, err := first.Exec("INSERT INTO ks.kv (k, v) VALUES (7, 'decided') IF NOT EXISTS", request.Quorum); err == nil {
				t.Fatal("the conditional insert was answered by a coordinator that crashed before it could know")
			}
			if first.Up() {
				t.Fatal("the coordinator did not crash on the proposal's answer")
			}
			restart(t, c, first)
			res, err := second.Exec("SELECT v FROM ks.kv WHERE k = 7", request.All)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) == 0 {
				break
			}
			t.Logf("seed %d: the coordinator began its commit before its crash took it down", seed)
			c.Close()
		}
		defer c.Close()
		sum, err := second.Whole().Repair(context.Background(), node.RepairRequest{Keyspace: "ks"})
		if err != nil || sum.PaxosFinished != 1 {
			t.Fatalf("the repair: %+v, %v", sum, err)
		}
		for _, n := range c.Nodes()[:3] {
			res, err := exec.NewSession(localOnly{n}).QueryText("SELECT v FROM ks.kv WHERE k = 7", exec.QueryParams{Consistency: request.One})
			if err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "decided" {
				t.Fatalf("after the repair %s holds %q, %v", n.Name, res.Rows, err)
			}
		}
		again, err := first.Whole().Repair(context.Background(), node.RepairRequest{Keyspace: "ks"})
		if err != nil || again.PaxosFinished != 0 || again.Mismatched != 0 {
			t.Fatalf("a second repair: %+v, %v", again, err)
		}
	})
}

// TestContentionFreeRoundTrips counts the requests of lightweight
// transactions through one node of three (RF 3) with no contention, as
// Cassandra 4.1's Paxos v2 spends them: a conditional write that applies
// sends each other replica one PAXOS_PREPARE (the read rides on it), one
// PAXOS_PROPOSE and one PAXOS_COMMIT; one whose condition fails sends only
// the prepares (nothing was promised since the latest commit, so the
// promises' reads are linearizable), and so does a SERIAL read once no
// write promise is later than the latest commit or empty proposal.
func TestContentionFreeRoundTrips(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c := threeNodes(t, 41, regTable)
		defer c.Close()
		first := c.Nodes()[0]
		verbs := []messaging.Verb{messaging.VerbPaxosPrepare, messaging.VerbPaxosPropose, messaging.VerbPaxosCommit, messaging.VerbRead, messaging.VerbMutation}
		for _, step := range []struct {
			stmt    string
			applied bool
			want    []int // by verbs
		}{
			{"INSERT INTO ks.reg (k, v) VALUES (1, 1) IF NOT EXISTS", true, []int{2, 2, 2, 0, 0}},
			{"UPDATE ks.reg SET v = 2 WHERE k = 1 IF v = 1", true, []int{2, 2, 2, 0, 0}},
			{"UPDATE ks.reg SET v = 3 WHERE k = 1 IF v = 1", false, []int{2, 0, 0, 0, 0}},
			// The failed condition's write promise is later than the
			// latest commit: the read proposes an empty update (not
			// committed), which is as good as a commit for the next.
			{"SELECT v FROM ks.reg WHERE k = 1", false, []int{2, 2, 0, 0, 0}},
			{"SELECT v FROM ks.reg WHERE k = 1", false, []int{2, 0, 0, 0, 0}},
		} {
			before := make([]int, len(verbs))
			for i, v := range verbs {
				before[i] = c.Requests(v)
			}
			level := request.Quorum
			if strings.HasPrefix(step.stmt, "SELECT") {
				level = request.Serial
			}
			res, err := first.Exec(step.stmt, level)
			if err != nil {
				t.Fatalf("%s: %v", step.stmt, err)
			}
			if level != request.Serial {
				if applied := len(res.Rows) == 1 && len(res.Rows[0][0]) == 1 && res.Rows[0][0][0] == 1; applied != step.applied {
					t.Fatalf("%s: applied %v", step.stmt, applied)
				}
			}
			got := make([]int, len(verbs))
			for i, v := range verbs {
				got[i] = c.Requests(v) - before[i]
			}
			if !slices.Equal(got, step.want) {
				t.Fatalf("%s sent %v requests of %v; want %v", step.stmt, got, verbs, step.want)
			}
		}
	})
}
