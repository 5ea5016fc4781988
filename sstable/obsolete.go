package sstable

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/sibyldb/sibyl/internal/durable"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// An obsolete log records, before any of them is deleted, the generations a
// compaction or a truncation replaced. Inputs are deleted one by one, and
// only when no read holds them; a crash in between would otherwise leave
// some inputs without the others, and an input whose tombstones were purged
// along with the data they shadow would bring that data back.

// ObsoleteLogFileName is the name of obsolete log id.
func ObsoleteLogFileName(id uint64) string { return fmt.Sprintf("sb-%d-Obsolete.txn", id) }

// ObsoleteLog is what an obsolete log records.
type ObsoleteLog struct {
	// Generations are the SSTables to remove.
	Generations []uint64 `json:"generations"`
	// Truncation, when set, is the commit log position a truncation of the
	// table took effect at: the SSTables go, and nothing of the table up to
	// there may replay. Start-up publishes an empty SSTable recording it
	// (as Truncate does) before the log is finished.
	Truncation *CommitLogBound `json:"truncation,omitempty"`
}

// CommitLogBound is a commit log position, as an SSTable's Statistics
// records it.
type CommitLogBound struct {
	Segment uint64 `json:"segment"`
	Offset  uint32 `json:"offset"`
}

type obsoleteLogFile struct {
	Log ObsoleteLog `json:"log"`
	CRC uint32      `json:"crc32c"`
}

func obsoleteLogCRC(l *ObsoleteLog) uint32 {
	body, _ := json.Marshal(l)
	return crc32.Checksum(body, crcTable)
}

// WriteObsoleteLog durably records that log's generations are to be
// removed: once it returns, a restart removes them even if the process
// does not. On an error the log may or may not stand: the caller must keep
// whatever replaces the generations.
func WriteObsoleteLog(fs vfs.FS, dir string, id uint64, log ObsoleteLog) error {
	body, err := json.Marshal(obsoleteLogFile{Log: log, CRC: obsoleteLogCRC(&log)})
	if err != nil {
		return err
	}
	name := fs.PathJoin(dir, ObsoleteLogFileName(id))
	if err := durable.WriteFile(fs, name+tempSuffix, body); err != nil {
		_ = fs.Remove(name + tempSuffix)
		return fmt.Errorf("sstable: write %s: %w", name, err)
	}
	if err := fs.Rename(name+tempSuffix, name); err != nil {
		return fmt.Errorf("sstable: write %s: %w", name, err)
	}
	if err := durable.SyncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: write %s: %w", name, err)
	}
	return nil
}

// FinishObsoleteLog is called once every generation of log id has been
// removed: it makes the removals durable, then deletes the log.
func FinishObsoleteLog(fs vfs.FS, dir string, id uint64) error {
	name := fs.PathJoin(dir, ObsoleteLogFileName(id))
	if err := durable.SyncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: finish %s: %w", name, err)
	}
	if err := fs.Remove(name); err != nil {
		return fmt.Errorf("sstable: finish %s: %w", name, err)
	}
	// A log that came back after a crash would be completed again; that is
	// harmless only while its generations are not reused, so make it go.
	if err := durable.SyncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: finish %s: %w", name, err)
	}
	return nil
}

// PendingTruncation is a truncation's obsolete log whose generations are
// gone but which start-up must still record (an empty SSTable with the
// bound) before finishing the log with FinishObsoleteLog.
type PendingTruncation struct {
	LogID uint64
	Bound CommitLogBound
	// Highest is the highest generation or log id the log names: new
	// SSTables must be numbered above it while the log stands.
	Highest uint64
}

// CompleteObsoleteLogs carries out the obsolete logs in dir that a stopped
// process left: the generations they list are removed, then the logs,
// except truncation logs, which it returns for the caller to finish. It
// also returns the removed generations. It must run before anything in dir
// is opened or written.
func CompleteObsoleteLogs(fs vfs.FS, dir string) (removed []uint64, pending []PendingTruncation, err error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("sstable: list %s: %w", dir, err)
	}
	sort.Strings(names)
	present := map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	for _, n := range names {
		id, ok := parseName(n, "-Obsolete.txn")
		if !ok {
			continue
		}
		log, err := readObsoleteLog(fs, fs.PathJoin(dir, n))
		if err != nil {
			return removed, pending, err
		}
		for _, g := range log.Generations {
			if present[StatisticsFileName(g)] {
				removed = append(removed, g)
			}
			for _, c := range append(ComponentNames(g), indexFilesOf(names, g)...) {
				if !present[c] {
					continue
				}
				if err := fs.Remove(fs.PathJoin(dir, c)); err != nil {
					return removed, pending, fmt.Errorf("sstable: complete %s: %w", n, err)
				}
			}
		}
		if log.Truncation != nil {
			highest := id
			for _, g := range log.Generations {
				highest = max(highest, g)
			}
			pending = append(pending, PendingTruncation{LogID: id, Bound: *log.Truncation, Highest: highest})
			continue
		}
		if err := FinishObsoleteLog(fs, dir, id); err != nil {
			return removed, pending, err
		}
	}
	return removed, pending, nil
}

func readObsoleteLog(fs vfs.FS, name string) (*ObsoleteLog, error) {
	data, err := readWhole(fs, name)
	if err != nil {
		return nil, err
	}
	var lf obsoleteLogFile
	if err := json.Unmarshal(data, &lf); err != nil {
		return nil, fmt.Errorf("sstable: %s: %w", name, invariants.Corruptf("obsolete log does not decode: %v", err))
	}
	if obsoleteLogCRC(&lf.Log) != lf.CRC {
		return nil, fmt.Errorf("sstable: %s: %w", name, invariants.Corruptf("obsolete log checksum mismatch"))
	}
	return &lf.Log, nil
}
