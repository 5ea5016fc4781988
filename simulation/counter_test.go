package simulation

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation/request"
)

// counterRun has clients add to counters through random nodes at random
// levels; it returns, by counter, the sum of the additions acknowledged,
// and the least and the most that those whose outcome is unknown (a
// timeout, a failure after the leader may have applied them) may add.
func counterRun(t *testing.T, c *Cluster, table string, clients, ops, counters int, seed uint64, during func()) (acked, least, most []int64) {
	t.Helper()
	nodes := c.Nodes()
	acked, least, most = make([]int64, counters), make([]int64, counters), make([]int64, counters)
	unknown := func(k int, delta int64) {
		least[k] += min(delta, 0)
		most[k] += max(delta, 0)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for client := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(client)))
			for range ops {
				n := nodes[r.IntN(len(nodes))]
				k, delta := r.IntN(counters), int64(1+r.IntN(5))
				if r.IntN(4) == 0 {
					delta = -delta
				}
				cl := []request.Consistency{request.One, request.Quorum, request.All}[r.IntN(3)]
				session, err := n.session()
				if err != nil || !n.Up() {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				_, err = session.QueryText(fmt.Sprintf("UPDATE %s SET n = n + %d WHERE k = %d", table, delta, k), exec.QueryParams{Consistency: cl})
				var e *exec.Error
				mu.Lock()
				switch {
				case err == nil:
					acked[k] += delta
				case errors.As(err, &e) && e.Code == exec.Unavailable:
					// refused before anything was sent
				case errors.As(err, &e) && (e.Code == exec.WriteTimeout || e.Code == exec.WriteFailure):
					unknown(k, delta)
				case !n.Up():
					unknown(k, delta) // its coordinator went down under it
				default:
					errs <- fmt.Errorf("client %d, +%d to counter %d at %s on %s: %w", client, delta, k, cl, n.Name, err)
					mu.Unlock()
					return
				}
				mu.Unlock()
				time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
			}
		}()
	}
	if during != nil {
		during()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return acked, least, most
}

// counterValue reads counter k of a table on node n at level cl (0 when
// it has no value).
func counterValue(t *testing.T, n *Node, table string, k int, cl request.Consistency) int64 {
	t.Helper()
	res, err := n.Exec(fmt.Sprintf("SELECT n FROM %s WHERE k = %d", table, k), cl)
	if err != nil {
		t.Fatalf("reading counter %d at %s on %s: %v", k, cl, n.Name, err)
	}
	if len(res.Rows) == 0 || res.Rows[0][0] == nil {
		return 0
	}
	v, err := cqltype.DecodeBigint(res.Rows[0][0])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// countsTable is a table of counters.
const countsTable = "CREATE TABLE ks.counts (k int PRIMARY KEY, n counter)"

// TestCountersSumConcurrentIncrements: eight clients add to three
// counters through every node of three at ONE, QUORUM and ALL, over
// links of a few milliseconds, in a keyspace of RF 3 (every coordinator
// leads) and one of RF 2 (a third of the writes go to a leader elsewhere,
// COUNTER_MUTATION); with no faults every increment is acknowledged, and
// every replica reads each counter's exact sum at ONE once the writes
// settled.
func TestCountersSumConcurrentIncrements(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c := threeNodes(t, 11, countsTable)
		defer c.Close()
		nodes := c.Nodes()
		for _, stmt := range []string{"CREATE KEYSPACE ks2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
			"CREATE TABLE ks2.counts (k int PRIMARY KEY, n counter)"} {
			if _, err := nodes[0].Exec(stmt, request.One); err != nil {
				t.Fatal(err)
			}
		}
		delayLinks(c, rand.New(rand.NewPCG(11, 1)), 8)
		for _, table := range []string{"ks.counts", "ks2.counts"} {
			before := make([]int64, len(nodes))
			for i, n := range nodes {
				before[i] = n.coord.Stats.ForwardedCounterWrites.Load()
			}
			acked, least, most := counterRun(t, c, table, 8, 40, 3, 11, nil)
			c.Settle()
			forwarded := int64(0)
			for i, n := range nodes {
				forwarded += n.coord.Stats.ForwardedCounterWrites.Load() - before[i]
			}
			if (table == "ks2.counts") != (forwarded > 0) {
				t.Fatalf("%s: %d counter writes went to a leader elsewhere", table, forwarded)
			}
			for k := range acked {
				if least[k] != 0 || most[k] != 0 {
					t.Fatalf("%s: counter %d: additions ended unknown with no fault", table, k)
				}
				for _, n := range nodes {
					if got := counterValue(t, n, table, k, request.One); got != acked[k] {
						t.Fatalf("%s: counter %d reads %d through %s at ONE; the increments sum to %d", table, k, got, n.Name, acked[k])
					}
				}
			}
		}
	})
}

// TestCountersKeepAcknowledgedIncrements: the same load while a node
// crashes and restarts and another is cut off for a while; once all is
// healed and up, each counter reads at ALL at least its acknowledged
// increments and at most those plus the ones whose outcome is unknown
// (which, as in Cassandra, may or may not have applied).
func TestCountersKeepAcknowledgedIncrements(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c := threeNodes(t, 12, countsTable)
		defer c.Close()
		nodes := c.Nodes()
		during := func() {
			time.Sleep(300 * time.Millisecond)
			if err := nodes[1].Crash(); err != nil {
				t.Error(err)
			}
			time.Sleep(2 * time.Second)
			c.Partition(nodes[2].Name)
			time.Sleep(3 * time.Second)
			c.Heal()
			if err := nodes[1].Restart(); err != nil {
				t.Error(err)
			}
		}
		acked, least, most := counterRun(t, c, "ks.counts", 8, 60, 3, 12, during)
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second) // hints delivered
		c.Settle()
		lost := false
		for k := range acked {
			got := counterValue(t, nodes[0], "ks.counts", k, request.All)
			if got < acked[k]+least[k] || got > acked[k]+most[k] {
				t.Errorf("counter %d reads %d at ALL: acknowledged %d, unknown from %d to %d", k, got, acked[k], least[k], most[k])
				lost = true
			}
		}
		if lost {
			t.FailNow()
		}
	})
}
