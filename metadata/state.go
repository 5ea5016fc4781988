package metadata

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
)

// ErrTokensTaken is the outcome of a node's registration whose tokens
// another node holds: it must choose others against the ring as it is.
var ErrTokensTaken = errors.New("metadata: another node holds some of these tokens")

// ErrRangeMovement is the outcome of a node's move into joining or
// leaving while another node is joining or leaving: ranges move one node
// at a time, so that each has one ring to stream by.
var ErrRangeMovement = errors.New("Other bootstrapping/leaving/moving nodes detected, cannot bootstrap while cassandra.consistent.rangemovement is true")

// ErrNotReplaceable is the outcome of a node's record that replaces a
// node the ring does not hold as normal (unknown, joining, leaving or
// gone).
var ErrNotReplaceable = errors.New("metadata: the node to replace is not a normal node of the ring")

// ErrSchemaChanged is the outcome of a schema change proposed against a
// schema epoch that another change has since moved on from: the
// statement must be checked again against the schema that is now.
var ErrSchemaChanged = errors.New("metadata: another schema change committed first")

// Member is one node of the group.
type Member struct {
	ID         uint64 // its Raft id, from its host id
	Endpoint   string // its listen address, which messaging names it by
	DataCenter string
	Rack       string
}

// NodeState is where a node is in the ring's life cycle.
type NodeState uint8

// The node states, as Cassandra names them.
const (
	Joining NodeState = iota + 1
	Normal
	Leaving
	Left
)

func (s NodeState) String() string {
	switch s {
	case Joining:
		return "joining"
	case Normal:
		return "normal"
	case Leaving:
		return "leaving"
	case Left:
		return "left"
	}
	return fmt.Sprintf("state %d", uint8(s))
}

// NodeRecord is one node of the ring as the log holds it: who it is,
// where it is, the tokens it owns and its state. Ownership is decided here,
// not by gossip.
type NodeRecord struct {
	ID         uint64 // its Raft id
	HostID     [16]byte
	Endpoint   string
	DataCenter string
	Rack       string
	Tokens     []string // the partitioner's token strings
	State      NodeState
	// Replaces is the id of the dead node whose tokens this one takes
	// (replace_address), while it joins; 0 for none. Once it is normal,
	// the node it replaced has left.
	Replaces uint64
}

// State is what the log's entries have made, as of an applied index.
type State struct {
	// Epoch counts the changes applied: each accepted entry adds one.
	Epoch uint64
	// SchemaEpoch is the epoch of the last schema change; a schema change
	// proposed against another is refused.
	SchemaEpoch uint64
	// SchemaTimestamp is the newest write timestamp the schema changes
	// applied carry, after their shifts (see applySchema).
	SchemaTimestamp int64
	// Members are the nodes of the group, by Raft id.
	Members map[uint64]Member
	// Nodes are the ring's nodes, by Raft id.
	Nodes map[uint64]NodeRecord
	// RingEpoch is the epoch of the last change to Nodes: the ring's
	// version, which requests carry.
	RingEpoch uint64
}

// clone is a copy the driver's state may go on changing under.
func (s State) clone() State {
	s.Members = maps.Clone(s.Members)
	if s.Members == nil {
		s.Members = map[uint64]Member{}
	}
	s.Nodes = maps.Clone(s.Nodes)
	if s.Nodes == nil {
		s.Nodes = map[uint64]NodeRecord{}
	}
	return s
}

// MemberIDs are the members' ids in order.
func (s State) MemberIDs() []uint64 { return slices.Sorted(maps.Keys(s.Members)) }

// proposalID names a proposal, so that the node that made it knows the
// entry that carries it (a proposal may be sent more than once).
type proposalID struct {
	Node, Seq uint64
}

// schemaChange is the entry of a schema change: the mutations a
// statement made (encoded by the node), the schema epoch the statement
// was checked against, and the bounds of the write timestamps inside.
type schemaChange struct {
	Proposal     proposalID
	Base         uint64
	MinTimestamp int64
	MaxTimestamp int64
	Mutations    []byte
}

// outcome is what applying an entry did.
type outcome struct {
	Epoch uint64
	// Shift is what the schema change's timestamps move by (see
	// applySchema); 0 when refused.
	Shift int64
	Err   error
}

// applySchema applies a schema change if it was checked against the
// latest schema. Its timestamps move up, when need be, to just after
// those of the change before it: the log's order, not the clocks of the
// nodes that proposed them, decides which of two changes wins in
// system_schema (a DROP after a CREATE made on a node whose clock runs
// ahead must still drop).
func (s *State) applySchema(c *schemaChange) outcome {
	if c.Base != s.SchemaEpoch {
		return outcome{Epoch: s.Epoch, Err: ErrSchemaChanged}
	}
	var shift int64
	if c.MinTimestamp <= s.SchemaTimestamp {
		shift = s.SchemaTimestamp + 1 - c.MinTimestamp
	}
	s.Epoch++
	s.SchemaEpoch = s.Epoch
	s.SchemaTimestamp = max(s.SchemaTimestamp, c.MaxTimestamp+shift)
	return outcome{Epoch: s.Epoch, Shift: shift}
}

// nodeChange is the entry of a node's registration: the record it takes
// in the ring, replacing the one of the same id.
type nodeChange struct {
	Proposal proposalID
	Record   NodeRecord
}

// applyNode records a node in the ring unless another node holds one of
// its tokens.
func (s *State) applyNode(c *nodeChange) outcome {
	if r := c.Record.Replaces; r != 0 {
		// Normal, or already left to a replacement retried as it ends.
		if old, ok := s.Nodes[r]; !ok || old.State != Normal && (old.State != Left || c.Record.State != Normal) {
			return outcome{Epoch: s.Epoch, Err: ErrNotReplaceable}
		}
	}
	held := map[string]bool{}
	for id, n := range s.Nodes {
		if id != c.Record.ID && id != c.Record.Replaces && n.State != Left {
			for _, t := range n.Tokens {
				held[t] = true
			}
		}
	}
	for _, t := range c.Record.Tokens {
		if held[t] {
			return outcome{Epoch: s.Epoch, Err: ErrTokensTaken}
		}
	}
	if moving(c.Record.State) {
		for id, n := range s.Nodes {
			if id != c.Record.ID && moving(n.State) {
				return outcome{Epoch: s.Epoch, Err: ErrRangeMovement}
			}
		}
	}
	if s.Nodes == nil {
		s.Nodes = map[uint64]NodeRecord{}
	}
	s.Nodes[c.Record.ID] = c.Record
	if r := c.Record.Replaces; r != 0 && c.Record.State == Normal {
		old := s.Nodes[r]
		old.State = Left
		s.Nodes[r] = old
	}
	s.Epoch++
	s.RingEpoch = s.Epoch
	return outcome{Epoch: s.Epoch}
}

func moving(s NodeState) bool { return s == Joining || s == Leaving }

// leftMembers are the members of the group whose node has left the ring,
// in order.
func (s State) leftMembers() []uint64 {
	var out []uint64
	for _, id := range s.MemberIDs() {
		if r, ok := s.Nodes[id]; ok && r.State == Left {
			out = append(out, id)
		}
	}
	return out
}

// applyMembers applies a configuration change: a member added (as a
// learner or a voter) is recorded from the change's context, one removed
// is forgotten.
func (s *State) applyMembers(cc raftpb.ConfChangeV2, joining []Member) {
	byID := map[uint64]Member{}
	for _, m := range joining {
		byID[m.ID] = m
	}
	for _, ch := range cc.Changes {
		switch ch.Type {
		case raftpb.ConfChangeAddNode, raftpb.ConfChangeAddLearnerNode:
			if m, ok := byID[ch.NodeID]; ok {
				s.Members[ch.NodeID] = m
			}
		case raftpb.ConfChangeRemoveNode:
			delete(s.Members, ch.NodeID)
		}
	}
	s.Epoch++
}

// keepVoters turns, in a configuration change, the addition as a learner
// of a node that already votes into a change that keeps it voting: a join
// sent twice (once before, once after the node was promoted) must not
// demote it. Every member sees the same configuration at the same entry,
// so every member turns it the same way.
func keepVoters(cc raftpb.ConfChangeV2, cs raftpb.ConfState) raftpb.ConfChangeV2 {
	out := cc
	out.Changes = slices.Clone(cc.Changes)
	for i, ch := range out.Changes {
		if ch.Type == raftpb.ConfChangeAddLearnerNode && (slices.Contains(cs.Voters, ch.NodeID) || slices.Contains(cs.VotersOutgoing, ch.NodeID)) {
			out.Changes[i].Type = raftpb.ConfChangeAddNode
		}
	}
	return out
}

// votersWanted is how many voters a group of n members should have: all
// of them up to three, then five at most, and always an odd number (a
// fourth voter would make a majority harder to reach, not easier).
func votersWanted(n int) int {
	v := min(n, 5)
	if v > 1 && v%2 == 0 {
		v--
	}
	return max(v, 1)
}

// chooseVoters picks, of the learners ready to vote, up to want-len(voters)
// to promote, each time one of a data centre, and then a rack, that holds
// the fewest voters so far: the voters spread so that losing one rack or
// data centre loses as few as it can. Ties go to the lower id.
func chooseVoters(members map[uint64]Member, voters, ready []uint64, want int) []uint64 {
	dcs := map[string]int{}
	racks := map[[2]string]int{}
	for _, id := range voters {
		m := members[id]
		dcs[m.DataCenter]++
		racks[[2]string{m.DataCenter, m.Rack}]++
	}
	candidates := slices.Clone(ready)
	slices.Sort(candidates)
	var out []uint64
	for len(voters)+len(out) < want && len(candidates) > 0 {
		best := 0
		for i := 1; i < len(candidates); i++ {
			a, b := members[candidates[i]], members[candidates[best]]
			if da, db := dcs[a.DataCenter], dcs[b.DataCenter]; da != db {
				if da < db {
					best = i
				}
				continue
			}
			if racks[[2]string{a.DataCenter, a.Rack}] < racks[[2]string{b.DataCenter, b.Rack}] {
				best = i
			}
		}
		m := members[candidates[best]]
		dcs[m.DataCenter]++
		racks[[2]string{m.DataCenter, m.Rack}]++
		out = append(out, candidates[best])
		candidates = slices.Delete(candidates, best, best+1)
	}
	return out
}
