//go:build !linux

package commitlog

import (
	"errors"

	"github.com/cockroachdb/pebble/vfs"
)

// Elsewhere than Linux, segments are written with write system calls.
const mmapSupported = false

func mapFile(vfs.File, int64) ([]byte, error) {
	return nil, errors.New("memory-mapped segments need Linux")
}

func unmapFile([]byte) error { return nil }

func publishLength(field []byte, lengthField [4]byte) { copy(field, lengthField[:]) }

func prefault([]byte) {}
