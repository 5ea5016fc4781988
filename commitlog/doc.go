// Package commitlog makes mutations durable before they are acknowledged.
//
// Owns: segment files, record framing (length, CRC32C), the sync modes
// (periodic, group, batch), replay, and deleting segments every table has
// flushed past.
// Does not own: what a record means (package mutation decodes payloads),
// when to flush (package storage).
// May import: mutation (table ids), internal/invariants, pebble/vfs, zerolog.
// Must not import: memtable, sstable, storage, anything above.
//
// Concurrency: Append, Discard and Sync are safe for concurrent use. Replay
// runs before the first Append.
//
// Invariants:
//
//	C1. An acknowledged record has reached the operating system before
//	    Append returns, in every sync mode: it was copied into a shared
//	    mapping of the segment file (mmap mode) or a write system call
//	    returned (write mode). In batch and group mode it has also been
//	    fsynced.
//	C2. Positions grow strictly, across segments and across restarts.
//	C3. Replay truncates a torn tail of the newest segment with a warning
//	    and stops with an error naming the file and offset at a bad checksum
//	    anywhere else.
//	C4. Only a failed write or fsync of a segment (after which what reached
//	    the disk is unknown) makes the log refuse every later append. A
//	    failure to make a new segment refuses the appends that need one and
//	    is retried, at most once a second, until a segment can be made;
//	    so does Open, which does not fail for it, so that a node on a full
//	    disk starts, replays and frees its replayed segments.
//
// Segment layout (see docs/architecture.md):
//
//	header: magic "SIBYLCL1" (8) | segment id (8, big-endian) | CRC32C of the id (4)
//	record: length of payload (4) | CRC32C over length and payload (4) | payload
//	        | zeros to a multiple of 4
//	a zero length where a record header belongs: the end of the records
//	(mapped segments are allocated whole and zero-filled, a record's length
//	is stored last, atomically, after its checksum and payload, and no
//	record is empty)
package commitlog
