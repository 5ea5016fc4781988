package coordinator

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// Scan reads a table's partitions in token order at a consistency level.
// In a cluster every live node scans what it holds, and the answers merge
// (rows by their cells' timestamps); a node whose answer was cut by the
// limit bounds how far the merged answer is complete, and the scan asks
// again after that point until the limit is met or every node is done.
func (c *Coordinator) Scan(t *schema.Table, r request.RangeRead) ([]*request.Partition, error) {
	c.Stats.Ranges.Add(1)
	defer c.timed(c.Stats.Latency.Range, c.cfg.Now(), c.Stats.TableLatency(t.ID).Range)
	parts, err := c.scan(t, r)
	return parts, c.count(err)
}

func (c *Coordinator) scan(t *schema.Table, q request.RangeRead) ([]*request.Partition, error) {
	if schema.IsNodeLocal(t.Keyspace) {
		parts, err := c.cfg.Engine.Scan(t.ID, q)
		if err != nil {
			return nil, c.failedHere(err, request.ReadLevel(q.Consistency))
		}
		return parts, nil
	}
	m := c.cfg.Ring()
	alive := c.alive()
	if err := c.checkRangeAvailable(t, q, m, alive); err != nil {
		return nil, err
	}
	if c.cfg.Network == nil {
		parts, err := c.cfg.Engine.Scan(t.ID, q)
		if err != nil {
			return nil, c.failedHere(err, request.ReadLevel(q.Consistency))
		}
		return parts, nil
	}
	var nodes []ring.Endpoint
	for _, e := range m.Endpoints() {
		if alive(e) {
			nodes = append(nodes, e)
		}
	}
	var out []*request.Partition
	rows, want := 0, q.Limit
	for {
		if want > 0 {
			q.Limit = want - rows
		}
		merged, bound, err := c.scanRound(t, q, nodes)
		if err != nil {
			return nil, err
		}
		for _, p := range merged {
			out = append(out, p)
			rows += len(p.Rows)
		}
		if bound == nil || (want > 0 && rows >= want) {
			return out, nil
		}
		// The partition where an answer stopped may go on past it: it is
		// read whole (up to what the limits leave), then the scan goes on
		// after it.
		pr := request.PartitionRead{Key: bound, Slice: request.Slice{Limit: want - rows, Now: q.Now}, Consistency: q.Consistency}
		if q.PerPartitionLimit > 0 && (pr.Limit <= 0 || q.PerPartitionLimit < pr.Limit) {
			pr.Limit = q.PerPartitionLimit
		}
		if want <= 0 && q.PerPartitionLimit <= 0 {
			pr.Limit = 0
		}
		p, err := c.ReadPartition(t, pr)
		if err != nil {
			return nil, err
		}
		if p != nil && (len(p.Rows) > 0 || p.Static != nil) {
			out = append(out, p)
			rows += len(p.Rows)
		}
		if want > 0 && rows >= want {
			return out, nil
		}
		q.After = bound
	}
}

// checkRangeAvailable refuses a scan when the replicas alive of any
// range of the ring cannot meet its level.
func (c *Coordinator) checkRangeAvailable(t *schema.Table, q request.RangeRead, m *ring.Metadata, alive func(ring.Endpoint) bool) error {
	l := request.ReadLevel(q.Consistency)
	look := c.current()
	for _, tok := range m.SortedTokens() {
		p, err := look.place(t, tok, m, c.cfg.Self)
		if err != nil {
			return err
		}
		if err := CheckAvailable(l, p.strategy, c.cfg.DataCenter, p.replicas, nil, alive, m.Location); err != nil {
			return err
		}
	}
	return nil
}

// scanRound asks every node for its part of a scan and merges the
// answers before bound, the first partition where a node's answer stopped
// at the limit (it may hold more from there on); bound is nil when no
// answer stopped short.
func (c *Coordinator) scanRound(t *schema.Table, q request.RangeRead, nodes []ring.Endpoint) (merged []*request.Partition, bound []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Range)
	defer cancel()
	answers := make([][]request.RawPartition, len(nodes))
	errs := make([]error, len(nodes))
	payload := encodeScan(t.ID, q)
	if q.Trace != nil {
		q.Trace.Eventf("Submitting range requests to %d nodes", len(nodes))
	}
	concurrently(len(nodes), func(i int) {
		if nodes[i] == c.cfg.Self {
			if q.Trace != nil {
				q.Trace.Eventf("Executing seq scan on %s", t.Name)
			}
			answers[i], errs[i] = c.cfg.Engine.ScanEntries(t.ID, q)
			return
		}
		c.Stats.ForwardedRanges.Add(1)
		out, err := c.request(ctx, q.Trace, nodes[i], messaging.VerbRangeRead, payload)
		if err == nil {
			answers[i], err = decodeRawPartitions(out)
		}
		errs[i] = err
	})
	if err := c.rangeFailure(q, nodes, errs); err != nil {
		return nil, nil, err
	}
	part := c.cfg.Engine.Partitioner()
	order := func(a, b []byte) int {
		if c := partitioner.Compare(part.Token(a), part.Token(b)); c != 0 {
			return c
		}
		return bytes.Compare(a, b)
	}
	resolve := func(key []byte, entries []mutation.Entry) (*request.Partition, error) {
		return c.cfg.Engine.Resolve(key, entries, request.Slice{Limit: q.PerPartitionLimit, Now: q.Now})
	}
	// The merged answer is complete before the smallest last key of the
	// answers the limit cut.
	if q.Limit > 0 {
		for _, a := range answers {
			rows := 0
			for _, rp := range a {
				p, err := resolve(rp.Key, rp.Entries)
				if err != nil {
					return nil, nil, err
				}
				rows += len(p.Rows)
			}
			if rows >= q.Limit && len(a) > 0 {
				if last := a[len(a)-1].Key; bound == nil || order(last, bound) < 0 {
					bound = last
				}
			}
		}
	}
	byKey := map[string][][]mutation.Entry{}
	var keys [][]byte
	for _, a := range answers {
		for _, rp := range a {
			if bound != nil && order(rp.Key, bound) >= 0 {
				continue
			}
			if _, ok := byKey[string(rp.Key)]; !ok {
				keys = append(keys, rp.Key)
			}
			byKey[string(rp.Key)] = append(byKey[string(rp.Key)], rp.Entries)
		}
	}
	slices.SortFunc(keys, order)
	rows := 0
	for _, k := range keys {
		// The replicas' entries merge with the one reconcile, so a
		// deletion one replica holds hides what a stale one still has.
		p, err := resolve(k, mergeEntries(byKey[string(k)]))
		if err != nil {
			return nil, nil, err
		}
		if p.IsEmpty() {
			continue
		}
		if q.Limit > 0 && rows+len(p.Rows) > q.Limit {
			p.Rows = p.Rows[:q.Limit-rows]
		}
		rows += len(p.Rows)
		merged = append(merged, p)
		if q.Limit > 0 && rows >= q.Limit {
			return merged, nil, nil
		}
	}
	return merged, bound, nil
}

// rangeFailure is a scan round's failure as a client gets it: a timeout
// when a node did not answer in time, a read failure naming the nodes that
// failed, or this node's own error.
func (c *Coordinator) rangeFailure(q request.RangeRead, nodes []ring.Endpoint, errs []error) error {
	received := 0
	var failed []request.ReplicaFailed
	timedOut := false
	for i, err := range errs {
		switch {
		case err == nil:
			received++
		case nodes[i] == c.cfg.Self && failureReason(err) == request.ReasonUnknown:
			return err
		case errors.Is(err, messaging.ErrTimeout):
			timedOut = true
		default:
			failed = append(failed, request.ReplicaFailed{Replica: string(nodes[i]), Reason: failureReason(err)})
		}
	}
	l := request.ReadLevel(q.Consistency)
	switch {
	case timedOut:
		return &request.ReadTimeout{Consistency: l, Received: received, BlockFor: len(nodes), DataPresent: received > 0}
	case len(failed) > 0:
		return &request.Failure{Consistency: l, Received: received, BlockFor: len(nodes), Failures: failed, DataPresent: received > 0, Port: c.cfg.StoragePort}
	}
	return nil
}

// Truncate removes every row of a table: in a cluster on every node of
// the ring, as Cassandra does, only when all are up (else Unavailable at
// ALL), each asked to truncate its copy, this node's last.
func (c *Coordinator) Truncate(t *schema.Table) error {
	if c.cfg.Network == nil || schema.IsNodeLocal(t.Keyspace) {
		return c.truncateHere(t.ID)
	}
	m := c.cfg.Ring()
	alive := c.alive()
	var peers []ring.Endpoint
	up := 0
	for _, e := range m.Endpoints() {
		if alive(e) {
			up++
		}
		if e != c.cfg.Self {
			peers = append(peers, e)
		}
	}
	if up < len(m.Endpoints()) {
		return c.count(&request.Unavailable{Consistency: request.All, Required: len(m.Endpoints()), Alive: up})
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Truncate)
	defer cancel()
	errs := make([]error, len(peers))
	concurrently(len(peers), func(i int) {
		_, errs[i] = c.cfg.Network.Request(ctx, string(peers[i]), messaging.VerbTruncate, t.ID[:])
	})
	if err := errors.Join(errs...); err != nil {
		return &request.TruncateFailure{Err: err}
	}
	return c.truncateHere(t.ID)
}

// truncateHere removes every row of a table here, and the shards of its
// counters this node remembers (the next increment reads them again),
// with no increment led here in between.
func (c *Coordinator) truncateHere(id mutation.TableID) error {
	return c.counters.truncate(id, func() error { return c.cfg.Engine.Truncate(id) })
}
