package metadata

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"go.etcd.io/raft/v3/raftpb"
)

// TestTornTailIsCutOff: a crash that cut the log's last record short
// leaves a log that opens, without that record, and a node that goes on.
func TestTornTailIsCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(t)
		defer g.close()
		l := g.start(1)
		for k := range 5 {
			if _, err := g.propose(1, fmt.Sprintf("change %d", k)); err != nil {
				t.Fatal(err)
			}
		}
		before := g.recorders[endpoint(1)].history()
		g.stop(1)
		fs := g.fss[endpoint(1)]
		name := fs.PathJoin("metadata", logFile)
		b, err := readAll(fs, name)
		if err != nil {
			t.Fatal(err)
		}
		// A last entry, half written.
		e := raftpb.Entry{Term: 99, Index: l.Applied() + 1, Data: encodeSchemaChange(&schemaChange{Base: 99, Mutations: []byte("torn")})}
		eb, _ := e.Marshal()
		torn := appendRecord(nil, recordEntry, eb)
		writeFile(t, fs, name, append(b, torn[:len(torn)-3]...))
		l = g.open(1)
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := g.propose(1, "after"); err != nil {
			t.Fatal(err)
		}
		if got := g.recorders[endpoint(1)].history(); len(got) <= len(before) || got[:len(before)] != before {
			t.Fatalf("after the torn tail the node applied %q; before it %q", got, before)
		}
	})
}

// TestCorruptSnapshotRefused: a snapshot whose checksum fails stops the
// log from opening rather than starting the node from nothing.
func TestCorruptSnapshotRefused(t *testing.T) {
	fs := vfs.NewMem()
	nop := zerolog.Nop()
	d, err := openDisk(fs, "m", &nop)
	if err != nil {
		t.Fatal(err)
	}
	snap := raftpb.Snapshot{Data: encodeSnapshot(State{Epoch: 1}, nil),
		Metadata: raftpb.SnapshotMetadata{Index: 1, Term: 1, ConfState: raftpb.ConfState{Voters: []uint64{1}}}}
	if err := d.saveSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	d.close()
	if d, err = openDisk(fs, "m", &nop); err != nil {
		t.Fatalf("a sound snapshot: %v", err)
	}
	d.close()
	b, _ := readAll(fs, "m/"+snapshotFile)
	b[len(b)-1] ^= 0xff
	writeFile(t, fs, "m/"+snapshotFile, b)
	if _, err := openDisk(fs, "m", &nop); err == nil {
		t.Fatal("a corrupt snapshot opened")
	}
}

func writeFile(t *testing.T, fs vfs.FS, name string, b []byte) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestVotersSpreadAcrossRacksAndDataCentres(t *testing.T) {
	members := map[uint64]Member{
		1: {ID: 1, DataCenter: "dc1", Rack: "r1"}, 2: {ID: 2, DataCenter: "dc1", Rack: "r1"}, 3: {ID: 3, DataCenter: "dc1", Rack: "r2"},
		4: {ID: 4, DataCenter: "dc2", Rack: "r1"}, 5: {ID: 5, DataCenter: "dc2", Rack: "r1"}, 6: {ID: 6, DataCenter: "dc1", Rack: "r3"},
	}
	got := chooseVoters(members, []uint64{1}, []uint64{2, 3, 4, 5, 6}, votersWanted(len(members)))
	slices.Sort(got)
	// dc2 first (no voter), then dc1's other racks, then dc2 again.
	if want := []uint64{3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Fatalf("chose %v, want %v", got, want)
	}
	for n, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 3, 4: 3, 5: 5, 6: 5, 9: 5} {
		if got := votersWanted(n); got != want {
			t.Errorf("votersWanted(%d) = %d, want %d", n, got, want)
		}
	}
}

func FuzzDecoders(f *testing.F) {
	f.Add(encodeSchemaChange(&schemaChange{Proposal: proposalID{1, 2}, Base: 3, MinTimestamp: 4, MaxTimestamp: 5, Mutations: []byte("m")}))
	f.Add(encodeSnapshot(State{Epoch: 2, Members: map[uint64]Member{1: {ID: 1, Endpoint: "a"}},
		Nodes: map[uint64]NodeRecord{1: {ID: 1, Endpoint: "a", Tokens: []string{"1", "2"}, State: Normal}}}, []byte("s")))
	f.Add(encodeNodeChange(&nodeChange{Proposal: proposalID{1, 3}, Record: NodeRecord{ID: 1, Endpoint: "a", Tokens: []string{"-5"}, State: Normal}}))
	f.Add(encodeNodeChange(&nodeChange{Proposal: proposalID{1, 4}, Record: NodeRecord{ID: 2, Endpoint: "a", Tokens: []string{"-5"}, State: Joining, Replaces: 1}}))
	f.Add(encodeConfContext(confContext{Proposal: proposalID{1, 1}, Members: []Member{{ID: 1, Endpoint: "a"}}}))
	f.Add(encodeJoinAnswer(joinAnswer{Kind: joinAdded, Index: 7, Leader: "x"}))
	f.Add(appendRecord(nil, recordHardState, []byte{8, 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = decodeEntry(b)
		_, _, _ = decodeSnapshot(b)
		_, _ = decodeConfContext(b)
		_, _ = decodeJoinAnswer(b)
		_, _ = decodeMember(b)
		for rest := b; len(rest) > 0; {
			_, _, next, err := nextRecord(rest)
			if err != nil {
				break
			}
			rest = next
		}
		// A log file of these bytes opens or is refused; it never panics.
		fs := vfs.NewMem()
		_ = fs.MkdirAll("m", 0o755)
		f, _ := fs.Create("m/" + logFile)
		_, _ = f.Write(b)
		_ = f.Close()
		nop := zerolog.New(io.Discard)
		if d, err := openDisk(fs, "m", &nop); err == nil {
			d.close()
		}
	})
}
