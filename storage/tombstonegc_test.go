package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// negativeTokensRepaired is a repair history in which the table's
// negative Murmur3 tokens were repaired at one time, the others never.
type negativeTokensRepaired struct {
	table mutation.TableID
	at    int64
}

func (h negativeTokensRepaired) RepairedAt(table mutation.TableID, token partitioner.Token) (int64, bool) {
	if table != h.table || partitioner.Compare(token, partitioner.Murmur3Token(0)) >= 0 {
		return 0, false
	}
	return h.at, true
}

// TestTombstoneGCModes deletes partitions long enough ago for any grace,
// compacts, and checks which deletions each mode let go: under
// GCAfterRepair exactly those of the repaired tokens, once the repair
// began PropagationDelay after the deletion.
func TestTombstoneGCModes(t *testing.T) {
	now := time.Now().Unix()
	deleted := now - 1000
	const keys = 64
	p := partitioner.Murmur3()
	repairedKeys := 0
	for i := range keys {
		if partitioner.Compare(p.Token(fmt.Appendf(nil, "k%d", i)), partitioner.Murmur3Token(0)) < 0 {
			repairedKeys++
		}
	}
	if repairedKeys == 0 || repairedKeys == keys {
		t.Fatalf("%d of %d keys have negative tokens: the test needs both kinds", repairedKeys, keys)
	}
	for _, c := range []struct {
		name       string
		grace      int64
		gc         TombstoneGC
		repairedAt int64
		purged     int
	}{
		{"after a grace not passed", 864000, TombstoneGC{}, 0, 0},
		{"after a grace passed", 100, TombstoneGC{}, 0, keys},
		{"never", NoGCGrace, TombstoneGC{Mode: GCNever}, 0, 0},
		{"immediately", 864000, TombstoneGC{Mode: GCImmediately}, 0, keys},
		{"after a repair begun after the delay", NoGCGrace, TombstoneGC{Mode: GCAfterRepair, PropagationDelay: 60}, deleted + 61, repairedKeys},
		{"after a repair begun within the delay", NoGCGrace, TombstoneGC{Mode: GCAfterRepair, PropagationDelay: 60}, deleted + 60, 0},
		{"after a repair begun before the deletion", NoGCGrace, TombstoneGC{Mode: GCAfterRepair}, deleted - 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			history := negativeTokensRepaired{table: modelTableID, at: c.repairedAt}
			e, err := Open(Options{FS: vfs.NewMem(), DataDir: "data", DisableAutoCompaction: true, RepairHistory: history})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			opts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t", GCGraceSeconds: c.grace, TombstoneGC: c.gc}
			tbl, err := e.OpenTable(opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Recover(); err != nil {
				t.Fatal(err)
			}
			if got := deletedPartitionsAfterCompaction(t, e, tbl, keys, deleted); got != keys-c.purged {
				t.Fatalf("%d of %d deletions kept, want %d", got, keys, keys-c.purged)
			}
		})
	}
}

// TestReconfigureChangesWhenTombstonesGo checks that a table open under
// one rule purges under the rule Reconfigure gives it, and that it refuses
// another table's options.
func TestReconfigureChangesWhenTombstonesGo(t *testing.T) {
	e, tbl := testEngine(t, vfs.NewMem())
	defer e.Close()
	opts := TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t", TombstoneGC: TombstoneGC{Mode: GCNever}}
	if err := tbl.Reconfigure(opts); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now().Unix() - 10
	if got := deletedPartitionsAfterCompaction(t, e, tbl, 8, deleted); got != 8 {
		t.Fatalf("under GCNever %d of 8 deletions kept", got)
	}
	opts.TombstoneGC.Mode = GCImmediately
	if err := tbl.Reconfigure(opts); err != nil {
		t.Fatal(err)
	}
	if err := tbl.CompactMajor(); err != nil {
		t.Fatal(err)
	}
	if got := deletionsHeld(t, tbl); got != 0 {
		t.Fatalf("after Reconfigure to GCImmediately %d deletions kept", got)
	}
	other := opts
	other.ID = [16]byte{9}
	if err := tbl.Reconfigure(other); err == nil {
		t.Fatal("Reconfigure took another table's options")
	}
	bad := opts
	bad.TombstoneGC.PropagationDelay = -1
	if err := tbl.Reconfigure(bad); err == nil {
		t.Fatal("Reconfigure took a negative propagation delay")
	}
}

// deletedPartitionsAfterCompaction writes keys partitions, deletes each
// (local deletion time deleted) in another SSTable, compacts them into
// one, and returns how many deletions the table still holds.
func deletedPartitionsAfterCompaction(t *testing.T, e *Engine, tbl *Table, keys int, deleted int64) int {
	t.Helper()
	for i := range keys {
		if err := writeKey(e, fmt.Sprintf("k%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		m := mutation.NewMutation(modelTableID, fmt.Appendf(nil, "k%d", i))
		m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: 2, LocalDeletionTime: deleted}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := tbl.CompactMajor(); err != nil {
		t.Fatal(err)
	}
	return deletionsHeld(t, tbl)
}

func deletionsHeld(t *testing.T, tbl *Table) int {
	t.Helper()
	parts, err := tbl.ScanEntries(ScanQuery{Now: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range parts {
		for _, e := range p.Entries {
			if e.Kind == mutation.PartitionDeletionEntry {
				n++
			}
		}
	}
	return n
}
