package simulation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/node"
	"github.com/sibyldb/sibyl/schema"
)

// kvTable is a table of int keys and values.
const kvTable = "CREATE TABLE ks.kv (k int PRIMARY KEY, v int)"

// loggedBatch is a logged batch writing v to keys from..to-1.
func loggedBatch(from, to, v int) string {
	var b strings.Builder
	b.WriteString("BEGIN BATCH ")
	for k := from; k < to; k++ {
		fmt.Fprintf(&b, "INSERT INTO ks.kv (k, v) VALUES (%d, %d); ", k, v)
	}
	b.WriteString("APPLY BATCH")
	return b.String()
}

// rowsAt counts the keys from..to-1 that read v on node n at level cl.
func rowsAt(t *testing.T, n *Node, from, to, v int, cl request.Consistency) int {
	t.Helper()
	found := 0
	for k := from; k < to; k++ {
		got, err := readVersion(n, k, cl)
		if err != nil {
			t.Fatalf("reading k=%d at %s on %s: %v", k, cl, n.Name, err)
		}
		if got == v {
			found++
		}
	}
	return found
}

// TestLoggedBatchOutlivesItsCoordinator has the coordinator of a logged
// batch over ten partitions crash the moment the batchlog's holder
// answers it stored the batch: no write of the batch was sent, and the
// client gets a failure. Each holder replays the batch once it is two
// write timeouts old (two replays write the same cells), and every
// partition is written: on the two live replicas at once, on the crashed
// one by a hint once it is back.
func TestLoggedBatchOutlivesItsCoordinator(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c := threeNodes(t, 3, kvTable)
		defer c.Close()
		nodes := c.Nodes()
		coord, other := nodes[0], nodes[1]
		coord.CrashOnAnswer(messaging.VerbBatchStore)
		if _, err := coord.Exec(loggedBatch(0, 10, 7), request.Quorum); err == nil {
			t.Fatal("a batch whose coordinator crashed before sending it was acknowledged")
		}
		if coord.Up() {
			t.Fatal("the coordinator did not crash at the batchlog's answer")
		}
		if n := rowsAt(t, other, 0, 10, 7, request.One); n != 0 {
			t.Fatalf("%d rows of the batch were written before its replay; its coordinator crashed before sending any", n)
		}
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second) // two write timeouts, and the next replay round
		c.Settle()
		if n := rowsAt(t, other, 0, 10, 7, request.Quorum); n != 10 {
			t.Fatalf("after the replay, %d of the batch's 10 rows read at QUORUM", n)
		}
		replayed := int64(0)
		for _, n := range nodes[1:] {
			replayed += n.coord.Stats.BatchesReplayed.Load()
		}
		if replayed < 1 || replayed > 2 {
			t.Fatalf("the batch was replayed %d times: once by each of its one or two holders", replayed)
		}
		if err := coord.Restart(); err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		c.Settle()
		if n := rowsAt(t, coord, 0, 10, 7, request.All); n != 10 {
			t.Fatalf("once the coordinator is back, %d of the batch's 10 rows read at ALL", n)
		}
		for _, n := range nodes {
			if left := batchlogRows(t, n); left != 0 {
				t.Fatalf("%s still holds %d batches", n.Name, left)
			}
		}
	})
}

// TestLoggedBatchForgottenOnceApplied: a logged batch that meets its
// level is removed from its holders' batchlog, and never replayed.
func TestLoggedBatchForgottenOnceApplied(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c := threeNodes(t, 4, kvTable)
		defer c.Close()
		nodes := c.Nodes()
		for i := range 5 {
			if _, err := nodes[i%3].Exec(loggedBatch(i*10, i*10+10, i+1), request.Quorum); err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
		}
		time.Sleep(30 * time.Second)
		c.Settle()
		for i := range 5 {
			if n := rowsAt(t, nodes[2], i*10, i*10+10, i+1, request.All); n != 10 {
				t.Fatalf("batch %d: %d of its 10 rows read at ALL", i, n)
			}
		}
		logged, replayed := int64(0), int64(0)
		for _, n := range nodes {
			logged += n.coord.Stats.LoggedBatches.Load()
			replayed += n.coord.Stats.BatchesReplayed.Load()
			if left := batchlogRows(t, n); left != 0 {
				t.Fatalf("%s still holds %d batches", n.Name, left)
			}
		}
		if logged != 5 || replayed != 0 {
			t.Fatalf("%d batches went through the batchlog (5 did) and %d were replayed (none should)", logged, replayed)
		}
	})
}

// batchlogRows counts the batches in a node's own batchlog.
func batchlogRows(t *testing.T, n *Node) int {
	t.Helper()
	parts, err := node.CoordinatorEngine(n.engine).Scan(schema.BatchesTable.ID, request.RangeRead{Now: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	return len(parts)
}
