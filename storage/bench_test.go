package storage

import (
	"math/rand/v2"
	"testing"

	"github.com/sibyldb/sibyl/internal/testutil"
)

// BenchmarkPointRead is ReadPartition of one partition by its key, in B1's
// shape (16-byte keys, one 128-byte value, every block in the cache), with
// the table's rows in one SSTable or still in the memtable: the CPU and
// allocations a point read costs the engine, which B1's ratio only shows
// against pebble's.
func BenchmarkPointRead(b *testing.B) {
	const rows = 200_000
	for _, flushed := range []bool{true, false} {
		name := "memtable"
		if flushed {
			name = "sstable"
		}
		b.Run(name, func(b *testing.B) {
			e, tables := openInMemory(b, Options{BlockCacheSize: 256 << 20}, TableOptions{ID: modelTableID, Keyspace: "ks", Name: "t"})
			value := make([]byte, 128)
			for i := range uint64(rows) {
				if err := e.Apply(testutil.OneValueRow(modelTableID, testutil.BenchKey(i), value, 1)); err != nil {
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
				if _, err := tables[0].ReadPartition(testutil.BenchKey(uint64(i)), ReadQuery{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p, err := tables[0].ReadPartition(testutil.BenchKey(r.Uint64N(rows)), ReadQuery{})
				if err != nil || p.Static != nil || len(p.Rows) != 1 {
					b.Fatalf("read: %v, %+v", err, p)
				}
			}
		})
	}
}
