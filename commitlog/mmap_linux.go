//go:build linux

package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/cockroachdb/pebble/vfs"
)

const mmapSupported = true

// mapFile sizes a new segment file to size bytes, with its blocks
// allocated, and maps it for writing. A mapped store into a hole the disk
// has no room for would kill the process with SIGBUS; allocating up front
// turns a full disk into an error here instead.
func mapFile(f vfs.File, size int64) ([]byte, error) {
	fd := int(f.Fd())
	if err := syscall.Fallocate(fd, 0, 0, size); err != nil {
		if !errors.Is(err, syscall.EOPNOTSUPP) {
			return nil, fmt.Errorf("allocate %d bytes: %w", size, err)
		}
		// Some filesystems cannot allocate ahead; a sparse file still works
		// while the disk has room.
		if err := syscall.Ftruncate(fd, size); err != nil {
			return nil, fmt.Errorf("size to %d bytes: %w", size, err)
		}
	}
	data, err := syscall.Mmap(fd, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	return data, nil
}

func unmapFile(data []byte) error { return syscall.Munmap(data) }

// publishLength stores a record's length field last and atomically: a
// reader of the file after a crash sees either zeros there (the record is
// not there) or the length of a record whose checksum and payload were
// stored before it.
func publishLength(field []byte, lengthField [4]byte) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&field[0])), binary.NativeEndian.Uint32(lengthField[:]))
}

// madvPopulateWrite (Linux 5.14) faults every page of a range in, writable
// and dirty-tracked, as a write would.
const madvPopulateWrite = 23

// prefault brings a new segment's pages in before appends touch them: a
// first store to each page would otherwise fault under the log's lock. On
// kernels without the advice it does nothing and stores fault as before.
func prefault(data []byte) { _ = syscall.Madvise(data, madvPopulateWrite) }
