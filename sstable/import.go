package sstable

import (
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// Import publishes, as generation gen in dir, an SSTable that arrives
// whole from another node: its Data file read from data, its Filter file's
// bytes and its Statistics (meta, as the sender's Reader has them). The
// Data file must have the size and footer checksum meta records, and the
// filter its own checksum, or nothing is published. The Statistics are
// this node's: generation gen, level 0 (the strategy places it from
// there) and no commit log bound, since no record of this node's commit
// log is in it. On an error nothing is left in dir.
func Import(fs vfs.FS, dir string, gen uint64, meta Metadata, data io.Reader, filter []byte) (*Metadata, error) {
	fail := func(err error) (*Metadata, error) {
		return nil, fmt.Errorf("sstable: import generation %d in %s: %w", gen, dir, err)
	}
	if meta.FormatVersion != metadataFormatVersion {
		return fail(fmt.Errorf("unknown format version %d", meta.FormatVersion))
	}
	if _, err := decodeFilter(filter); err != nil {
		return fail(err)
	}
	dataTmp := fs.PathJoin(dir, DataFileName(gen)+tempSuffix)
	f, err := fs.Create(dataTmp)
	if err != nil {
		return fail(err)
	}
	abort := func(err error) (*Metadata, error) {
		_ = f.Close()
		_ = fs.Remove(dataTmp)
		return fail(err)
	}
	// One byte past the size meta records is enough to know it is wrong.
	n, err := io.Copy(f, io.LimitReader(data, meta.DataSize+1))
	if err != nil {
		return abort(err)
	}
	if n != meta.DataSize {
		return abort(invariants.Corruptf("data file of %d bytes or more, its statistics say %d", n, meta.DataSize))
	}
	if err := f.Sync(); err != nil {
		return abort(err)
	}
	crc, err := footerCRC(f, n)
	if err != nil {
		return abort(err)
	}
	if crc != meta.FooterCRC {
		return abort(invariants.Corruptf("footer checksum mismatch"))
	}
	if err := f.Close(); err != nil {
		_ = fs.Remove(dataTmp)
		return fail(err)
	}
	meta.Generation, meta.Level = gen, 0
	meta.CommitLogSegment, meta.CommitLogOffset = 0, 0
	if err := publishTemp(fs, dir, &meta, filter); err != nil {
		return nil, err
	}
	return &meta, nil
}
