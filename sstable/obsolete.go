package sstable

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"sort"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// An obsolete log records, before any of them is deleted, the generations a
// compaction or a truncation replaced. Inputs are deleted one by one, and
// only when no read holds them; a crash in between would otherwise leave
// some inputs without the others, and an input whose tombstones were purged
// along with the data they shadow would bring that data back.

// ObsoleteLogFileName is the name of obsolete log id.
func ObsoleteLogFileName(id uint64) string { return fmt.Sprintf("sb-%d-Obsolete.txn", id) }

type obsoleteLog struct {
	Generations []uint64 `json:"generations"`
	CRC         uint32   `json:"crc32c"`
}

func obsoleteLogCRC(gens []uint64) uint32 {
	body, _ := json.Marshal(gens)
	return crc32.Checksum(body, crcTable)
}

// WriteObsoleteLog durably records that gens are to be removed: once it
// returns, a restart removes them even if the process does not.
func WriteObsoleteLog(fs vfs.FS, dir string, id uint64, gens []uint64) error {
	body, err := json.Marshal(obsoleteLog{Generations: gens, CRC: obsoleteLogCRC(gens)})
	if err != nil {
		return err
	}
	name := fs.PathJoin(dir, ObsoleteLogFileName(id))
	if err := writeSynced(fs, name+tempSuffix, body); err != nil {
		_ = fs.Remove(name + tempSuffix)
		return fmt.Errorf("sstable: write %s: %w", name, err)
	}
	if err := fs.Rename(name+tempSuffix, name); err != nil {
		return fmt.Errorf("sstable: write %s: %w", name, err)
	}
	if err := syncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: write %s: %w", name, err)
	}
	return nil
}

// FinishObsoleteLog is called once every generation of log id has been
// removed: it makes the removals durable, then deletes the log.
func FinishObsoleteLog(fs vfs.FS, dir string, id uint64) error {
	name := fs.PathJoin(dir, ObsoleteLogFileName(id))
	if err := syncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: finish %s: %w", name, err)
	}
	if err := fs.Remove(name); err != nil {
		return fmt.Errorf("sstable: finish %s: %w", name, err)
	}
	// A log that came back after a crash would be completed again; that is
	// harmless only while its generations are not reused, so make it go.
	if err := syncDir(fs, dir); err != nil {
		return fmt.Errorf("sstable: finish %s: %w", name, err)
	}
	return nil
}

// CompleteObsoleteLogs carries out the obsolete logs in dir that a stopped
// process left: the generations they list are removed, then the logs. It
// returns the removed generations. It must run before anything in dir is
// opened or written.
func CompleteObsoleteLogs(fs vfs.FS, dir string) ([]uint64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("sstable: list %s: %w", dir, err)
	}
	sort.Strings(names)
	present := map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	var removed []uint64
	for _, n := range names {
		id, ok := parseName(n, "-Obsolete.txn")
		if !ok {
			continue
		}
		gens, err := readObsoleteLog(fs, fs.PathJoin(dir, n))
		if err != nil {
			return removed, err
		}
		for _, g := range gens {
			if present[StatisticsFileName(g)] {
				removed = append(removed, g)
			}
			for _, c := range componentNames(g) {
				if !present[c] {
					continue
				}
				if err := fs.Remove(fs.PathJoin(dir, c)); err != nil {
					return removed, fmt.Errorf("sstable: complete %s: %w", n, err)
				}
			}
		}
		if err := FinishObsoleteLog(fs, dir, id); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

func readObsoleteLog(fs vfs.FS, name string) ([]uint64, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sstable: open %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("sstable: read %s: %w", name, err)
	}
	var l obsoleteLog
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("sstable: %s: %w", name, invariants.Corruptf("obsolete log does not decode: %v", err))
	}
	if obsoleteLogCRC(l.Generations) != l.CRC {
		return nil, fmt.Errorf("sstable: %s: %w", name, invariants.Corruptf("obsolete log checksum mismatch"))
	}
	return l.Generations, nil
}

// writeSynced creates name with body and fsyncs it.
func writeSynced(fs vfs.FS, name string, body []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(body); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
