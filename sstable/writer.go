package sstable

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/sibyldb/sibyl/internal/durable"
	"github.com/sibyldb/sibyl/mutation"
)

// WriterOptions configure how SSTables are written.
type WriterOptions struct {
	// TokenLen is the partitioner's token width in bytes (8 or 16). Required.
	TokenLen int
	// BlockSize is the target size of a data block before compression.
	// Default 4 KiB; between 1 KiB and 1 MiB.
	BlockSize int
	// Compression is "snappy" (default), "zstd" or "none".
	Compression string
	// BloomBitsPerKey sizes the partition bloom filter; default 10 (about a
	// 1% false positive rate); 0 after defaults means no filter is not
	// possible: use a negative value to disable it.
	BloomBitsPerKey int
	// LargePartitionBytes is the size past which a partition written is
	// noted in LargePartitions (compaction_large_partition_warning_threshold);
	// default 100 MiB.
	LargePartitionBytes int64
}

// LargePartition is a partition an SSTable writer found larger than
// LargePartitionBytes.
type LargePartition struct {
	Key   []byte // the partition key
	Bytes int64  // its entries' keys and values
}

// EnsureDefaults fills unset fields with their defaults.
func (o *WriterOptions) EnsureDefaults() {
	if o.BlockSize == 0 {
		o.BlockSize = 4 << 10
	}
	if o.Compression == "" {
		o.Compression = "snappy"
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = 10
	}
	if o.LargePartitionBytes == 0 {
		o.LargePartitionBytes = 100 << 20
	}
}

// Validate reports every problem with the options at once.
func (o *WriterOptions) Validate() error {
	var errs []error
	if o.TokenLen != 8 && o.TokenLen != 16 {
		errs = append(errs, fmt.Errorf("sstable: token length %d is not 8 or 16", o.TokenLen))
	}
	if o.BlockSize != 0 && (o.BlockSize < 1<<10 || o.BlockSize > 1<<20) {
		errs = append(errs, fmt.Errorf("sstable: block size %d is outside [1 KiB, 1 MiB]", o.BlockSize))
	}
	switch o.Compression {
	case "", "snappy", "zstd", "none":
	default:
		errs = append(errs, fmt.Errorf("sstable: compression %q is not one of snappy, zstd, none", o.Compression))
	}
	return errors.Join(errs...)
}

func (o *WriterOptions) pebbleOptions() (sstable.WriterOptions, error) {
	cmp, err := comparerFor(o.TokenLen)
	if err != nil {
		return sstable.WriterOptions{}, err
	}
	wo := sstable.WriterOptions{
		BlockSize: o.BlockSize,
		// Index partitions of 256 KiB rather than one data block: an
		// SSTable up to about 40 MiB keeps a single-level index, and a point
		// read looks up one index block instead of two.
		IndexBlockSize: 256 << 10,
		Comparer:       cmp,
		TableFormat:    sstable.TableFormatPebblev2,
	}
	switch o.Compression {
	case "snappy":
		wo.Compression = sstable.SnappyCompression
	case "zstd":
		wo.Compression = sstable.ZstdCompression
	case "none":
		wo.Compression = sstable.NoCompression
	}
	return wo, nil
}

// DataFileName is the name of the Data component of generation gen.
func DataFileName(gen uint64) string { return fmt.Sprintf("sb-%d-Data.db", gen) }

// StatisticsFileName is the name of the Statistics component.
func StatisticsFileName(gen uint64) string { return fmt.Sprintf("sb-%d-Statistics.db", gen) }

const tempSuffix = durable.TempSuffix

// Writer builds one SSTable. Entries must be added in strictly increasing
// key order. Nothing is visible until Finish succeeds.
type Writer struct {
	fs       vfs.FS
	dir      string
	opts     WriterOptions
	w        *sstable.Writer
	meta     *Metadata
	lastKey  []byte
	lastPart []byte
	// partBytes and partCells are the current partition's, counted into
	// the metadata's histograms when it ends.
	partBytes, partCells int64
	large                []LargePartition
	filter               filterBuilder
	value                []byte // scratch for the encoded value: pebble copies it
	closed               bool
}

// Create starts a new SSTable of generation gen in dir.
func Create(fs vfs.FS, dir string, gen uint64, level int, opts WriterOptions) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	wo, err := opts.pebbleOptions()
	if err != nil {
		return nil, err
	}
	name := fs.PathJoin(dir, DataFileName(gen)+tempSuffix)
	f, err := fs.Create(name)
	if err != nil {
		return nil, fmt.Errorf("sstable: create %s: %w", name, err)
	}
	return &Writer{
		fs: fs, dir: dir, opts: opts, meta: newMetadata(gen, level),
		w:      sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo),
		filter: newFilterBuilder(opts.BloomBitsPerKey),
	}, nil
}

// SetCommitLogBound records the commit log position this SSTable's data is
// complete up to (see Metadata).
func (w *Writer) SetCommitLogBound(segment uint64, offset uint32) {
	w.meta.CommitLogSegment, w.meta.CommitLogOffset = segment, offset
}

// Add appends an entry.
func (w *Writer) Add(e *mutation.Entry) error {
	if w.lastKey != nil && bytes.Compare(e.Key, w.lastKey) <= 0 {
		return fmt.Errorf("sstable: key %x added after %x: keys must increase", e.Key, w.lastKey)
	}
	prefixLen, err := mutation.PartitionPrefixLen(e.Key, w.opts.TokenLen)
	if err != nil {
		return fmt.Errorf("sstable: %w", err)
	}
	w.value = mutation.AppendEntryValue(w.value[:0], e)
	if err := w.w.Set(e.Key, w.value); err != nil {
		return fmt.Errorf("sstable: write %s: %w", DataFileName(w.meta.Generation), err)
	}
	w.account(e, prefixLen)
	w.partBytes += int64(len(e.Key) + len(w.value))
	if e.Row != nil {
		w.partCells += int64(len(e.Row.Cells))
	}
	w.lastKey = append(w.lastKey[:0], e.Key...)
	return nil
}

func (w *Writer) account(e *mutation.Entry, prefixLen int) {
	m := w.meta
	m.Entries++
	if m.MinKey == nil {
		m.MinKey = append([]byte(nil), e.Key...)
		m.MinToken = append([]byte(nil), e.Key[:w.opts.TokenLen]...)
	}
	if !bytes.Equal(w.lastPart, e.Key[:prefixLen]) {
		w.endPartition()
		m.Partitions++
		w.lastPart = append(w.lastPart[:0], e.Key[:prefixLen]...)
		w.filter.add(w.lastPart)
	}
	m.MinTimestamp = min(m.MinTimestamp, e.MinTimestamp())
	m.MaxTimestamp = max(m.MaxTimestamp, e.MaxTimestamp())
	if e.Row == nil {
		m.Tombstones++
		m.MaxLocalDeletionTime = max(m.MaxLocalDeletionTime, e.Deletion.LocalDeletionTime)
		return
	}
	if e.Kind == mutation.RowEntry {
		m.Rows++
	}
	r := e.Row
	if !r.Deletion.IsLive() {
		m.Tombstones++
		m.MaxLocalDeletionTime = max(m.MaxLocalDeletionTime, r.Deletion.LocalDeletionTime)
	}
	if r.Liveness.IsExpiring() {
		m.MaxLocalDeletionTime = max(m.MaxLocalDeletionTime, r.Liveness.ExpiresAt)
	}
	for _, cd := range r.Columns {
		m.Tombstones++
		m.MaxLocalDeletionTime = max(m.MaxLocalDeletionTime, cd.Deletion.LocalDeletionTime)
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Tombstone {
			m.Tombstones++
		}
		if c.Tombstone || c.TTL > 0 {
			m.MaxLocalDeletionTime = max(m.MaxLocalDeletionTime, c.LocalDeletionTime)
		}
	}
}

// endPartition counts the partition just written into the histograms.
func (w *Writer) endPartition() {
	if w.lastPart != nil {
		w.meta.PartitionSizes.Add(w.partBytes)
		w.meta.CellCounts.Add(w.partCells)
		if w.partBytes > w.opts.LargePartitionBytes {
			// The prefix read as a partition deletion's key: no more bytes.
			if parts, err := mutation.ParseKey(append(w.lastPart[:len(w.lastPart):len(w.lastPart)], byte(mutation.PartitionDeletionEntry)), w.opts.TokenLen); err == nil {
				w.large = append(w.large, LargePartition{Key: parts.PartitionKey, Bytes: w.partBytes})
			}
		}
	}
	w.partBytes, w.partCells = 0, 0
}

// LargePartitions are the partitions written larger than
// LargePartitionBytes, in order; complete after Finish.
func (w *Writer) LargePartitions() []LargePartition { return w.large }

// EstimatedSize is the bytes written so far, for splitting compaction output.
func (w *Writer) EstimatedSize() uint64 { return w.w.EstimatedSize() }

// Finish completes the SSTable and publishes it atomically (INVARIANT S1).
func (w *Writer) Finish() (*Metadata, error) {
	if w.closed {
		return nil, fmt.Errorf("sstable: writer already closed")
	}
	w.closed = true
	fs, gen := w.fs, w.meta.Generation
	dataTmp := fs.PathJoin(w.dir, DataFileName(gen)+tempSuffix)
	fail := func(err error) (*Metadata, error) {
		_ = fs.Remove(dataTmp)
		return nil, fmt.Errorf("sstable: finish generation %d in %s: %w", gen, w.dir, err)
	}
	// Close fsyncs and closes the data file.
	if err := w.w.Close(); err != nil {
		return fail(err)
	}
	w.endPartition()
	if w.lastKey != nil {
		w.meta.MaxKey = append([]byte(nil), w.lastKey...)
		w.meta.MaxToken = append([]byte(nil), w.lastKey[:w.opts.TokenLen]...)
	}
	if err := w.checksumFooter(dataTmp); err != nil {
		return fail(err)
	}
	if err := publishTemp(fs, w.dir, w.meta, w.filter.encode()); err != nil {
		return nil, err
	}
	return w.meta, nil
}

// publishTemp publishes generation meta.Generation in dir, whose Data file
// is written and synced under its temporary name: it writes the Filter
// file's bytes (CRC included) and the Statistics, then renames the three,
// Statistics last (INVARIANT S1). On an error it leaves nothing behind.
func publishTemp(fs vfs.FS, dir string, meta *Metadata, filter []byte) error {
	gen := meta.Generation
	dataTmp := fs.PathJoin(dir, DataFileName(gen)+tempSuffix)
	filterTmp := fs.PathJoin(dir, FilterFileName(gen)+tempSuffix)
	statsTmp := fs.PathJoin(dir, StatisticsFileName(gen)+tempSuffix)
	fail := func(err error) error {
		_ = fs.Remove(dataTmp)
		_ = fs.Remove(filterTmp)
		_ = fs.Remove(statsTmp)
		return fmt.Errorf("sstable: finish generation %d in %s: %w", gen, dir, err)
	}
	body, err := encodeMetadata(meta)
	if err != nil {
		return fail(err)
	}
	if err := durable.WriteFile(fs, filterTmp, filter); err != nil {
		return fail(err)
	}
	if err := durable.WriteFile(fs, statsTmp, body); err != nil {
		return fail(err)
	}
	if err := fs.Rename(dataTmp, fs.PathJoin(dir, DataFileName(gen))); err != nil {
		return fail(err)
	}
	if err := fs.Rename(filterTmp, fs.PathJoin(dir, FilterFileName(gen))); err != nil {
		_ = fs.Remove(fs.PathJoin(dir, DataFileName(gen)))
		return fail(err)
	}
	if err := fs.Rename(statsTmp, fs.PathJoin(dir, StatisticsFileName(gen))); err != nil {
		_ = fs.Remove(fs.PathJoin(dir, DataFileName(gen)))
		_ = fs.Remove(fs.PathJoin(dir, FilterFileName(gen)))
		return fail(err)
	}
	if err := durable.SyncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: finish generation %d in %s: %w", gen, dir, err)
	}
	return nil
}

// Abort drops an unfinished SSTable.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	_ = w.w.Close()
	_ = w.fs.Remove(w.fs.PathJoin(w.dir, DataFileName(w.meta.Generation)+tempSuffix))
}

func (w *Writer) checksumFooter(name string) error {
	f, err := w.fs.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	w.meta.DataSize = st.Size()
	w.meta.FooterCRC, err = footerCRC(f, st.Size())
	return err
}
