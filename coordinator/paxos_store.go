package coordinator

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// paxosStore keeps this replica's Paxos registers: each change is written
// to system.paxos (through the engine, so the commit log has it) before
// any answer that depends on it leaves the node, and the registers of the
// partitions used lately stay in memory. A partition's rules run one at a
// time under its stripe's lock, reads of its data in a prepare and the
// application of its commits included, so an answer is the state of one
// moment.
//
// Each register is written with the timestamp of its ballot, as Cassandra
// writes them, and a proposal's record starts with its ballot: reconciled,
// the row holds the latest of each. An accepted proposal a later commit
// covers is left in the row and passed over when it is read back. The
// records expire after max(3 h, the table's gc_grace_seconds), as
// Cassandra 4.1's do by default (paxos_state_purging: legacy).
type paxosStore struct {
	engine  Engine
	schema  func() *schema.Schema
	now     func() int64 // seconds
	seed    maphash.Seed
	stripes [paxosStripes]paxosStripe
}

const (
	paxosStripes = 64
	// paxosCachedPerStripe bounds the partitions kept in memory.
	paxosCachedPerStripe = 128
	// minPaxosTTL is the least a record lives.
	minPaxosTTL = 3 * 3600
	// paxosRecordVersion is proposal_version and most_recent_commit_version:
	// the encoding of the records.
	paxosRecordVersion = 1
)

type paxosStripe struct {
	mu     sync.Mutex
	states map[paxosKey]PaxosState
}

type paxosKey struct {
	table mutation.TableID
	key   string
}

func newPaxosStore(e Engine, sch func() *schema.Schema, now func() int64) *paxosStore {
	ps := &paxosStore{engine: e, schema: sch, now: now, seed: maphash.MakeSeed()}
	for i := range ps.stripes {
		ps.stripes[i].states = map[paxosKey]PaxosState{}
	}
	return ps
}

// with runs rule on a partition's registers under its lock: rule returns
// the registers after it and the record of the change (nil: nothing to
// store), which is stored before the new registers are taken.
func (ps *paxosStore) with(table mutation.TableID, key []byte, rule func(s PaxosState) (PaxosState, *mutation.Mutation, error)) error {
	k := paxosKey{table, string(key)}
	st := &ps.stripes[maphash.String(ps.seed, k.key)%paxosStripes]
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.states[k]
	if !ok {
		var err error
		if s, err = ps.load(table, key); err != nil {
			return err
		}
	}
	after, record, err := rule(s)
	if err != nil {
		return err
	}
	if record != nil {
		if err := ps.engine.Apply([]*mutation.Mutation{record}); err != nil {
			delete(st.states, k) // what reached the disk is unknown: read it again
			return err
		}
	}
	if !ok && len(st.states) >= paxosCachedPerStripe {
		for old := range st.states {
			delete(st.states, old)
			break
		}
	}
	st.states[k] = after
	return nil
}

// ttl is how long a table's records live.
func (ps *paxosStore) ttl(table mutation.TableID) int32 {
	if t := ps.schema().TableByID(table); t != nil {
		return max(minPaxosTTL, t.Options.GCGraceSeconds)
	}
	return minPaxosTTL
}

// load reads a partition's registers from system.paxos.
func (ps *paxosStore) load(table mutation.TableID, key []byte) (PaxosState, error) {
	clustering, err := paxosClustering(table)
	if err != nil {
		return PaxosState{}, err
	}
	now := ps.now()
	p, err := ps.engine.Read(schema.PaxosTable.ID, key, request.Slice{Start: mutation.StartBound(clustering, true),
		End: mutation.EndBound(clustering, true), Now: now})
	if err != nil || p == nil || len(p.Rows) == 0 {
		return PaxosState{}, err
	}
	return paxosStateOf(p.Rows[0].Row, table, key, now)
}

// paxosStateOf reads a partition's registers from its system.paxos row.
func paxosStateOf(row *mutation.Row, table mutation.TableID, key []byte, now int64) (PaxosState, error) {
	var s PaxosState
	var err error
	for _, c := range row.Cells {
		if !c.IsLive(now) {
			continue
		}
		switch c.Column {
		case "in_progress_ballot":
			s.WritePromise, err = BallotFromUUID(c.Value)
		case "in_progress_read_ballot":
			s.ReadPromise, err = BallotFromUUID(c.Value)
		case "proposal":
			s.Accepted, err = decodeProposal(c.Value, table, key)
		case "most_recent_commit":
			s.Committed, err = decodeProposal(c.Value, table, key)
		}
		if err != nil {
			return PaxosState{}, fmt.Errorf("coordinator: system.paxos holds a bad %s for partition %x of table %s: %w", c.Column, key, table, err)
		}
	}
	if !s.Accepted.Ballot.After(s.Committed.Ballot) {
		s.Accepted = Proposal{} // a later commit covered it
	}
	return s, nil
}

// uncommitted are the partitions of a table in token range r whose
// registers here hold a proposal accepted and not committed. system.paxos
// is keyed by the partitions' own keys, so its partitions in r are theirs.
func (ps *paxosStore) uncommitted(table mutation.TableID, r partitioner.Range) ([][]byte, error) {
	clustering, err := paxosClustering(table)
	if err != nil {
		return nil, err
	}
	now := ps.now()
	var keys [][]byte
	p := ps.engine.Partitioner()
	for _, piece := range r.Unwrap(p) {
		from, to := piece.Bounds(p)
		parts, err := ps.engine.Scan(schema.PaxosTable.ID, request.RangeRead{From: from, To: to, Now: now})
		if err != nil {
			return nil, err
		}
		for _, part := range parts {
			for _, ru := range part.Rows {
				if !bytes.Equal(ru.Clustering, clustering) {
					continue
				}
				s, err := paxosStateOf(ru.Row, table, part.Key, now)
				if err != nil {
					return nil, err
				}
				if !s.Accepted.Empty() && !s.Accepted.sameOrigin(s.Committed) {
					keys = append(keys, part.Key)
				}
			}
		}
	}
	return keys, nil
}

// paxosClustering is system.paxos's clustering of a table's row: its id.
func paxosClustering(table mutation.TableID) ([]byte, error) {
	return schema.PaxosTable.ClusteringLayout().Encode(nil, [][]byte{table[:]})
}

// record builds the write of some of a partition's registers, at the
// timestamp of ballot at.
func (ps *paxosStore) record(table mutation.TableID, key []byte, at Ballot, values map[string][]byte) (*mutation.Mutation, error) {
	clustering, err := paxosClustering(table)
	if err != nil {
		return nil, err
	}
	w := schema.CellWriter{Timestamp: at.Micros, TTL: ps.ttl(table), Now: ps.now()}
	row := mutation.NewRow()
	for name, v := range values {
		row.Cells = append(row.Cells, w.Cell(schema.PaxosTable.Column(name), nil, v))
	}
	row.Normalize()
	m := mutation.NewMutation(schema.PaxosTable.ID, key)
	m.Rows = []mutation.RowUpdate{{Clustering: clustering, Row: row}}
	return m, nil
}

// promiseRecord stores a promise of ballot b.
func (ps *paxosStore) promiseRecord(table mutation.TableID, key []byte, b Ballot, write bool) (*mutation.Mutation, error) {
	column := "in_progress_read_ballot"
	if write {
		column = "in_progress_ballot"
	}
	return ps.record(table, key, b, map[string][]byte{column: b.UUID()})
}

// acceptRecord stores an accepted proposal.
func (ps *paxosStore) acceptRecord(table mutation.TableID, key []byte, p Proposal) (*mutation.Mutation, error) {
	return ps.record(table, key, p.Ballot, map[string][]byte{"proposal_ballot": p.Ballot.UUID(),
		"proposal": appendProposal(nil, p), "proposal_version": cqltype.EncodeInt(paxosRecordVersion)})
}

// commitRecord stores a commit.
func (ps *paxosStore) commitRecord(table mutation.TableID, key []byte, p Proposal) (*mutation.Mutation, error) {
	return ps.record(table, key, p.Ballot, map[string][]byte{"most_recent_commit_at": p.Ballot.UUID(),
		"most_recent_commit": appendProposal(nil, p), "most_recent_commit_version": cqltype.EncodeInt(paxosRecordVersion)})
}
