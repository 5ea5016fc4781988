package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// The Paxos rounds of lightweight transactions (see paxos.go): a
// coordinator's CAS and serial reads, and a replica's answers to the
// Paxos verbs.

// defaultRand is the coordinator's randomness when none is configured:
// ballots' ties and contention back-off.
func defaultRand() func() uint64 { return rand.Uint64 }

// CAS runs a conditional write of one partition of t (a lightweight
// transaction): a Paxos round at op.Serial reads the partition from a
// quorum of its replicas, op.Decide says whether the conditions hold, and
// if so the update is proposed and, once a quorum accepted it, committed
// at op.Commit. It returns whether the update applied and, when it did
// not, the partition as the round read it. Rounds beaten by another are
// tried again with randomized back-off until cas_contention_timeout;
// then the write times out (WriteTimeout of type CAS). A proposal that
// some replicas accepted, but not a quorum, before a later round got in
// ends with CASWriteUnknown: the later round may finish it.
func (c *Coordinator) CAS(t *schema.Table, op request.CAS) (*request.Partition, bool, error) {
	c.Stats.CASWrites.Add(1)
	defer c.timed(c.Stats.Latency.CASWrite, c.cfg.Now(), nil)
	cur, applied, err := c.cas(t, op)
	if err == nil && !applied {
		c.Stats.CASConditionNotMet.Add(1)
	}
	return cur, applied, c.count(err)
}

func (c *Coordinator) cas(t *schema.Table, op request.CAS) (*request.Partition, bool, error) {
	if len(op.Reads) == 0 || op.Decide == nil {
		return nil, false, fmt.Errorf("coordinator: a conditional write of %s that reads nothing or decides nothing", t)
	}
	start := time.Now()
	r := c.newRound(t, op.Key, op.Serial, true, op.Reads, start.Add(c.cfg.Timeouts.CAS))
	r.trace = op.Trace
	commitDeadline := start.Add(max(c.cfg.Timeouts.CAS, c.cfg.Timeouts.Write))
	for {
		r.trace.Event("Reading existing values for CAS precondition")
		b, tally, err := r.begin()
		if err != nil {
			return nil, false, err
		}
		current, err := r.current(tally, request.Slice{Now: op.Reads[0].Now})
		if err != nil {
			return nil, false, err
		}
		updates, applied, err := op.Decide(current, b.Micros)
		if err != nil {
			return nil, false, err
		}
		prop := Proposal{Ballot: b}
		if !applied {
			r.trace.Event("CAS precondition does not match current values")
		}
		switch {
		case !applied && tally.linearizable():
			return current, false, nil // the read is ordered already
		case applied && tally.outcome != prepPromised:
			r.minBallot = latestBallot(r.minBallot, tally.supersededBy) // a later read holds the partition
			continue
		case applied && len(updates) > 0:
			if prop.Update, err = c.proposedUpdate(t, op.Key, updates); err != nil {
				return nil, false, err
			}
			prop.Origin = b
		}
		r.trace.Event("Accepting proposal")
		out, err := r.propose(prop)
		if err != nil {
			return nil, false, err
		}
		switch out.outcome {
		case proposeAccepted:
			if !applied {
				return current, false, nil
			}
			if !prop.Empty() {
				r.trace.Event("Committing proposal")
				if err := r.commit(prop, op.Commit, commitDeadline); err != nil {
					return nil, false, err
				}
			}
			r.trace.Event("CAS successful")
			return nil, true, nil
		case proposeSuperseded:
			r.trace.Event("Paxos proposal not accepted (pre-empted by a higher ballot)")
			if out.sideEffects && !prop.Empty() {
				return nil, false, &request.CASWriteUnknown{Consistency: op.Serial, Received: out.accepts, BlockFor: out.quorum}
			}
			if err := r.backOff(out.supersededBy); err != nil {
				return nil, false, err
			}
		default:
			return nil, false, r.failure(out.accepts, out.failed)
		}
	}
}

// proposedUpdate is the one update of a partition a round proposes, made
// of what Decide wrote and checked as the engine will check it: a
// proposal no replica can apply would wedge the partition's rounds.
func (c *Coordinator) proposedUpdate(t *schema.Table, key []byte, updates []*mutation.Mutation) (*mutation.Mutation, error) {
	if !sameKey(updates, t.ID, key) {
		return nil, fmt.Errorf("coordinator: a conditional write of partition %x of %s writes another partition", key, t)
	}
	p := c.cfg.Engine.Partitioner()
	m, err := mergeUpdates(updates, p.Token(key), p.TokenBytesLen())
	if err != nil {
		return nil, err
	}
	return m, m.Check()
}

// serialRead reads a partition at SERIAL or LOCAL_SERIAL: the answers to
// a Paxos prepare, which saw every commit a quorum decided, and when a
// round that writes may be under way, an empty proposal that orders the
// read after it.
func (c *Coordinator) serialRead(t *schema.Table, q request.PartitionRead) (*request.Partition, error) {
	c.Stats.CASReads.Add(1)
	r := c.newRound(t, q.Key, q.Consistency, false, []request.Slice{q.Slice}, time.Now().Add(c.cfg.Timeouts.Read))
	r.trace = q.Trace
	for {
		b, tally, err := r.begin()
		if err != nil {
			return nil, err
		}
		current, err := r.current(tally, q.Slice)
		if err != nil || tally.linearizable() {
			return current, err
		}
		out, err := r.propose(Proposal{Ballot: b})
		if err != nil {
			return nil, err
		}
		switch out.outcome {
		case proposeAccepted:
			return current, nil
		case proposeSuperseded:
			if err := r.backOff(out.supersededBy); err != nil {
				return nil, err
			}
		default:
			return nil, r.failure(out.accepts, out.failed)
		}
	}
}

// UncommittedPaxos are the partitions of a table in token range r whose
// Paxos registers on this replica hold a proposal accepted and not
// committed: those Paxos repair finishes (FinishPaxos).
func (c *Coordinator) UncommittedPaxos(table mutation.TableID, r partitioner.Range) ([][]byte, error) {
	return c.paxos.uncommitted(table, r)
}

// FinishPaxos prepares a Paxos round at SERIAL on a partition of t and
// stops there: the prepare finishes a proposal an earlier round left
// accepted and not committed, and commits the latest commit to a quorum
// if fewer hold it, as Cassandra 4.1's Paxos repair does for each such
// partition before a repair compares the data. Once it returns, what a
// quorum may have accepted is committed, in the data of a quorum.
func (c *Coordinator) FinishPaxos(t *schema.Table, key []byte) error {
	_, _, err := c.newRound(t, key, request.Serial, false, nil, time.Now().Add(c.cfg.Timeouts.CAS)).begin()
	return err
}

// paxosRound is one operation's Paxos rounds on a partition, tried until
// one completes or the deadline passes.
type paxosRound struct {
	c           *Coordinator
	trace       *tracing.Trace
	t           *schema.Table
	key         []byte
	serial      request.Consistency
	write       bool
	reads       []request.Slice
	deadline    time.Time
	minBallot   Ballot
	contentions int
	pp          *paxosParticipants
}

func (c *Coordinator) newRound(t *schema.Table, key []byte, serial request.Consistency, write bool, reads []request.Slice, deadline time.Time) *paxosRound {
	return &paxosRound{c: c, t: t, key: key, serial: serial, write: write, reads: reads, deadline: deadline}
}

// participants works out who takes part in the next try, by the ring as
// it is now.
func (r *paxosRound) participants() (*paxosParticipants, error) {
	c := r.c
	m := c.cfg.Ring()
	tok := c.cfg.Engine.Partitioner().Token(r.key)
	p, err := c.current().place(r.t, tok, m, c.cfg.Self)
	if err != nil {
		return nil, err
	}
	p.pending = m.Pending(p.strategy, tok)
	pp := newParticipants(p, r.serial, c.cfg.DataCenter, c.alive(), m.Location, m.Epoch())
	return pp, pp.available(r.serial)
}

// begin prepares a ballot with a quorum, first finishing what earlier
// rounds left (a proposal accepted and not committed, a commit missing on
// too many replicas), and returns the ballot and the answers once a
// quorum promised (or only permitted the read) with the latest commit.
func (r *paxosRound) begin() (Ballot, *prepareTally, error) {
	for {
		pp, err := r.participants()
		if err != nil {
			return Ballot{}, nil, err
		}
		r.pp = pp
		b := r.c.newBallot(r.minBallot)
		tally, err := r.prepare(b)
		if r.c.caughtUp(err) {
			continue // by the ring the replica knows
		}
		if err != nil {
			return Ballot{}, nil, err
		}
		switch tally.outcome {
		case prepPromised, prepReadPermitted:
			return b, tally, nil
		case prepSuperseded:
			if err := r.backOff(tally.supersededBy); err != nil {
				return Ballot{}, nil, err
			}
		case prepIncompleteAccepted:
			// The same update, under this round's ballot: its write
			// timestamp stays its origin's.
			r.c.Stats.CASUnfinished.Add(1)
			acc := tally.latestAccepted
			prop := Proposal{Ballot: b, Origin: acc.Origin, Update: acc.Update}
			out, err := r.propose(prop)
			if err != nil {
				return Ballot{}, nil, err
			}
			switch out.outcome {
			case proposeAccepted:
				if err := r.commitQuorum(prop, pp.live, pp.quorum); err != nil {
					return Ballot{}, nil, err
				}
			case proposeSuperseded:
				if err := r.backOff(out.supersededBy); err != nil {
					return Ballot{}, nil, err
				}
			default:
				return Ballot{}, nil, r.failure(out.accepts, out.failed)
			}
		case prepIncompleteCommitted:
			r.c.Stats.CASUnfinished.Add(1)
			need := pp.quorum - len(tally.withLatest)
			if err := r.commitQuorum(tally.latestCommitted, tally.needLatest, need); err != nil {
				return Ballot{}, nil, err
			}
		default:
			return Ballot{}, nil, r.failure(tally.permissions(), tally.failed)
		}
	}
}

// newBallot is a ballot for a new round: later than every one this node
// took and than min.
func (c *Coordinator) newBallot(min Ballot) Ballot {
	for {
		last := c.lastBallot.Load()
		b := nextBallot(c.cfg.Now().UnixMicro(), last, min, c.rand())
		if c.lastBallot.CompareAndSwap(last, b.Micros) {
			return b
		}
	}
}

// backOff waits a random while after a round lost to a later one (by),
// longer the more it lost, and reports a timeout when the wait would pass
// the deadline.
func (r *paxosRound) backOff(by Ballot) error {
	r.contentions++
	r.c.Stats.CASContentions.Add(1)
	if f := r.c.cfg.Contended; f != nil {
		f(r.t.ID, r.key)
	}
	r.minBallot = latestBallot(r.minBallot, by)
	upper := min(100*time.Millisecond, 2*time.Millisecond<<min(r.contentions, 6))
	wait := upper/2 + time.Duration(r.c.rand()%uint64(upper/2))
	if time.Now().Add(wait).After(r.deadline) {
		return r.timeout(0)
	}
	time.Sleep(wait)
	return nil
}

// timeout is the round's failure when its time ran out with received
// answers of the quorum.
func (r *paxosRound) timeout(received int) error {
	quorum := 1
	if r.pp != nil {
		quorum = r.pp.quorum
	}
	received = min(received, quorum-1)
	if r.write {
		return &request.WriteTimeout{Consistency: r.serial, Received: received, BlockFor: quorum, WriteType: request.WriteCAS, Contentions: r.contentions}
	}
	return &request.ReadTimeout{Consistency: r.serial, Received: received, BlockFor: quorum}
}

// failure is the round's failure when too many replicas failed for a
// quorum.
func (r *paxosRound) failure(received int, failed []request.ReplicaFailed) error {
	return &request.Failure{Write: r.write, Consistency: r.serial, Received: received, BlockFor: r.pp.quorum,
		Failures: sortedFailures(failed), WriteType: request.WriteCAS, Port: r.c.cfg.StoragePort}
}

// context is the context of one phase: it ends at the round's deadline.
func (r *paxosRound) context() (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), r.deadline)
}

// current resolves the answers' reads into the partition as it is (nil
// when nothing is live).
func (r *paxosRound) current(tally *prepareTally, s request.Slice) (*request.Partition, error) {
	p, err := r.c.cfg.Engine.Resolve(r.key, mergeEntries(tally.reads), request.Slice{Reverse: s.Reverse, Limit: s.Limit, Now: s.Now})
	if err != nil || p == nil || p.IsEmpty() {
		return nil, err
	}
	return p, nil
}

// prepare asks the live electorate to promise ballot b, the natural
// replicas with the data read, and tallies their answers until there is
// an outcome.
func (r *paxosRound) prepare(b Ballot) (*prepareTally, error) {
	c, pp := r.c, r.pp
	tally := newPrepareTally(pp.quorum, len(pp.live))
	ctx, cancel := r.context()
	defer cancel()
	type answer struct {
		from    ring.Endpoint
		p       promise
		read    []mutation.Entry
		hasRead bool
		err     error
	}
	answers := make(chan answer, len(pp.live))
	ask := func(to ring.Endpoint) answer {
		m := paxosPrepare{table: r.t.ID, key: r.key, ballot: b, write: r.write, read: pp.isNatural(to), reads: r.reads}
		if to == c.cfg.Self {
			p, read, hasRead, err := c.paxosPrepare(m)
			return answer{to, p, read, hasRead, err}
		}
		out, err := c.request(ctx, r.trace, to, messaging.VerbPaxosPrepare, appendPaxosPrepare(fenced(pp.epoch), m))
		if stale, ok := staleRingOf(err); ok {
			return answer{from: to, err: stale}
		}
		if err != nil {
			return answer{from: to, err: err}
		}
		p, read, hasRead, err := decodePromise(out, r.t.ID, r.key)
		return answer{to, p, read, hasRead, err}
	}
	remote := r.sendAll(pp.live, func(to ring.Endpoint) { answers <- ask(to) })
	take := func(a answer) (prepareOutcome, error) {
		switch {
		case a.err == nil:
			return tally.add(a.from, a.p, a.read, a.hasRead), nil
		case isStale(a.err):
			return preparing, a.err
		case errors.Is(a.err, messaging.ErrTimeout):
			return preparing, nil
		}
		return tally.fail(a.from), nil
	}
	if r.asksSelf(pp.live) {
		if out, err := take(ask(c.cfg.Self)); err != nil || out != preparing {
			return tally, err
		}
	}
	for range remote {
		select {
		case a := <-answers:
			if out, err := take(a); err != nil || out != preparing {
				return tally, err
			}
		case <-ctx.Done():
			return nil, r.timeout(tally.permissions())
		}
	}
	return nil, r.timeout(tally.permissions())
}

// proposeResult is what a proposal came to, with its counts.
type proposeResult struct {
	outcome      proposeOutcome
	sideEffects  bool
	supersededBy Ballot
	accepts      int
	quorum       int
	failed       []request.ReplicaFailed
}

// propose asks the live electorate to accept p, and tallies their answers
// until there is an outcome: the round's time running out first is a
// timeout (the outcome unknown).
func (r *paxosRound) propose(p Proposal) (proposeResult, error) {
	c, pp := r.c, r.pp
	tally := newProposeTally(pp.quorum, len(pp.live), !p.Empty())
	ctx, cancel := r.context()
	defer cancel()
	type answer struct {
		from ring.Endpoint
		ok   bool
		by   Ballot
		err  error
	}
	answers := make(chan answer, len(pp.live))
	payload := appendPaxosProposal(fenced(pp.epoch), r.t.ID, r.key, p)
	ask := func(to ring.Endpoint) answer {
		if to == c.cfg.Self {
			ok, by, err := c.paxosAccept(r.t.ID, r.key, p)
			return answer{to, ok, by, err}
		}
		out, err := c.request(ctx, r.trace, to, messaging.VerbPaxosPropose, payload)
		if err != nil {
			return answer{from: to, err: err}
		}
		ok, by, err := decodeAccepted(out)
		return answer{to, ok, by, err}
	}
	remote := r.sendAll(pp.live, func(to ring.Endpoint) { answers <- ask(to) })
	result := func() proposeResult {
		return proposeResult{outcome: tally.outcome, sideEffects: tally.sideEffects, supersededBy: tally.supersededBy,
			accepts: tally.accepts, quorum: pp.quorum, failed: tally.failed}
	}
	take := func(a answer) proposeOutcome {
		switch {
		case a.err == nil:
			return tally.add(a.ok, a.by)
		case errors.Is(a.err, messaging.ErrTimeout):
			return proposing
		}
		return tally.fail(a.from) // a refusal for a stale ring included: the replica may not have taken it
	}
	if r.asksSelf(pp.live) {
		if take(ask(c.cfg.Self)) != proposing {
			return result(), nil
		}
	}
	for range remote {
		select {
		case a := <-answers:
			if take(a) != proposing {
				return result(), nil
			}
		case <-ctx.Done():
			return proposeResult{}, r.timeout(tally.accepts)
		}
	}
	return proposeResult{}, r.timeout(tally.accepts)
}

// commit sends a decided proposal to every replica (the live ones; a
// hint is kept for each one down) and waits until as many as level l
// asks have applied it, or the deadline. For LOCAL_SERIAL the other data
// centres' replicas take the update as a plain write, their Paxos state
// untouched.
func (r *paxosRound) commit(p Proposal, l request.Consistency, deadline time.Time) error {
	c, pp := r.c, r.pp
	m := c.cfg.Ring()
	alive := c.alive()
	var targets []ring.Endpoint
	for _, e := range pp.all {
		if alive(e) {
			targets = append(targets, e)
		} else if c.cfg.Network != nil {
			c.hint(e, p.Update)
		}
	}
	acks := NewAcks(l, pp.p.strategy, c.cfg.DataCenter, targets, pp.pending, m.Location)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	type answer struct {
		from ring.Endpoint
		err  error
	}
	answers := make(chan answer, len(targets))
	commitPayload := appendPaxosProposal(nil, r.t.ID, r.key, p)
	writePayload := appendMutations(fenced(pp.epoch), []*mutation.Mutation{p.Update})
	ask := func(to ring.Endpoint) answer {
		err := r.commitOn(ctx, to, p, commitPayload, writePayload, !slicesContain(pp.electorate, to))
		if err != nil && to != c.cfg.Self && !isStale(err) {
			c.hint(to, p.Update)
		}
		return answer{to, err}
	}
	remote := r.sendAll(targets, func(to ring.Endpoint) { answers <- ask(to) })
	tally := writeTally{acks: acks}
	take := func(a answer) (bool, error) {
		done, failed := tally.take(a.from, a.err)
		if failed {
			return true, c.writeFailure(acks, l, tally.failed, request.WriteCAS)
		}
		return done, nil
	}
	if len(targets) == 0 && l == request.Any {
		return nil // every replica down: the hints are the commit
	}
	if r.asksSelf(targets) {
		if done, err := take(ask(c.cfg.Self)); done {
			return err
		}
	}
	for range remote {
		select {
		case a := <-answers:
			if done, err := take(a); done {
				return err
			}
		case <-ctx.Done():
			return r.commitTimeout(l, acks)
		}
	}
	if tally.failedOnly() {
		return c.writeFailure(acks, l, tally.failed, request.WriteCAS)
	}
	return r.commitTimeout(l, acks)
}

func (r *paxosRound) commitTimeout(l request.Consistency, acks *Acks) error {
	return &request.WriteTimeout{Consistency: l, Received: min(acks.Received(), acks.BlockFor()-1), BlockFor: acks.BlockFor(),
		WriteType: request.WriteCAS, Contentions: r.contentions}
}

// commitQuorum commits p on replicas to and waits until need of them
// applied it (finishing what an earlier round left), or the round's
// deadline.
func (r *paxosRound) commitQuorum(p Proposal, to []ring.Endpoint, need int) error {
	c := r.c
	if need <= 0 {
		return nil
	}
	ctx, cancel := r.context()
	defer cancel()
	errs := make(chan error, len(to))
	payload := appendPaxosProposal(nil, r.t.ID, r.key, p)
	ask := func(e ring.Endpoint) error { return r.commitOn(ctx, e, p, payload, nil, false) }
	remote := r.sendAll(to, func(e ring.Endpoint) { errs <- ask(e) })
	acked, failed := 0, 0
	take := func(err error) bool {
		if err == nil {
			acked++
		} else if !errors.Is(err, messaging.ErrTimeout) {
			failed++
		}
		return acked >= need
	}
	if r.asksSelf(to) && take(ask(c.cfg.Self)) {
		return nil
	}
	for range remote {
		select {
		case err := <-errs:
			if take(err) {
				return nil
			}
		case <-ctx.Done():
			return r.timeout(acked)
		}
	}
	if failed > 0 {
		return r.failure(acked, nil)
	}
	return r.timeout(acked)
}

// commitOn applies a decided proposal on replica to: here, through the
// Paxos commit, or as a plain write (asWrite) to a replica outside the
// round's electorate.
func (r *paxosRound) commitOn(ctx context.Context, to ring.Endpoint, p Proposal, commitPayload, writePayload []byte, asWrite bool) error {
	c := r.c
	switch {
	case to == c.cfg.Self:
		return c.paxosCommit(r.t.ID, r.key, p)
	case asWrite:
		return c.send(ctx, r.trace, to, p.Update, writePayload)
	}
	_, err := c.request(ctx, r.trace, to, messaging.VerbPaxosCommit, commitPayload)
	return err
}

// sendAll runs send for every replica of to but this node, each on a
// goroutine of its own (still counted by Settle after the round has what
// it needs), and returns how many it started.
func (r *paxosRound) sendAll(to []ring.Endpoint, send func(ring.Endpoint)) int {
	n := 0
	for _, e := range to {
		if e == r.c.cfg.Self {
			continue
		}
		n++
		r.c.background.Go(func() { send(e) })
	}
	return n
}

// asksSelf reports whether this node is among to: its own answer is
// counted first, on the caller's goroutine.
func (r *paxosRound) asksSelf(to []ring.Endpoint) bool { return slicesContain(to, r.c.cfg.Self) }

func slicesContain(s []ring.Endpoint, e ring.Endpoint) bool {
	for _, x := range s {
		if x == e {
			return true
		}
	}
	return false
}

// paxosPrepare is this replica's answer to a prepare: the promise rule
// applied to its registers and stored, and the data read under the same
// lock when asked for.
func (c *Coordinator) paxosPrepare(m paxosPrepare) (p promise, read []mutation.Entry, hasRead bool, err error) {
	if err := c.knows(m.table); err != nil {
		return promise{}, nil, false, err
	}
	err = c.paxos.with(m.table, m.key, func(s PaxosState) (PaxosState, *mutation.Mutation, error) {
		after, answer, changed := s.prepare(m.ballot, m.write)
		p = answer
		var record *mutation.Mutation
		var err error
		if changed {
			if record, err = c.paxos.promiseRecord(m.table, m.key, m.ballot, m.write); err != nil {
				return s, nil, err
			}
		}
		if answer.outcome != refused && m.read {
			hasRead = true
			if read, err = c.readSlices(m.table, m.key, m.reads); err != nil {
				return s, nil, err
			}
		}
		return after, record, nil
	})
	return p, read, hasRead, err
}

// readSlices reads the entries of several slices of a partition here, in
// key order (the static row and partition deletion, which each slice
// returns, once).
func (c *Coordinator) readSlices(table mutation.TableID, key []byte, slices []request.Slice) ([]mutation.Entry, error) {
	lists := make([][]mutation.Entry, 0, len(slices))
	for _, s := range slices {
		es, err := c.cfg.Engine.ReadEntries(table, key, s)
		if err != nil {
			return nil, err
		}
		lists = append(lists, es)
	}
	return mergeEntries(lists), nil
}

// paxosAccept is this replica's answer to a proposal.
func (c *Coordinator) paxosAccept(table mutation.TableID, key []byte, p Proposal) (ok bool, by Ballot, err error) {
	if err := c.knows(table); err != nil {
		return false, Ballot{}, err
	}
	err = c.paxos.with(table, key, func(s PaxosState) (PaxosState, *mutation.Mutation, error) {
		after, accepted, supersededBy, changed := s.accept(p)
		ok, by = accepted, supersededBy
		if !changed {
			return after, nil, nil
		}
		record, err := c.paxos.acceptRecord(table, key, p)
		return after, record, err
	})
	return ok, by, err
}

// paxosCommit applies a decided proposal here: its update first, then the
// record of the commit, so that a crash between the two leaves the
// proposal to be finished again (the same update, the same timestamps)
// rather than a commit without its data.
func (c *Coordinator) paxosCommit(table mutation.TableID, key []byte, p Proposal) error {
	if err := c.knows(table); err != nil {
		return err
	}
	if p.Update == nil || p.IsZero() {
		return fmt.Errorf("coordinator: a commit of partition %x of table %s without an update", key, table)
	}
	return c.paxos.with(table, key, func(s PaxosState) (PaxosState, *mutation.Mutation, error) {
		if err := c.cfg.Engine.Apply([]*mutation.Mutation{p.Update}); err != nil {
			return s, nil, err
		}
		after, changed := s.commit(p)
		if !changed || after.Committed.Ballot != p.Ballot {
			return after, nil, nil // an older commit: its data is in, the record stays the later one
		}
		record, err := c.paxos.commitRecord(table, key, p)
		return after, record, err
	})
}

// paxosHandlers are the Paxos verbs this replica answers.
func (c *Coordinator) paxosHandlers() map[messaging.Verb]messaging.Handler {
	return map[messaging.Verb]messaging.Handler{
		messaging.VerbPaxosPrepare: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			payload, err := c.admit(payload)
			if err != nil {
				return nil, err
			}
			m, err := decodePaxosPrepare(payload)
			if err != nil {
				return nil, err
			}
			p, read, hasRead, err := c.paxosPrepare(m)
			if err != nil {
				return nil, err
			}
			return encodePromise(p, read, hasRead), nil
		},
		messaging.VerbPaxosPropose: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			payload, err := c.admit(payload)
			if err != nil {
				return nil, err
			}
			table, key, p, err := decodePaxosProposal(payload)
			if err != nil {
				return nil, err
			}
			ok, by, err := c.paxosAccept(table, key, p)
			if err != nil {
				return nil, err
			}
			return encodeAccepted(ok, by), nil
		},
		messaging.VerbPaxosCommit: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			table, key, p, err := decodePaxosProposal(payload)
			if err != nil {
				return nil, err
			}
			return nil, c.paxosCommit(table, key, p)
		},
	}
}
