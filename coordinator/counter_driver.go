package coordinator

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/tracing"
)

// ApplyCounters writes mutations of counter tables at level l (counter.go):
// each partition's live replicas must meet the level (else Unavailable,
// before anything is sent); its leader (this node when it is a replica)
// turns the updates into its shards, applies them and replicates them,
// answering once the level is met. A write the leader does not answer
// within counter_write_request_timeout times out (type COUNTER): it may
// or may not have been applied, and trying it again may count it twice,
// as in Cassandra.
func (c *Coordinator) ApplyCounters(ms []*mutation.Mutation, l request.Consistency, tr *tracing.Trace) error {
	c.Stats.Writes.Add(1)
	c.Stats.CounterWrites.Add(1)
	defer c.timedWrites(ms, c.cfg.Now())
	writes, err := c.planWrites(ms, l, tr)
	if err != nil {
		return c.count(err)
	}
	errs := make([]error, len(writes))
	concurrently(len(writes), func(i int) { errs[i] = c.counterWrite(writes[i], l) })
	return c.count(errors.Join(errs...))
}

// counterWrite sends one partition's counter write to its leader, or leads
// it here.
func (c *Coordinator) counterWrite(w write, l request.Consistency) error {
	m := c.cfg.Ring()
	leader, ok := counterLeader(w.p.replicas, c.cfg.Self, c.cfg.DataCenter, c.alive(), m.Location, c.pick)
	if !ok {
		return &request.Unavailable{Consistency: l, Required: BlockFor(l, w.p.strategy, c.cfg.DataCenter), Alive: 0}
	}
	if leader == c.cfg.Self {
		return c.leadCounters(w.m, l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Counter)
	defer cancel()
	c.Stats.ForwardedCounterWrites.Add(1)
	out, err := c.request(ctx, w.trace, leader, messaging.VerbCounterMutation, appendCounterWrite(fenced(w.epoch), l, w.m))
	if stale, ok := staleRingOf(err); ok {
		// Refused before anything was applied: by the ring the leader
		// knows, once.
		if c.caughtUp(stale) {
			if again, perr := c.planWrites([]*mutation.Mutation{w.m}, l, w.trace); perr == nil {
				return c.counterWrite(again[0], l)
			}
		}
		return stale
	}
	// The leader unheard from: as Cassandra reports a forwarded counter
	// write, a write of one replica at ONE.
	switch {
	case errors.Is(err, messaging.ErrTimeout):
		return &request.WriteTimeout{Consistency: request.One, Received: 0, BlockFor: 1, WriteType: request.WriteCounter}
	case err != nil:
		return &request.Failure{Write: true, Consistency: request.One, BlockFor: 1,
			Failures: []request.ReplicaFailed{{Replica: string(leader), Reason: request.ReasonUnknown}}, WriteType: request.WriteCounter, Port: c.cfg.StoragePort}
	}
	outcome, err := decodeOutcome(out, c.cfg.StoragePort)
	if err != nil {
		return fmt.Errorf("coordinator: the counter leader %s answered: %w", leader, err)
	}
	return outcome
}

// leadCounters leads a counter write here: under the lock of each
// counter's stripe, its updates become this node's shards (its current
// shard from the counter cache, or read from its data) and are applied
// here; then they go to the other replicas, and the level is waited for
// with this node's share counted.
func (c *Coordinator) leadCounters(m *mutation.Mutation, l request.Consistency) error {
	look := c.current()
	t := look.tables[m.Table]
	if t == nil || !t.IsCounter() {
		return fmt.Errorf("coordinator: a counter write of table %s, which is no counter table here", m.Table)
	}
	var id mutation.CounterID
	if c.cfg.CounterID != nil {
		id = c.cfg.CounterID()
	}
	if id == (mutation.CounterID{}) {
		return fmt.Errorf("coordinator: this node has no counter id yet, and leads no counter write")
	}
	unlock := c.counters.lock(m.Table, m.Key)
	now := c.cfg.Now().Unix()
	read := func(clustering []byte, column string) ([]byte, error) {
		if s, ok := c.counters.get(m.Table, m.Key, clustering, column); ok {
			return mutation.CounterContext(s), nil
		}
		q := request.Slice{Now: now}
		if clustering != nil {
			q.Start, q.End = mutation.StartBound(clustering, true), mutation.EndBound(clustering, true)
		}
		p, err := c.cfg.Engine.Read(m.Table, m.Key, q)
		if err != nil || p == nil {
			return nil, err
		}
		row := p.Static
		if clustering != nil {
			row = nil
			if len(p.Rows) > 0 {
				row = p.Rows[0].Row
			}
		}
		if row == nil {
			return nil, nil
		}
		for _, cell := range row.Cells {
			if cell.Column == column && cell.Counter && cell.IsLive(now) {
				return cell.Value, nil
			}
		}
		return nil, nil
	}
	shards, err := m.CounterShards(id, read)
	if err == nil {
		err = c.cfg.Engine.Apply([]*mutation.Mutation{shards})
	}
	if err == nil {
		c.counters.remember(shards, id)
	}
	unlock()
	if err != nil {
		return err
	}
	p, err := c.placeWrite(look, c.cfg.Ring(), shards)
	if err != nil {
		return err
	}
	w := write{m: shards, p: p, epoch: c.cfg.Ring().Epoch(), appliedHere: true}
	err = c.writeReplicas(w, l, c.alive(), c.cfg.Ring().Location, request.WriteCounter)
	if c.caughtUp(err) {
		// A replica knows a later ring: the shards (applied here, and not
		// to be again) go to the nodes it places them on; written twice,
		// a shard is the same shard.
		if p, perr := c.placeWrite(look, c.cfg.Ring(), shards); perr == nil {
			w = write{m: shards, p: p, epoch: c.cfg.Ring().Epoch(), appliedHere: true}
			err = c.writeReplicas(w, l, c.alive(), c.cfg.Ring().Location, request.WriteCounter)
		}
	}
	if _, stale := staleRingOf(err); stale {
		// Applied here: no longer a refusal the coordinator may route
		// again (that would count the increment twice), but a write whose
		// level is unknown.
		err = &request.WriteTimeout{Consistency: l, BlockFor: BlockFor(l, p.strategy, c.cfg.DataCenter), WriteType: request.WriteCounter}
	}
	return err
}

// counterCache holds, by counter, the shard this node last wrote as its
// leader (Cassandra's counter cache), so that an increment need not read
// the counter; it is bounded, and its stripes' locks make a counter's
// increments here one at a time.
type counterCache struct {
	seed    maphash.Seed
	stripes [counterStripes]counterStripe
}

const (
	counterStripes          = 64
	countersCachedPerStripe = 1024
)

type counterStripe struct {
	mu     sync.Mutex
	shards map[counterKey]mutation.CounterShard
}

type counterKey struct {
	table                   mutation.TableID
	key, clustering, column string
}

func newCounterCache() *counterCache {
	cc := &counterCache{seed: maphash.MakeSeed()}
	for i := range cc.stripes {
		cc.stripes[i].shards = map[counterKey]mutation.CounterShard{}
	}
	return cc
}

func (cc *counterCache) stripe(key []byte) *counterStripe {
	return &cc.stripes[maphash.Bytes(cc.seed, key)%counterStripes]
}

// lock takes the stripe of a partition's counters, returning its unlock.
func (cc *counterCache) lock(table mutation.TableID, key []byte) func() {
	s := cc.stripe(key)
	s.mu.Lock()
	return s.mu.Unlock
}

// get is a counter's cached shard; its stripe's lock must be held.
func (cc *counterCache) get(table mutation.TableID, key, clustering []byte, column string) (mutation.CounterShard, bool) {
	s, ok := cc.stripe(key).shards[counterKey{table, string(key), string(clustering), column}]
	return s, ok
}

// remember caches the shards of id a leader wrote; the stripe's lock must
// be held.
func (cc *counterCache) remember(m *mutation.Mutation, id mutation.CounterID) {
	st := cc.stripe(m.Key)
	put := func(clustering []byte, r *mutation.Row) {
		if r == nil {
			return
		}
		for _, cell := range r.Cells {
			if s, ok := mutation.CounterShardOf(cell.Value, id); ok && cell.Counter {
				if len(st.shards) >= countersCachedPerStripe {
					for k := range st.shards {
						delete(st.shards, k)
						break
					}
				}
				st.shards[counterKey{m.Table, string(m.Key), string(clustering), cell.Column}] = s
			}
		}
	}
	put(nil, m.Static)
	for _, ru := range m.Rows {
		put(ru.Clustering, ru.Row)
	}
}

// truncate runs a table's truncation and forgets its counters with every
// stripe locked: an increment led here between the two would take a
// shard from before the truncation, bringing its count back.
func (cc *counterCache) truncate(table mutation.TableID, truncate func() error) error {
	for i := range cc.stripes {
		cc.stripes[i].mu.Lock()
	}
	defer func() {
		for i := range cc.stripes {
			cc.stripes[i].mu.Unlock()
		}
	}()
	err := truncate()
	for i := range cc.stripes {
		for k := range cc.stripes[i].shards {
			if k.table == table {
				delete(cc.stripes[i].shards, k)
			}
		}
	}
	return err
}

// counterHandlers are the counter verbs this node answers.
func (c *Coordinator) counterHandlers() map[messaging.Verb]messaging.Handler {
	return map[messaging.Verb]messaging.Handler{
		messaging.VerbCounterMutation: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			payload, err := c.admit(payload)
			if err != nil {
				return nil, err
			}
			l, m, err := decodeCounterWrite(payload)
			if err != nil {
				return nil, err
			}
			return encodeOutcome(c.leadCounters(m, l))
		},
	}
}
