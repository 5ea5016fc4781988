package commitlog

import (
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
)

// SyncMode says when appended records are fsynced.
type SyncMode int

const (
	// SyncPeriodic acknowledges once the record reached the OS and fsyncs
	// every SyncPeriod; writers wait when the last fsync is older than 1.5
	// periods (Cassandra's default).
	SyncPeriodic SyncMode = iota
	// SyncGroup acknowledges after an fsync, doing at most one fsync per
	// GroupWindow: writers in a window share it.
	SyncGroup
	// SyncBatch acknowledges after an fsync; concurrent writers still share
	// one fsync when they arrive together.
	SyncBatch
)

func (m SyncMode) String() string {
	switch m {
	case SyncPeriodic:
		return "periodic"
	case SyncGroup:
		return "group"
	case SyncBatch:
		return "batch"
	}
	return fmt.Sprintf("SyncMode(%d)", int(m))
}

// ParseSyncMode reads the commitlog_sync setting.
func ParseSyncMode(s string) (SyncMode, error) {
	switch s {
	case "periodic":
		return SyncPeriodic, nil
	case "group":
		return SyncGroup, nil
	case "batch":
		return SyncBatch, nil
	}
	return 0, fmt.Errorf("commitlog_sync: %q is not one of periodic, group, batch", s)
}

// Options configure a commit log. The zero value of a field means its default.
type Options struct {
	// FS is the filesystem; default vfs.Default.
	FS vfs.FS
	// Dir is the directory of the segment files. Required.
	Dir string
	// SegmentSize is the size at which a segment is closed and a new one
	// started (commitlog_segment_size). Default 32 MiB; at least 64 KiB.
	// Records over half of it are refused.
	SegmentSize int64
	// SyncMode is the fsync policy (commitlog_sync). Default periodic.
	SyncMode SyncMode
	// SyncPeriod is the fsync interval of periodic mode
	// (commitlog_sync_period). Default 10 s.
	SyncPeriod time.Duration
	// GroupWindow is the shortest time between two fsyncs in group mode
	// (commitlog_sync_group_window). Default 15 ms.
	GroupWindow time.Duration
	// DisableMmap writes segments with write system calls instead of
	// mapping them into memory. By default a segment is a preallocated,
	// memory-mapped file where an append is a copy under a lock: the bytes
	// are in the operating system's page cache as soon as they are copied,
	// which is what C1 asks, without a system call per batch. Filesystems
	// without file descriptors (in-memory ones in tests) always write.
	DisableMmap bool
	// MinSegmentID is a floor for the ids of new segments, so that positions
	// keep growing even when every old segment is gone (storage passes one
	// above the highest position its SSTables record).
	MinSegmentID uint64
	// Logger receives warnings such as a truncated torn tail; default none.
	Logger *zerolog.Logger
	// OnFailure hears, once and in a goroutine of its own, of the failed
	// write or fsync after which the log refuses every append (C4): what a
	// node's commit_failure_policy acts on.
	OnFailure func(error)
	// Now is the clock; default time.Now. Tests inject one.
	Now func() time.Time
}

// DefaultSegmentSize is commitlog_segment_size's default.
const DefaultSegmentSize = 32 << 20

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.SyncPeriod == 0 {
		o.SyncPeriod = 10 * time.Second
	}
	if o.GroupWindow == 0 {
		o.GroupWindow = 15 * time.Millisecond
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate reports every problem with the options at once; it changes nothing.
func (o *Options) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("commitlog_directory: must be set"))
	}
	if o.SegmentSize != 0 && o.SegmentSize < 64<<10 {
		errs = append(errs, fmt.Errorf("commitlog_segment_size: %d bytes is below the minimum of 64 KiB", o.SegmentSize))
	}
	if o.SegmentSize > 1<<31 {
		errs = append(errs, fmt.Errorf("commitlog_segment_size: %d bytes is above the maximum of 2 GiB", o.SegmentSize))
	}
	if o.SyncMode < SyncPeriodic || o.SyncMode > SyncBatch {
		errs = append(errs, fmt.Errorf("commitlog_sync: unknown mode %d", int(o.SyncMode)))
	}
	if o.SyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("commitlog_sync_period: %s is negative", o.SyncPeriod))
	}
	if o.GroupWindow < 0 {
		errs = append(errs, fmt.Errorf("commitlog_sync_group_window: %s is negative", o.GroupWindow))
	}
	return errors.Join(errs...)
}
