package coordinator

import (
	"bytes"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
)

// The pure half of lightweight transactions: Paxos on one partition as
// Cassandra 4.1 runs it (its "v2"). A round prepares a ballot with a
// quorum of the partition's replicas, each promising to take no earlier
// round and answering with what it holds (its accepted and committed
// proposals, and the data the operation reads), then proposes the
// operation's update, which a quorum must accept, and commits it (the
// replicas apply it). A round that finds a proposal accepted and not
// committed finishes it first; one that finds the latest commit missing on
// a quorum commits it there first. A read, or a condition that does not
// hold, needs no proposal when no write was promised since the latest
// commit: the prepare's answers are then already a linearizable read.
//
// This file holds a replica's registers and its rules (prepare, accept,
// commit) and the coordinator's tallies of answers; paxos_driver.go sends
// and waits.

// Proposal is an update a round proposes for a partition. Origin is the
// ballot that first proposed it: a round that finishes another's proposal
// proposes the same update under its own ballot, and the update keeps the
// write timestamp of its origin. A nil Update is an empty proposal (a read,
// or a condition not met), which orders the round but is never committed.
type Proposal struct {
	Ballot, Origin Ballot
	Update         *mutation.Mutation
}

// IsZero reports whether p is no proposal at all.
func (p Proposal) IsZero() bool { return p.Ballot.IsZero() }

// Empty reports whether p changes nothing.
func (p Proposal) Empty() bool { return p.Update == nil }

// sameOrigin reports whether p and o propose one update (one, or both,
// finishing the other).
func (p Proposal) sameOrigin(o Proposal) bool { return !p.Origin.IsZero() && p.Origin == o.Origin }

// PaxosState is one replica's registers for one partition of a table, as
// system.paxos keeps them.
type PaxosState struct {
	// WritePromise and ReadPromise are the latest ballots promised to a
	// round that may write, and to one that only reads.
	WritePromise, ReadPromise Ballot
	// Accepted is the latest proposal accepted and not yet known
	// committed (zero: none); Committed, the latest commit (zero: none).
	Accepted, Committed Proposal
}

// promisedWrite is the latest ballot after which this replica may accept a
// round that writes: promised to one, or one's accepted or committed
// proposal.
func (s *PaxosState) promisedWrite() Ballot {
	b := latestBallot(s.WritePromise, s.Committed.Ballot)
	if !s.Accepted.Empty() {
		b = latestBallot(b, s.Accepted.Ballot)
	}
	return b
}

// promised is the latest ballot this replica has seen: every later round
// may be promised.
func (s *PaxosState) promised() Ballot {
	return latestBallot(latestBallot(s.ReadPromise, s.promisedWrite()), s.Accepted.Ballot)
}

// pendingAccepted is the accepted proposal when it is later than the
// latest commit (zero otherwise).
func (s *PaxosState) pendingAccepted() Proposal {
	if s.Accepted.Ballot.After(s.Committed.Ballot) {
		return s.Accepted
	}
	return Proposal{}
}

// promiseOutcome is how a replica answers a prepare.
type promiseOutcome uint8

const (
	// promised: the round may propose.
	promised promiseOutcome = iota
	// readPermitted: a later round that only reads was promised, and no
	// later one that writes: the round may read, not propose.
	readPermitted
	// refused: a later round that writes was promised, accepted or
	// committed.
	refused
)

// promise is a replica's answer to a prepare.
type promise struct {
	outcome promiseOutcome
	// supersededBy, unless promised, is the latest ballot the replica has
	// seen: a round after it may be promised.
	supersededBy Ballot
	// accepted is the replica's accepted proposal not known committed,
	// committed its latest commit.
	accepted, committed Proposal
	// stable says no round that writes was promised since the latest
	// commit (or empty proposal) this replica took: none can be in the
	// middle of proposing.
	stable bool
}

// prepare is the rule for a prepare at ballot b (write: the round may
// write): the replica's answer, and its state after (changed: to store).
func (s PaxosState) prepare(b Ballot, write bool) (after PaxosState, p promise, changed bool) {
	latest, latestWrite := s.promised(), s.promisedWrite()
	recent := s.Committed.Ballot
	if acc := s.pendingAccepted(); !acc.IsZero() && acc.Empty() {
		recent = acc.Ballot
	}
	p = promise{accepted: s.pendingAccepted(), committed: s.Committed, stable: !s.WritePromise.After(recent)}
	switch {
	case b.After(latest):
		p.outcome = promised
		if write {
			s.WritePromise = b
		} else {
			s.ReadPromise = b
		}
		return s, p, true
	case b.After(latestWrite):
		p.outcome, p.supersededBy = readPermitted, latest
	default:
		p.outcome, p.supersededBy = refused, latest
	}
	return s, p, false
}

// accept is the rule for a proposal: taken unless the replica has seen a
// later round (then refused, with the latest ballot it has seen). changed
// says the state after is to be stored.
func (s PaxosState) accept(p Proposal) (after PaxosState, ok bool, supersededBy Ballot, changed bool) {
	if latest := s.promised(); latest.After(p.Ballot) {
		return s, false, latest, false
	}
	if p.Ballot == s.Committed.Ballot {
		return s, true, Ballot{}, false // committed already
	}
	s.Accepted = p
	return s, true, Ballot{}, true
}

// commit is the rule for a commit, which a replica always takes: the
// update is applied, and kept as the latest commit if it is; an accepted
// proposal it covers is done.
func (s PaxosState) commit(p Proposal) (after PaxosState, changed bool) {
	if p.Ballot.After(s.Committed.Ballot) {
		s.Committed, changed = p, true
	}
	if !s.Accepted.IsZero() && !s.Accepted.Ballot.After(s.Committed.Ballot) {
		s.Accepted, changed = Proposal{}, true
	}
	return s, changed
}

// paxosParticipants are the replicas a round on one partition counts on.
type paxosParticipants struct {
	// electorate are the replicas that vote: the natural ones and those
	// being given the range, every data centre's for SERIAL, the local
	// data centre's for LOCAL_SERIAL. live are those the failure detector
	// sees up: the round asks them. natural are the electorate's natural
	// replicas, which answer with the data read.
	electorate, live, natural []ring.Endpoint
	// quorum is how many of them must answer: a majority of the natural
	// replicas, and every one being given the range.
	quorum int
	// all are every replica the commit goes to, in every data centre, and
	// pending those being given the range.
	all, pending []ring.Endpoint
	p            placement
	epoch        uint64
}

// newParticipants works out a round's participants at serial level l from
// a partition's placement.
func newParticipants(p placement, l request.Consistency, localDC string, alive func(ring.Endpoint) bool, locate func(ring.Endpoint) ring.Location, epoch uint64) *paxosParticipants {
	inScope := func(r ring.Endpoint) bool {
		return l != request.LocalSerial || !placesByDC(p.strategy) || locate(r).DataCenter == localDC
	}
	pp := &paxosParticipants{p: p, epoch: epoch, pending: p.pending}
	pending := 0
	for _, group := range [...][]ring.Endpoint{p.replicas, p.pending} {
		for _, r := range group {
			pp.all = append(pp.all, r)
			if !inScope(r) {
				continue
			}
			pp.electorate = append(pp.electorate, r)
			if alive(r) {
				pp.live = append(pp.live, r)
			}
		}
	}
	for _, r := range p.replicas {
		if inScope(r) {
			pp.natural = append(pp.natural, r)
		}
	}
	for _, r := range p.pending {
		if inScope(r) {
			pending++
		}
	}
	pp.quorum = quorum(len(pp.natural)) + pending
	return pp
}

// isNatural reports whether r answers a prepare with the data read (a
// replica being given the range has not all of it yet).
func (pp *paxosParticipants) isNatural(r ring.Endpoint) bool {
	for _, n := range pp.natural {
		if n == r {
			return true
		}
	}
	return false
}

// available refuses a round whose live electorate is short of a quorum.
func (pp *paxosParticipants) available(l request.Consistency) error {
	if len(pp.live) < pp.quorum {
		return &request.Unavailable{Consistency: l, Required: pp.quorum, Alive: len(pp.live)}
	}
	return nil
}

// prepareOutcome is what a round's prepare came to.
type prepareOutcome uint8

const (
	// preparing: more answers are needed.
	preparing prepareOutcome = iota
	// prepPromised: a quorum promised, and every one of them had the
	// latest commit: the round may propose, and its read is current.
	prepPromised
	// prepReadPermitted: as prepPromised, but some only permitted a read.
	prepReadPermitted
	// prepSuperseded: another round got in; back off and try again with a
	// later ballot.
	prepSuperseded
	// prepIncompleteAccepted: a proposal accepted and not committed must
	// be finished first.
	prepIncompleteAccepted
	// prepIncompleteCommitted: the latest commit is missing on too many
	// of the quorum: commit it there and try again.
	prepIncompleteCommitted
	// prepFailed: too many replicas failed for a quorum.
	prepFailed
)

// prepareTally counts the answers to a round's prepare.
type prepareTally struct {
	quorum, poll int
	// withLatest answered with the latest commit among the answers,
	// needLatest with an earlier one.
	withLatest, needLatest []ring.Endpoint
	latestCommitted        Proposal
	latestAccepted         Proposal
	onlyPromises, stable   bool
	reads                  [][]mutation.Entry
	readWithLatest         bool
	supersededBy           Ballot
	failed                 []request.ReplicaFailed
	outcome                prepareOutcome
}

func newPrepareTally(quorum, poll int) *prepareTally {
	return &prepareTally{quorum: quorum, poll: poll, onlyPromises: true, stable: true}
}

// commitOrder compares two commits as a round compares the replicas'
// latest: by ballot, where a commit finishing the other's update counts as
// the same.
func commitOrder(a, b Proposal) int {
	if a.Ballot == b.Ballot || a.sameOrigin(b) {
		return 0
	}
	return a.Ballot.Compare(b.Ballot)
}

// add counts a replica's answer (read: its data, when it was asked for
// it) and returns the outcome once there is one.
func (t *prepareTally) add(from ring.Endpoint, p promise, read []mutation.Entry, hasRead bool) prepareOutcome {
	if t.outcome != preparing {
		return t.outcome
	}
	if p.outcome == refused {
		t.supersededBy = latestBallot(t.supersededBy, p.supersededBy)
		t.outcome = prepSuperseded
		return t.outcome
	}
	if p.outcome != promised {
		t.onlyPromises = false
		t.supersededBy = latestBallot(t.supersededBy, p.supersededBy)
	}
	switch c := commitOrder(p.committed, t.latestCommitted); {
	case c == 0:
		if p.committed.Ballot.After(t.latestCommitted.Ballot) {
			t.latestCommitted = p.committed // it finished the other
		}
		t.withLatest = append(t.withLatest, from)
		t.readWithLatest = t.readWithLatest || hasRead
	case c < 0:
		t.needLatest = append(t.needLatest, from)
	default:
		t.needLatest = append(t.needLatest, t.withLatest...)
		t.withLatest = append(t.withLatest[:0:0], from)
		t.latestCommitted, t.readWithLatest = p.committed, hasRead
	}
	if p.accepted.Ballot.After(t.latestAccepted.Ballot) {
		t.latestAccepted = p.accepted
	}
	if hasRead {
		t.stable = t.stable && p.stable
		t.reads = append(t.reads, read)
	}
	if len(t.withLatest)+len(t.needLatest) < t.quorum {
		return preparing
	}
	switch {
	case !t.onlyPromises && !t.stable:
		t.outcome = prepSuperseded
	case t.inProgress():
		t.outcome = prepIncompleteAccepted
		if !t.onlyPromises {
			t.outcome = prepSuperseded
		}
	case len(t.withLatest) >= t.quorum && t.onlyPromises:
		t.outcome = prepPromised
	case len(t.withLatest) >= t.quorum:
		t.outcome = prepReadPermitted
	default:
		t.outcome = prepIncompleteCommitted
	}
	return t.outcome
}

// inProgress reports whether the answers hold a proposal accepted after
// the latest commit that changes something and does not finish it.
func (t *prepareTally) inProgress() bool {
	a := t.latestAccepted
	return !a.IsZero() && !a.Empty() && a.Ballot.After(t.latestCommitted.Ballot) && !a.sameOrigin(t.latestCommitted)
}

// fail counts a replica that failed the prepare.
func (t *prepareTally) fail(from ring.Endpoint) prepareOutcome {
	if t.outcome != preparing {
		return t.outcome
	}
	t.failed = append(t.failed, request.ReplicaFailed{Replica: string(from), Reason: request.ReasonUnknown})
	if t.poll-len(t.failed) < t.quorum {
		t.outcome = prepFailed
	}
	return t.outcome
}

// permissions is how many replicas promised or permitted a read.
func (t *prepareTally) permissions() int { return len(t.withLatest) + len(t.needLatest) }

// linearizable reports whether the round's read needs no proposal to be
// ordered: no replica of the quorum had promised a write since its latest
// commit.
func (t *prepareTally) linearizable() bool { return t.stable }

// proposeOutcome is what a round's proposal came to.
type proposeOutcome uint8

const (
	proposing proposeOutcome = iota
	// proposeAccepted: a quorum accepted: the proposal is decided.
	proposeAccepted
	// proposeSuperseded: a replica refused it for a later round; sideEffects
	// says some replica may have accepted it (another round may finish
	// it), so its outcome is unknown.
	proposeSuperseded
	// proposeFailed: too many replicas failed for a quorum.
	proposeFailed
)

// proposeTally counts the answers to a proposal: a quorum of accepts
// decides it, whatever the others answered; it fails once too few
// replicas are left to make a quorum. A proposal that changes something
// then waits (untilClear) until some replica accepts it or fails, or
// every one refuses: only then is it known to have had no effect.
type proposeTally struct {
	quorum, poll             int
	untilClear               bool
	accepts, refusals, fails int
	failed                   []request.ReplicaFailed
	supersededBy             Ballot
	outcome                  proposeOutcome
	sideEffects              bool
}

func newProposeTally(quorum, poll int, untilClear bool) *proposeTally {
	return &proposeTally{quorum: quorum, poll: poll, untilClear: untilClear}
}

// add counts one replica's answer: accepted, or refused for a later
// ballot.
func (t *proposeTally) add(ok bool, supersededBy Ballot) proposeOutcome {
	if ok {
		t.accepts++
	} else {
		t.refusals++
		t.supersededBy = latestBallot(t.supersededBy, supersededBy)
	}
	return t.decide()
}

// fail counts a replica that failed (it may have accepted).
func (t *proposeTally) fail(from ring.Endpoint) proposeOutcome {
	t.fails++
	t.failed = append(t.failed, request.ReplicaFailed{Replica: string(from), Reason: request.ReasonUnknown})
	return t.decide()
}

func (t *proposeTally) decide() proposeOutcome {
	if t.outcome != proposing {
		return t.outcome
	}
	outstanding := t.poll - t.accepts - t.refusals - t.fails
	switch {
	case t.accepts >= t.quorum:
		t.outcome = proposeAccepted
	case t.accepts+outstanding >= t.quorum:
		// it may yet succeed
	case t.refusals == 0:
		t.outcome = proposeFailed
	case t.untilClear && t.accepts+t.fails == 0 && t.refusals < t.poll:
		// wait: every refusal so far says it had no effect
	default:
		t.outcome, t.sideEffects = proposeSuperseded, t.accepts+t.fails > 0
	}
	return t.outcome
}

// mergeUpdates makes one update of a partition's mutations (a conditional
// batch writes several statements to one partition): their entries
// reconciled as any write's are.
func mergeUpdates(ms []*mutation.Mutation, tok partitioner.Token, tokenLen int) (*mutation.Mutation, error) {
	if len(ms) == 1 {
		return ms[0], nil
	}
	var lists [][]mutation.Entry
	for _, m := range ms {
		lists = append(lists, m.AppendEntries(nil, tok))
	}
	return mutation.FromEntries(ms[0].Table, ms[0].Key, mergeEntries(lists), tokenLen)
}

// sameKey reports whether every mutation writes the partition key.
func sameKey(ms []*mutation.Mutation, table mutation.TableID, key []byte) bool {
	for _, m := range ms {
		if m.Table != table || !bytes.Equal(m.Key, key) {
			return false
		}
	}
	return true
}
