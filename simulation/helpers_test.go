package simulation

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sibyldb/sibyl/mutation/request"
)

// inBubble runs f in a synctest bubble, and then empties every sync.Pool:
// pebble's SSTable writer pools its write tasks with a channel made where
// the task was (writeTaskPool), and a task made in one bubble and taken
// in the next would end the test binary ("send on synctest channel from
// outside bubble"). Two collections drop a pool's items.
func inBubble(t *testing.T, f func(*testing.T)) {
	t.Helper()
	synctest.Test(t, f)
	runtime.GC()
	runtime.GC()
}

// newThreeNodes is a cluster of three nodes of one data centre, with a
// keyspace ks of replication 3 and the given table in it.
func newThreeNodes(seed uint64, createTable string) (*Cluster, error) {
	c, err := New(Config{Seed: seed, Nodes: []NodeConfig{
		{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}}})
	if err != nil {
		return nil, err
	}
	for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}", createTable} {
		if _, err := c.Nodes()[0].Exec(stmt, request.One); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// threeNodes is newThreeNodes, failing the test on an error.
func threeNodes(t *testing.T, seed uint64, createTable string) *Cluster {
	t.Helper()
	c, err := newThreeNodes(seed, createTable)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// delayLinks delays each link between two nodes by 1 to most
// milliseconds, drawn from r.
func delayLinks(c *Cluster, r *rand.Rand, most int) {
	for _, a := range c.Nodes() {
		for _, b := range c.Nodes() {
			if a != b {
				c.Delay(a.Name, b.Name, time.Duration(1+r.IntN(most))*time.Millisecond)
			}
		}
	}
}
