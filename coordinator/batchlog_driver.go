package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// ApplyLogged writes a logged batch at consistency level l: when it
// writes more than one partition it goes through the batchlog, so that it
// is applied whole in the end even if this node dies half way. Every
// partition's live replicas must meet the level (else Unavailable, before
// anything is written); the batch is stored on one or two other nodes of
// this data centre (batchlogEndpoints; with none, Unavailable at TWO, or
// for ANY on this node), which must all take it before write_request_timeout
// (WriteTimeout of type BATCH_LOG); then every write is sent as Apply
// sends it (failures of type BATCH), and once each met the level the
// batch's holders are told to forget it. A batch they still hold two
// write timeouts after it was made is replayed (ReplayBatches).
func (c *Coordinator) ApplyLogged(ms []*mutation.Mutation, l request.Consistency, tr *tracing.Trace) error {
	look := c.current()
	keyspaceOf := func(id mutation.TableID) string {
		if t := look.tables[id]; t != nil {
			return t.Keyspace
		}
		return ""
	}
	if len(ms) == 0 || !spansPartitions(ms, keyspaceOf) {
		return c.Apply(ms, l, tr)
	}
	c.Stats.Writes.Add(1)
	c.Stats.LoggedBatches.Add(1)
	defer c.timedWrites(ms, c.cfg.Now())
	err := c.applyLogged(ms, l, tr)
	if c.caughtUp(err) {
		err = c.applyLogged(ms, l, tr) // by the ring the replica knew
	}
	return c.count(err)
}

func (c *Coordinator) applyLogged(ms []*mutation.Mutation, l request.Consistency, tr *tracing.Trace) error {
	writes, err := c.planWrites(ms, l, tr)
	if err != nil {
		return err
	}
	m := c.cfg.Ring()
	holders := batchlogEndpoints(m, c.cfg.Self, c.cfg.DataCenter, c.alive(), c.pick)
	if len(holders) == 0 {
		if l != request.Any {
			return &request.Unavailable{Consistency: request.Two, Required: 2, Alive: 0}
		}
		holders = []ring.Endpoint{c.cfg.Self}
	}
	now := c.cfg.Now()
	id := batchID(now.UnixMicro(), c.rand())
	if err := c.storeBatch(id, ms, holders); err != nil {
		return err
	}
	if err := c.writeAll(writes, l, request.WriteBatch); err != nil {
		return err // its holders replay it
	}
	c.background.Go(func() { c.removeBatch(id, now.UnixMicro(), holders) })
	return nil
}

// pick is a random index below n.
func (c *Coordinator) pick(n int) int { return int(c.rand() % uint64(n)) }

// storeBatch writes a batch to the batchlog of each of holders (this
// node's own directly) and waits until they all have it.
func (c *Coordinator) storeBatch(id []byte, ms []*mutation.Mutation, holders []ring.Endpoint) error {
	level := request.One
	if len(holders) > 1 {
		level = request.Two
	}
	tally := writeTally{acks: NewAcks(level, ring.SimpleStrategy{Factor: len(holders)}, c.cfg.DataCenter, holders, nil, c.cfg.Ring().Location)}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
	defer cancel()
	payload := appendBatch(nil, id, ms)
	type answer struct {
		from ring.Endpoint
		err  error
	}
	answers := make(chan answer, len(holders))
	for _, h := range holders {
		c.background.Go(func() {
			if h == c.cfg.Self {
				answers <- answer{h, c.keepBatch(id, ms)}
				return
			}
			_, err := c.cfg.Network.Request(ctx, string(h), messaging.VerbBatchStore, payload)
			answers <- answer{h, err}
		})
	}
	for range holders {
		a := <-answers
		done, failed := tally.take(a.from, a.err)
		if failed {
			return c.writeFailure(tally.acks, level, tally.failed, request.WriteBatchLog)
		}
		if done {
			return nil
		}
	}
	if tally.failedOnly() {
		return c.writeFailure(tally.acks, level, tally.failed, request.WriteBatchLog)
	}
	return tally.acks.Timeout(request.WriteBatchLog)
}

// keepBatch stores a batch in this node's batchlog.
func (c *Coordinator) keepBatch(id []byte, ms []*mutation.Mutation) error {
	micros, err := batchMicros(id)
	if err != nil {
		return err
	}
	record, err := batchRecord(id, ms, micros, c.cfg.Now().Unix())
	if err != nil {
		return err
	}
	return c.cfg.Engine.Apply([]*mutation.Mutation{record})
}

// removeBatch tells a batch's holders to forget it (this node directly),
// not waiting for it: one that does not hear replays the batch, which
// writes again what is there.
func (c *Coordinator) removeBatch(id []byte, madeAt int64, holders []ring.Endpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
	defer cancel()
	for _, h := range holders {
		if h == c.cfg.Self {
			c.forgetBatch(id, madeAt)
			continue
		}
		_, _ = c.cfg.Network.Request(ctx, string(h), messaging.VerbBatchRemove, id)
	}
}

// forgetBatch deletes a batch from this node's batchlog.
func (c *Coordinator) forgetBatch(id []byte, madeAt int64) {
	now := c.cfg.Now()
	if err := c.cfg.Engine.Apply([]*mutation.Mutation{batchRemoval(id, max(madeAt, now.UnixMicro()), now.Unix())}); err != nil {
		c.cfg.Logger.Warn().Err(err).Msg("coordinator: removing a batch from the batchlog; it will be replayed")
	}
}

// ReplayBatches replays the batches this node's batchlog has held for
// two write timeouts: their coordinator did not see them through (it
// died, or a write failed). Each mutation goes to every replica of its
// partition (hinted for those down or that fail), unless its table is
// gone or the batch is older than the table's gc_grace_seconds (its
// writes could bring back data deleted since); then the batch is
// forgotten. One replay runs at a time; the node runs it every 10 s.
func (c *Coordinator) ReplayBatches() {
	if !c.replaying.TryLock() {
		return
	}
	defer c.replaying.Unlock()
	now := c.cfg.Now()
	parts, err := c.cfg.Engine.Scan(schema.BatchesTable.ID, request.RangeRead{Now: now.Unix()})
	if err != nil {
		c.cfg.Logger.Warn().Err(err).Msg("coordinator: reading the batchlog")
		return
	}
	horizon := now.Add(-2 * c.cfg.Timeouts.Write).UnixMicro()
	for _, p := range parts {
		if len(p.Rows) == 0 {
			continue
		}
		cells, err := schema.BatchesTable.RowCells(p.Key, p.Rows[0].Clustering, p.Rows[0].Row, p.Static, now.Unix())
		if err != nil {
			c.cfg.Logger.Warn().Err(err).Msg("coordinator: a batchlog row that does not read")
			continue
		}
		b, err := readBatch(p.Key, cells)
		if err != nil {
			c.cfg.Logger.Warn().Err(err).Msg("coordinator: a batch that does not decode is dropped")
			c.forgetBatch(p.Key, now.UnixMicro())
			continue
		}
		if b.micros > horizon {
			continue // its coordinator may still be at it
		}
		if c.replayBatch(b, now) {
			c.Stats.BatchesReplayed.Add(1)
			c.forgetBatch(b.id, b.micros)
		}
	}
}

// replayBatch sends every mutation of a batch to its replicas and waits
// for their answers (or write_request_timeout); a replica down or failing
// gets a hint. It reports whether the batch is done with: false only when
// a mutation could not be placed, or this node failed its own share.
func (c *Coordinator) replayBatch(b storedBatch, now time.Time) bool {
	look := c.current()
	m := c.cfg.Ring()
	alive := c.alive()
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
	defer cancel()
	done := true
	for _, mu := range b.ms {
		t := look.tables[mu.Table]
		if t == nil || now.UnixMicro()-b.micros > int64(t.Options.GCGraceSeconds)*1e6 {
			continue // the table is gone, or its tombstones may be
		}
		p, err := c.placeWrite(look, m, mu)
		if err != nil {
			done = false
			continue
		}
		payload := appendMutations(fenced(m.Epoch()), []*mutation.Mutation{mu})
		targets := append(append([]ring.Endpoint(nil), p.replicas...), p.pending...)
		errs := make([]error, len(targets))
		concurrently(len(targets), func(i int) {
			r := targets[i]
			if r != c.cfg.Self && !alive(r) {
				c.hint(r, mu)
				return
			}
			errs[i] = c.send(ctx, nil, r, mu, payload)
			if errs[i] != nil && r != c.cfg.Self {
				c.hint(r, mu)
			}
		})
		for i, err := range errs {
			if err != nil && targets[i] == c.cfg.Self && !errors.Is(err, messaging.ErrTimeout) {
				done = false
			}
		}
	}
	return done
}

// batchlogHandlers are the batchlog's verbs this node answers.
func (c *Coordinator) batchlogHandlers() map[messaging.Verb]messaging.Handler {
	return map[messaging.Verb]messaging.Handler{
		messaging.VerbBatchStore: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			id, ms, err := decodeBatch(payload)
			if err != nil {
				return nil, err
			}
			return nil, c.keepBatch(id, ms)
		},
		messaging.VerbBatchRemove: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			micros, err := batchMicros(payload)
			if err != nil {
				return nil, err
			}
			c.forgetBatch(payload, micros)
			return nil, nil
		},
	}
}
