package metadata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/sibyldb/sibyl/messaging"
)

// ErrClosed is the error of a call on a Log that has stopped.
var ErrClosed = errors.New("metadata: the log is closed")

const (
	// reproposeTicks is how often a proposal not yet applied goes out
	// again: one dropped (no leader yet) or lost with a leader that fell.
	reproposeTicks = 10
	// keepEntries are the entries a snapshot leaves in the log, for
	// followers a little behind.
	keepEntries = 100
	// sendQueue is how many messages wait for one peer before more are
	// dropped (Raft sends again what is lost).
	sendQueue   = 256
	sendTimeout = 5 * time.Second
)

// Log is one node's member of the metadata group.
type Log struct {
	opts  Options
	disk  *disk
	rn    *raft.RawNode
	calls chan func()
	inbox chan inbound
	stop  chan struct{}
	done  chan struct{}
	seq   atomic.Uint64

	// The loop goroutine's own, after Start.
	state     State
	confState raftpb.ConfState
	applied   uint64
	snapIndex uint64
	restored  uint64 // the index of the last snapshot taken in
	pending   map[proposalID]*proposal
	answers   []func()          // to the proposals that applied, once published
	addrs     map[uint64]string // endpoints learned from messages received
	senders   map[string]chan []byte
	ticks     uint64
	// contactTick is the last tick this member led, or heard from the
	// leader.
	contactTick uint64
	// promotedAt is the tick of the last promotion proposed: the next
	// waits until it has had time to commit.
	promotedAt uint64
	failed     error

	status      atomic.Pointer[Status]
	appliedMu   sync.Mutex
	appliedNow  uint64
	appliedWake chan struct{} // closed when applied moves on
	startOnce   sync.Once
	running     atomic.Bool
	closeOnce   sync.Once
}

type inbound struct {
	from string
	msg  raftpb.Message
}

// proposal is a proposal waiting to apply.
type proposal struct {
	data []byte
	conf *raftpb.ConfChangeV2
	done chan outcomeAt
}

type outcomeAt struct {
	outcome
	index uint64
}

// Status is what a member knows of the group.
type Status struct {
	ID       uint64
	Leader   uint64 // 0 when none is known
	Term     uint64
	Commit   uint64
	Applied  uint64
	State    State
	Voters   []uint64
	Learners []uint64
	// VotersOutgoing are the voters of the configuration being left while
	// the group is in a joint one (empty otherwise): until the change
	// commits, an election needs a majority of these as well as of Voters.
	VotersOutgoing []uint64
	// Role is leader, follower, candidate or pre-candidate.
	Role string
	// HasLog is false on a node that has never been in a group.
	HasLog bool
	// Partitioned is true once the member has gone PartitionedAfter
	// without hearing from a leader: it cannot reach a majority of the
	// voters, and what it knows of the cluster may be stale.
	Partitioned bool
	// SinceContact is how long it has gone without a leader.
	SinceContact time.Duration
	// Restored is the index of the last snapshot this member took in from
	// another (it was too far behind for the entries); 0 if none.
	Restored uint64
}

// LeaderEndpoint is the leader's endpoint, or "".
func (s *Status) LeaderEndpoint() string { return s.State.Members[s.Leader].Endpoint }

// Open reads the log from disk. The state is the latest snapshot's; the
// entries after it apply once Start runs.
func Open(opts Options) (*Log, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	d, err := openDisk(opts.FS, opts.Dir, opts.Logger)
	if err != nil {
		return nil, err
	}
	l := &Log{opts: opts, disk: d, calls: make(chan func()), inbox: make(chan inbound, 1024), stop: make(chan struct{}), done: make(chan struct{}),
		state: State{Members: map[uint64]Member{}}, pending: map[proposalID]*proposal{}, addrs: map[uint64]string{}, senders: map[string]chan []byte{},
		appliedWake: make(chan struct{})}
	snap, err := d.mem.Snapshot()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("metadata: %w", err), d.close())
	}
	if !raft.IsEmptySnap(snap) {
		st, _, err := decodeSnapshot(snap.Data)
		if err != nil {
			return nil, errors.Join(err, d.close())
		}
		l.state, l.confState = st, snap.Metadata.ConfState
		l.applied, l.snapIndex, l.appliedNow = snap.Metadata.Index, snap.Metadata.Index, snap.Metadata.Index
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID: opts.Self.ID, ElectionTick: opts.ElectionTicks, HeartbeatTick: 1, Storage: d.mem, Applied: l.applied,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, MaxUncommittedEntriesSize: 64 << 20,
		CheckQuorum: true, PreVote: true, Logger: raftLogger{opts.Logger},
		// A leader that removes itself (a node leaving the cluster) hands
		// over at once rather than leading a group it is not in.
		StepDownOnRemoval: true,
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("metadata: %w", err), d.close())
	}
	l.rn = rn
	// Proposal numbers of this run start from the clock: an entry this
	// node proposed in an earlier run may still commit, and must not
	// answer a proposal of this one.
	l.seq.Store(uint64(time.Now().UnixNano()))
	l.publish()
	return l, nil
}

// HasLog reports whether this node has been in a group: one that has not
// must Bootstrap one or Join one.
func (l *Log) HasLog() bool { return l.Status().HasLog }

// Bootstrap makes a new group of this node alone, its only voter, whose
// schema epoch starts at 0 and whose schema timestamps start after
// schemaTimestamp (the newest the node's stored schema holds), on a node
// with no log. Before Start, or on a running log (through the loop).
func (l *Log) Bootstrap(schemaTimestamp int64) error {
	var err error
	boot := func() {
		if !l.disk.empty() {
			err = errors.New("metadata: the node already has a metadata log")
			return
		}
		ctx := encodeConfContext(confContext{Members: []Member{l.opts.Self}, SchemaTimestamp: schemaTimestamp})
		if err = l.rn.Bootstrap([]raft.Peer{{ID: l.opts.Self.ID, Context: ctx}}); err != nil {
			err = fmt.Errorf("metadata: %w", err)
			return
		}
		if l.running.Load() {
			err = l.ready()
			l.campaignAlone()
		}
	}
	if l.running.Load() {
		if derr := l.do(context.Background(), boot); derr != nil {
			return derr
		}
	} else {
		boot()
	}
	return err
}

// Start runs the log: it applies what it has committed before it returns,
// then goes on in the background.
func (l *Log) Start() error {
	var err error
	l.startOnce.Do(func() {
		err = l.ready()
		l.campaignAlone()
		l.publish()
		l.running.Store(true)
		go l.run()
	})
	return err
}

// Close stops the log and closes its files.
func (l *Log) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.stop)
		started := true
		l.startOnce.Do(func() { started = false })
		if started {
			<-l.done
		}
		err = l.disk.close()
	})
	return err
}

// Status is what this member knows of the group now.
func (l *Log) Status() *Status { return l.status.Load() }

// Applied is the index this member has applied.
func (l *Log) Applied() uint64 {
	l.appliedMu.Lock()
	defer l.appliedMu.Unlock()
	return l.appliedNow
}

// WaitApplied waits until this member has applied index.
func (l *Log) WaitApplied(ctx context.Context, index uint64) error {
	return l.waitFor(ctx, func() (bool, string) {
		now := l.Applied()
		return now >= index, fmt.Sprintf("index %d (applied %d)", index, now)
	})
}

// WaitEpoch waits until this member has applied epoch.
func (l *Log) WaitEpoch(ctx context.Context, epoch uint64) error {
	return l.waitFor(ctx, func() (bool, string) {
		now := l.Status().State.Epoch
		return now >= epoch, fmt.Sprintf("epoch %d (at %d)", epoch, now)
	})
}

// waitFor waits until done holds, checking each time the log publishes
// what it applied; what names the wait in a timeout's error.
func (l *Log) waitFor(ctx context.Context, done func() (ok bool, what string)) error {
	for {
		l.appliedMu.Lock()
		wake := l.appliedWake
		l.appliedMu.Unlock()
		ok, what := done()
		if ok {
			return nil
		}
		select {
		case <-wake:
		case <-l.stop:
			return ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("metadata: waiting to apply %s: %w", what, ctx.Err())
		}
	}
}

// Committed says where a change applied: the epoch it made and the index
// of its entry (which other members have applied once they reach it).
type Committed struct {
	Epoch, Index uint64
}

// ProposeSchema commits a schema change made against the schema of
// schema epoch base, and returns once it has applied here: the new schema
// epoch, or ErrSchemaChanged when another change came first.
func (l *Log) ProposeSchema(ctx context.Context, base uint64, minTimestamp, maxTimestamp int64, mutations []byte) (Committed, error) {
	id := proposalID{Node: l.opts.Self.ID, Seq: l.seq.Add(1)}
	c := &schemaChange{Proposal: id, Base: base, MinTimestamp: minTimestamp, MaxTimestamp: maxTimestamp, Mutations: mutations}
	o, err := l.propose(ctx, id, &proposal{data: encodeSchemaChange(c)})
	if err != nil {
		return Committed{}, err
	}
	return Committed{Epoch: o.Epoch, Index: o.index}, o.Err
}

// ProposeNode records a node in the ring (its tokens, location and
// state), replacing its record, and returns once that has applied here;
// ErrTokensTaken when another node holds one of its tokens.
func (l *Log) ProposeNode(ctx context.Context, n NodeRecord) (Committed, error) {
	id := proposalID{Node: l.opts.Self.ID, Seq: l.seq.Add(1)}
	o, err := l.propose(ctx, id, &proposal{data: encodeNodeChange(&nodeChange{Proposal: id, Record: n})})
	if err != nil {
		return Committed{}, err
	}
	return Committed{Epoch: o.Epoch, Index: o.index}, o.Err
}

// propose hands a proposal to the loop and waits for the entry that
// carries it to apply here.
func (l *Log) propose(ctx context.Context, id proposalID, p *proposal) (outcomeAt, error) {
	p.done = make(chan outcomeAt, 1)
	if err := l.do(ctx, func() {
		if l.failed != nil {
			p.done <- outcomeAt{outcome: outcome{Err: l.failed}}
			return
		}
		l.pending[id] = p
		l.send(p)
	}); err != nil {
		return outcomeAt{}, err
	}
	select {
	case o := <-p.done:
		return o, nil
	case <-l.stop:
		return outcomeAt{}, ErrClosed
	case <-ctx.Done():
		_ = l.do(context.Background(), func() { delete(l.pending, id) })
		return outcomeAt{}, fmt.Errorf("metadata: a change not committed in time (no majority of the metadata voters reachable?): %w", ctx.Err())
	}
}

// do runs f on the loop goroutine.
func (l *Log) do(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	select {
	case l.calls <- func() { f(); l.publish(); close(ran) }:
	case <-l.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ran:
		return nil
	case <-l.stop:
		return ErrClosed
	}
}

// Step takes a Raft message another node sent.
func (l *Log) Step(from string, b []byte) error {
	var m raftpb.Message
	if err := m.Unmarshal(b); err != nil {
		return fmt.Errorf("metadata: a Raft message does not decode: %w", err)
	}
	if m.To != l.opts.Self.ID {
		// For the member that had this address before (a node replaced
		// at its address): not this one's to take.
		return nil
	}
	select {
	case l.inbox <- inbound{from: from, msg: m}:
	default: // full: Raft sends again
	}
	return nil
}

// send gives a proposal to Raft; one dropped (no leader known) goes again
// at the next reproposal.
func (l *Log) send(p *proposal) {
	var err error
	if p.conf != nil {
		err = l.rn.ProposeConfChange(*p.conf)
	} else {
		err = l.rn.Propose(p.data)
	}
	if err != nil && !errors.Is(err, raft.ErrProposalDropped) {
		l.opts.Logger.Warn().Err(err).Msg("metadata: proposing")
	}
}

func (l *Log) run() {
	defer close(l.done)
	ticker := time.NewTicker(l.opts.TickInterval)
	defer ticker.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-ticker.C:
			l.tick()
		case in := <-l.inbox:
			if in.msg.From != 0 && in.from != "" {
				l.addrs[in.msg.From] = in.from
			}
			if lead := l.rn.BasicStatus().Lead; lead != 0 && in.msg.From == lead {
				l.contactTick = l.ticks
			}
			if err := l.rn.Step(in.msg); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) && !errors.Is(err, raft.ErrStepLocalMsg) {
				l.opts.Logger.Debug().Err(err).Msg("metadata: a Raft message")
			}
		case f := <-l.calls:
			f()
		}
		if l.failed != nil {
			continue // applying failed: the state must not move on
		}
		if err := l.ready(); err != nil {
			l.failed = err
			l.opts.Logger.Error().Err(err).Msg("metadata: the metadata log stopped; the node must restart")
			for id, p := range l.pending {
				delete(l.pending, id)
				p.done <- outcomeAt{outcome: outcome{Err: err}}
			}
		}
	}
}

// campaignAlone makes a group whose only voter is this node elect it at
// once, rather than after an election timeout: a single node's first DDL
// need not wait a second.
func (l *Log) campaignAlone() {
	voters := l.rn.Status().Config.Voters
	if len(voters[1]) == 0 && len(voters[0]) == 1 && voters[0].Slice()[0] == l.opts.Self.ID && l.rn.BasicStatus().RaftState != raft.StateLeader {
		if err := l.rn.Campaign(); err != nil {
			l.opts.Logger.Warn().Err(err).Msg("metadata: campaigning")
		}
		if err := l.ready(); err != nil {
			l.failed = err
		}
	}
}

func (l *Log) tick() {
	l.rn.Tick()
	l.ticks++
	if l.rn.BasicStatus().RaftState == raft.StateLeader {
		l.contactTick = l.ticks
	}
	if l.ticks%reproposeTicks == 0 {
		for _, p := range l.pending {
			l.send(p)
		}
	}
	l.promote()
}

// ready persists, sends and applies what Raft has for it, until it has
// nothing more, then publishes the state and answers the proposals that
// applied.
func (l *Log) ready() error {
	defer func() {
		l.publish()
		for _, answer := range l.answers {
			answer()
		}
		l.answers = nil
	}()
	for l.rn.HasReady() {
		rd := l.rn.Ready()
		// A snapshot from another member goes to the Applier before it is
		// kept: kept first, a crash (or a failed restore) in between would
		// leave a log that says applied what the node never took in.
		// Taking it in twice is harmless (its schema merges).
		if !raft.IsEmptySnap(rd.Snapshot) {
			if err := l.restore(rd.Snapshot); err != nil {
				return err
			}
		}
		if err := l.disk.save(rd); err != nil {
			return err
		}
		for _, m := range rd.Messages {
			l.deliver(m)
		}
		for _, e := range rd.CommittedEntries {
			if err := l.apply(e); err != nil {
				return err
			}
		}
		l.rn.Advance(rd)
		if err := l.maybeSnapshot(); err != nil {
			return err
		}
	}
	return nil
}

// restore takes in a snapshot another member sent.
func (l *Log) restore(snap raftpb.Snapshot) error {
	st, schema, err := decodeSnapshot(snap.Data)
	if err != nil {
		return err
	}
	if err := l.opts.Applier.RestoreSchema(schema, st.SchemaEpoch); err != nil {
		return fmt.Errorf("metadata: taking in a snapshot's schema: %w", err)
	}
	if err := l.opts.Applier.ApplyTopology(st.clone().Nodes, st.RingEpoch); err != nil {
		return fmt.Errorf("metadata: taking in a snapshot's ring: %w", err)
	}
	l.state, l.confState = st, snap.Metadata.ConfState
	l.applied, l.snapIndex, l.restored = snap.Metadata.Index, snap.Metadata.Index, snap.Metadata.Index
	l.opts.Logger.Info().Uint64("index", snap.Metadata.Index).Uint64("epoch", st.Epoch).Msg("metadata: caught up from a snapshot")
	return nil
}

func (l *Log) apply(e raftpb.Entry) error {
	if e.Index <= l.applied {
		return nil
	}
	switch e.Type {
	case raftpb.EntryNormal:
		c, nc, err := decodeEntry(e.Data)
		switch {
		case err != nil:
			// Every member skips the same bytes the same way.
			l.opts.Logger.Error().Err(err).Uint64("index", e.Index).Msg("metadata: skipping an entry that does not decode")
		case c != nil:
			o := l.state.applySchema(c)
			if o.Err == nil {
				_, proposedHere := l.pending[c.Proposal]
				if err := l.opts.Applier.ApplySchema(c.Mutations, o.Shift, o.Epoch, proposedHere); err != nil {
					return fmt.Errorf("metadata: applying the schema change of index %d: %w", e.Index, err)
				}
			}
			l.resolve(c.Proposal, outcomeAt{outcome: o, index: e.Index})
		case nc != nil:
			o := l.state.applyNode(nc)
			if o.Err == nil {
				if err := l.opts.Applier.ApplyTopology(l.state.clone().Nodes, o.Epoch); err != nil {
					return fmt.Errorf("metadata: applying the ring change of index %d: %w", e.Index, err)
				}
			}
			l.resolve(nc.Proposal, outcomeAt{outcome: o, index: e.Index})
		}
	case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
		var cc raftpb.ConfChangeV2
		if e.Type == raftpb.EntryConfChange {
			var v1 raftpb.ConfChange
			if err := v1.Unmarshal(e.Data); err != nil {
				return fmt.Errorf("metadata: a configuration change of index %d: %w", e.Index, err)
			}
			cc = v1.AsV2()
		} else if err := cc.Unmarshal(e.Data); err != nil {
			return fmt.Errorf("metadata: a configuration change of index %d: %w", e.Index, err)
		}
		ctx, err := decodeConfContext(cc.Context)
		if err != nil {
			l.opts.Logger.Error().Err(err).Uint64("index", e.Index).Msg("metadata: a configuration change without its members")
		}
		cc = keepVoters(cc, l.confState)
		l.confState = *l.rn.ApplyConfChange(cc)
		l.state.applyMembers(cc, ctx.Members)
		l.state.SchemaTimestamp = max(l.state.SchemaTimestamp, ctx.SchemaTimestamp)
		l.resolve(ctx.Proposal, outcomeAt{outcome: outcome{Epoch: l.state.Epoch}, index: e.Index})
	}
	l.applied = e.Index
	return nil
}

// resolve answers the proposal an applied entry carries, once ready has
// published the state it made (so that its proposer reads it in Status).
func (l *Log) resolve(id proposalID, o outcomeAt) {
	if id.Node != l.opts.Self.ID {
		return
	}
	if p, ok := l.pending[id]; ok {
		delete(l.pending, id)
		l.answers = append(l.answers, func() { p.done <- o })
	}
}

func (l *Log) setApplied() {
	l.appliedMu.Lock()
	defer l.appliedMu.Unlock()
	if l.applied > l.appliedNow {
		l.appliedNow = l.applied
		close(l.appliedWake)
		l.appliedWake = make(chan struct{})
	}
}

func (l *Log) maybeSnapshot() error {
	if l.applied < l.snapIndex+l.opts.SnapshotEntries {
		return nil
	}
	schema, err := l.opts.Applier.SchemaSnapshot()
	if err != nil {
		return fmt.Errorf("metadata: the schema for a snapshot: %w", err)
	}
	if err := l.disk.snapshot(l.applied, l.confState, encodeSnapshot(l.state, schema), keepEntries); err != nil {
		return err
	}
	l.snapIndex = l.applied
	return nil
}

// deliver sends a message on its peer's queue.
func (l *Log) deliver(m raftpb.Message) {
	to := l.state.Members[m.To].Endpoint
	if to == "" {
		to = l.addrs[m.To]
	}
	if to == "" {
		l.rn.ReportUnreachable(m.To)
		return
	}
	b, err := m.Marshal()
	if err != nil {
		l.opts.Logger.Error().Err(err).Msg("metadata: encoding a Raft message")
		return
	}
	q, ok := l.senders[to]
	if !ok {
		q = make(chan []byte, sendQueue)
		l.senders[to] = q
		go l.sendLoop(to, q)
	}
	select {
	case q <- b:
		if m.Type == raftpb.MsgSnap {
			// Sent one way: if it is lost, the follower's answers to the
			// next heartbeats show the leader that it still lags.
			l.rn.ReportSnapshot(m.To, raft.SnapshotFinish)
		}
	default:
		l.rn.ReportUnreachable(m.To)
		if m.Type == raftpb.MsgSnap {
			l.rn.ReportSnapshot(m.To, raft.SnapshotFailure)
		}
	}
}

func (l *Log) sendLoop(to string, q chan []byte) {
	for {
		select {
		case <-l.stop:
			return
		case b := <-q:
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			err := l.opts.Network.Send(ctx, to, messaging.VerbMetadata, b)
			cancel()
			if err != nil {
				l.opts.Logger.Debug().Err(err).Str("peer", to).Msg("metadata: sending a Raft message")
			}
		}
	}
}

// promote, on the leader, takes out of the group the members whose node
// has left the ring (decommissioned or removed: one that left cannot
// rejoin, and a voter that never answers again weakens the majority), and
// makes voters of learners that have caught up while the group has fewer
// voters than its size calls for.
func (l *Log) promote() {
	if l.ticks < l.promotedAt+reproposeTicks || l.rn.BasicStatus().RaftState != raft.StateLeader || len(l.confState.VotersOutgoing) > 0 {
		return
	}
	if left := l.state.leftMembers(); len(left) > 0 {
		l.reconfigure(raftpb.ConfChangeRemoveNode, left, "removing the members whose node left the ring")
		return
	}
	if len(l.confState.Voters) >= votersWanted(len(l.state.Members)) {
		return
	}
	st := l.rn.Status()
	voters := st.Config.Voters[0].Slice()
	want := votersWanted(len(l.state.Members))
	if len(voters) >= want {
		return
	}
	var ready []uint64
	for id := range st.Config.Learners {
		pr, ok := st.Progress[id]
		if _, member := l.state.Members[id]; ok && member && pr.RecentActive && pr.Match+keepEntries/10 >= st.Commit {
			ready = append(ready, id)
		}
	}
	chosen := chooseVoters(l.state.Members, voters, ready, want)
	if len(chosen) == 0 {
		return
	}
	l.reconfigure(raftpb.ConfChangeAddNode, chosen, "promoting learners to voters")
}

// reconfigure proposes one change of the given type for each of ids.
func (l *Log) reconfigure(kind raftpb.ConfChangeType, ids []uint64, what string) {
	cc := raftpb.ConfChangeV2{}
	for _, id := range ids {
		cc.Changes = append(cc.Changes, raftpb.ConfChangeSingle{Type: kind, NodeID: id})
	}
	l.promotedAt = l.ticks
	l.opts.Logger.Info().Uints64("members", ids).Msg("metadata: " + what)
	if err := l.rn.ProposeConfChange(cc); err != nil {
		l.opts.Logger.Debug().Err(err).Msg("metadata: " + what)
	}
}

// publish makes the loop's view readable by Status.
func (l *Log) publish() {
	bs := l.rn.BasicStatus()
	s := &Status{ID: l.opts.Self.ID, Leader: bs.Lead, Term: bs.Term, Commit: bs.Commit, Applied: l.applied, State: l.state.clone(),
		Voters: slices.Clone(l.confState.Voters), Learners: slices.Clone(l.confState.Learners), VotersOutgoing: slices.Clone(l.confState.VotersOutgoing),
		Role: roleName(bs.RaftState), HasLog: !l.disk.empty(), Restored: l.restored}
	slices.Sort(s.Voters)
	slices.Sort(s.VotersOutgoing)
	slices.Sort(s.Learners)
	s.SinceContact = time.Duration(l.ticks-l.contactTick) * l.opts.TickInterval
	s.Partitioned = s.HasLog && s.SinceContact > l.opts.PartitionedAfter
	l.status.Store(s)
	l.setApplied() // after the status: a waiter woken reads it
}

func roleName(s raft.StateType) string {
	switch s {
	case raft.StateLeader:
		return "leader"
	case raft.StateCandidate:
		return "candidate"
	case raft.StatePreCandidate:
		return "pre-candidate"
	}
	return "follower"
}
