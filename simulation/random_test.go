package simulation

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/mutation/request"
)

var (
	randomSeeds = flag.Int("simulation.seeds", 8, "seeds of the randomized cluster run, from -simulation.seed on")
	randomSeed  = flag.Uint64("simulation.seed", 1, "the first seed of the randomized cluster run")
	randomSteps = flag.Int("simulation.steps", 300, "steps of each seed")
	randomLong  = flag.Duration("simulation.long", 0, "run seeds for this long instead of -simulation.seeds")
)

// TestRandomized drives three nodes (replication 3) through random
// writes and reads at QUORUM and ONE, crashes, restarts, partitions and
// heals, and checks after every step that no QUORUM read returns a value
// older than an acknowledged QUORUM write before it, that no client ever
// gets a ServerError, and at the end (everything healed and up) that no
// acknowledged write, at any level, is lost. A failure prints its seed.
func TestRandomized(t *testing.T) {
	last := *randomSeed
	outcomes := map[string]int{}
	for seed := range testutil.Seeds(*randomSeed, *randomSeeds, *randomLong) {
		var err error
		inBubble(t, func(*testing.T) { err = randomRun(seed, *randomSteps, outcomes) })
		if err != nil {
			t.Fatalf("seed %d: %v\nreplay: go test ./simulation -run TestRandomized -simulation.seed %d -simulation.seeds 1", seed, err, seed)
		}
		last = seed
	}
	t.Logf("ran seeds %d to %d, %d steps each; outcomes: %v", *randomSeed, last, *randomSteps, outcomes)
}

// randomRun is one seed's run, in a synctest bubble; it counts what each
// request came to in outcomes.
func randomRun(seed uint64, steps int, outcomes map[string]int) error {
	c, err := New(Config{Seed: seed, Nodes: []NodeConfig{
		{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}}})
	if err != nil {
		return err
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(seed, 0xc1a5))
	nodes := c.Nodes()
	first := nodes[0]
	for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE ks.kv (k int PRIMARY KEY, v int)"} {
		if _, err := first.Exec(stmt, request.One); err != nil {
			return err
		}
	}
	const keys = 8
	var (
		quorumAcked [keys]int // the newest version acknowledged at QUORUM, by key
		anyAcked    [keys]int // at any level
		history     []string
	)
	up := func() []*Node {
		var out []*Node
		for _, n := range nodes {
			if n.Up() {
				out = append(out, n)
			}
		}
		return out
	}
	fail := func(format string, args ...any) error {
		last := history
		if len(last) > 20 {
			last = last[len(last)-20:]
		}
		return fmt.Errorf(format+"\nlast steps:\n  %s", append(args, strings.Join(last, "\n  "))...)
	}
	for step := 1; step <= steps; step++ {
		live := up()
		switch x := r.IntN(100); {
		case x < 40 && len(live) > 0: // a write
			n, k := live[r.IntN(len(live))], r.IntN(keys)
			cl := request.Quorum
			if r.IntN(3) == 0 {
				cl = request.One
			}
			_, err := n.Exec(fmt.Sprintf("INSERT INTO ks.kv (k, v) VALUES (%d, %d)", k, step), cl)
			history = append(history, fmt.Sprintf("%d: write k=%d v=%d at %s on %s: %v", step, k, step, cl, n.Name, err))
			outcomes["write "+outcomeKind(err)]++
			if err != nil {
				if bad := unexpected(err); bad != nil {
					return fail("step %d: a write failed as no client should see: %v", step, bad)
				}
				continue
			}
			anyAcked[k] = step
			if cl == request.Quorum {
				quorumAcked[k] = step
			}
		case x < 75 && len(live) > 0: // a QUORUM read
			n, k := live[r.IntN(len(live))], r.IntN(keys)
			v, err := readVersion(n, k, request.Quorum)
			history = append(history, fmt.Sprintf("%d: read k=%d at QUORUM on %s: v=%d %v", step, k, n.Name, v, err))
			outcomes["read "+outcomeKind(err)]++
			if err != nil {
				if bad := unexpected(err); bad != nil {
					return fail("step %d: a read failed as no client should see: %v", step, bad)
				}
				continue
			}
			if v < quorumAcked[k] {
				return fail("step %d: a QUORUM read of k=%d on %s found v=%d, older than the QUORUM write of v=%d acknowledged before it",
					step, k, n.Name, v, quorumAcked[k])
			}
		case x < 83 && len(live) > 1: // a crash
			n := live[r.IntN(len(live))]
			history = append(history, fmt.Sprintf("%d: crash %s", step, n.Name))
			if err := n.Crash(); err != nil {
				return err
			}
		case x < 91: // a restart
			for _, n := range nodes {
				if !n.Up() {
					history = append(history, fmt.Sprintf("%d: restart %s", step, n.Name))
					if err := n.Restart(); err != nil {
						return fail("step %d: %s does not restart: %v", step, n.Name, err)
					}
					break
				}
			}
		case x < 95: // a partition
			n := nodes[r.IntN(len(nodes))]
			history = append(history, fmt.Sprintf("%d: partition %s from the others", step, n.Name))
			c.Partition(n.Name)
		default:
			history = append(history, fmt.Sprintf("%d: heal", step))
			c.Heal()
		}
	}
	// Everything healed and up: once gossip has seen it, and the hints
	// are delivered, every acknowledged write is there.
	c.Heal()
	for _, n := range nodes {
		if !n.Up() {
			if err := n.Restart(); err != nil {
				return fail("at the end: %s does not restart: %v", n.Name, err)
			}
		}
	}
	if err := c.AwaitMembership(time.Minute); err != nil {
		return fail("at the end: %v", err)
	}
	// A view may still flap (a suspicion from a partition running out), a
	// node restarted a moment ago may still be in a peer's redial pause:
	// a read the cluster cannot serve yet is tried again, for a minute.
	for k := range keys {
		v, err := readVersion(first, k, request.All)
		for deadline := time.Now().Add(time.Minute); err != nil && unexpected(err) == nil && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			v, err = readVersion(first, k, request.All)
		}
		if err != nil {
			return fail("at the end: an ALL read of k=%d: %v", k, err)
		}
		if v < anyAcked[k] {
			return fail("at the end: k=%d holds v=%d; the write of v=%d was acknowledged and is lost", k, v, anyAcked[k])
		}
	}
	return nil
}

// readVersion reads key k's value (0 when there is none).
func readVersion(n *Node, k int, cl request.Consistency) (int, error) {
	res, err := n.Exec("SELECT v FROM ks.kv WHERE k = "+strconv.Itoa(k), cl)
	if err != nil || len(res.Rows) == 0 {
		return 0, err
	}
	v, err := cqltype.DecodeInt(res.Rows[0][0])
	return int(v), err
}

// outcomeKind names what a request came to: ok, or its error's code.
func outcomeKind(err error) string {
	var e *exec.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return codeNames[e.Code]
	}
	return "other"
}

// unexpected is err unless it is a failure Cassandra reports for a
// request the cluster could not serve (Unavailable, a timeout, a read or
// write failure).
func unexpected(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		switch e.Code {
		case exec.Unavailable, exec.WriteTimeout, exec.ReadTimeout, exec.ReadFailure, exec.WriteFailure:
			return nil
		}
	}
	return err
}
