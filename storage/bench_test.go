package storage

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
)

// BenchmarkPointRead is ReadPartition of one partition by its key, in B1's
// shape (16-byte keys, one 128-byte value, every block in the cache), with
// the table's rows in one SSTable or still in the memtable: the CPU and
// allocations a point read costs the engine, which B1's ratio only shows
// against pebble's.
func BenchmarkPointRead(b *testing.B) {
	const rows = 200_000
	key := func(i uint64) []byte {
		k := binary.BigEndian.AppendUint64(nil, i*0x9e3779b97f4a7c15)
		return binary.BigEndian.AppendUint64(k, i)
	}
	for _, flushed := range []bool{true, false} {
		name := "memtable"
		if flushed {
			name = "sstable"
		}
		b.Run(name, func(b *testing.B) {
			e, tables := openInMemory(b, Options{BlockCacheSize: 256 << 20}, TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
			value := make([]byte, 128)
			for i := range uint64(rows) {
				m := mutation.NewMutation(modelTableID, key(i))
				row := mutation.NewRow()
				row.Liveness = mutation.LivenessInfo{Timestamp: 1, ExpiresAt: mutation.NoDeletionTime}
				row.Cells = []mutation.Cell{mutation.LiveCell("v", nil, 1, value)}
				m.Rows = []mutation.RowUpdate{{Row: row}}
				if err := e.Apply(m); err != nil {
					b.Fatal(err)
				}
			}
			if flushed {
				if err := e.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < rows; i++ { // every block into the cache
				if _, err := tables[0].ReadPartition(key(uint64(i)), ReadQuery{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p, err := tables[0].ReadPartition(key(r.Uint64N(rows)), ReadQuery{})
				if err != nil || p.Static != nil || len(p.Rows) != 1 {
					b.Fatalf("read: %v, %+v", err, p)
				}
			}
		})
	}
}
