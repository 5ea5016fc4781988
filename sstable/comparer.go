package sstable

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/sstable"
)

// comparer tells pebble how engine keys sort: as plain bytes. (Partition
// filtering is the Filter component's, not pebble's.)
func comparer(tokenLen int) *sstable.Comparer {
	c := *sstable.DefaultComparer
	c.Name = fmt.Sprintf("sibyl.engine-key.v1.token%d", tokenLen)
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
