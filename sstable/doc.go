// Package sstable writes and reads a table's immutable sorted files.
//
// An SSTable is two files in the table's directory:
//
//	sb-<generation>-Data.db        entries in engine-key order, in the block
//	                               format of pebble's sstable package (blocks,
//	                               compression, checksums)
//	sb-<generation>-Filter.db      a bloom filter over partition prefixes
//	                               (pebble's bloom format, with a CRC32C),
//	                               held in memory while the SSTable is open
//	sb-<generation>-Statistics.db  our metadata component (Metadata, JSON with
//	                               a CRC32C), written last
//	sb-<id>-Obsolete.txn           generations being removed (JSON with a
//	                               CRC32C), carried out at start-up
//
// Owns: the file names and publication protocol (temporary files, fsync,
// rename Data, Filter, then Statistics, fsync the directory: an SSTable exists once its
// Statistics file does), removal through obsolete logs, the metadata component, the engine-key comparer given
// to pebble, iterators that decode entries, and the shared block cache.
// Does not own: what entries mean (package mutation), which SSTables a table
// has or when to compact them (package storage).
// May import: mutation, partitioner, internal/invariants, pebble/sstable,
// pebble/bloom, pebble/objstorage, pebble/vfs, and the root pebble package
// for its block cache constructor only.
// Must not import: memtable, commitlog, storage, anything above.
//
// Concurrency: a Reader is safe for concurrent use; each Iter is not.
//
// Invariants:
//
//	S1. A published SSTable is complete: both files were fsynced before the
//	    Statistics file was renamed into place.
//	S2. Every block read is checked against its checksum; a mismatch is an
//	    error wrapping invariants.ErrCorruption that names the file.
package sstable
