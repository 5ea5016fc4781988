package simulation

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/streaming"
)

// A node that missed writes (down, with hinted handoff off) pulls a
// table from another replica; the link between them is cut for half a
// minute in the middle of the session, whose requests are tried again
// until the heal, and the session then finishes where it stopped: the
// node holds every row.
func TestStreamingAcrossACutLink(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		c, err := New(Config{Seed: 11, Handoff: coordinator.HintedHandoff{Disabled: true}, StreamThroughput: 32 << 10,
			Nodes: []NodeConfig{{Name: "127.0.0.1", DataCenter: "dc1", Rack: "r1"}, {Name: "127.0.0.2", DataCenter: "dc1", Rack: "r1"},
				{Name: "127.0.0.3", DataCenter: "dc1", Rack: "r1"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		src, dst := c.Node("127.0.0.1"), c.Node("127.0.0.3")
		for _, stmt := range []string{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
			"CREATE TABLE ks.kv (k int PRIMARY KEY, v text)"} {
			if _, err := src.Exec(stmt, request.One); err != nil {
				t.Fatal(err)
			}
		}
		if err := dst.Crash(); err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		const rows = 1000
		for k := range rows {
			if _, err := src.Exec(fmt.Sprintf("INSERT INTO ks.kv (k, v) VALUES (%d, 'value %0100d')", k, k), request.One); err != nil {
				t.Fatal(err)
			}
		}
		if err := dst.Restart(); err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitMembership(time.Minute); err != nil {
			t.Fatal(err)
		}
		count := func() int64 {
			res, err := exec.NewSession(localOnly{dst}).QueryText("SELECT count(*) FROM ks.kv", exec.QueryParams{Consistency: request.One})
			if err != nil {
				t.Fatal(err)
			}
			return int64(binary.BigEndian.Uint64(res.Rows[0][0]))
		}
		if got := count(); got != 0 {
			t.Fatalf("the node that was down holds %d rows before streaming", got)
		}
		table, err := dst.currentSchema().Table("ks", "kv")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		var res streaming.Result
		go func() {
			var err error
			res, err = dst.streaming.Fetch(context.Background(), "Rebuild", string(src.Name),
				[]streaming.TableSpans{{Table: table.ID, Spans: []storage.KeySpan{{}}}})
			done <- err
		}()
		// At 32 KiB a second the table takes several seconds: cut the
		// link once some of it has come.
		for received(dst) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		c.Cut(src.Name, dst.Name)
		time.Sleep(30 * time.Second)
		if got := received(dst); got == 0 || len(dst.streaming.Sessions()) != 1 {
			t.Fatalf("during the cut: %d bytes received, sessions %+v", got, dst.streaming.Sessions())
		}
		c.Heal()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := count(); got != rows || res.Sections == 0 {
			t.Fatalf("after the session the node holds %d of %d rows (%+v)", got, rows, res)
		}
		if s := src.streaming.Sessions(); len(s) != 0 {
			t.Fatalf("the source still holds the session: %+v", s)
		}
	})
}

// received is the bytes of the sessions the node is receiving.
func received(n *Node) int64 {
	var b int64
	for _, s := range n.streaming.Sessions() {
		if s.Receiving {
			b += s.BytesDone
		}
	}
	return b
}
