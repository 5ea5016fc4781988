package sstable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// The Filter component is a bloom filter over the SSTable's partition
// prefixes, held in memory while the SSTable is open (as Cassandra holds
// its Filter.db): a point read asks it before opening an iterator, so the
// SSTables that lack the partition cost a few hashes, not an iterator, an
// index lookup and a filter block from the cache each.
//
// File: the filter bytes of pebble's bloom package (its table filter
// format) | CRC32C of them (4, big-endian). An empty filter (bloom_bits_per_key
// negative) passes every key.

// FilterFileName is the name of the Filter component.
func FilterFileName(gen uint64) string { return fmt.Sprintf("sb-%d-Filter.db", gen) }

// filterProbe is the reader of every filter: the probe count is stored in
// the filter, so the bits per key it was built with do not matter here.
var filterProbe = bloom.FilterPolicy(10)

// filterBuilder collects partition prefixes.
type filterBuilder struct {
	w sstable.FilterWriter // nil: no filter
}

func newFilterBuilder(bitsPerKey int) filterBuilder {
	if bitsPerKey <= 0 {
		return filterBuilder{}
	}
	return filterBuilder{w: bloom.FilterPolicy(bitsPerKey).NewWriter(sstable.TableFilter)}
}

func (b *filterBuilder) add(prefix []byte) {
	if b.w != nil {
		b.w.AddKey(prefix)
	}
}

// encode returns the file's bytes.
func (b *filterBuilder) encode() []byte {
	var f []byte
	if b.w != nil {
		f = b.w.Finish(nil)
	}
	return binary.BigEndian.AppendUint32(f, crc32.Checksum(f, crcTable))
}

// NoFilter is the Filter file of an SSTable without a filter: it passes
// every key.
func NoFilter() []byte {
	var none filterBuilder
	return none.encode()
}

// readFilter loads and checks a Filter file; nil means no filter, as for
// an SSTable written before the component existed.
func readFilter(fs vfs.FS, name string) ([]byte, error) {
	data, err := readWhole(fs, name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	body, err := decodeFilter(data)
	if err != nil {
		return nil, fmt.Errorf("sstable: %s: %w", name, err)
	}
	return body, nil
}

// decodeFilter checks a Filter file's bytes and returns the filter (nil:
// none).
func decodeFilter(data []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, invariants.Corruptf("filter of %d bytes is cut short", len(data))
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.BigEndian.Uint32(data[len(data)-4:]) {
		return nil, invariants.Corruptf("filter checksum mismatch")
	}
	if len(body) == 0 {
		return nil, nil
	}
	return body, nil
}

// mayContain reports whether a filter (nil: none) admits a prefix.
func mayContain(filter, prefix []byte) bool {
	return filter == nil || filterProbe.MayContain(sstable.TableFilter, filter, prefix)
}
