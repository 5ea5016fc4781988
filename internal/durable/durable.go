package durable

import (
	"fmt"

	"github.com/cockroachdb/pebble/vfs"
)

// TempSuffix ends the name of a file being written to replace another;
// one left by a crash is garbage.
const TempSuffix = ".tmp"

// WriteFile creates name with body and syncs it.
func WriteFile(fs vfs.FS, name string, body []byte) error {
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

// ReplaceFile makes name hold body, atomically: a crash at any point
// leaves the old file or the new one.
func ReplaceFile(fs vfs.FS, name string, body []byte) error {
	tmp := name + TempSuffix
	if err := WriteFile(fs, tmp, body); err != nil {
		_ = fs.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := fs.Rename(tmp, name); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := SyncDir(fs, fs.PathDir(name)); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// SyncDir syncs a directory, so that the names made or removed in it
// survive a crash.
func SyncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
