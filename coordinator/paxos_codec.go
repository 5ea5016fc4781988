package coordinator

import (
	"bytes"
	"fmt"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
)

// The payloads of the Paxos verbs (PAXOS_PREPARE, PAXOS_PROPOSE,
// PAXOS_COMMIT) and their answers, and the proposal records system.paxos
// keeps: fields one after another as the other verbs' are; a ballot as
// 16 bytes that compare as the ballots do, so that records starting with
// one compare as their ballots.

func writeBallot(w *wire.Writer, b Ballot) {
	var raw [ballotLen]byte
	w.Bytes(appendBallot(raw[:0], b))
}

func readBallotField(r *wire.Reader) Ballot {
	var raw [ballotLen]byte
	r.Fixed(raw[:], "ballot")
	b, _ := ballotFrom(raw[:]) // the length is right
	return b
}

// appendProposal encodes a proposal: its ballot, its origin and its
// update (absent for an empty one), in the commit log's encoding.
func appendProposal(dst []byte, p Proposal) []byte {
	w := wire.Writer{B: dst}
	writeBallot(&w, p.Ballot)
	writeBallot(&w, p.Origin)
	if p.Update == nil {
		w.Optional(nil)
	} else {
		w.Optional(mutation.AppendMutation(nil, p.Update))
	}
	return w.B
}

func readProposal(r *wire.Reader) Proposal {
	p := Proposal{Ballot: readBallotField(r), Origin: readBallotField(r)}
	if raw := r.Optional(); raw != nil && r.Err == nil {
		m, err := mutation.DecodeMutation(raw)
		if err != nil {
			r.Fail(fmt.Errorf("coordinator: a proposal's update: %w", err))
			return Proposal{}
		}
		p.Update = m
	}
	return p
}

// decodeProposal reads a proposal of a partition of table, refusing one
// whose update writes another.
func decodeProposal(b []byte, table mutation.TableID, key []byte) (Proposal, error) {
	r := wire.Reader{B: b}
	p := readProposal(&r)
	if err := r.Done(); err != nil {
		return Proposal{}, err
	}
	return p, checkProposal(p, table, key)
}

func checkProposal(p Proposal, table mutation.TableID, key []byte) error {
	if p.Update != nil && (p.Update.Table != table || !bytes.Equal(p.Update.Key, key)) {
		return fmt.Errorf("coordinator: a proposal for partition %x of table %s writes partition %x of table %s",
			key, table, p.Update.Key, p.Update.Table)
	}
	return nil
}

// paxosPrepare is a round's prepare: its ballot, whether it may write, and
// the slices of the partition a replica answers with (none for a replica
// being given the range).
type paxosPrepare struct {
	table  mutation.TableID
	key    []byte
	ballot Ballot
	write  bool
	read   bool
	reads  []request.Slice
}

func appendPaxosPrepare(dst []byte, m paxosPrepare) []byte {
	w := wire.Writer{B: dst}
	w.Bytes(m.table[:])
	w.Bytes(m.key)
	writeBallot(&w, m.ballot)
	w.Bool(m.write)
	w.Bool(m.read)
	w.Int(int64(len(m.reads)))
	for _, s := range m.reads {
		writeSlice(&w, s)
	}
	return w.B
}

func decodePaxosPrepare(b []byte) (paxosPrepare, error) {
	r := wire.Reader{B: b}
	m := paxosPrepare{table: readTableID(&r), key: r.Bytes(), ballot: readBallotField(&r), write: r.Bool(), read: r.Bool()}
	n := r.Count()
	for i := 0; i < n && r.Err == nil; i++ {
		m.reads = append(m.reads, readSlice(&r))
	}
	return m, r.Done()
}

// encodePromise is a replica's answer to a prepare, with its data when it
// was asked to read.
func encodePromise(p promise, read []mutation.Entry, hasRead bool) []byte {
	var w wire.Writer
	w.Int(int64(p.outcome))
	writeBallot(&w, p.supersededBy)
	w.B = appendProposal(w.B, p.accepted)
	w.B = appendProposal(w.B, p.committed)
	w.Bool(p.stable)
	w.Bool(hasRead)
	if hasRead {
		w.Bytes(encodeEntries(read))
	}
	return w.B
}

// decodePromise reads a promise about a partition of table, refusing
// proposals of another.
func decodePromise(b []byte, table mutation.TableID, key []byte) (p promise, read []mutation.Entry, hasRead bool, err error) {
	r := wire.Reader{B: b}
	outcome := r.Int()
	if r.Err == nil && (outcome < int64(promised) || outcome > int64(refused)) {
		r.Fail(fmt.Errorf("coordinator: a promise with outcome %d", outcome))
	}
	p.outcome = promiseOutcome(outcome)
	p.supersededBy = readBallotField(&r)
	p.accepted = readProposal(&r)
	p.committed = readProposal(&r)
	p.stable = r.Bool()
	if hasRead = r.Bool(); hasRead {
		raw := r.Bytes()
		if r.Err == nil {
			if read, err = decodeEntries(raw); err != nil {
				return promise{}, nil, false, err
			}
		}
	}
	if err := r.Done(); err != nil {
		return promise{}, nil, false, err
	}
	for _, prop := range []Proposal{p.accepted, p.committed} {
		if err := checkProposal(prop, table, key); err != nil {
			return promise{}, nil, false, err
		}
	}
	return p, read, hasRead, nil
}

// appendPaxosProposal is PAXOS_PROPOSE's and PAXOS_COMMIT's payload: the
// partition and the proposal.
func appendPaxosProposal(dst []byte, table mutation.TableID, key []byte, p Proposal) []byte {
	w := wire.Writer{B: dst}
	w.Bytes(table[:])
	w.Bytes(key)
	w.B = appendProposal(w.B, p)
	return w.B
}

func decodePaxosProposal(b []byte) (table mutation.TableID, key []byte, p Proposal, err error) {
	r := wire.Reader{B: b}
	table, key = readTableID(&r), r.Bytes()
	p = readProposal(&r)
	if err := r.Done(); err != nil {
		return table, nil, Proposal{}, err
	}
	return table, key, p, checkProposal(p, table, key)
}

// encodeAccepted is a replica's answer to a proposal.
func encodeAccepted(ok bool, supersededBy Ballot) []byte {
	var w wire.Writer
	w.Bool(ok)
	writeBallot(&w, supersededBy)
	return w.B
}

func decodeAccepted(b []byte) (ok bool, supersededBy Ballot, err error) {
	r := wire.Reader{B: b}
	ok, supersededBy = r.Bool(), readBallotField(&r)
	return ok, supersededBy, r.Done()
}
