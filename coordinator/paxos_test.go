package coordinator

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
)

func TestBallotEncodingsOrderAsBallots(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ballots []Ballot
	for range 200 {
		ballots = append(ballots, Ballot{Micros: 1_700_000_000_000_000 + r.Int64N(3), Tie: r.Uint64() & (1<<tieBits - 1)})
	}
	ballots = append(ballots, Ballot{}, Ballot{Micros: 5}, Ballot{Micros: 5, Tie: 1<<tieBits - 1})
	for _, a := range ballots {
		back, err := BallotFromUUID(a.UUID())
		if err != nil || back != a {
			t.Fatalf("ballot %v comes back from its timeuuid as %v (%v)", a, back, err)
		}
		raw, err := ballotFrom(appendBallot(nil, a))
		if err != nil || raw != a {
			t.Fatalf("ballot %v comes back from its bytes as %v (%v)", a, raw, err)
		}
		for _, b := range ballots {
			want := a.Compare(b)
			if got := bytes.Compare(appendBallot(nil, a), appendBallot(nil, b)); got != want {
				t.Fatalf("%v vs %v: the encodings compare %d, the ballots %d", a, b, got, want)
			}
			// A proposal record starts with its ballot: records compare so.
			pa, pb := appendProposal(nil, Proposal{Ballot: a}), appendProposal(nil, Proposal{Ballot: b})
			if got := bytes.Compare(pa, pb); (got > 0) != (want > 0) || (got < 0) != (want < 0) {
				t.Fatalf("%v vs %v: the proposal records compare %d, the ballots %d", a, b, got, want)
			}
		}
	}
	if _, err := BallotFromUUID(make([]byte, 16)); err == nil {
		t.Fatal("a version 0 UUID was taken for a ballot")
	}
}

func TestNextBallotIsLaterThanWhatWasSeen(t *testing.T) {
	for _, c := range []struct {
		now, last int64
		min       Ballot
		want      int64
	}{
		{now: 100, last: 50, want: 100},
		{now: 100, last: 100, want: 101}, // the clock did not move
		{now: 100, last: 200, want: 201}, // the clock went back
		{now: 100, min: Ballot{Micros: 300}, want: 301},
		{now: 400, last: 10, min: Ballot{Micros: 300, Tie: 9}, want: 400},
	} {
		if b := nextBallot(c.now, c.last, c.min, 1<<63|7); b.Micros != c.want || b.Tie != 7 || !b.After(c.min) {
			t.Errorf("nextBallot(%d, %d, %v) = %v, want micros %d after the minimum", c.now, c.last, c.min, b, c.want)
		}
	}
}

func update(v byte) *mutation.Mutation {
	m := mutation.NewMutation(mutation.TableID{7}, []byte{0, 0, 0, 1})
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, []byte{v})}
	m.Rows = []mutation.RowUpdate{{Clustering: []byte{}, Row: row}}
	return m
}

func TestAcceptorRules(t *testing.T) {
	b := func(m int64) Ballot { return Ballot{Micros: m} }
	var s PaxosState
	// A write round promises; an earlier write is refused with the latest.
	s, p, changed := s.prepare(b(10), true)
	if p.outcome != promised || !changed || s.WritePromise != b(10) || !p.stable {
		t.Fatalf("the first prepare: %+v changed=%v state %+v", p, changed, s)
	}
	if _, p, changed := s.prepare(b(5), true); p.outcome != refused || p.supersededBy != b(10) || changed {
		t.Fatalf("an earlier write round: %+v changed=%v", p, changed)
	}
	// A later read round is promised as a read; an earlier read between
	// the write and it may only read.
	s, p, _ = s.prepare(b(20), false)
	if p.outcome != promised || s.ReadPromise != b(20) || s.WritePromise != b(10) || p.stable {
		t.Fatalf("a later read: %+v state %+v (a write promised since the last commit is not stable)", p, s)
	}
	if _, p, _ := s.prepare(b(15), true); p.outcome != readPermitted || p.supersededBy != b(20) {
		t.Fatalf("a write between the write and read promises: %+v", p)
	}
	// Proposals: the write round's is refused (a later promise); one at
	// the read's ballot is taken.
	if _, ok, by, _ := s.accept(Proposal{Ballot: b(10), Origin: b(10), Update: update(1)}); ok || by != b(20) {
		t.Fatalf("a proposal under an earlier promise was taken (%v, %v)", ok, by)
	}
	s, ok, _, changed := s.accept(Proposal{Ballot: b(20), Origin: b(20), Update: update(2)})
	if !ok || !changed || s.Accepted.Ballot != b(20) {
		t.Fatalf("the proposal of the latest promise: %v %v %+v", ok, changed, s)
	}
	// The prepare of the next round sees it accepted and not committed.
	s, p, _ = s.prepare(b(30), true)
	if p.outcome != promised || p.accepted.Ballot != b(20) || p.accepted.Update == nil || p.committed.Ballot != (Ballot{}) {
		t.Fatalf("a prepare after an accept: %+v", p)
	}
	// A commit covers it; an older commit afterwards changes nothing.
	s, changed = s.commit(Proposal{Ballot: b(30), Origin: b(20), Update: update(2)})
	if !changed || s.Committed.Ballot != b(30) || !s.Accepted.IsZero() {
		t.Fatalf("a commit: %v %+v", changed, s)
	}
	if after, changed := s.commit(Proposal{Ballot: b(25), Origin: b(25), Update: update(3)}); changed || after.Committed.Ballot != b(30) {
		t.Fatalf("an older commit replaced the latest: %+v", after)
	}
	// A commit after the write promise makes the partition stable again.
	if _, p, _ := s.prepare(b(40), false); !p.stable || p.committed.Ballot != b(30) {
		t.Fatalf("a read after the commit: %+v", p)
	}
	// A proposal at the committed ballot is taken without a change.
	if _, ok, _, changed := s.accept(Proposal{Ballot: b(30), Origin: b(20), Update: update(2)}); !ok || changed {
		t.Fatalf("the committed proposal again: %v %v", ok, changed)
	}
}

func TestPrepareTally(t *testing.T) {
	b := func(m int64) Ballot { return Ballot{Micros: m} }
	committed := Proposal{Ballot: b(5), Origin: b(5), Update: update(1)}
	ok := promise{outcome: promised, committed: committed, stable: true}
	t.Run("a quorum with the latest commit", func(t *testing.T) {
		tally := newPrepareTally(2, 3)
		if tally.add("a", ok, nil, true) != preparing || tally.add("b", ok, nil, true) != prepPromised || !tally.linearizable() {
			t.Fatalf("%+v", tally)
		}
	})
	t.Run("a refusal ends the round", func(t *testing.T) {
		tally := newPrepareTally(2, 3)
		tally.add("a", ok, nil, true)
		if tally.add("b", promise{outcome: refused, supersededBy: b(9)}, nil, false) != prepSuperseded || tally.supersededBy != b(9) {
			t.Fatalf("%+v", tally)
		}
	})
	t.Run("read permissions", func(t *testing.T) {
		tally := newPrepareTally(2, 3)
		tally.add("a", ok, nil, true)
		if tally.add("b", promise{outcome: readPermitted, supersededBy: b(8), committed: committed, stable: true}, nil, true) != prepReadPermitted {
			t.Fatalf("%+v", tally)
		}
		unstable := newPrepareTally(2, 3)
		unstable.add("a", ok, nil, true)
		if unstable.add("b", promise{outcome: readPermitted, committed: committed}, nil, true) != prepSuperseded {
			t.Fatalf("a read permission while a write may be proposing: %+v", unstable)
		}
	})
	t.Run("an accepted proposal not committed", func(t *testing.T) {
		tally := newPrepareTally(2, 3)
		tally.add("a", ok, nil, true)
		pending := ok
		pending.accepted = Proposal{Ballot: b(7), Origin: b(7), Update: update(2)}
		if tally.add("b", pending, nil, true) != prepIncompleteAccepted || tally.latestAccepted.Ballot != b(7) {
			t.Fatalf("%+v", tally)
		}
		// One finishing the latest commit is not in progress.
		done := newPrepareTally(2, 3)
		done.add("a", ok, nil, true)
		finishing := ok
		finishing.accepted = Proposal{Ballot: b(7), Origin: b(5), Update: update(1)}
		if done.add("b", finishing, nil, true) != prepPromised {
			t.Fatalf("%+v", done)
		}
		// An empty one is never finished.
		empty := newPrepareTally(2, 3)
		empty.add("a", ok, nil, true)
		emptyAcc := ok
		emptyAcc.accepted = Proposal{Ballot: b(7)}
		if empty.add("b", emptyAcc, nil, true) != prepPromised {
			t.Fatalf("%+v", empty)
		}
	})
	t.Run("the latest commit missing on the quorum", func(t *testing.T) {
		tally := newPrepareTally(2, 3)
		tally.add("a", promise{outcome: promised, stable: true}, nil, true)
		if tally.add("b", ok, nil, true) != prepIncompleteCommitted || len(tally.needLatest) != 1 || tally.needLatest[0] != ring.Endpoint("a") {
			t.Fatalf("%+v", tally)
		}
	})
	t.Run("failures", func(t *testing.T) {
		tally := newPrepareTally(2, 3)
		tally.fail("a")
		if tally.fail("b") != prepFailed || len(tally.failed) != 2 {
			t.Fatalf("%+v", tally)
		}
	})
}

func TestProposeTally(t *testing.T) {
	by := Ballot{Micros: 9}
	// A quorum of accepts decides.
	if o := newProposeTally(2, 3, true); o.add(true, Ballot{}) != proposing || o.add(true, Ballot{}) != proposeAccepted {
		t.Fatal("two accepts of three did not decide")
	}
	// A quorum of accepts decides, whatever another answered.
	if o := newProposeTally(2, 3, true); o.add(false, by) != proposing || o.add(true, Ballot{}) != proposing || o.add(true, Ballot{}) != proposeAccepted {
		t.Fatalf("refused by one and accepted by two: %+v", o)
	}
	// An empty proposal gives up once no quorum is left, with no effect.
	if o := newProposeTally(2, 3, false); o.add(false, by) != proposing || o.add(false, by) != proposeSuperseded || o.sideEffects || o.supersededBy != by {
		t.Fatalf("%+v", o)
	}
	// One that changes something waits while every answer so far refuses.
	o := newProposeTally(2, 3, true)
	if o.add(false, by) != proposing || o.add(false, by) != proposing || o.add(false, by) != proposeSuperseded || o.sideEffects {
		t.Fatalf("refused by every replica: %+v", o)
	}
	// An accept and two refusals: it may have had an effect.
	o = newProposeTally(2, 3, true)
	if o.add(true, Ballot{}) != proposing || o.add(false, by) != proposing || o.add(false, by) != proposeSuperseded || !o.sideEffects {
		t.Fatalf("accepted by one, refused by two: %+v", o)
	}
	// Failures that leave no quorum.
	o = newProposeTally(2, 3, true)
	if o.fail("a") != proposing || o.fail("b") != proposeFailed {
		t.Fatalf("%+v", o)
	}
}

func TestPaxosPayloadsRoundTrip(t *testing.T) {
	m := paxosPrepare{table: mutation.TableID{7}, key: []byte{0, 0, 0, 1}, ballot: Ballot{Micros: 3, Tie: 4}, write: true, read: true,
		reads: []request.Slice{{Start: []byte{}, End: []byte{3}, Now: 9}, {Limit: 1, Now: 9}}}
	got, err := decodePaxosPrepare(appendPaxosPrepare(nil, m))
	if err != nil || got.ballot != m.ballot || !got.write || !got.read || len(got.reads) != 2 || got.reads[1].Limit != 1 || !bytes.Equal(got.reads[0].End, []byte{3}) {
		t.Fatalf("%+v %v", got, err)
	}
	p := promise{outcome: readPermitted, supersededBy: Ballot{Micros: 5}, accepted: Proposal{Ballot: Ballot{Micros: 4}, Origin: Ballot{Micros: 2}, Update: update(9)},
		committed: Proposal{Ballot: Ballot{Micros: 2}, Origin: Ballot{Micros: 2}, Update: update(8)}, stable: true}
	entries := update(1).AppendEntries(nil, partitioner.Murmur3().Token([]byte{0, 0, 0, 1}))
	back, read, hasRead, err := decodePromise(encodePromise(p, entries, true), mutation.TableID{7}, []byte{0, 0, 0, 1})
	if err != nil || back.outcome != p.outcome || back.accepted.Ballot != p.accepted.Ballot || back.accepted.Update == nil ||
		back.committed.Origin != p.committed.Origin || !hasRead || len(read) != len(entries) {
		t.Fatalf("%+v %v", back, err)
	}
	if _, _, _, err := decodePromise(encodePromise(p, nil, false), mutation.TableID{8}, []byte{0, 0, 0, 1}); err == nil {
		t.Fatal("a promise carrying another table's proposals was taken")
	}
	table, key, prop, err := decodePaxosProposal(appendPaxosProposal(nil, mutation.TableID{7}, []byte{0, 0, 0, 1}, p.accepted))
	if err != nil || table != (mutation.TableID{7}) || !bytes.Equal(key, []byte{0, 0, 0, 1}) || prop.Ballot != p.accepted.Ballot {
		t.Fatalf("%v %x %+v %v", table, key, prop, err)
	}
	if _, _, _, err := decodePaxosProposal(appendPaxosProposal(nil, mutation.TableID{7}, []byte{0, 0, 0, 2}, p.accepted)); err == nil {
		t.Fatal("a proposal writing another partition than it names was taken")
	}
	if ok, by, err := decodeAccepted(encodeAccepted(false, Ballot{Micros: 8})); err != nil || ok || by.Micros != 8 {
		t.Fatalf("%v %v %v", ok, by, err)
	}
}
