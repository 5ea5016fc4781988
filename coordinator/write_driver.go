package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/tracing"
)

// Apply writes mutations at a consistency level: each goes to every live
// replica of its partition (a hint is kept for each one down), and counts
// once as many acknowledged as the level needs, from the data centres the
// level counts. If any partition's live replicas are too few, nothing is
// written (Unavailable). A partition whose replicas failed the write so
// that the level cannot be met fails it (WriteFailure); one short of
// acknowledgements after write_request_timeout times it out
// (WriteTimeout). Replicas that took it keep it either way.
// A traced write (tr not nil) records what it does.
func (c *Coordinator) Apply(ms []*mutation.Mutation, cl request.Consistency, tr *tracing.Trace) error {
	c.Stats.Writes.Add(1)
	defer c.timedWrites(ms, c.cfg.Now())
	err := c.apply(ms, cl, tr)
	if c.caughtUp(err) {
		err = c.apply(ms, cl, tr) // by the ring the replica knew
	}
	return c.count(err)
}

type write struct {
	m     *mutation.Mutation
	p     placement
	epoch uint64 // of the ring p was chosen by
	// appliedHere says this node applied m already (a counter write's
	// leader): its share counts without being applied again.
	appliedHere bool
	trace       *tracing.Trace
}

func (c *Coordinator) apply(ms []*mutation.Mutation, l request.Consistency, tr *tracing.Trace) error {
	writes, err := c.planWrites(ms, l, tr)
	if err != nil {
		return err
	}
	writeType := request.WriteSimple
	if len(ms) > 1 {
		writeType = request.WriteUnloggedBatch
	}
	return c.writeAll(writes, l, writeType)
}

// planWrites places each mutation by the ring as it is and checks that
// its live replicas can meet level l: if any partition's are too few,
// nothing is written (Unavailable).
func (c *Coordinator) planWrites(ms []*mutation.Mutation, l request.Consistency, tr *tracing.Trace) ([]write, error) {
	tr.Event("Determining replicas for mutation")
	m := c.cfg.Ring()
	alive := c.alive()
	look := c.current()
	writes := make([]write, 0, len(ms))
	for _, mu := range ms {
		p, err := c.placeWrite(look, m, mu)
		if err != nil {
			return nil, err
		}
		// ANY is never unavailable: a hint counts as the write.
		if l != request.Any {
			if err := CheckAvailable(l, p.strategy, c.cfg.DataCenter, p.replicas, p.pending, alive, m.Location); err != nil {
				return nil, err
			}
		}
		writes = append(writes, write{m: mu, p: p, epoch: m.Epoch(), trace: tr})
	}
	return writes, nil
}

// writeAll sends planned writes to their replicas at once and waits for
// each to meet level l; failures are reported with writeType.
func (c *Coordinator) writeAll(writes []write, l request.Consistency, writeType string) error {
	alive, locate := c.alive(), c.cfg.Ring().Location
	if len(writes) == 1 {
		return c.writeReplicas(writes[0], l, alive, locate, writeType)
	}
	errs := make([]error, len(writes))
	concurrently(len(writes), func(i int) {
		errs[i] = c.writeReplicas(writes[i], l, alive, locate, writeType)
	})
	return errors.Join(errs...)
}

// placeWrite is where mutation mu goes by ring m: its replicas, and the
// nodes being given its range.
func (c *Coordinator) placeWrite(look *lookups, m *ring.Metadata, mu *mutation.Mutation) (placement, error) {
	t := look.tables[mu.Table]
	if t == nil {
		return placement{}, fmt.Errorf("coordinator: a write to an unknown table %x", mu.Table)
	}
	tok := c.cfg.Engine.Partitioner().Token(mu.Key)
	p, err := look.place(t, tok, m, c.cfg.Self)
	if err != nil {
		return placement{}, err
	}
	p.pending = m.Pending(p.strategy, tok)
	return p, nil
}

// resend follows a replica's refusal of write w as routed by an older
// ring once the level was met (the write is not sent again as a whole):
// once this node knows the ring the replica does, the write goes to the
// nodes that ring places it on that w did not reach, the refuser among
// them if it still is one (a node being given the range, which the old
// ring did not name, would otherwise lack it for good); a send that fails
// leaves a hint. Without that ring it is hinted to the refuser.
func (c *Coordinator) resend(w write, refuser ring.Endpoint, stale *StaleRing) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
	defer cancel()
	if c.cfg.CatchUp == nil || c.cfg.CatchUp(ctx, stale.Epoch) != nil {
		c.hint(refuser, w.m)
		return
	}
	m := c.cfg.Ring()
	p, err := c.placeWrite(c.current(), m, w.m)
	if err != nil {
		c.hint(refuser, w.m)
		return
	}
	payload := appendMutations(fenced(m.Epoch()), []*mutation.Mutation{w.m})
	for _, e := range slices.Concat(p.replicas, p.pending) {
		if e == c.cfg.Self || e != refuser && (slices.Contains(w.p.replicas, e) || slices.Contains(w.p.pending, e)) {
			continue // it took the write, or was hinted it
		}
		if err := c.send(ctx, nil, e, w.m, payload); err != nil {
			c.hint(e, w.m)
		}
	}
}

// concurrently runs do(0) ... do(count-1) at once and returns when all
// have: one runs on the caller's goroutine, since there is nothing to
// overlap it with.
func concurrently(count int, do func(i int)) {
	if count == 1 {
		do(0)
		return
	}
	var wg sync.WaitGroup
	for i := range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(i)
		}()
	}
	wg.Wait()
}

// send applies mu on replica r: here, or through the network with
// payload, mu's encoding fenced by its ring's epoch (which this node's
// own write does not need). A replica that knows a later ring answers
// StaleRing.
func (c *Coordinator) send(ctx context.Context, tr *tracing.Trace, r ring.Endpoint, mu *mutation.Mutation, payload []byte) error {
	if r == c.cfg.Self {
		return c.applyHere(tr, []*mutation.Mutation{mu})
	}
	c.Stats.ForwardedMutations.Add(1)
	_, err := c.request(ctx, tr, r, messaging.VerbMutation, payload)
	if stale, ok := staleRingOf(err); ok {
		return stale
	}
	return err
}

// writeReplicas sends one mutation to its live replicas (this node's
// share applied here) and waits for the level's acknowledgements. Every
// request ends by the deadline (the network times it out), so the wait
// is for the answers alone: a write whose acknowledgements are in never
// reports a timeout.
func (c *Coordinator) writeReplicas(w write, l request.Consistency, alive func(ring.Endpoint) bool, locate func(ring.Endpoint) ring.Location, writeType string) error {
	self, mu := c.cfg.Self, w.m
	if len(w.p.replicas) == 1 && w.p.replicas[0] == self && len(w.p.pending) == 0 {
		if w.appliedHere {
			return nil
		}
		return c.applyHere(w.trace, []*mutation.Mutation{mu})
	}
	var targets []ring.Endpoint
	for _, group := range [...][]ring.Endpoint{w.p.replicas, w.p.pending} {
		for _, r := range group {
			if alive(r) {
				targets = append(targets, r)
			} else if c.cfg.Network != nil {
				c.hint(r, mu) // it gets the write when it is back
			}
		}
	}
	if len(targets) == 0 && l == request.Any {
		return nil // the hints are the write
	}
	acks := NewAcks(l, w.p.strategy, c.cfg.DataCenter, targets, w.p.pending, locate)
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
	payload := appendMutations(fenced(w.epoch), []*mutation.Mutation{mu})
	type answer struct {
		from ring.Endpoint
		err  error
	}
	writeTo := func(r ring.Endpoint) answer {
		if r == self && w.appliedHere {
			return answer{r, nil}
		}
		err := c.send(ctx, w.trace, r, mu, payload)
		if err != nil && r != self && !isStale(err) {
			c.hint(r, mu) // it failed the write, or did not answer in time
		}
		return answer{r, err}
	}
	results := make(chan answer, len(targets))
	var sent sync.WaitGroup
	local := false
	for _, r := range targets {
		if r == self {
			local = true
			continue
		}
		sent.Add(1)
		c.background.Go(func() {
			defer sent.Done()
			results <- writeTo(r)
		})
	}
	// The replicas still on their way get the write after this returns;
	// the context ends when they have answered or timed out.
	go func() { sent.Wait(); cancel() }()
	tally := writeTally{acks: acks}
	// take counts one answer: done when the level is met, or with the
	// failure to report once it no longer can be.
	take := func(a answer) (done bool, err error) {
		if stale, ok := a.err.(*StaleRing); ok {
			return true, stale // sent again by the replica's ring
		}
		done, failed := tally.take(a.from, a.err)
		if failed {
			return true, c.writeFailure(acks, l, tally.failed, writeType)
		}
		return done, nil
	}
	remote, taken := len(targets), 0
	// settle returns the write's outcome, once known before every answer
	// came: the rest are read in the background, and a refusal among them
	// by a replica that knows a later ring is sent on by that ring
	// (resend), unless the outcome is such a refusal itself (the caller
	// then sends the whole write again).
	settle := func(err error) error {
		if left := remote - taken; left > 0 && !isStale(err) {
			c.background.Go(func() {
				for range left {
					if a := <-results; isStale(a.err) {
						c.resend(w, a.from, a.err.(*StaleRing))
					}
				}
			})
		}
		return err
	}
	if local {
		// This node's share is written on this goroutine and counted
		// before any other answer, so that what a failure reports does
		// not depend on which answer came first.
		remote--
		if done, err := take(writeTo(self)); done {
			return settle(err)
		}
	}
	for range remote {
		taken++
		if done, err := take(<-results); done {
			return settle(err)
		}
	}
	if tally.failedOnly() {
		return c.writeFailure(acks, l, tally.failed, writeType)
	}
	return acks.Timeout(writeType)
}

// writeTally counts the answers of a write's replicas towards its level,
// keeping those that failed it.
type writeTally struct {
	acks     *Acks
	failed   []request.ReplicaFailed
	timedOut bool
}

// take counts one replica's answer (err nil: it took the write) and
// reports whether the write is done: the level met, or (failed) out of
// reach through replicas that failed it, none having timed out.
func (w *writeTally) take(from ring.Endpoint, err error) (done, failed bool) {
	if w.acks.Ack(from, err == nil) {
		return true, false
	}
	if err != nil {
		if errors.Is(err, messaging.ErrTimeout) {
			w.timedOut = true
		} else {
			w.failed = append(w.failed, request.ReplicaFailed{Replica: string(from), Reason: request.ReasonUnknown})
		}
	}
	if w.acks.Hopeless() && !w.timedOut {
		return true, true
	}
	return false, false
}

// failedOnly reports whether a write that every replica answered without
// meeting its level failed (rather than timed out).
func (w *writeTally) failedOnly() bool { return len(w.failed) > 0 && !w.timedOut }

func (c *Coordinator) writeFailure(acks *Acks, l request.Consistency, failed []request.ReplicaFailed, writeType string) error {
	return &request.Failure{Write: true, Consistency: l, Received: acks.Received(), BlockFor: acks.BlockFor(),
		Failures: sortedFailures(failed), WriteType: writeType, Port: c.cfg.StoragePort}
}

// sortedFailures are failures in replica order, whichever came first.
func sortedFailures(failed []request.ReplicaFailed) []request.ReplicaFailed {
	slices.SortFunc(failed, func(a, b request.ReplicaFailed) int { return strings.Compare(a.Replica, b.Replica) })
	return failed
}
