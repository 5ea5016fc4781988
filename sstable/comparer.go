package sstable

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/sstable"
	"github.com/sibyldb/sibyl/mutation"
)

// comparer tells pebble how engine keys sort (plain bytes) and where their
// partition prefix ends, so that the bloom filter is built over partitions
// and a partition read can skip a file without touching its data blocks.
func comparer(tokenLen int) *sstable.Comparer {
	c := *sstable.DefaultComparer
	c.Name = fmt.Sprintf("sibyl.engine-key.v1.token%d", tokenLen)
	c.Split = func(key []byte) int {
		n, err := mutation.PartitionPrefixLen(key, tokenLen)
		if err != nil {
			return len(key) // not an engine key (never written by Sibyl): filter on the whole key
		}
		return n
	}
	c.Compare = bytes.Compare
	return &c
}

var comparers = map[int]*sstable.Comparer{8: comparer(8), 16: comparer(16)}

func comparerFor(tokenLen int) (*sstable.Comparer, error) {
	c, ok := comparers[tokenLen]
	if !ok {
		return nil, fmt.Errorf("sstable: no comparer for %d-byte tokens", tokenLen)
	}
	return c, nil
}
