package coordinator

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// ReadPartition reads a slice of one partition at a consistency level.
// The replicas alive must meet the level (else Unavailable). As many as
// it needs are asked, from the data centres it counts, this node first:
// one for the data, the others for a digest of theirs. Only when the
// digests differ does everyone's data come, to be merged and the stale
// replicas repaired before the answer is given. A replica that fails is
// replaced by a spare live one; with none left the read fails
// (ReadFailure), and one with too few answers by read_request_timeout
// times out (ReadTimeout). A read at SERIAL or LOCAL_SERIAL runs a Paxos
// round instead (serialRead).
func (c *Coordinator) ReadPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	if r.Consistency.IsSerial() {
		defer c.timed(c.Stats.Latency.CASRead, c.cfg.Now(), nil)
		p, err := c.serialRead(t, r)
		return p, c.count(err)
	}
	c.Stats.Reads.Add(1)
	defer c.timed(c.Stats.Latency.Read, c.cfg.Now(), c.Stats.TableLatency(t.ID).Read)
	p, err := c.readPartition(t, r)
	if c.caughtUp(err) {
		p, err = c.readPartition(t, r) // by the ring the replica knew
	}
	return p, c.count(err)
}

// readHere reads the partition from this node alone, the one replica the
// level needs; a read this node gives up is a ReadFailure as a remote
// replica's would be.
func (c *Coordinator) readHere(t *schema.Table, r request.PartitionRead, l request.Consistency) (*request.Partition, error) {
	traceLocalRead(r.Trace, t)
	p, err := c.cfg.Engine.Read(t.ID, r.Key, r.Slice)
	if err != nil {
		return nil, c.failedHere(err, l)
	}
	return p, nil
}

// failedHere is this node's failure of a read it alone answers: a
// ReadFailure when it gave the read up for a reason the protocol names,
// else the error itself.
func (c *Coordinator) failedHere(err error, l request.Consistency) error {
	if reason := failureReason(err); reason != request.ReasonUnknown {
		return &request.Failure{Consistency: l, BlockFor: 1, Port: c.cfg.StoragePort,
			Failures: []request.ReplicaFailed{{Replica: string(c.cfg.Self), Reason: reason}}}
	}
	return err
}

// failureReason is why a replica failed a request, as the protocol names
// it, from its error here or its message from afar.
func failureReason(err error) request.FailureReason {
	if err == nil {
		return request.ReasonUnknown
	}
	var tombstones *request.TombstoneOverwhelming
	if errors.As(err, &tombstones) {
		return request.ReasonTooManyTombstones
	}
	var remote *messaging.RemoteError
	if errors.As(err, &remote) && strings.Contains(remote.Message, request.TombstoneOverwhelmingPrefix) {
		return request.ReasonTooManyTombstones
	}
	return request.ReasonUnknown
}

// readPlan is one partition read's replicas and level.
type readPlan struct {
	t        *schema.Table
	r        request.PartitionRead
	l        request.Consistency
	strategy ring.Strategy
	locate   func(ring.Endpoint) ring.Location
	blockFor int
	epoch    uint64 // of the ring the replicas were chosen by
	// speculate says the read asks one more replica, a spare, once it has
	// waited speculateAfter for those it asked (the table's
	// speculative_retry).
	speculate      bool
	speculateAfter time.Duration
}

func (c *Coordinator) readPartition(t *schema.Table, r request.PartitionRead) (*request.Partition, error) {
	l := request.ReadLevel(r.Consistency)
	m := c.cfg.Ring()
	alive := c.alive()
	p, err := c.current().place(t, c.cfg.Engine.Partitioner().Token(r.Key), m, c.cfg.Self)
	if err != nil {
		return nil, err
	}
	if err := CheckAvailable(l, p.strategy, c.cfg.DataCenter, p.replicas, nil, alive, m.Location); err != nil {
		return nil, err
	}
	if c.cfg.Network == nil || len(p.replicas) == 1 && p.replicas[0] == c.cfg.Self {
		return c.readHere(t, r, l) // the only replica: nothing to choose or compare
	}
	contacts, spares := ReadContacts(l, p.strategy, c.cfg.DataCenter, c.cfg.Self, p.replicas, alive, m.Location, c.snitch.scorer(c.cfg.Now()))
	if len(contacts) == 1 && contacts[0] == c.cfg.Self {
		return c.readHere(t, r, l)
	}
	plan := readPlan{t: t, r: r, l: l, strategy: p.strategy, locate: m.Location, blockFor: BlockFor(l, p.strategy, c.cfg.DataCenter), epoch: m.Epoch()}
	// EACH_QUORUM counts its answers per data centre, which one more
	// replica from the spares would not keep.
	if _, each := eachQuorum(l, p.strategy); len(spares) > 0 && !each {
		plan.speculateAfter, plan.speculate = c.speculationWait(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Read)
	defer cancel()
	wantData := make([]bool, len(contacts))
	wantData[0] = true
	answered, answers, err := c.askReplicas(ctx, plan, contacts, wantData, spares)
	if err != nil {
		return nil, err
	}
	// Every answer with data is merged: a speculating read may have two,
	// when it asked a spare for the data the first replica had yet to send.
	var lists [][]mutation.Entry
	var dataFrom []ring.Endpoint
	for i, a := range answers {
		if a.data {
			lists, dataFrom = append(lists, a.entries), append(dataFrom, answered[i])
		}
	}
	if !digestsAgree(answers) {
		c.Stats.DigestMismatches.Add(1)
		if r.Trace != nil {
			r.Trace.Eventf("Digest mismatch: the replicas' answers for key %x differ; reading data from every replica asked", r.Key)
		}
		var digested []ring.Endpoint
		for i, a := range answers {
			if !a.data {
				digested = append(digested, answered[i])
			}
		}
		more := make([]bool, len(digested))
		for i := range more {
			more[i] = true
		}
		// This node, if it sent a digest, reads again: its warnings came
		// with the first read.
		again := plan
		again.r.Warnings = nil
		from, rest, err := c.askReplicas(ctx, again, digested, more, nil)
		if err != nil {
			return nil, err
		}
		dataFrom = append(dataFrom, from...)
		for _, a := range rest {
			lists = append(lists, a.entries)
		}
	}
	merged := mergeEntries(lists)
	res, err := c.cfg.Engine.Resolve(r.Key, merged, r.Slice)
	if err != nil {
		return nil, err
	}
	if len(lists) > 1 { // with one answer, or digests that agree, no replica is stale
		if err := c.repair(ctx, plan, dataFrom, lists, merged); err != nil {
			return nil, err
		}
	}
	if res.IsEmpty() {
		return nil, nil
	}
	return res, nil
}

// askReplicas asks each contact for its entries of the partition, or
// their digest where wantData says not, and returns who answered with
// what once as many as it asked have, data among them. A contact that
// fails is replaced by a spare; when the level is out of reach the read
// fails (ReadFailure), and when the context ends first it times out
// (ReadTimeout). A read that speculates asks one spare more once it has
// waited past the table's threshold, for the data if none came yet, and
// takes whichever answers come first.
func (c *Coordinator) askReplicas(ctx context.Context, plan readPlan, contacts []ring.Endpoint, wantData []bool, spares []ring.Endpoint) ([]ring.Endpoint, []readAnswer, error) {
	type reply struct {
		from   ring.Endpoint
		answer readAnswer // its data field says what it was asked for, answered or not
		err    error
	}
	replies := make(chan reply, len(contacts)+len(spares))
	// A read in the background may outlive the request: it takes no
	// client warnings.
	background := plan
	background.r.Warnings = nil
	outstanding := 0
	ask := func(r ring.Endpoint, data bool) {
		outstanding++
		c.background.Go(func() { // it may still run after a failure returns
			a, err := c.askReplica(ctx, background, r, data)
			replies <- reply{r, a, err}
		})
	}
	var (
		answered []ring.Endpoint
		answers  []readAnswer
		failed   []request.ReplicaFailed
		dataIn   bool
	)
	needed := len(contacts)
	failure := func() error {
		// As Cassandra, the failure is reported the moment the level is
		// out of reach, with the answers counted so far.
		return &request.Failure{Consistency: plan.l, Received: len(answered), BlockFor: plan.blockFor,
			Failures: sortedFailures(failed), DataPresent: dataIn, Port: c.cfg.StoragePort}
	}
	// take counts one reply: done with an error when the read can no
	// longer be met, or asking a spare in place of a failed contact.
	take := func(rep reply) error {
		switch {
		case rep.err == nil:
			answered, answers = append(answered, rep.from), append(answers, rep.answer)
			dataIn = dataIn || rep.answer.data
			return nil
		case isStale(rep.err):
			return rep.err // asked again by the replica's ring
		case errors.Is(rep.err, messaging.ErrTimeout):
			return &request.ReadTimeout{Consistency: plan.l, Received: len(answered), BlockFor: plan.blockFor, DataPresent: dataIn}
		}
		failed = append(failed, request.ReplicaFailed{Replica: string(rep.from), Reason: failureReason(rep.err)})
		var spare ring.Endpoint
		var ok bool
		if spare, spares, ok = spareFor(plan.l, plan.strategy, rep.from, spares, plan.locate); ok {
			// The spare takes the failed one's part: the data if it was
			// to send the data.
			ask(spare, rep.answer.data)
			return nil
		}
		if len(answered)+outstanding < needed { // a speculated ask may still cover it
			return failure()
		}
		return nil
	}
	speculate := func() {
		var spare ring.Endpoint
		var ok bool
		if spare, spares, ok = spareFor(plan.l, plan.strategy, contacts[0], spares, plan.locate); !ok {
			return
		}
		c.Stats.TableLatency(plan.t.ID).SpeculativeRetries.Add(1)
		if tr := plan.r.Trace; tr != nil {
			tr.Eventf("speculating read retry on %s", c.peerName(string(spare)))
		}
		ask(spare, !dataIn) // as Cassandra: the data, unless it came already
	}
	// The other contacts are asked first, then this node reads its own
	// on this goroutine, and its answer counts before any other: the
	// counts a failure reports do not depend on which came first.
	selfAt := -1
	for i, r := range contacts {
		if r == c.cfg.Self {
			selfAt = i
			continue
		}
		ask(r, wantData[i])
	}
	var speculated <-chan time.Time
	if plan.speculate && len(spares) > 0 {
		if plan.speculateAfter <= 0 {
			speculate() // ALWAYS: one more from the start
		} else {
			speculated = c.cfg.After(plan.speculateAfter)
		}
	}
	if selfAt >= 0 {
		a, err := c.askReplica(ctx, plan, c.cfg.Self, wantData[selfAt])
		if err := take(reply{c.cfg.Self, a, err}); err != nil {
			return nil, nil, err
		}
	}
	for len(answered) < needed || !dataIn {
		if outstanding == 0 { // every ask came back, and too few with answers
			return nil, nil, failure()
		}
		select {
		case rep := <-replies:
			outstanding--
			if err := take(rep); err != nil {
				return nil, nil, err
			}
		case <-speculated:
			speculated = nil
			speculate()
		}
	}
	return answered, answers, nil
}

// askReplica asks replica r for its entries of the partition (data), or
// for their digest; this node reads its own.
func (c *Coordinator) askReplica(ctx context.Context, plan readPlan, r ring.Endpoint, data bool) (readAnswer, error) {
	a := readAnswer{data: data}
	tr := plan.r.Trace
	if tr != nil {
		what := "digest"
		if data {
			what = "data"
		}
		tr.Eventf("reading %s from %s", what, c.peerName(string(r)))
	}
	if r == c.cfg.Self {
		traceLocalRead(tr, plan.t)
		es, err := c.cfg.Engine.ReadEntries(plan.t.ID, plan.r.Key, plan.r.Slice)
		if data {
			a.entries = es
		} else {
			a.digest = EntriesDigest(es)
		}
		return a, err
	}
	c.Stats.ForwardedReads.Add(1)
	start := c.cfg.Now()
	out, err := c.request(ctx, tr, r, messaging.VerbRead, appendRead(fenced(plan.epoch), plan.t.ID, plan.r, !data))
	if stale, ok := staleRingOf(err); ok {
		return a, stale
	}
	took := c.cfg.Now().Sub(start)
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		// A failure scores as the whole wait; a request given up because
		// the read was answered without it (a speculating read's loser)
		// only as the time it had taken.
		took = c.cfg.Timeouts.Read
	}
	c.snitch.record(r, took, c.cfg.Now())
	switch {
	case err != nil:
	case data:
		a.entries, err = decodeEntries(out)
	default:
		a.digest = out
	}
	return a, err
}

// repair sends each replica that answered with data what the merged
// answer has and its own lacked, and waits for them to apply it
// (blocking read repair, as Cassandra's default): a read at a level then
// sees what the next read at that level will. A replica that cannot be
// reached gets the repair as a hint; one that does not answer in time
// times the read out.
func (c *Coordinator) repair(ctx context.Context, plan readPlan, replicas []ring.Endpoint, answers [][]mutation.Entry, merged []mutation.Entry) error {
	tokenLen := c.cfg.Engine.Partitioner().TokenBytesLen()
	type fix struct {
		to ring.Endpoint
		mu *mutation.Mutation
	}
	var fixes []fix
	for i, r := range replicas {
		missing := missingEntries(answers[i], merged)
		if len(missing) == 0 {
			continue
		}
		mu, err := mutation.FromEntries(plan.t.ID, plan.r.Key, missing, tokenLen)
		if err != nil {
			return err
		}
		c.Stats.ReadRepairs.Add(1)
		fixes = append(fixes, fix{r, mu})
	}
	errs := make([]error, len(fixes))
	concurrently(len(fixes), func(i int) {
		var payload []byte // this node's own repair needs no encoding
		if fixes[i].to != c.cfg.Self {
			payload = appendMutations(fenced(plan.epoch), []*mutation.Mutation{fixes[i].mu})
		}
		tr := plan.r.Trace
		if tr != nil {
			tr.Eventf("Sending read-repair-mutation to %s", c.peerName(string(fixes[i].to)))
		}
		errs[i] = c.send(ctx, tr, fixes[i].to, fixes[i].mu, payload)
	})
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, messaging.ErrTimeout):
			return &request.ReadTimeout{Consistency: plan.l, Received: plan.blockFor - 1, BlockFor: plan.blockFor, DataPresent: true}
		case fixes[i].to == c.cfg.Self:
			return err
		default:
			c.hint(fixes[i].to, fixes[i].mu)
		}
	}
	return nil
}
