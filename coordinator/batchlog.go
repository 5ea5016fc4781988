package coordinator

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
)

// The pure half of logged batches: a batch over several partitions is
// written first to the batchlog (system.batches) of one or two other
// nodes of the coordinator's data centre, then applied; its holders
// forget it once every write met its level, and replay the batches they
// still hold two write timeouts after they were made, so that a batch is
// eventually applied whole even when its coordinator died between the
// two. batchlog_driver.go sends and waits.

// batchlogVersion is system.batches' version: the encoding of the
// mutations it holds.
const batchlogVersion = 1

// spansPartitions reports whether a batch's mutations write more than one
// partition: of distinct keyspaces, or distinct keys (a batch of one
// partition's tables is applied as a plain write, as Cassandra applies
// it).
func spansPartitions(ms []*mutation.Mutation, keyspaceOf func(mutation.TableID) string) bool {
	for _, m := range ms[1:] {
		if !bytes.Equal(m.Key, ms[0].Key) || keyspaceOf(m.Table) != keyspaceOf(ms[0].Table) {
			return true
		}
	}
	return false
}

// batchlogEndpoints chooses where a logged batch is stored first, as
// Cassandra chooses: in this node's data centre, this node alone when it
// is the data centre's only node; otherwise up to two live nodes other
// than itself, of two racks other than its own when there are enough of
// them, else of whatever racks remain. pick(n) picks one of n at random.
// None is what a data centre with no other live node gives.
func batchlogEndpoints(m *ring.Metadata, self ring.Endpoint, localDC string, alive func(ring.Endpoint) bool, pick func(n int) int) []ring.Endpoint {
	localRack := m.Location(self).Rack
	var all []ring.Endpoint
	byRack := map[string][]ring.Endpoint{}
	for _, e := range m.Endpoints() {
		loc := m.Location(e)
		if loc.DataCenter != localDC {
			continue
		}
		all = append(all, e)
		if e != self && alive(e) {
			byRack[loc.Rack] = append(byRack[loc.Rack], e)
		}
	}
	if len(all) == 1 {
		return all
	}
	var valid []ring.Endpoint
	for _, rack := range sortedKeys(byRack) {
		valid = append(valid, byRack[rack]...)
	}
	if len(valid) <= 2 {
		return valid
	}
	if len(valid)-len(byRack[localRack]) >= 2 {
		delete(byRack, localRack) // enough in other racks
	}
	racks := sortedKeys(byRack)
	if len(racks) == 1 {
		members := slices.Clone(byRack[racks[0]])
		first := members[pick(len(members))]
		members = slices.DeleteFunc(members, func(e ring.Endpoint) bool { return e == first })
		return []ring.Endpoint{first, members[pick(len(members))]}
	}
	for i := len(racks) - 1; i > 0; i-- { // two racks at random
		j := pick(i + 1)
		racks[i], racks[j] = racks[j], racks[i]
	}
	out := make([]ring.Endpoint, 0, 2)
	for _, rack := range racks[:2] {
		out = append(out, byRack[rack][pick(len(byRack[rack]))])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// batchID is a batch's id, a version 1 timeuuid of when it was made
// (micros) with random low bits: the batchlog's partition key.
func batchID(micros int64, random uint64) []byte {
	return cqltype.TimeUUIDAt(micros*10, 1<<63|random&(1<<62-1))
}

// batchMicros is when the batch of an id was made.
func batchMicros(id []byte) (int64, error) {
	ticks, _, err := cqltype.TimeUUIDTicks(id)
	return ticks / 10, err
}

// appendBatch encodes BATCH_STORE's payload: the batch's id and its
// mutations.
func appendBatch(dst []byte, id []byte, ms []*mutation.Mutation) []byte {
	w := wire.Writer{B: dst}
	w.Bytes(id)
	w.B = appendMutations(w.B, ms)
	return w.B
}

func decodeBatch(b []byte) (id []byte, ms []*mutation.Mutation, err error) {
	r := wire.Reader{B: b}
	id = r.Bytes()
	if r.Err != nil {
		return nil, nil, r.Err
	}
	if _, err := batchMicros(id); err != nil {
		return nil, nil, fmt.Errorf("coordinator: a batch id: %w", err)
	}
	if ms, err = DecodeMutations(r.B); err != nil {
		return nil, nil, err
	}
	if len(ms) == 0 {
		return nil, nil, fmt.Errorf("coordinator: a batch of no mutations")
	}
	return id, ms, nil
}

// batchRecord is the batchlog's row of a batch, written at the batch's
// time (micros) so that its removal, later, shadows it.
func batchRecord(id []byte, ms []*mutation.Mutation, micros, nowSec int64) (*mutation.Mutation, error) {
	blobs := make([][]byte, len(ms))
	for i, m := range ms {
		blobs[i] = mutation.AppendMutation(nil, m)
	}
	next := int64(0)
	w := &schema.CellWriter{Timestamp: micros, Now: nowSec, NextListPath: func() []byte {
		next++ // each element a path of its own, in order
		return cqltype.TimeUUIDAt(micros*10+next, 1<<63)
	}}
	return schema.BatchesTable.InsertMutation(map[string][]byte{"id": id, "mutations": cqltype.EncodeCollection(blobs),
		"version": cqltype.EncodeInt(batchlogVersion)}, w)
}

// batchRemoval deletes a batch's row, at micros (no earlier than its
// record).
func batchRemoval(id []byte, micros, nowSec int64) *mutation.Mutation {
	m := mutation.NewMutation(schema.BatchesTable.ID, id)
	m.Deletion = mutation.DeletionTime{MarkedForDeleteAt: micros, LocalDeletionTime: nowSec}
	return m
}

// storedBatch is a batch read back from the batchlog.
type storedBatch struct {
	id     []byte
	micros int64
	ms     []*mutation.Mutation
}

// readBatch decodes a batchlog row (its cells by column, as
// schema.Table.RowCells reads them).
func readBatch(id []byte, cells map[string]schema.Cell) (storedBatch, error) {
	b := storedBatch{id: id}
	var err error
	if b.micros, err = batchMicros(id); err != nil {
		return b, err
	}
	if v := cells["version"].Value; len(v) != 4 {
		return b, fmt.Errorf("coordinator: batch %x has no version", id)
	} else if n, _ := cqltype.DecodeInt(v); n != batchlogVersion {
		return b, fmt.Errorf("coordinator: batch %x is of version %d, not %d", id, n, batchlogVersion)
	}
	blobs, err := cqltype.DecodeCollection(cells["mutations"].Value)
	if err != nil {
		return b, fmt.Errorf("coordinator: batch %x: %w", id, err)
	}
	for _, raw := range blobs {
		m, err := mutation.DecodeMutation(raw)
		if err != nil {
			return b, fmt.Errorf("coordinator: batch %x: %w", id, err)
		}
		b.ms = append(b.ms, m)
	}
	return b, nil
}
