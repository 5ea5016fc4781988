package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/storage"
)

// TestTombstonesWaitForRepair: with hints off, a replica misses deletions
// while it is down. A table of gc_grace_seconds = 0 in the default mode
// purges them on the two others at their next compaction, and the repair
// then brings the deleted rows back from the third (the resurrection
// Cassandra's gc_grace_seconds guards against by time). A table of
// tombstone_gc mode repair keeps them through compaction until a repair
// covered them; after it every replica records the repair
// (system.repair_history, kept over a restart), compaction purges the
// deletions everywhere, and no deleted row comes back. A record of a
// range a node does not replicate is refused.
func TestTombstonesWaitForRepair(t *testing.T) {
	nodes, dirs, gossipPort := startThreeWith(t, func(int) Config { return Config{HintedHandoffEnabled: new(false)} })
	waitAllUp(t, nodes)
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE gc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE gc.timeout (k int PRIMARY KEY, v text) WITH gc_grace_seconds = 0;" +
		"CREATE TABLE gc.repair (k int PRIMARY KEY, v text) WITH gc_grace_seconds = 0 AND tombstone_gc = {'mode': 'repair', 'propagation_delay_in_seconds': '0'}"); err != nil {
		t.Fatal(err)
	}
	const rows, deleted = 40, 20
	tables := []string{"timeout", "repair"}
	for _, table := range tables {
		for k := range rows {
			if _, err := runAt(t, nodes[0], request.All, fmt.Sprintf("INSERT INTO gc.%s (k, v) VALUES (%d, 'v')", table, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	compactAll(t, nodes, tables) // the rows in SSTables of their own on every node
	stopThird(t, nodes)
	for _, table := range tables {
		for k := range deleted {
			if _, err := runAt(t, nodes[0], request.Quorum, fmt.Sprintf("DELETE FROM gc.%s WHERE k = %d", table, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(1100 * time.Millisecond) // the deletions are a second old: any grace of 0 has passed
	compactAll(t, nodes[:2], tables)
	for _, n := range nodes[:2] {
		if got := deletions(t, n, "timeout"); got != 0 {
			t.Fatalf("%s keeps %d deletions of gc.timeout past a grace of 0", n.endpoint(), got)
		}
		if got := deletions(t, n, "repair"); got != deleted {
			t.Fatalf("%s keeps %d of %d deletions of gc.repair before any repair", n.endpoint(), got, deleted)
		}
	}
	nodes[2] = clusterNode(t, 3, dirs[2], gossipPort)
	waitAllUp(t, nodes)
	sum, err := nodes[0].Repair(context.Background(), RepairRequest{Keyspace: "gc"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Recorded == 0 {
		t.Fatalf("the repair recorded no range: %+v", sum)
	}
	for i, n := range nodes {
		res, err := runAt(t, n, request.One, fmt.Sprintf("SELECT range_start, range_end, repaired_at FROM system.repair_history WHERE table_id = %s",
			cqltype.UUIDType.Format(mustTable(t, n, "gc", "repair").ID[:])))
		if err != nil || len(res.Rows) == 0 {
			t.Fatalf("system.repair_history of node %d: %v, %v", i+1, res, err)
		}
	}
	// Every node's history covers every token of gc.repair: the three
	// nodes replicate everything at RF 3.
	if err := nodes[1].Close(); err != nil {
		t.Fatal(err)
	}
	nodes[1] = clusterNode(t, 2, dirs[1], gossipPort)
	waitAllUp(t, nodes)
	for i, n := range nodes {
		tbl := mustTable(t, n, "gc", "repair")
		for k := range rows {
			if _, ok := n.history.RepairedAt(tbl.ID, n.Partitioner().Token(cqltypeInt(k))); !ok {
				t.Fatalf("node %d: the token of row %d is not recorded repaired", i+1, k)
			}
		}
	}
	compactAll(t, nodes, tables)
	for i, n := range nodes {
		if got := deletions(t, n, "repair"); got != 0 {
			t.Fatalf("node %d keeps %d deletions of gc.repair after the repair", i+1, got)
		}
	}
	// A record of a range this node does not replicate is refused.
	if _, err := exec.NewSession(nodes[0]).Run("CREATE KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE one.t (k int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	m := nodes[0].ring.Load()
	other := -1
	for i := range m.SortedTokens() {
		if m.Owner(i) != nodes[0].endpoint() {
			other = i
			break
		}
	}
	if other < 0 {
		t.Fatal("every range of the ring is node 1's")
	}
	err = nodes[0].acceptRepairRecord(string(m.Owner(other)), mustTable(t, nodes[0], "one", "t").ID, []partitioner.Range{m.RangeOf(other)}, time.Now().Unix())
	if err == nil || !strings.Contains(err.Error(), "does not replicate") {
		t.Fatalf("a record of a range another node holds alone: %v", err)
	}
	for _, c := range []struct {
		table string
		want  int
	}{{"timeout", rows}, {"repair", rows - deleted}} {
		res, err := runAt(t, nodes[0], request.All, "SELECT k FROM gc."+c.table)
		if err != nil || len(res.Rows) != c.want {
			t.Fatalf("gc.%s at ALL after the repair: %d rows (%v), want %d", c.table, len(res.Rows), err, c.want)
		}
	}
}

// compactAll flushes and compacts the tables of keyspace gc on nodes.
func compactAll(t *testing.T, nodes []*Node, tables []string) {
	t.Helper()
	for _, n := range nodes {
		for _, name := range tables {
			st := storageTableOf(t, n, name)
			if err := st.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := st.CompactMajor(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func storageTableOf(t *testing.T, n *Node, name string) *storage.Table {
	t.Helper()
	st, err := n.engine.Table(mustTable(t, n, "gc", name).ID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// deletions counts the partitions of table gc.name that node n holds a
// deletion in (of the partition, or of its row).
func deletions(t *testing.T, n *Node, name string) int {
	t.Helper()
	parts, err := storageTableOf(t, n, name).ScanEntries(storage.ScanQuery{Now: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, p := range parts {
		for _, e := range p.Entries {
			if e.Kind == mutation.PartitionDeletionEntry || e.Kind == mutation.RowEntry && !e.Row.Deletion.IsLive() {
				count++
				break
			}
		}
	}
	return count
}

// TestRepairRecordsAreChecked: a record purges tombstones, so a replica
// takes one only from a node of its ring, for a table it knows, begun no
// later than a minute past its clock (TestTombstonesWaitForRepair: and
// for ranges it replicates); a record it takes, of a time ahead of its
// clock, counts from now.
func TestRepairRecordsAreChecked(t *testing.T) {
	n, s := openNode(t)
	if _, err := s.Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};" +
		"CREATE TABLE ks.t (k int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	table := mustTable(t, n, "ks", "t").ID
	self := string(n.endpoint())
	p := n.Partitioner()
	whole := []partitioner.Range{{Start: p.MinToken(), End: p.MinToken()}}
	now := time.Now().Unix()
	for _, c := range []struct {
		name   string
		from   string
		table  mutation.TableID
		ranges []partitioner.Range
		at     int64
		want   string
	}{
		{"from outside the ring", "10.9.9.9", table, whole, now, "not in this node's ring"},
		{"of an unknown table", self, mutation.TableID{7}, whole, now, "does not know"},
		{"begun in the future", self, table, whole, now + 3600, "clock says"},
		{"begun before time", self, table, whole, 0, "clock says"},
	} {
		err := n.acceptRepairRecord(c.from, c.table, c.ranges, c.at)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a record %s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	if _, ok := n.history.RepairedAt(table, p.Token([]byte{0, 0, 0, 1})); ok {
		t.Fatal("a refused record counts")
	}
	if err := n.acceptRepairRecord(self, table, whole, now+30); err != nil {
		t.Fatal(err)
	}
	if at, ok := n.history.RepairedAt(table, p.Token([]byte{0, 0, 0, 1})); !ok || at > time.Now().Unix() {
		t.Fatalf("a record 30 s ahead: repaired at %d, %v; want no later than now", at, ok)
	}
}
