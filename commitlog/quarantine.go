package commitlog

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/cockroachdb/pebble/vfs"
)

// A record whose frame checks (its length and CRC32C are right) but whose
// payload its owner cannot use was written so by the process itself: a
// bug, not a torn write, and no reason to lose it. Replay's caller may set
// such a record aside with Quarantine instead of stopping: it goes to a
// quarantine file in the log's directory,
//
//	commitlog_quarantine-<unix milliseconds>.jsonl
//
// one JSON object a line (QuarantinedRecord), which DiscardReplayed makes
// durable before it lets any replayed segment go.

// QuarantinedRecord is one line of a quarantine file.
type QuarantinedRecord struct {
	Segment   string            `json:"segment"`    // the segment file the record was in
	EndOffset uint32            `json:"end_offset"` // where the record ends in it
	About     map[string]string `json:"about"`      // what the payload's owner says of it
	Payload   string            `json:"payload"`    // the payload, hex
}

// quarantine is the file replay sets records aside in, made on first use.
type quarantine struct {
	mu   sync.Mutex
	name string
	f    vfs.File
}

// Quarantine sets a replayed record aside (see above) and returns the
// quarantine file's name. about says what the payload is and why it could
// not be applied.
func (l *Log) Quarantine(pos Position, payload []byte, about map[string]string) (string, error) {
	q := &l.quarantine
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		name := l.opts.FS.PathJoin(l.opts.Dir, "commitlog_quarantine-"+strconv.FormatInt(l.opts.Now().UnixMilli(), 10)+".jsonl")
		f, err := l.opts.FS.Create(name)
		if err != nil {
			return "", fmt.Errorf("commitlog: create %s: %w", name, err)
		}
		q.name, q.f = name, f
	}
	line, err := json.Marshal(QuarantinedRecord{Segment: SegmentFileName(pos.Segment), EndOffset: pos.Offset,
		About: about, Payload: hex.EncodeToString(payload)})
	if err != nil {
		return "", err
	}
	if _, err := q.f.Write(append(line, '\n')); err != nil {
		return "", fmt.Errorf("commitlog: write %s: %w", q.name, err)
	}
	return q.name, nil
}

// closeQuarantine makes the quarantine file durable, with its name in the
// directory.
func (l *Log) closeQuarantine() error {
	q := &l.quarantine
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return nil
	}
	err := q.f.Sync()
	if cerr := q.f.Close(); err == nil {
		err = cerr
	}
	q.f = nil
	if err != nil {
		return fmt.Errorf("commitlog: sync %s: %w", q.name, err)
	}
	return l.syncDir()
}
