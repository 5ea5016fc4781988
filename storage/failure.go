package storage

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/sibyldb/sibyl/internal/invariants"
)

// FailureKind says what kind of failure the engine reports to
// Options.OnFailure: what a node's commit_failure_policy and
// disk_failure_policy decide on.
type FailureKind int

const (
	// CommitLogFailure: a write or fsync of the commit log failed, and the
	// log refuses every write until a restart.
	CommitLogFailure FailureKind = iota
	// DiskFailure: a data file could not be written or read (an I/O
	// error, a read-only or vanished filesystem). A full disk is not one:
	// what it stops (flushes, compactions, new commit log segments) is tried
	// again, and resumes once there is space.
	DiskFailure
	// CorruptionFailure: a data file failed its checksum or does not
	// decode.
	CorruptionFailure
)

func (k FailureKind) String() string {
	switch k {
	case CommitLogFailure:
		return "commit log failure"
	case DiskFailure:
		return "disk failure"
	case CorruptionFailure:
		return "corruption"
	}
	return "failure"
}

// classifyFailure says what kind of failure err is, if any: corruption
// wherever it is found, and file system errors but a lack of space.
func classifyFailure(err error) (FailureKind, bool) {
	if err == nil { // before the targets, which escape to the heap
		return 0, false
	}
	var pathErr *fs.PathError
	var errno syscall.Errno
	switch {
	case errors.Is(err, invariants.ErrCorruption):
		return CorruptionFailure, true
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return 0, false
	case errors.As(err, &pathErr), errors.As(err, &errno):
		return DiskFailure, true
	}
	return 0, false
}

// reportFailure tells Options.OnFailure of err if it is a disk failure or
// corruption, and returns it.
func (e *Engine) reportFailure(err error) error {
	if kind, ok := classifyFailure(err); ok && e.opts.OnFailure != nil {
		e.opts.OnFailure(kind, err)
	}
	return err
}
