package memtable

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// BenchmarkPointRead is a point read's memtable part in a memtable of a
// million one-row partitions, half of the reads for partitions it does
// not hold: through the partition index (Lookup), and through an
// iterator bounded to the partition, as reads of partitions with many
// rows go.
func BenchmarkPointRead(b *testing.B) {
	p := partitioner.Murmur3()
	prefix := func(i uint64) []byte {
		key := binary.BigEndian.AppendUint64(nil, i)
		return mutation.AppendPartitionPrefix(nil, p.Token(key), key)
	}
	m := New(p.TokenBytesLen())
	const n = 1 << 20
	for i := uint64(0); i < n; i++ {
		e := rowEntry("", 1, "0123456789012345678901234567890123456789")
		e.Key = mutation.AppendEntryKey(nil, prefix(2*i), mutation.RowEntry, nil)
		m.Apply([]mutation.Entry{e})
	}
	r := rand.New(rand.NewPCG(1, 2))
	b.Run("lookup", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, keys := m.Lookup(prefix(uint64(r.IntN(2 * n)))); keys < 0 {
				b.Fatal("the index could not tell")
			}
		}
	})
	b.Run("iterator", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			pre := prefix(uint64(r.IntN(2 * n)))
			it := m.NewIter(pre, mutation.PartitionUpperBound(pre))
			it.First()
			it.Close()
		}
	})
}
