package memtable

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
)

// BenchmarkPointRead is a point read's memtable part as the engine does it
// (an iterator bounded to one partition, positioned at its first entry) in
// a memtable of a million partitions, half of the reads for partitions it
// does not hold.
func BenchmarkPointRead(b *testing.B) {
	m := New()
	r := rand.New(rand.NewPCG(1, 2))
	key := func(i uint64) []byte {
		k := binary.BigEndian.AppendUint64(nil, i*0x9E3779B97F4A7C15)
		return append(k, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0x40)
	}
	const n = 1 << 20
	for i := uint64(0); i < n; i++ {
		m.Apply([]mutation.Entry{rowEntry(string(key(2*i)), 1, "0123456789012345678901234567890123456789")})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := key(uint64(r.IntN(2 * n)))
		prefix := k[:len(k)-1]
		it := m.NewIter(prefix, mutation.PartitionUpperBound(prefix))
		it.First()
		it.Close()
	}
}
