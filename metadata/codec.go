package metadata

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sibyldb/sibyl/internal/wire"
)

// The encodings of the log's entries, of snapshots and of the join
// exchange, in internal/wire's fields. A normal entry starts with its
// kind; the leader's empty entries carry nothing.

type entryKind byte

const (
	entrySchema entryKind = 1
	entryNode   entryKind = 2
)

func encodeSchemaChange(c *schemaChange) []byte {
	w := wire.Writer{B: []byte{byte(entrySchema)}}
	w.Uint(c.Proposal.Node)
	w.Uint(c.Proposal.Seq)
	w.Uint(c.Base)
	w.Int(c.MinTimestamp)
	w.Int(c.MaxTimestamp)
	w.Bytes(c.Mutations)
	return w.B
}

func encodeNodeChange(c *nodeChange) []byte {
	w := wire.Writer{B: []byte{byte(entryNode)}}
	w.Uint(c.Proposal.Node)
	w.Uint(c.Proposal.Seq)
	writeNodeRecord(&w, c.Record)
	return w.B
}

// decodeEntry decodes a normal entry's data: a schema change or a node's
// registration, or neither for an empty entry.
func decodeEntry(b []byte) (*schemaChange, *nodeChange, error) {
	if len(b) == 0 {
		return nil, nil, nil
	}
	r := wire.Reader{B: b[1:]}
	switch entryKind(b[0]) {
	case entrySchema:
		c := &schemaChange{Proposal: proposalID{Node: r.Uint(), Seq: r.Uint()}, Base: r.Uint(), MinTimestamp: r.Int(), MaxTimestamp: r.Int()}
		c.Mutations = r.Bytes()
		if err := r.Done(); err != nil {
			return nil, nil, fmt.Errorf("metadata: a schema change entry: %w", err)
		}
		return c, nil, nil
	case entryNode:
		c := &nodeChange{Proposal: proposalID{Node: r.Uint(), Seq: r.Uint()}}
		c.Record = readNodeRecord(&r)
		if err := r.Done(); err != nil {
			return nil, nil, fmt.Errorf("metadata: a node entry: %w", err)
		}
		return nil, c, nil
	}
	return nil, nil, fmt.Errorf("metadata: an entry of unknown kind %d", b[0])
}

func writeNodeRecord(w *wire.Writer, n NodeRecord) {
	w.Uint(n.ID)
	w.Bytes(n.HostID[:])
	w.String(n.Endpoint)
	w.String(n.DataCenter)
	w.String(n.Rack)
	w.Int(int64(len(n.Tokens)))
	for _, t := range n.Tokens {
		w.String(t)
	}
	if n.Replaces == 0 {
		w.Uint(uint64(n.State))
		return
	}
	// A flag bit above the states says a replaced node's id follows: a
	// record written before replacements decodes as it did.
	w.Uint(uint64(n.State) | replacesFlag)
	w.Uint(n.Replaces)
}

// replacesFlag marks an encoded state followed by NodeRecord.Replaces.
const replacesFlag = 1 << 8

func readNodeRecord(r *wire.Reader) NodeRecord {
	n := NodeRecord{ID: r.Uint()}
	if host := r.Bytes(); len(host) == len(n.HostID) {
		copy(n.HostID[:], host)
	} else if r.Err == nil {
		r.Fail(fmt.Errorf("a host id of %d bytes", len(host)))
	}
	n.Endpoint, n.DataCenter, n.Rack = r.String(), r.String(), r.String()
	count := r.Count()
	for i := 0; i < count && r.Err == nil; i++ {
		n.Tokens = append(n.Tokens, r.String())
	}
	st := r.Uint()
	if st&replacesFlag != 0 {
		n.Replaces = r.Uint()
	}
	if st &^= replacesFlag; st > uint64(Left) {
		r.Fail(fmt.Errorf("a node state of %d", st))
	}
	n.State = NodeState(st)
	return n
}

func writeMember(w *wire.Writer, m Member) {
	w.Uint(m.ID)
	w.String(m.Endpoint)
	w.String(m.DataCenter)
	w.String(m.Rack)
}

func readMember(r *wire.Reader) Member {
	return Member{ID: r.Uint(), Endpoint: r.String(), DataCenter: r.String(), Rack: r.String()}
}

func writeMembers(w *wire.Writer, ms []Member) {
	w.Int(int64(len(ms)))
	for _, m := range ms {
		writeMember(w, m)
	}
}

func readMembers(r *wire.Reader) []Member {
	n := r.Count()
	out := make([]Member, 0, n)
	for i := 0; i < n && r.Err == nil; i++ {
		out = append(out, readMember(r))
	}
	return out
}

// confContext is what a configuration change carries beside Raft's ids:
// the proposal it answers, the members it adds, and (the founding change
// only) the newest schema timestamp of the founder's stored schema, after
// which every schema change's timestamps fall.
type confContext struct {
	Proposal        proposalID
	Members         []Member
	SchemaTimestamp int64
}

func encodeConfContext(c confContext) []byte {
	var w wire.Writer
	w.Uint(c.Proposal.Node)
	w.Uint(c.Proposal.Seq)
	writeMembers(&w, c.Members)
	w.Int(c.SchemaTimestamp)
	return w.B
}

func decodeConfContext(b []byte) (confContext, error) {
	if len(b) == 0 {
		return confContext{}, nil
	}
	r := wire.Reader{B: b}
	c := confContext{Proposal: proposalID{Node: r.Uint(), Seq: r.Uint()}}
	c.Members = readMembers(&r)
	c.SchemaTimestamp = r.Int()
	if err := r.Done(); err != nil {
		return confContext{}, fmt.Errorf("metadata: a configuration change's context: %w", err)
	}
	return c, nil
}

// encodeSnapshot is a snapshot's data: the state, then the schema as the
// Applier gave it.
func encodeSnapshot(s State, schema []byte) []byte {
	var w wire.Writer
	w.Uint(s.Epoch)
	w.Uint(s.SchemaEpoch)
	w.Int(s.SchemaTimestamp)
	ms := make([]Member, 0, len(s.Members))
	for _, id := range s.MemberIDs() {
		ms = append(ms, s.Members[id])
	}
	writeMembers(&w, ms)
	w.Uint(s.RingEpoch)
	w.Int(int64(len(s.Nodes)))
	for _, id := range slices.Sorted(maps.Keys(s.Nodes)) {
		writeNodeRecord(&w, s.Nodes[id])
	}
	w.Bytes(schema)
	return w.B
}

func decodeSnapshot(b []byte) (State, []byte, error) {
	r := wire.Reader{B: b}
	s := State{Epoch: r.Uint(), SchemaEpoch: r.Uint(), SchemaTimestamp: r.Int(), Members: map[uint64]Member{}, Nodes: map[uint64]NodeRecord{}}
	for _, m := range readMembers(&r) {
		s.Members[m.ID] = m
	}
	s.RingEpoch = r.Uint()
	count := r.Count()
	for i := 0; i < count && r.Err == nil; i++ {
		n := readNodeRecord(&r)
		s.Nodes[n.ID] = n
	}
	schema := r.Bytes()
	if err := r.Done(); err != nil {
		return State{}, nil, fmt.Errorf("metadata: a snapshot: %w", err)
	}
	return s, schema, nil
}

// The answers to a join request.
const (
	joinAdded    = 1 // added; the index to catch up to follows
	joinRedirect = 2 // not the leader; the leader's endpoint follows ("" if unknown)
	joinNoGroup  = 3 // this node has no metadata log yet
)

// errNoGroup is the answer of a node that has no log yet.
var errNoGroup = errors.New("metadata: the node has no metadata log yet")

type joinAnswer struct {
	Kind   byte
	Index  uint64
	Leader string
}

func encodeJoinAnswer(a joinAnswer) []byte {
	w := wire.Writer{B: []byte{a.Kind}}
	w.Uint(a.Index)
	w.String(a.Leader)
	return w.B
}

func decodeJoinAnswer(b []byte) (joinAnswer, error) {
	if len(b) == 0 {
		return joinAnswer{}, errors.New("metadata: an empty join answer")
	}
	r := wire.Reader{B: b[1:]}
	a := joinAnswer{Kind: b[0], Index: r.Uint(), Leader: r.String()}
	if err := r.Done(); err != nil {
		return joinAnswer{}, fmt.Errorf("metadata: a join answer: %w", err)
	}
	return a, nil
}

func encodeMember(m Member) []byte {
	var w wire.Writer
	writeMember(&w, m)
	return w.B
}

func decodeMember(b []byte) (Member, error) {
	r := wire.Reader{B: b}
	m := readMember(&r)
	if err := r.Done(); err != nil {
		return Member{}, fmt.Errorf("metadata: a member: %w", err)
	}
	if m.ID == 0 {
		return Member{}, errors.New("metadata: a member with id 0")
	}
	return m, nil
}
