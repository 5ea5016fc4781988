package coordinator

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// TestStaleRingIsCaughtUp: a coordinator routing by an older ring than
// its replicas have applied is refused by them before they write; it
// catches up to their epoch and sends the write (and a read) again. A
// replica behind the coordinator catches up before it serves.
func TestStaleRingIsCaughtUp(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	rings := map[ring.Endpoint]*atomic.Pointer[ring.Metadata]{}
	var mu sync.Mutex
	caughtUp := map[ring.Endpoint][]uint64{}
	for e := range threeNodes {
		rings[e] = &atomic.Pointer[ring.Metadata]{}
		rings[e].Store(c.ring.WithEpoch(5))
		c.replicas[e] = New(Config{Self: e, DataCenter: "dc1", Engine: c.engines[e], Network: c,
			Alive: func(ring.Endpoint) bool { return true }, Ring: rings[e].Load,
			CatchUp: func(_ context.Context, epoch uint64) error {
				mu.Lock()
				caughtUp[e] = append(caughtUp[e], epoch)
				mu.Unlock()
				rings[e].Store(c.ring.WithEpoch(max(epoch, rings[e].Load().Epoch())))
				return nil
			},
			Schema: func() *schema.Schema { return c.schema }, StoragePort: 7000, Logger: zerolog.Nop(),
			Timeouts: Timeouts{Write: time.Second, Read: time.Second, Range: time.Second, Truncate: time.Second}, Now: c.clock})
		t.Cleanup(c.replicas[e].Settle)
	}
	rings["a"].Store(c.ring.WithEpoch(3)) // a has not applied the last two changes
	if err := c.write(c.replicas["a"], request.All); err != nil {
		t.Fatalf("a write through a coordinator behind its replicas: %v", err)
	}
	if got := caughtUp["a"]; len(got) != 1 || got[0] != 5 {
		t.Fatalf("the coordinator caught up to %v, want [5]", got)
	}
	// The replicas that refused wrote nothing the first time; the
	// coordinator wrote its own share each time (the same cells).
	for e, want := range map[ring.Endpoint]int{"a": 2, "b": 1, "c": 1} {
		if n := c.engines[e].writes(); n != want {
			t.Fatalf("replica %s took %d writes, want %d", e, n, want)
		}
	}
	rings["a"].Store(c.ring.WithEpoch(4))
	if err := c.read(c.replicas["a"], request.All); err != nil {
		t.Fatalf("a read through a coordinator behind its replicas: %v", err)
	}
	if got := caughtUp["a"]; len(got) != 2 || got[1] != 5 {
		t.Fatalf("the coordinator caught up to %v, want [5 5]", got)
	}
	// Now b is behind the coordinator: it catches up, then serves. What
	// the read left running (a request routed by epoch 4, still on its
	// way under the race detector) ends first, or b would catch up to it.
	for _, r := range c.replicas {
		r.Settle()
	}
	rings["b"].Store(c.ring.WithEpoch(2))
	if err := c.write(c.replicas["a"], request.All); err != nil {
		t.Fatal(err)
	}
	if got := caughtUp["b"]; len(got) != 1 || got[0] != 5 {
		t.Fatalf("the replica behind caught up to %v, want [5]", got)
	}
	// A request without its epoch is refused.
	if _, err := c.replicas["b"].Handlers()[messaging.VerbMutation](context.Background(), "test", nil); err == nil {
		t.Fatal("a mutation without a ring epoch was taken")
	}
	// The refusal comes back over messaging as a remote failure, and is
	// still recognised.
	stale, ok := staleRingOf(&messaging.RemoteError{Peer: "b", Verb: messaging.VerbMutation, Message: (&StaleRing{Epoch: 9}).Error()})
	if !ok || stale.Epoch != 9 {
		t.Fatalf("a StaleRing through messaging: %v %v", stale, ok)
	}
	if _, ok := staleRingOf(errors.New("some other failure")); ok {
		t.Fatal("another failure taken for a stale ring")
	}
}

// TestStaleRefusalOnceTheLevelIsMetIsHinted: a replica that refuses a
// write routed by an older ring after the level was met (the write is
// not sent again) gets it as a hint.
func TestStaleRefusalOnceTheLevelIsMetIsHinted(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	ahead := c.ring.WithEpoch(7)
	c.replicas["c"] = c.coordinator("c", "dc1", time.Second, func(cfg *Config) { cfg.Ring = func() *ring.Metadata { return ahead } })
	co := c.replicas["a"]
	if err := c.write(co, request.One); err != nil {
		t.Fatal(err)
	}
	co.Settle()
	if n := c.engines["c"].writes(); n != 0 || !co.cfg.Hints.Has("c") || co.cfg.Hints.Has("b") {
		t.Fatalf("the replica ahead took %d writes; hints for it: %v, for b: %v", n, co.cfg.Hints.Has("c"), co.cfg.Hints.Has("b"))
	}
}

// TestHintsDeliveredBeforeTheRingIsKnown: a node that hears a replica is
// up before it has a ring (it is starting) delivers its hints, throttled,
// without a ring to divide the throttle by.
func TestHintsDeliveredBeforeTheRingIsKnown(t *testing.T) {
	c := newTestCluster(t, schema.Replication{Class: schema.SimpleStrategy, Factor: 3}, threeNodes)
	var known atomic.Bool
	co := c.coordinator("a", "dc1", time.Second, func(cfg *Config) {
		cfg.Ring = func() *ring.Metadata {
			if known.Load() {
				return c.ring
			}
			return nil
		}
		cfg.HintedHandoff.Throttle = 1 << 20
	})
	known.Store(true)
	c.set(silent, "b")
	if err := c.write(co, request.One); err != nil {
		t.Fatal(err)
	}
	co.Settle()
	if !co.cfg.Hints.Has("b") {
		t.Fatal("no hint kept for the silent replica")
	}
	c.set(answers, "b")
	known.Store(false)
	co.ReplicaUp("b")
	co.Settle()
	if co.cfg.Hints.Has("b") || c.engines["b"].writes() != 1 {
		t.Fatalf("hints delivered without a ring: still held %v, replica took %d writes", co.cfg.Hints.Has("b"), c.engines["b"].writes())
	}
}

// TestStaleRefusalOnceTheLevelIsMetReachesTheNewReplicas: a write routed
// by a ring without a joining node meets its level before a replica that
// knows the ring with it refuses; the coordinator catches up and sends the
// write on to the refuser and to the joining node, which the first
// routing did not name.
func TestStaleRefusalOnceTheLevelIsMetReachesTheNewReplicas(t *testing.T) {
	c, full, current, joining := joiningCluster(t)
	s := ring.SimpleStrategy{Factor: 3}
	oldRing, newRing := current.WithEpoch(1), current.WithFuture(full).WithEpoch(2)
	c.ring = oldRing
	old := s.Replicas(current, partitioner.Murmur3().Token(cqltype.EncodeInt(1)))
	self, refuser := old[0], old[1]
	c.replicas[refuser] = c.coordinator(refuser, "dc1", time.Second, func(cfg *Config) { cfg.Ring = func() *ring.Metadata { return newRing } })
	var mine atomic.Pointer[ring.Metadata]
	mine.Store(oldRing)
	co := c.coordinator(self, "dc1", time.Second, func(cfg *Config) {
		cfg.Ring = mine.Load
		cfg.CatchUp = func(context.Context, uint64) error { mine.Store(newRing); return nil }
	})
	if err := c.write(co, request.One); err != nil {
		t.Fatal(err)
	}
	co.Settle()
	if c.engines[joining].writes() != 1 || c.engines[refuser].writes() != 1 || co.cfg.Hints.Has(string(refuser)) || co.cfg.Hints.Has(string(joining)) {
		t.Fatalf("after the refusal: the joining node took %d writes, the refuser %d (hints for them: %v, %v)",
			c.engines[joining].writes(), c.engines[refuser].writes(), co.cfg.Hints.Has(string(joining)), co.cfg.Hints.Has(string(refuser)))
	}
}
