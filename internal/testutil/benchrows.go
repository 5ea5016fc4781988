package testutil

import (
	"encoding/binary"

	"github.com/sibyldb/sibyl/mutation"
)

// BenchKey is row i's 16-byte partition key in the engine benchmarks (B1,
// B7, storage's point reads): a multiplicative hash first, so that a load
// in row order does not arrive in key order.
func BenchKey(i uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, i*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], i)
	return k
}

// OneValueRow is the benchmarks' row: one value in column v at timestamp
// ts, written as a CQL INSERT writes it (with its row liveness), in a
// table without clustering columns.
func OneValueRow(table mutation.TableID, key, value []byte, ts int64) *mutation.Mutation {
	m := mutation.NewMutation(table, key)
	row := mutation.NewRow()
	row.Liveness = mutation.LivenessInfo{Timestamp: ts, ExpiresAt: mutation.NoDeletionTime}
	row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, ts, value)}
	m.Rows = []mutation.RowUpdate{{Row: row}}
	return m
}
