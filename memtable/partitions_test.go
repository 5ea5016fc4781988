package memtable

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
)

// TestLookupAgreesWithTheTree: for every partition, held or not, Lookup
// says what an iterator over the partition finds: nothing, its one entry,
// or more (-1), through random writes of rows, static rows and deletions
// with overwrites, with real hashes and with hashes that many partitions
// share.
func TestLookupAgreesWithTheTree(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			if shared {
				saved := hashPrefix
				hashPrefix = func(prefix []byte) uint64 { return uint64(prefix[len(prefix)-3] % 3) }
				defer func() { hashPrefix = saved }()
			}
			p := partitioner.Murmur3()
			r := rand.New(rand.NewPCG(7, uint64(len(t.Name()))))
			prefixOf := func(k int) []byte {
				key := []byte(fmt.Sprintf("key%d", k))
				return mutation.AppendPartitionPrefix(nil, p.Token(key), key)
			}
			m := New(p.TokenBytesLen())
			told := 0 // lookups the index answered itself
			check := func() {
				t.Helper()
				for k := 0; k < 60; k++ {
					prefix := prefixOf(k)
					it := m.NewIter(prefix, mutation.PartitionUpperBound(prefix))
					var want []*mutation.Entry
					for e := it.First(); e != nil; e = it.Next() {
						want = append(want, e)
					}
					it.Close()
					e, keys := m.Lookup(prefix)
					switch {
					case keys == 0 && len(want) != 0:
						t.Fatalf("partition %d: Lookup says none, the tree has %d entries", k, len(want))
					case keys == 1 && (len(want) != 1 || entryString(e) != entryString(want[0])):
						t.Fatalf("partition %d: Lookup gave %s, the tree %d entries", k, entryString(e), len(want))
					case keys == -1 && len(want) < 2 && !shared:
						t.Fatalf("partition %d: Lookup could not tell a partition of %d entries", k, len(want))
					case keys != -1 && len(want) > 1:
						t.Fatalf("partition %d: Lookup says %d keys, the tree has %d", k, keys, len(want))
					case !shared && len(want) < 2 && keys != len(want):
						t.Fatalf("partition %d: Lookup says %d keys, the tree has %d", k, keys, len(want))
					}
					if keys >= 0 {
						told++
					}
				}
			}
			for i := 0; i < 3000; i++ {
				k := r.IntN(40) // partitions 40 to 59 stay empty
				prefix := prefixOf(k)
				var e mutation.Entry
				switch r.IntN(6) {
				case 0:
					e = mutation.Entry{Kind: mutation.PartitionDeletionEntry, Deletion: mutation.DeletionTime{MarkedForDeleteAt: int64(i), LocalDeletionTime: 1}}
					e.Key = mutation.AppendEntryKey(nil, prefix, e.Kind, nil)
				case 1:
					e = rowEntry("", int64(i), "s")
					e.Kind = mutation.StaticRowEntry
					e.Key = mutation.AppendEntryKey(nil, prefix, e.Kind, nil)
				default:
					// Mostly the partition's first row, so that many
					// partitions keep one key through overwrites.
					e = rowEntry("", int64(i), fmt.Sprint(i))
					e.Key = mutation.AppendEntryKey(nil, prefix, mutation.RowEntry, []byte{byte(r.IntN(4) / 3)})
				}
				m.Apply([]mutation.Entry{e})
				if i%100 == 0 {
					check()
				}
			}
			check()
			if told == 0 {
				t.Fatal("the index answered no lookup itself")
			}
		})
	}
}

func entryString(e *mutation.Entry) string {
	row := "-"
	if e.Row != nil {
		row = e.Row.String()
	}
	return fmt.Sprintf("%x %v %v %s", e.Key, e.Kind, e.Deletion, row)
}
