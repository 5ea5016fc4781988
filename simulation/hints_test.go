package simulation

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/mutation/request"
)

// The writes a replica missed while it was down all reach it as hints
// once it is back, though the link to it drops in the middle of the
// delivery (which then goes on, throttled, from where it stopped), with no
// read to repair them.
func TestHintsDeliveredAcrossADroppedLink(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c, err := New(Config{Seed: 7, Handoff: hintsThrottled, Nodes: []NodeConfig{
			{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"},
			{Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		first, down := c.Node("127.0.0.1"), c.Node("127.0.0.3")
		for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
			"CREATE TABLE ks.kv (k int PRIMARY KEY, v text)"} {
			if _, err := first.Exec(stmt, request.One); err != nil {
				t.Fatal(err)
			}
		}
		if err := down.Crash(); err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		const rows = 1000
		for k := range rows {
			if _, err := first.Exec(fmt.Sprintf("INSERT INTO ks.kv (k, v) VALUES (%d, 'value %0100d')", k, k), request.One); err != nil {
				t.Fatal(err)
			}
		}
		if err := down.Restart(); err != nil {
			t.Fatal(err)
		}
		// At 8 KiB a second (4 KiB from each of the two others), the
		// hints take half a minute: the link drops while they go.
		for first.coord.Stats.HintsDelivered.Load() == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if got := first.coord.Stats.HintsDelivered.Load(); got >= rows {
			t.Fatalf("%d hints delivered before the cut, want some of %d", got, rows)
		}
		c.Cut(first.Name, down.Name)
		// Longer than the next page waits for the throttle: it is sent
		// into the cut, and its tries run out.
		time.Sleep(40 * time.Second)
		c.Heal()
		deadline := time.Now().Add(2 * time.Minute)
		for first.hints.Has(string(down.Name)) && time.Now().Before(deadline) {
			time.Sleep(time.Second)
		}
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		res, err := exec.NewSession(localOnly{down}).QueryText("SELECT count(*) FROM ks.kv", exec.QueryParams{Consistency: request.One})
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(binary.BigEndian.Uint64(res.Rows[0][0])); got != rows || first.hints.Has(string(down.Name)) {
			t.Fatalf("the node that was down holds %d of %d rows; hints left for it: %v", got, rows, first.hints.Has(string(down.Name)))
		}
		delivered := first.coord.Stats.HintsDelivered.Load()
		if delivered < rows || delivered > rows+rows/4 {
			t.Fatalf("%d hints delivered for %d writes: a delivery resumes after the last page taken, so it resends at most a page whose answer was lost", delivered, rows)
		}
	})
}

var hintsThrottled = coordinator.HintedHandoff{Throttle: 8 << 10}
