package coordinator

import (
	"bytes"
	"context"
	"testing"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// FuzzDecodeMessages feeds every internode payload decoder, and every
// verb handler, bytes a peer (or a corrupted frame) might send: none may
// panic, and what a decoder accepts encodes back to what it decodes from.
func FuzzDecodeMessages(f *testing.F) {
	part := partitioner.Murmur3()
	from, to := part.Token([]byte("a")), part.Token([]byte("z"))
	m := mutation.NewMutation(mutation.TableID{7}, []byte{0, 0, 0, 1})
	row := mutation.NewRow()
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, []byte{0, 0, 0, 2})}
	m.Rows = []mutation.RowUpdate{{Row: row}}
	entries := m.AppendEntries(nil, part.Token(m.Key))
	f.Add(encodeRead(mutation.TableID{7}, request.PartitionRead{Key: []byte("k"), Slice: request.Slice{Start: []byte{1}, Limit: 3, Now: 9}}, true))
	f.Add(encodeScan(mutation.TableID{7}, request.RangeRead{Limit: 5, After: []byte("k"), From: &from, To: &to}))
	f.Add(encodeScan(mutation.TableID{7}, request.RangeRead{Limit: 5, Index: &request.IndexRead{Index: "i_1", Lo: []byte{1}, HiInclusive: true}}))
	f.Add(encodeEntries(entries))
	f.Add(encodeRawPartitions([]request.RawPartition{{Key: m.Key, Entries: entries}}))
	f.Add(EncodeMutations([]*mutation.Mutation{m}))
	f.Add(appendRead(fenced(3), mutation.TableID{7}, request.PartitionRead{Key: []byte("k")}, false))
	f.Add(appendMutations(fenced(0), []*mutation.Mutation{m}))
	f.Add(appendPaxosPrepare(nil, paxosPrepare{table: mutation.TableID{7}, key: m.Key, ballot: Ballot{Micros: 3}, write: true, read: true,
		reads: []request.Slice{{Start: []byte{}, End: []byte{3}}}}))
	f.Add(encodePromise(promise{outcome: promised, committed: Proposal{Ballot: Ballot{Micros: 2}, Origin: Ballot{Micros: 2}, Update: m}}, entries, true))
	f.Add(appendPaxosProposal(nil, mutation.TableID{7}, m.Key, Proposal{Ballot: Ballot{Micros: 2}, Origin: Ballot{Micros: 2}, Update: m}))
	f.Add(encodeAccepted(false, Ballot{Micros: 9}))
	f.Add(appendBatch(nil, batchID(1_700_000_000_000_000, 5), []*mutation.Mutation{m}))
	f.Add(appendCounterWrite(nil, request.Quorum, &mutation.Mutation{Table: mutation.TableID{7}, Key: []byte("k"),
		Rows: []mutation.RowUpdate{{Clustering: []byte{1}, Row: &mutation.Row{Cells: []mutation.Cell{mutation.CounterUpdate("n", 5, -2)}}}}}))
	if out, err := encodeOutcome(&request.Failure{Write: true, Consistency: request.Quorum, Received: 1, BlockFor: 2,
		Failures: []request.ReplicaFailed{{Replica: "127.0.0.2", Reason: request.ReasonUnknown}}}); err == nil {
		f.Add(out)
	}
	f.Add([]byte{})
	c := New(Config{Self: "a", Engine: &countingEngine{}, Schema: func() *schema.Schema { return schema.New(nil) }})
	handlers := c.Handlers()
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, q, digest, err := decodeRead(b); err == nil {
			again, q2, digest2, err := decodeRead(encodeRead(id, q, digest))
			if err != nil || again != id || digest2 != digest || !bytes.Equal(q2.Key, q.Key) || q2.Limit != q.Limit || q2.Now != q.Now {
				t.Fatalf("a read decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if id, q, err := decodeScan(b, part); err == nil {
			if again, q2, err := decodeScan(encodeScan(id, q), part); err != nil || again != id || q2.Limit != q.Limit || !bytes.Equal(q2.After, q.After) ||
				(q.Index == nil) != (q2.Index == nil) || q.Index != nil && (q.Index.Index != q2.Index.Index || !bytes.Equal(q.Index.Lo, q2.Index.Lo) ||
				!bytes.Equal(q.Index.Hi, q2.Index.Hi) || q.Index.LoInclusive != q2.Index.LoInclusive || q.Index.HiInclusive != q2.Index.HiInclusive) {
				t.Fatalf("a range read decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if es, err := decodeEntries(b); err == nil {
			if again, err := decodeEntries(encodeEntries(es)); err != nil || len(again) != len(es) {
				t.Fatalf("entries decoded from %x re-encode to others: %v", b, err)
			}
		}
		if ps, err := decodeRawPartitions(b); err == nil {
			if again, err := decodeRawPartitions(encodeRawPartitions(ps)); err != nil || len(again) != len(ps) {
				t.Fatalf("partitions decoded from %x re-encode to others: %v", b, err)
			}
		}
		if ms, err := DecodeMutations(b); err == nil {
			if again, err := DecodeMutations(EncodeMutations(ms)); err != nil || len(again) != len(ms) {
				t.Fatalf("mutations decoded from %x re-encode to others: %v", b, err)
			}
		}
		if epoch, rest, err := unfence(b); err == nil {
			if e2, r2, err := unfence(append(fenced(epoch), rest...)); err != nil || e2 != epoch || !bytes.Equal(r2, rest) {
				t.Fatalf("a ring epoch decoded from %x does not round-trip: %v", b, err)
			}
		}
		if mp, err := decodePaxosPrepare(b); err == nil {
			if again, err := decodePaxosPrepare(appendPaxosPrepare(nil, mp)); err != nil || again.ballot != mp.ballot || len(again.reads) != len(mp.reads) {
				t.Fatalf("a prepare decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if p, read, hasRead, err := decodePromise(b, mutation.TableID{7}, m.Key); err == nil {
			if again, _, _, err := decodePromise(encodePromise(p, read, hasRead), mutation.TableID{7}, m.Key); err != nil || again.outcome != p.outcome || again.committed.Ballot != p.committed.Ballot {
				t.Fatalf("a promise decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if table, key, p, err := decodePaxosProposal(b); err == nil {
			if _, _, again, err := decodePaxosProposal(appendPaxosProposal(nil, table, key, p)); err != nil || again.Ballot != p.Ballot || again.Origin != p.Origin {
				t.Fatalf("a proposal decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if ok, by, err := decodeAccepted(b); err == nil {
			if ok2, by2, err := decodeAccepted(encodeAccepted(ok, by)); err != nil || ok2 != ok || by2 != by {
				t.Fatalf("an answer to a proposal decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if id, ms, err := decodeBatch(b); err == nil {
			if again, ms2, err := decodeBatch(appendBatch(nil, id, ms)); err != nil || !bytes.Equal(again, id) || len(ms2) != len(ms) {
				t.Fatalf("a batch decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if l, cm, err := decodeCounterWrite(b); err == nil {
			if l2, again, err := decodeCounterWrite(appendCounterWrite(nil, l, cm)); err != nil || l2 != l || !bytes.Equal(again.Key, cm.Key) {
				t.Fatalf("a counter write decoded from %x re-encodes to another: %v", b, err)
			}
		}
		if outcome, err := decodeOutcome(b, 7000); err == nil {
			again, err := encodeOutcome(outcome)
			if err != nil {
				t.Fatalf("an outcome decoded from %x does not encode: %v", b, err)
			}
			if back, err := decodeOutcome(again, 7000); err != nil || (back == nil) != (outcome == nil) {
				t.Fatalf("an outcome decoded from %x re-encodes to another: %v", b, err)
			}
		}
		for _, verb := range []messaging.Verb{messaging.VerbMutation, messaging.VerbHint, messaging.VerbRead, messaging.VerbRangeRead, messaging.VerbTruncate,
			messaging.VerbPaxosPrepare, messaging.VerbPaxosPropose, messaging.VerbPaxosCommit, messaging.VerbBatchStore, messaging.VerbBatchRemove,
			messaging.VerbCounterMutation} {
			_, _ = handlers[verb](context.Background(), "fuzz", b)
		}
	})
}
