package sstable

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/histogram"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// Metadata is the Statistics component: what storage needs to know about an
// SSTable without reading it.
type Metadata struct {
	FormatVersion int    `json:"format_version"`
	Generation    uint64 `json:"generation"`
	Level         int    `json:"level"`

	MinTimestamp         int64  `json:"min_timestamp"` // microseconds; math.MaxInt64 when empty
	MaxTimestamp         int64  `json:"max_timestamp"`
	MaxLocalDeletionTime int64  `json:"max_local_deletion_time"` // seconds, of tombstones and expiring cells
	MinToken             []byte `json:"min_token"`               // byte-comparable tokens
	MaxToken             []byte `json:"max_token"`
	MinKey               []byte `json:"min_key"` // first and last engine keys
	MaxKey               []byte `json:"max_key"`

	Partitions int64 `json:"partitions"`
	Rows       int64 `json:"rows"`
	Tombstones int64 `json:"tombstones"` // deletions of every kind and tombstone cells
	Entries    int64 `json:"entries"`
	DataSize   int64 `json:"data_size"` // bytes of the Data file
	// PartitionSizes and CellCounts are histograms of the partitions'
	// sizes (the bytes of their keys and values) and cell counts, as
	// Cassandra keeps them (histogram.Estimated); absent from SSTables
	// written before they were kept.
	PartitionSizes histogram.Estimated `json:"partition_sizes,omitempty"`
	CellCounts     histogram.Estimated `json:"cell_counts,omitempty"`
	// FooterCRC is a CRC32C of the Data file's last footerCheckLen bytes:
	// pebble's footer carries no checksum of its own, and a damaged footer
	// must be refused before pebble reads block handles from it.
	FooterCRC uint32 `json:"footer_crc32c"`

	// CommitLogUpperBound: every commit log record of this table that ends at
	// or before it is in this SSTable or an older one. Replay skips those.
	CommitLogSegment uint64 `json:"commitlog_segment"`
	CommitLogOffset  uint32 `json:"commitlog_offset"`
}

const metadataFormatVersion = 1

func newMetadata(gen uint64, level int) *Metadata {
	return &Metadata{FormatVersion: metadataFormatVersion, Generation: gen, Level: level,
		MinTimestamp: math.MaxInt64, MaxTimestamp: math.MinInt64, MaxLocalDeletionTime: math.MinInt64,
		PartitionSizes: histogram.NewEstimated(histogram.PartitionSizeBuckets), CellCounts: histogram.NewEstimated(histogram.CellCountBuckets)}
}

type metadataFile struct {
	Metadata *Metadata `json:"metadata"`
	CRC      uint32    `json:"crc32c"`
}

func encodeMetadata(m *Metadata) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(metadataFile{Metadata: m, CRC: crc32.Checksum(body, crcTable)}, "", "  ")
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func readMetadata(fs vfs.FS, name string) (*Metadata, error) {
	data, err := readWhole(fs, name)
	if err != nil {
		return nil, err
	}
	var mf metadataFile
	if err := json.Unmarshal(data, &mf); err != nil || mf.Metadata == nil {
		return nil, fmt.Errorf("sstable: %s: %w", name, invariants.Corruptf("metadata does not decode: %v", err))
	}
	body, err := json.Marshal(mf.Metadata)
	if err != nil {
		return nil, err
	}
	if crc32.Checksum(body, crcTable) != mf.CRC {
		return nil, fmt.Errorf("sstable: %s: %w", name, invariants.Corruptf("metadata checksum mismatch"))
	}
	if mf.Metadata.FormatVersion != metadataFormatVersion {
		return nil, fmt.Errorf("sstable: %s: unknown format version %d", name, mf.Metadata.FormatVersion)
	}
	return mf.Metadata, nil
}

// readWhole reads a small component file.
func readWhole(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sstable: open %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("sstable: read %s: %w", name, err)
	}
	return data, nil
}

// footerCheckLen covers pebble's footer (53 bytes in the formats we write)
// with room to spare.
const footerCheckLen = 256

// footerCRC reads the tail of a Data file of the given size and returns its
// checksum.
func footerCRC(f io.ReaderAt, size int64) (uint32, error) {
	n := min(size, footerCheckLen)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil {
		return 0, err
	}
	return crc32.Checksum(buf, crcTable), nil
}
