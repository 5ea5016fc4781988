package metadata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

func TestSingleNodeCommitsAndRefusesAStaleBase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(t)
		defer g.close()
		l := g.start(1)
		if st := l.Status(); st.Role != "leader" || !slices.Equal(st.Voters, []uint64{1}) {
			t.Fatalf("a lone node: role %s voters %v, want the leader and the only voter", st.Role, st.Voters)
		}
		ctx := context.Background()
		c, err := l.ProposeSchema(ctx, 0, 10, 20, []byte("create ks"))
		epoch := c.Epoch
		if err != nil {
			t.Fatal(err)
		}
		if st := l.Status().State; st.SchemaEpoch != epoch || st.Epoch != epoch || st.SchemaTimestamp != 20 {
			t.Fatalf("state %+v after a change at epoch %d", st, epoch)
		}
		if _, err := l.ProposeSchema(ctx, 0, 30, 30, []byte("create ks again")); !errors.Is(err, ErrSchemaChanged) {
			t.Fatalf("a change against epoch 0 after epoch %d: %v, want ErrSchemaChanged", epoch, err)
		}
		// A change whose clock is behind the last one's moves after it.
		c, err = l.ProposeSchema(ctx, epoch, 5, 7, []byte("drop ks"))
		next := c.Epoch
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%d:create ks+0 %d:drop ks+16", epoch, next); g.recorders[endpoint(1)].history() != want {
			t.Fatalf("applied %q, want %q", g.recorders[endpoint(1)].history(), want)
		}
		if ts := l.Status().State.SchemaTimestamp; ts != 23 {
			t.Fatalf("schema timestamp %d after a change of 5..7 shifted by 16, want 23", ts)
		}
	})
}

func TestThreeNodesJoinAndAgree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(t)
		defer g.close()
		for i := 1; i <= 4; i++ {
			g.start(i)
		}
		g.eventually("three voters of four members", func() bool {
			st := g.log(1).Status()
			return len(st.Voters) == 3 && len(st.State.Members) == 4 && len(st.Learners) == 1
		})
		for i := 1; i <= 4; i++ {
			if _, err := g.propose(i, fmt.Sprintf("change via %d", i)); err != nil {
				t.Fatalf("a change through node %d: %v", i, err)
			}
		}
		g.eventually("every node applied every change", func() bool {
			for i := 2; i <= 4; i++ {
				if g.log(i).Applied() != g.log(1).Applied() {
					return false
				}
			}
			return true
		})
		want := g.recorders[endpoint(1)].history()
		for i := 2; i <= 4; i++ {
			if got := g.recorders[endpoint(i)].history(); got != want {
				t.Fatalf("node %d applied %q; node 1 %q", i, got, want)
			}
			if g.log(i).Status().State.Epoch != g.log(1).Status().State.Epoch {
				t.Fatalf("node %d is at epoch %d, node 1 at %d", i, g.log(i).Status().State.Epoch, g.log(1).Status().State.Epoch)
			}
		}
	})
}

func TestConflictingChangesOneWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 0)
		defer g.close()
		g.awaitSameApplied(3)
		base := g.log(1).Status().State.SchemaEpoch
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := 1; i <= 3; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = g.log(i).ProposeSchema(context.Background(), base, 1, 1, []byte(fmt.Sprintf("create t as %d", i)))
			}()
		}
		wg.Wait()
		won := 0
		for i := 1; i <= 3; i++ {
			switch {
			case errs[i] == nil:
				won++
			case !errors.Is(errs[i], ErrSchemaChanged):
				t.Fatalf("node %d: %v", i, errs[i])
			}
		}
		if won != 1 {
			t.Fatalf("%d of 3 conflicting changes won (%v), want 1", won, errs[1:])
		}
	})
}

func TestLeaderCrashDuringChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 0)
		defer g.close()
		if _, err := g.propose(2, "before"); err != nil {
			t.Fatal(err)
		}
		leader := int(g.log(2).Status().Leader)
		other := 1 + leader%3
		// A change in flight as the leader goes down commits once another
		// is elected, or times out; it never applies twice.
		done := make(chan error, 1)
		go func() { _, err := g.propose(other, "during"); done <- err }()
		g.stop(leader)
		if err := <-done; err != nil && !errors.Is(err, ErrSchemaChanged) {
			t.Logf("the change in flight: %v", err)
		}
		if _, err := g.propose(other, "after"); err != nil {
			t.Fatalf("a change with the leader down: %v", err)
		}
		if st := g.log(other).Status(); st.Leader == uint64(leader) || st.Leader == 0 {
			t.Fatalf("leader %d after node %d crashed", st.Leader, leader)
		}
		restarted := g.open(leader)
		if err := restarted.Start(); err != nil {
			t.Fatal(err)
		}
		g.eventually("the old leader catches up", func() bool { return restarted.Applied() == g.log(other).Applied() })
		if got, want := g.recorders[endpoint(leader)].history(), g.recorders[endpoint(other)].history(); got != want {
			t.Fatalf("the restarted node applied %q; the others %q", got, want)
		}
	})
}

func TestMinorityCannotChangeAndCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 0)
		defer g.close()
		g.partition(3, 3)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := g.log(3).ProposeSchema(ctx, g.log(3).Status().State.SchemaEpoch, 1, 1, []byte("on the minority"))
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a change on a node cut off from the majority: %v, want a timeout", err)
		}
		if _, err := g.propose(1, "on the majority"); err != nil {
			t.Fatal(err)
		}
		g.heal()
		g.eventually("the minority applies the majority's change", func() bool { return g.log(3).Applied() == g.log(1).Applied() })
		if got, want := g.recorders[endpoint(3)].history(), g.recorders[endpoint(1)].history(); got != want {
			t.Fatalf("the healed node applied %q; the majority %q", got, want)
		}
	})
}

func TestRestartFromSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 5)
		defer g.close()
		g.stop(3)
		for k := range 3 * keepEntries {
			if _, err := g.propose(1, fmt.Sprintf("change %d", k)); err != nil {
				t.Fatal(err)
			}
		}
		// Node 3 is so far behind that the log it missed is gone: it gets
		// a snapshot.
		l3 := g.open(3)
		if err := l3.Start(); err != nil {
			t.Fatal(err)
		}
		g.eventually("node 3 catches up", func() bool { return l3.Applied() == g.log(1).Applied() })
		if g.recorders[endpoint(3)].restores == 0 || l3.Status().Restored == 0 {
			t.Fatal("node 3 caught up without a snapshot")
		}
		if got, want := g.recorders[endpoint(3)].history(), g.recorders[endpoint(1)].history(); got != want {
			t.Fatalf("node 3 has %q; node 1 %q", got, want)
		}
		// Node 1 restarts from its own snapshot and the entries after it.
		want := g.log(1).Status().State
		applied := g.log(1).Applied()
		g.stop(1)
		l1 := g.open(1)
		if err := l1.Start(); err != nil {
			t.Fatal(err)
		}
		if l1.Applied() != applied || l1.Status().State.Epoch != want.Epoch || l1.Status().State.SchemaEpoch != want.SchemaEpoch ||
			len(l1.Status().State.Members) != 3 {
			t.Fatalf("restarted at %d with %+v; stopped at %d with %+v", l1.Applied(), l1.Status().State, applied, want)
		}
		if _, err := g.propose(1, "after the restart"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPartitionedMemberKnowsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(t)
		defer g.close()
		for i := 1; i <= 4; i++ {
			g.start(i)
		}
		// Out of the joint configuration too: in it, the two voters left
		// could not elect a leader without the old one.
		g.eventually("every node knows three voters and a learner", func() bool {
			for i := 1; i <= 4; i++ {
				if st := g.log(i).Status(); len(st.Voters) != 3 || len(st.Learners) != 1 || len(st.VotersOutgoing) != 0 {
					return false
				}
			}
			return true
		})
		// The leader and the learner are cut off, each alone.
		leader := int(g.log(1).Status().Leader)
		learner := int(g.log(1).Status().Learners[0])
		g.partition(leader, 4)
		g.partition(learner, 4)
		time.Sleep(3 * time.Second)
		if st := g.log(leader).Status(); st.Partitioned {
			t.Fatalf("the old leader counts itself cut off after 3s (%s); the limit is 5s", st.SinceContact)
		}
		time.Sleep(4 * time.Second)
		for i := 1; i <= 4; i++ {
			cut := i == leader || i == learner
			if st := g.log(i).Status(); st.Partitioned != cut {
				t.Errorf("node %d (cut off: %v): Partitioned %v, %s without a leader, role %s, leader %d term %d voters %v", i, cut, st.Partitioned, st.SinceContact, st.Role, st.Leader, st.Term, st.Voters)
			}
		}
		g.heal()
		g.eventually("every node in touch again", func() bool {
			for i := 1; i <= 4; i++ {
				if g.log(i).Status().Partitioned {
					return false
				}
			}
			return true
		})
	})
}

// TestApplyFailureStopsTheLog: a change the node cannot apply (its disk
// failed) stops the log there: the proposal and every later one fail at
// once, rather than the state moving on without it.
func TestApplyFailureStopsTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(t)
		defer g.close()
		l := g.start(1)
		if _, err := g.propose(1, "fine"); err != nil {
			t.Fatal(err)
		}
		applied := l.Applied()
		broken := errors.New("disk failed")
		rec := g.recorders[endpoint(1)]
		rec.mu.Lock()
		rec.fail = broken
		rec.mu.Unlock()
		for range 2 {
			if _, err := l.ProposeSchema(context.Background(), l.Status().State.SchemaEpoch, 1, 1, []byte("lost")); !errors.Is(err, broken) {
				t.Fatalf("a change the node cannot apply: %v, want the applier's error", err)
			}
		}
		if l.Applied() != applied {
			t.Fatalf("applied moved from %d to %d past a change that failed", applied, l.Applied())
		}
	})
}

// TestRingThroughTheLog: nodes register their tokens through the log;
// tokens another node holds are refused; a node registering again (a
// restart, a new address) replaces its own record; every member, and a
// member restarted from a snapshot, applies the same ring.
func TestRingThroughTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 3)
		defer g.close()
		ctx := context.Background()
		register := func(i int, endpoint string, tokens ...string) error {
			_, err := g.log(i).ProposeNode(ctx, NodeRecord{ID: uint64(i), Endpoint: endpoint, DataCenter: "dc1", Rack: "r1", Tokens: tokens, State: Normal})
			return err
		}
		if err := register(1, endpoint(1), "10", "20"); err != nil {
			t.Fatal(err)
		}
		if err := register(2, endpoint(2), "20", "30"); !errors.Is(err, ErrTokensTaken) {
			t.Fatalf("tokens node 1 holds: %v, want ErrTokensTaken", err)
		}
		if err := register(2, endpoint(2), "30", "40"); err != nil {
			t.Fatal(err)
		}
		if err := register(1, "10.0.0.99", "10", "20"); err != nil {
			t.Fatalf("node 1 again, at a new address: %v", err)
		}
		want := map[uint64]string{1: "10.0.0.99 [10 20]", 2: "10.0.0.2 [30 40]"}
		ring := func(nodes map[uint64]NodeRecord) map[uint64]string {
			out := map[uint64]string{}
			for id, n := range nodes {
				out[id] = fmt.Sprintf("%s %v", n.Endpoint, n.Tokens)
			}
			return out
		}
		g.eventually("every member applies the ring", func() bool {
			for i := 1; i <= 3; i++ {
				rec := g.recorders[endpoint(i)]
				rec.mu.Lock()
				got := ring(rec.nodes)
				rec.mu.Unlock()
				if !maps.Equal(got, want) || !maps.Equal(ring(g.log(i).Status().State.Nodes), want) {
					return false
				}
			}
			return true
		})
		ringEpoch := g.log(1).Status().State.RingEpoch
		if err := g.log(2).WaitEpoch(ctx, ringEpoch); err != nil {
			t.Fatalf("waiting for an epoch applied: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		err := g.log(2).WaitEpoch(short, g.log(2).Status().State.Epoch+100)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiting for an epoch no change has made: %v, want a timeout", err)
		}
		g.stop(3)
		l3 := g.open(3)
		if err := l3.Start(); err != nil {
			t.Fatal(err)
		}
		if got := l3.Status().State.RingEpoch; got != ringEpoch {
			t.Fatalf("restarted from its snapshot, node 3's ring epoch is %d, want %d", got, ringEpoch)
		}
		if got := ring(l3.Status().State.Nodes); !maps.Equal(got, want) {
			t.Fatalf("restarted from its snapshot, node 3 has the ring %v, want %v", got, want)
		}
	})
}

// TestVoterThatLostItsLogIsRefused: a voter whose log is gone (its votes
// and acknowledgements with it) may not rejoin as if nothing happened; a
// learner may. A join that reaches the log twice does not demote a voter.
func TestVoterThatLostItsLogIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 4, 0)
		defer g.close()
		st := g.log(1).Status()
		voter := int(st.Voters[1])
		if voter == int(st.Leader) {
			voter = int(st.Voters[2])
		}
		learner := int(st.Learners[0])
		ctx := context.Background()
		leader := g.log(int(st.Leader))
		if _, err := leader.HandleJoin(ctx, encodeMember(g.log(voter).opts.Self)); err == nil {
			t.Fatal("a voter asking to join again was let in")
		}
		if _, err := leader.HandleJoin(ctx, encodeMember(g.log(learner).opts.Self)); err != nil {
			t.Fatalf("a learner asking to join again: %v", err)
		}
		if !slices.Contains(g.log(1).Status().Voters, uint64(voter)) {
			t.Fatal("the voter lost its vote")
		}
		// The same join committed once more, after the node votes.
		cc := raftpb.ConfChangeV2{Changes: []raftpb.ConfChangeSingle{{Type: raftpb.ConfChangeAddLearnerNode, NodeID: uint64(voter)}}}
		if got := keepVoters(cc, raftpb.ConfState{Voters: []uint64{uint64(voter)}}); got.Changes[0].Type != raftpb.ConfChangeAddNode {
			t.Fatalf("adding a voter as a learner became %v, want it kept a voter", got.Changes[0].Type)
		}
	})
}

// TestOneRangeMovementAtATime: a node may not start joining or leaving
// while another is: a second joins once the first is normal, and a node
// may register as normal meanwhile.
func TestOneRangeMovementAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 3)
		defer g.close()
		ctx := context.Background()
		propose := func(i int, st NodeState, tokens ...string) error {
			_, err := g.log(1).ProposeNode(ctx, NodeRecord{ID: uint64(i), Endpoint: endpoint(i), DataCenter: "dc1", Rack: "r1", Tokens: tokens, State: st})
			return err
		}
		if err := propose(3, Joining, "50"); err != nil {
			t.Fatal(err)
		}
		if err := propose(4, Joining, "60"); !errors.Is(err, ErrRangeMovement) {
			t.Fatalf("a second node joining: %v, want ErrRangeMovement", err)
		}
		if err := propose(5, Normal, "70"); err != nil {
			t.Fatalf("a node registering as normal while one joins: %v", err)
		}
		if err := propose(4, Leaving, "60"); !errors.Is(err, ErrRangeMovement) {
			t.Fatalf("a node leaving while one joins: %v, want ErrRangeMovement", err)
		}
		if err := propose(3, Joining, "50"); err != nil {
			t.Fatalf("the joining node again (a restart): %v", err)
		}
		if err := propose(3, Normal, "50"); err != nil {
			t.Fatal(err)
		}
		if err := propose(4, Joining, "60"); err != nil {
			t.Fatalf("a node joining once the other is normal: %v", err)
		}
		if err := propose(4, Left, "60"); err != nil {
			t.Fatal(err)
		}
		if err := propose(3, Left, "50"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMembersThatLeftTheRingLeaveTheGroup: once a node's ring record is
// left, the leader takes it out of the group, a learner takes the voter's
// place, and the group goes on committing, even when the node that left
// was the leader and is gone.
func TestMembersThatLeftTheRingLeaveTheGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(t)
		defer g.close()
		for i := 1; i <= 4; i++ {
			g.start(i)
		}
		g.awaitVoters(4, 3)
		ctx := context.Background()
		leader := g.log(1).Status().Leader
		if leader == 0 || !slices.Contains(g.log(1).Status().Voters, leader) {
			t.Fatalf("no leader among the voters: %d", leader)
		}
		if _, err := g.log(int(leader)).ProposeNode(ctx, NodeRecord{ID: leader, Endpoint: endpoint(int(leader)), Tokens: []string{"10"}, State: Left}); err != nil {
			t.Fatal(err)
		}
		var rest []int
		for i := 1; i <= 4; i++ {
			if uint64(i) != leader {
				rest = append(rest, i)
			}
		}
		g.eventually("the node that left is out of the group and three others vote", func() bool {
			for _, i := range rest {
				st := g.log(i).Status()
				if _, in := st.State.Members[leader]; in || len(st.Voters) != 3 || slices.Contains(st.Voters, leader) || st.Leader == 0 || st.Leader == leader {
					return false
				}
			}
			return true
		})
		g.stop(int(leader))
		if _, err := g.propose(rest[0], "after the leader left"); err != nil {
			t.Fatalf("a change once the node that left is gone: %v", err)
		}
	})
}

// TestReplacementTakesTheDeadNodesTokens: a node replacing another joins
// with the tokens the other holds (refused for a node that is not
// normal), and once it is normal the node it replaced has left; the
// record, replaced id and all, survives a snapshot.
func TestReplacementTakesTheDeadNodesTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 2)
		defer g.close()
		ctx := context.Background()
		propose := func(r NodeRecord) error {
			_, err := g.log(1).ProposeNode(ctx, r)
			return err
		}
		dead := NodeRecord{ID: 7, Endpoint: endpoint(7), Tokens: []string{"10", "20"}, State: Normal}
		if err := propose(dead); err != nil {
			t.Fatal(err)
		}
		if err := propose(NodeRecord{ID: 8, Endpoint: endpoint(8), Tokens: dead.Tokens, State: Joining}); !errors.Is(err, ErrTokensTaken) {
			t.Fatalf("a node taking another's tokens without replacing it: %v", err)
		}
		if err := propose(NodeRecord{ID: 8, Endpoint: endpoint(8), Tokens: dead.Tokens, State: Joining, Replaces: 9}); !errors.Is(err, ErrNotReplaceable) {
			t.Fatalf("replacing a node the ring lacks: %v", err)
		}
		replacer := NodeRecord{ID: 8, Endpoint: endpoint(7), Tokens: dead.Tokens, State: Joining, Replaces: 7}
		if err := propose(replacer); err != nil {
			t.Fatal(err)
		}
		replacer.State = Normal
		if err := propose(replacer); err != nil {
			t.Fatal(err)
		}
		if err := propose(replacer); err != nil {
			t.Fatalf("the replacement's last step again: %v", err)
		}
		for i := 0; i < 3; i++ {
			if _, err := g.propose(1, fmt.Sprintf("after %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		g.stop(2)
		g.start(2)
		g.awaitSameApplied(3)
		for i := 1; i <= 3; i++ {
			nodes := g.log(i).Status().State.Nodes
			if nodes[7].State != Left || nodes[8].State != Normal || nodes[8].Replaces != 7 || !slices.Equal(nodes[8].Tokens, dead.Tokens) {
				t.Fatalf("node %d holds the dead node as %s and its replacement as %+v", i, nodes[7].State, nodes[8])
			}
		}
	})
}
