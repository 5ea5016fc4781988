package metadata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/messaging"
)

// joinRetry is how long a node that could not join waits before it asks
// again.
const joinRetry = 500 * time.Millisecond

// foundAfterRounds is how many rounds in a row (of joinRetry) must find no
// group before a node may found one: long enough for gossip to show it
// the live nodes of a cluster it restarts into (a seed whose log was
// lost must join theirs, not start a second).
const foundAfterRounds = 4

// handlerTimeout bounds how long a join or an await request waits here.
const handlerTimeout = 10 * time.Second

// Handlers are the verbs a member answers, for messaging to serve:
// Raft's messages, join requests and await requests.
func (l *Log) Handlers() map[messaging.Verb]messaging.Handler {
	within := func(h func(context.Context, []byte) ([]byte, error)) messaging.Handler {
		return func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			ctx, cancel := context.WithTimeout(context.Background(), handlerTimeout)
			defer cancel()
			return h(ctx, payload)
		}
	}
	return map[messaging.Verb]messaging.Handler{
		messaging.VerbMetadata: func(_ context.Context, from string, payload []byte) ([]byte, error) {
			return nil, l.Step(from, payload)
		},
		messaging.VerbMetadataJoin: within(l.HandleJoin),
		messaging.VerbMetadataWait: within(l.HandleAwait),
	}
}

// HandleJoin answers a node that asks to join (its Member in payload):
// the leader adds it as a learner and answers with the index of that
// change once committed; another member points to the leader; a node with
// no log says so.
func (l *Log) HandleJoin(ctx context.Context, payload []byte) ([]byte, error) {
	m, err := decodeMember(payload)
	if err != nil {
		return nil, err
	}
	st := l.Status()
	switch {
	case !st.HasLog:
		return encodeJoinAnswer(joinAnswer{Kind: joinNoGroup}), nil
	case st.Role != "leader":
		return encodeJoinAnswer(joinAnswer{Kind: joinRedirect, Leader: st.LeaderEndpoint()}), nil
	}
	if _, ok := st.State.Members[m.ID]; ok {
		if slices.Contains(st.Voters, m.ID) {
			// A voter asks to join only when its log is gone, and with it
			// the votes it cast and the entries it acknowledged: let back
			// in, it could help elect a leader that lacks committed
			// entries.
			return nil, fmt.Errorf("metadata: node %s (id %x) votes in the metadata group but has lost its log; it cannot rejoin as it is", m.Endpoint, m.ID)
		}
		// A learner that asks again (it lost its log, or never got an
		// entry): it catches up from the leader as any learner does.
		return encodeJoinAnswer(joinAnswer{Kind: joinAdded, Index: st.Commit}), nil
	}
	id := proposalID{Node: l.opts.Self.ID, Seq: l.seq.Add(1)}
	cc := raftpb.ConfChangeV2{
		Changes: []raftpb.ConfChangeSingle{{Type: raftpb.ConfChangeAddLearnerNode, NodeID: m.ID}},
		Context: encodeConfContext(confContext{Proposal: id, Members: []Member{m}}),
	}
	o, err := l.propose(ctx, id, &proposal{conf: &cc})
	if err != nil {
		return nil, err
	}
	l.opts.Logger.Info().Str("node", m.Endpoint).Uint64("id", m.ID).Msg("metadata: a node joined the group as a learner")
	return encodeJoinAnswer(joinAnswer{Kind: joinAdded, Index: o.index}), nil
}

// JoinOrBootstrap makes this running node a member of the group: it asks
// each of peers() in turn (and the leader any of them names) to add it,
// and returns once it has applied the change that did. With mayBootstrap
// (the node that starts a cluster) it makes a new group instead, once
// every peer it can see has answered that it has none for
// foundAfterRounds rounds in a row: a node whose data was lost must not
// found a second group beside a live one. A peer that does not answer
// blocks the founding, so peers() should name only nodes known to run.
func (l *Log) JoinOrBootstrap(ctx context.Context, peers func() []string, mayBootstrap bool, schemaTimestamp int64) error {
	self := encodeMember(l.opts.Self)
	quiet := 0 // rounds in a row that found no group
	for {
		if l.HasLog() {
			return nil
		}
		noGroup, asked := true, 0
		for _, p := range peers() {
			index, leader, err := l.ask(ctx, p, self)
			if err == nil && leader != "" {
				index, _, err = l.ask(ctx, leader, self)
			}
			switch {
			case err == nil && index > 0:
				return l.WaitApplied(ctx, index)
			case errors.Is(err, errNoGroup):
				asked++
			default:
				noGroup = false
				if err != nil {
					l.opts.Logger.Debug().Err(err).Str("peer", p).Msg("metadata: asking to join")
				}
			}
		}
		if !mayBootstrap || !noGroup {
			quiet = 0
		} else if quiet++; quiet >= foundAfterRounds {
			l.opts.Logger.Info().Int("peers", asked).Msg("metadata: no peer has a metadata log; starting the group")
			return l.Bootstrap(schemaTimestamp)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("metadata: joining the group: %w", ctx.Err())
		case <-l.stop:
			return ErrClosed
		case <-time.After(joinRetry):
		}
	}
}

// AwaitApplied waits until each of peers has applied index, or ctx ends
// (then it names those that had not): a schema change returns once the
// nodes that are up can serve the tables it made.
func (l *Log) AwaitApplied(ctx context.Context, index uint64, peers []string) error {
	var w wire.Writer
	w.Uint(index)
	errs := make(chan error, len(peers))
	for _, p := range peers {
		go func() {
			_, err := l.opts.Network.Request(ctx, p, messaging.VerbMetadataWait, w.B)
			if err != nil {
				err = fmt.Errorf("%s: %w", p, err)
			}
			errs <- err
		}()
	}
	var all []error
	for range peers {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// HandleAwait answers AwaitApplied's request once this member has applied
// the index it names.
func (l *Log) HandleAwait(ctx context.Context, payload []byte) ([]byte, error) {
	r := wire.Reader{B: payload}
	index := r.Uint()
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("metadata: an await request: %w", err)
	}
	return nil, l.WaitApplied(ctx, index)
}

// ask sends a join request to a node: the index to catch up to once
// added, or the leader it names instead (index 0).
func (l *Log) ask(ctx context.Context, to string, self []byte) (index uint64, leader string, err error) {
	b, err := l.opts.Network.Request(ctx, to, messaging.VerbMetadataJoin, self)
	if err != nil {
		return 0, "", err
	}
	a, err := decodeJoinAnswer(b)
	if err != nil {
		return 0, "", err
	}
	switch a.Kind {
	case joinAdded:
		return a.Index, "", nil
	case joinRedirect:
		if a.Leader == "" || a.Leader == to {
			return 0, "", fmt.Errorf("metadata: %s knows no leader", to)
		}
		return 0, a.Leader, nil
	case joinNoGroup:
		return 0, "", errNoGroup
	}
	return 0, "", fmt.Errorf("metadata: a join answer of unknown kind %d", a.Kind)
}
