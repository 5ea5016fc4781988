package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/sstable"
)

// What operators ask of the engine (nodetool): sizes and counts,
// the compaction throughput, and snapshots.

// TableStats describes a table as nodetool tablestats shows it.
type TableStats struct {
	SSTables         int
	LiveBytes        int64 // the live SSTables' files
	MemtableBytes    int64
	MemtableEntries  int
	Partitions       int64 // an estimate: the SSTables' partitions and the memtable's entries
	Reads            int64
	SSTablesPerRead  float64
	Writes           int64
	BloomFilterBytes int64
	PendingFlushes   int
}

// snapshotsDir is where a table keeps its snapshots, one directory per
// tag, as Cassandra lays them out.
const snapshotsDir = "snapshots"

// Stats reads the table's figures.
func (t *Table) Stats() TableStats {
	v := t.acquireView()
	defer v.release()
	fs := t.e.opts.FS
	var st TableStats
	st.SSTables = len(v.sstables)
	for _, s := range v.sstables {
		meta := s.meta()
		st.Partitions += meta.Partitions
		for _, name := range sstable.ComponentNames(s.gen) {
			if info, err := fs.Stat(fs.PathJoin(t.dir, name)); err == nil {
				st.LiveBytes += info.Size()
				if name == sstable.FilterFileName(s.gen) {
					st.BloomFilterBytes += info.Size()
				}
			}
		}
	}
	for i, m := range v.memtables {
		st.MemtableBytes += m.Size()
		if i == 0 {
			st.MemtableEntries = m.Len()
			st.Partitions += int64(m.Len())
		} else {
			st.PendingFlushes++
		}
	}
	reads, sstables := t.ReadStats()
	st.Reads, st.Writes = reads, t.writes.Load()
	if reads > 0 {
		st.SSTablesPerRead = float64(sstables) / float64(reads)
	}
	return st
}

// Load is the bytes of every table's live SSTables, what nodetool calls a
// node's load.
func (e *Engine) Load() int64 {
	var n int64
	for _, t := range e.tables() {
		n += t.Stats().LiveBytes
	}
	return n
}

// CompactionThroughput is the compaction throughput limit in MiB/s (0:
// none).
func (e *Engine) CompactionThroughput() int { return int(e.throughput.Load()) }

// SetCompactionThroughput changes the limit for the compactions that start
// from now on.
func (e *Engine) SetCompactionThroughput(mibPerSec int) error {
	if mibPerSec < 0 {
		return fmt.Errorf("compaction_throughput: %d MiB/s is negative", mibPerSec)
	}
	e.throughput.Store(int64(mibPerSec))
	return nil
}

// snapshotManifest is manifest.json of a snapshot, as Cassandra writes
// it: the Data component of each SSTable, and when it was taken (to the
// millisecond, UTC).
type snapshotManifest struct {
	Files     []string `json:"files"`
	CreatedAt string   `json:"created_at"`
	ExpiresAt *string  `json:"expires_at"`
}

func (t *Table) snapshotDir(tag string) string {
	return t.e.opts.FS.PathJoin(t.dir, snapshotsDir, tag)
}

// SnapshotExistsError refuses a snapshot under a tag the table already
// has, in Cassandra's words.
type SnapshotExistsError struct{ Tag string }

func (e *SnapshotExistsError) Error() string {
	return fmt.Sprintf("Snapshot %s already exists.", e.Tag)
}

// ErrBadSnapshotTag is wrapped by the refusal of a snapshot tag that is
// not a plain name.
var ErrBadSnapshotTag = errors.New("not a snapshot name")

// CheckSnapshotTag refuses a snapshot tag that is not a plain file name:
// empty, "." or "..", longer than a file name may be, or holding a path
// separator or a NUL. A tag names a directory under the table's snapshots
// directory and nothing else, so that no tag reaches outside it.
func CheckSnapshotTag(tag string) error {
	switch {
	case tag == "":
		return fmt.Errorf("snapshot tag: the empty tag is %w", ErrBadSnapshotTag)
	case tag == "." || tag == "..", strings.ContainsAny(tag, "/\\\x00"), len(tag) > 255:
		return fmt.Errorf("snapshot tag %q: %w (it may not be . or .., hold / or \\, or pass 255 bytes)", tag, ErrBadSnapshotTag)
	}
	return nil
}

// Snapshot hard-links the table's live SSTables under
// snapshots/<tag>/ in the table's directory, with a manifest.json naming
// them and schema.cql holding schema (the statement that recreates the
// table). A tag already used is refused.
func (t *Table) Snapshot(tag, schema string) error {
	if err := CheckSnapshotTag(tag); err != nil {
		return err
	}
	fs := t.e.opts.FS
	dir := t.snapshotDir(tag)
	if _, err := fs.Stat(dir); err == nil {
		return &SnapshotExistsError{Tag: tag}
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	v := t.acquireView()
	defer v.release()
	m := snapshotManifest{Files: []string{}, CreatedAt: time.Now().UTC().Format("2006-01-02T15:04:05.999Z07:00")}
	for _, s := range v.sstables {
		for _, name := range sstable.ComponentNames(s.gen) {
			if err := fs.Link(fs.PathJoin(t.dir, name), fs.PathJoin(dir, name)); err != nil {
				return fmt.Errorf("snapshot %s: %w", tag, err)
			}
		}
		m.Files = append(m.Files, sstable.DataFileName(s.gen))
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		return err
	}
	files := map[string][]byte{"manifest.json": manifest}
	if schema != "" { // none for the system keyspaces, as Cassandra
		files["schema.cql"] = []byte(schema + "\n")
	}
	for name, content := range files {
		f, err := fs.Create(fs.PathJoin(dir, name))
		if err != nil {
			return err
		}
		_, err = f.Write(content)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SnapshotInfo describes one snapshot of a table.
type SnapshotInfo struct {
	Tag string
	// Bytes is the snapshot's files; TrueBytes those of them the table no
	// longer holds (what the snapshot alone keeps on disk).
	Bytes, TrueBytes int64
}

// Snapshots lists the table's snapshots by tag.
func (t *Table) Snapshots() ([]SnapshotInfo, error) {
	fs := t.e.opts.FS
	tags, err := fs.List(fs.PathJoin(t.dir, snapshotsDir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	slices.Sort(tags)
	var out []SnapshotInfo
	for _, tag := range tags {
		files, err := fs.List(t.snapshotDir(tag))
		if err != nil {
			return nil, err
		}
		info := SnapshotInfo{Tag: tag}
		for _, name := range files {
			st, err := fs.Stat(fs.PathJoin(t.snapshotDir(tag), name))
			if err != nil {
				return nil, err
			}
			info.Bytes += st.Size()
			if _, err := fs.Stat(fs.PathJoin(t.dir, name)); err != nil {
				info.TrueBytes += st.Size()
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// ClearSnapshot removes the snapshot tag, or every snapshot when tag is
// empty.
func (t *Table) ClearSnapshot(tag string) error {
	fs := t.e.opts.FS
	if tag == "" {
		return fs.RemoveAll(fs.PathJoin(t.dir, snapshotsDir))
	}
	if err := CheckSnapshotTag(tag); err != nil {
		return err
	}
	return fs.RemoveAll(t.snapshotDir(tag))
}
