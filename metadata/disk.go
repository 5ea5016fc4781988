package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/sibyldb/sibyl/internal/durable"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// The log on disk is two files in its directory. "snapshot" holds the
// latest snapshot, replaced whole (durable.ReplaceFile). "log" holds
// records appended since: a hard state, or one entry. A record is its
// length (4 bytes), the CRC-32C of what follows the checksum (4 bytes),
// its type (1 byte) and its body, Raft's own protobuf encoding. Raft
// may overwrite the tail of its log (a new leader's entries replace
// uncommitted ones): an entry read at an index already held truncates
// from there, as MemoryStorage.Append does. Opening reads both files,
// cuts off a torn tail (the record a crash cut short, never synced, so
// never acknowledged to Raft), and rewrites the log from what it holds;
// each snapshot rewrites it too, without the entries the snapshot
// covers.

const (
	snapshotFile = "snapshot"
	logFile      = "log"
	headerLen    = 9

	recordHardState byte = 1
	recordEntry     byte = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// disk is the Raft log on a vfs: Raft reads it through the MemoryStorage,
// which always holds what the files do.
type disk struct {
	fs     vfs.FS
	dir    string
	mem    *raft.MemoryStorage
	log    vfs.File // open for appending
	logger *zerolog.Logger
}

// openDisk reads the log in dir, making the directory if need be.
func openDisk(fs vfs.FS, dir string, logger *zerolog.Logger) (*disk, error) {
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	d := &disk{fs: fs, dir: dir, mem: raft.NewMemoryStorage(), logger: logger}
	if err := d.readSnapshot(); err != nil {
		return nil, err
	}
	if err := d.readLog(); err != nil {
		return nil, err
	}
	if err := d.rewriteLog(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *disk) path(name string) string { return d.fs.PathJoin(d.dir, name) }

func (d *disk) readSnapshot() error {
	b, err := readAll(d.fs, d.path(snapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("metadata: reading the snapshot: %w", err)
	}
	typ, body, rest, err := nextRecord(b)
	if err != nil || typ != recordEntry || len(rest) != 0 {
		return fmt.Errorf("metadata: the snapshot %s does not decode: %w", d.path(snapshotFile), errors.Join(invariants.ErrCorruption, err))
	}
	var snap raftpb.Snapshot
	if err := snap.Unmarshal(body); err != nil {
		return fmt.Errorf("metadata: the snapshot %s does not decode: %w", d.path(snapshotFile), errors.Join(invariants.ErrCorruption, err))
	}
	return d.mem.ApplySnapshot(snap)
}

func (d *disk) readLog() error {
	b, err := readAll(d.fs, d.path(logFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("metadata: reading the log: %w", err)
	}
	snapIndex, _ := d.mem.FirstIndex()
	snapIndex--
	snapTerm, _ := d.mem.Term(snapIndex)
	// stale: the log's entry at the snapshot's index is of another term.
	// A crash between keeping a snapshot another member sent and
	// rewriting the log leaves the old log, whose entries after that
	// index belong to a history the snapshot replaced.
	stale := false
	for len(b) > 0 {
		typ, body, rest, err := nextRecord(b)
		if err != nil {
			d.logger.Warn().Err(err).Int("bytes", len(b)).Msg("metadata: cutting off the log's torn tail")
			return nil
		}
		b = rest
		switch typ {
		case recordHardState:
			var hs raftpb.HardState
			if err := hs.Unmarshal(body); err != nil {
				return fmt.Errorf("metadata: a hard state in the log: %w", errors.Join(invariants.ErrCorruption, err))
			}
			if hs.Commit < snapIndex {
				hs.Commit = snapIndex
			}
			if err := d.mem.SetHardState(hs); err != nil {
				return err
			}
		case recordEntry:
			var e raftpb.Entry
			if err := e.Unmarshal(body); err != nil {
				return fmt.Errorf("metadata: an entry in the log: %w", errors.Join(invariants.ErrCorruption, err))
			}
			if e.Index == snapIndex && snapIndex > 0 && e.Term != snapTerm {
				stale = true
			}
			if e.Index <= snapIndex || stale {
				continue
			}
			if err := d.mem.Append([]raftpb.Entry{e}); err != nil {
				return fmt.Errorf("metadata: an entry in the log: %w", errors.Join(invariants.ErrCorruption, err))
			}
		default:
			return fmt.Errorf("metadata: a log record of unknown type %d: %w", typ, invariants.ErrCorruption)
		}
	}
	return nil
}

// nextRecord splits the first record off b; an error means b does not
// start with a whole record whose checksum holds.
func nextRecord(b []byte) (typ byte, body, rest []byte, err error) {
	if len(b) < headerLen {
		return 0, nil, nil, io.ErrUnexpectedEOF
	}
	n := binary.BigEndian.Uint32(b)
	if n < 1 || uint64(len(b)-8) < uint64(n) {
		return 0, nil, nil, io.ErrUnexpectedEOF
	}
	payload := b[8 : 8+n]
	if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(b[4:]) {
		return 0, nil, nil, errors.New("a record's checksum does not match")
	}
	return payload[0], payload[1:], b[8+n:], nil
}

func appendRecord(dst []byte, typ byte, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)+1))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Update(crc32.Checksum([]byte{typ}, crcTable), crcTable, body))
	dst = append(dst, typ)
	return append(dst, body...)
}

func readAll(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// contents are the records that rebuild the MemoryStorage after its
// snapshot: the hard state and every entry.
func (d *disk) contents() ([]byte, error) {
	hs, _, err := d.mem.InitialState()
	if err != nil {
		return nil, err
	}
	var out []byte
	if !raft.IsEmptyHardState(hs) {
		b, err := hs.Marshal()
		if err != nil {
			return nil, err
		}
		out = appendRecord(out, recordHardState, b)
	}
	first, _ := d.mem.FirstIndex()
	last, _ := d.mem.LastIndex()
	if last >= first {
		ents, err := d.mem.Entries(first, last+1, ^uint64(0))
		if err != nil {
			return nil, err
		}
		for i := range ents {
			b, err := ents[i].Marshal()
			if err != nil {
				return nil, err
			}
			out = appendRecord(out, recordEntry, b)
		}
	}
	return out, nil
}

// rewriteLog replaces the log file by the records of what the storage
// holds, and opens it for appending.
func (d *disk) rewriteLog() error {
	if d.log != nil {
		if err := d.log.Close(); err != nil {
			return fmt.Errorf("metadata: closing the log: %w", err)
		}
		d.log = nil
	}
	body, err := d.contents()
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	name := d.path(logFile)
	if err := durable.ReplaceFile(d.fs, name, body); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	f, err := d.fs.OpenReadWrite(name)
	if err != nil {
		return fmt.Errorf("metadata: opening the log: %w", err)
	}
	d.log = &appendFile{File: f, off: int64(len(body))}
	return nil
}

// appendFile writes at the end of a file opened for reading and writing.
type appendFile struct {
	vfs.File
	off int64
}

func (f *appendFile) Write(b []byte) (int, error) {
	n, err := f.WriteAt(b, f.off)
	f.off += int64(n)
	return n, err
}

// save makes what a Ready asks to keep durable, before its messages go
// out: the snapshot it brings, its entries and hard state.
func (d *disk) save(rd raft.Ready) error {
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := d.saveSnapshot(rd.Snapshot); err != nil {
			return err
		}
		if err := d.mem.ApplySnapshot(rd.Snapshot); err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		if err := d.rewriteLog(); err != nil {
			return err
		}
	}
	var buf []byte
	for i := range rd.Entries {
		b, err := rd.Entries[i].Marshal()
		if err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		buf = appendRecord(buf, recordEntry, b)
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		b, err := rd.HardState.Marshal()
		if err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		buf = appendRecord(buf, recordHardState, b)
	}
	if len(buf) > 0 {
		if _, err := d.log.Write(buf); err != nil {
			return fmt.Errorf("metadata: writing the log: %w", err)
		}
		if rd.MustSync {
			if err := d.log.Sync(); err != nil {
				return fmt.Errorf("metadata: syncing the log: %w", err)
			}
		}
	}
	if err := d.mem.Append(rd.Entries); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		if err := d.mem.SetHardState(rd.HardState); err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
	}
	return nil
}

func (d *disk) saveSnapshot(snap raftpb.Snapshot) error {
	b, err := snap.Marshal()
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if err := durable.ReplaceFile(d.fs, d.path(snapshotFile), appendRecord(nil, recordEntry, b)); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	return nil
}

// snapshot takes a snapshot of the state as of index applied, keeps it,
// and drops the entries before keep entries back from it (a follower
// that far behind gets the snapshot instead).
func (d *disk) snapshot(applied uint64, cs raftpb.ConfState, data []byte, keep uint64) error {
	snap, err := d.mem.CreateSnapshot(applied, &cs, data)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if err := d.saveSnapshot(snap); err != nil {
		return err
	}
	if applied > keep {
		if err := d.mem.Compact(applied - keep); err != nil && !errors.Is(err, raft.ErrCompacted) {
			return fmt.Errorf("metadata: %w", err)
		}
	}
	return d.rewriteLog()
}

// empty reports whether the log holds nothing: a node that has never
// been in a group.
func (d *disk) empty() bool {
	hs, cs, _ := d.mem.InitialState()
	last, _ := d.mem.LastIndex()
	return raft.IsEmptyHardState(hs) && len(cs.Voters) == 0 && len(cs.Learners) == 0 && last == 0
}

func (d *disk) close() error {
	if d.log == nil {
		return nil
	}
	err := d.log.Close()
	d.log = nil
	return err
}
