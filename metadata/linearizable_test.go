package metadata

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
)

// schemaOp is one proposal of the linearizability check: the schema epoch
// it was made against and what became of it.
type schemaOp struct {
	base    uint64
	applied bool   // it committed, at epoch
	refused bool   // another change came first
	epoch   uint64 // the schema epoch it made
}

// schemaModel is the log's schema epoch as a compare-and-set register: a
// change applies only against the epoch that is current, and moves it on;
// one refused was made against another; one whose outcome never came back
// and that never applied changed nothing.
var schemaModel = porcupine.Model{
	Init: func() any { return uint64(0) },
	Step: func(state, input, output any) (bool, any) {
		cur, op := state.(uint64), output.(schemaOp)
		switch {
		case op.applied:
			return op.base == cur && op.epoch > cur, op.epoch
		case op.refused:
			return op.base != cur, cur
		}
		return true, cur
	},
	DescribeOperation: func(_, output any) string { return fmt.Sprintf("%+v", output.(schemaOp)) },
}

// TestSchemaChangesAreLinearizable runs concurrent schema changes through
// every member while the leader crashes and comes back, and checks the
// outcomes against a compare-and-set register of the schema epoch.
func TestSchemaChangesAreLinearizable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startGroup(t, 3, 0)
		defer g.close()
		var clock atomic.Int64
		var mu sync.Mutex
		var ops []porcupine.Operation
		names := map[string]int{} // the proposal's name to its index in ops
		var wg sync.WaitGroup
		var stopped atomic.Int32
		for c := 1; c <= 3; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 30 {
					l := g.log(c)
					if l == nil || int(stopped.Load()) == c {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					name := fmt.Sprintf("c%d-%d", c, k)
					base := l.Status().State.SchemaEpoch
					call := clock.Add(1)
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					res, err := l.ProposeSchema(ctx, base, 1, 1, []byte(name))
					epoch := res.Epoch
					cancel()
					ret := clock.Add(1)
					op := schemaOp{base: base, applied: err == nil, refused: errors.Is(err, ErrSchemaChanged), epoch: epoch}
					if err != nil && !op.refused {
						ret = math.MaxInt64 // its outcome is settled below
					}
					time.Sleep(time.Duration(50*c) * time.Millisecond)
					mu.Lock()
					names[name] = len(ops)
					ops = append(ops, porcupine.Operation{ClientId: c - 1, Input: base, Call: call, Output: op, Return: ret})
					mu.Unlock()
				}
			}()
		}
		time.Sleep(2 * time.Second)
		leader := int(g.log(1).Status().Leader)
		stopped.Store(int32(leader))
		g.stop(leader)
		time.Sleep(3 * time.Second)
		l := g.open(leader)
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		stopped.Store(0)
		wg.Wait()
		// Settle the outcomes that never came back: a change that applied
		// is in every member's history, one that did not never will be
		// once a later change has committed.
		if _, err := g.propose(1, "last"); err != nil {
			t.Fatal(err)
		}
		g.awaitSameApplied(3)
		applied := map[string]uint64{}
		for _, entry := range strings.Fields(g.recorders[endpoint(1)].history()) {
			var epoch uint64
			var rest string
			if _, err := fmt.Sscanf(entry, "%d:%s", &epoch, &rest); err != nil {
				t.Fatal(err)
			}
			applied[rest[:strings.LastIndexByte(rest, '+')]] = epoch
		}
		unknown := 0
		for name, i := range names {
			op := ops[i].Output.(schemaOp)
			epoch, ok := applied[name]
			switch {
			case op.applied && (!ok || epoch != op.epoch):
				t.Fatalf("%s acknowledged at epoch %d, applied at %d (%v)", name, op.epoch, epoch, ok)
			case op.refused && ok:
				t.Fatalf("%s was refused but applied at epoch %d", name, epoch)
			case !op.applied && !op.refused:
				unknown++
				op.applied, op.epoch = ok, epoch
				ops[i].Output = op
			}
		}
		t.Logf("%d operations, %d whose outcome was settled afterwards, %d applied", len(ops), unknown, len(applied))
		if res, info := porcupine.CheckOperationsVerbose(schemaModel, ops, time.Minute); res != porcupine.Ok {
			var b strings.Builder
			_ = porcupine.Visualize(schemaModel, info, &b)
			t.Fatalf("the schema changes are not linearizable (%s)", res)
		}
		// The check can fail: two changes acknowledged against the same
		// epoch are not a history the register allows.
		bad := append([]porcupine.Operation(nil), ops...)
		for i := range bad {
			if op := bad[i].Output.(schemaOp); op.refused {
				op.refused, op.applied, op.epoch = false, true, op.base+1000
				bad[i].Output = op
				break
			}
		}
		if porcupine.CheckOperations(schemaModel, bad) {
			t.Fatal("a refused change taken as applied still checks out: the check proves nothing")
		}
	})
}
