package coordinator

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/ring"
)

// Hinted handoff: a write meant for a replica that is down (or that failed
// to take it) is kept here as a hint, and sent to the replica when gossip
// shows it up again, as Cassandra does (hinted_handoff_enabled). Hints live
// in the hints directory beside the data, one file per replica: records of
// a length, a CRC32C and the mutation in the commit log's encoding.
type hints struct {
	fs  vfs.FS
	dir string     // no hints are kept when empty
	mu  sync.Mutex // appends and deliveries, one at a time
	// delivering are the replicas whose hints are on their way.
	delivering map[ring.Endpoint]bool
	// ends are where each replica's next record goes: the end of its
	// file's last whole record, found once by reading the file (a crash
	// may have left a torn record after it, which the next one
	// overwrites, so that no record is ever appended behind one that
	// cannot be read).
	ends map[ring.Endpoint]int64
}

var hintCRC = crc32.MakeTable(crc32.Castagnoli)

func (h *hints) file(e ring.Endpoint) string { return h.fs.PathJoin(h.dir, string(e)+".hints") }

// store keeps a hint of mu for replica e.
func (h *hints) store(e ring.Endpoint, mu *mutation.Mutation) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.storeLocked(e, mu)
}

func (h *hints) storeLocked(e ring.Endpoint, mu *mutation.Mutation) error {
	if err := h.fs.MkdirAll(h.dir, 0o755); err != nil {
		return err
	}
	end, known := h.ends[e]
	if !known {
		var err error
		if end, err = h.scan(e, nil); err != nil {
			return err
		}
	}
	f, err := h.fs.OpenReadWrite(h.file(e))
	if err != nil {
		return err
	}
	body := mutation.AppendMutation(nil, mu)
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	rec = binary.BigEndian.AppendUint32(rec, crc32.Checksum(body, hintCRC))
	rec = append(rec, body...)
	if _, err := f.WriteAt(rec, end); err != nil {
		delete(h.ends, e) // where the file ends now is for a read to find
		return errors.Join(err, f.Close())
	}
	h.ends[e] = end + int64(len(rec))
	return f.Close()
}

// pending reports whether replica e has hints waiting.
func (h *hints) pending(e ring.Endpoint) bool {
	_, err := h.fs.Stat(h.file(e))
	return err == nil
}

// read returns the hints kept for replica e. A torn last record (a crash
// while appending) ends them, as does a length longer than the file or
// zeroed bytes.
func (h *hints) read(e ring.Endpoint) ([]*mutation.Mutation, error) {
	var out []*mutation.Mutation
	_, err := h.scan(e, func(body []byte) error {
		m, err := mutation.DecodeMutation(body)
		if err != nil {
			return fmt.Errorf("hints for %s: %w", e, err)
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// scan reads replica e's hints file record by record, giving visit (when
// not nil) each whole record's body, and returns where its last whole
// record ends (0 for no file).
func (h *hints) scan(e ring.Endpoint, visit func(body []byte) error) (int64, error) {
	f, err := h.fs.Open(h.file(e))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	r := bufio.NewReader(f)
	var end int64
	for {
		var head [8]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return end, nil
		}
		n := int64(binary.BigEndian.Uint32(head[:4]))
		// No mutation encodes to nothing: a zero length is zeroed bytes
		// (a torn tail), whose CRC of nothing would match.
		if n == 0 || n > size-end-int64(len(head)) {
			return end, nil
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || crc32.Checksum(body, hintCRC) != binary.BigEndian.Uint32(head[4:]) {
			return end, nil
		}
		if visit != nil {
			if err := visit(body); err != nil {
				return end, err
			}
		}
		end += int64(len(head)) + n
	}
}

func newHints(fs vfs.FS, dir string) *hints {
	return &hints{fs: fs, dir: dir, delivering: map[ring.Endpoint]bool{}, ends: map[ring.Endpoint]int64{}}
}

// hint keeps a write for a replica that could not take it; a failure to
// keep it is logged (the write's other replicas have it).
func (c *Coordinator) hint(e ring.Endpoint, mu *mutation.Mutation) {
	if c.hints.dir == "" {
		return
	}
	if err := c.hints.store(e, mu); err != nil {
		c.cfg.Logger.Error().Err(err).Str("replica", string(e)).Msg("coordinator: keeping a hint")
		return
	}
	c.Stats.HintsStored.Add(1)
}

// ReplicaUp sends a replica the failure detector sees up the hints kept
// for it, in the background, and removes them once it has taken them all.
func (c *Coordinator) ReplicaUp(e ring.Endpoint) {
	if c.cfg.Network == nil || c.hints.dir == "" || !c.hints.pending(e) {
		return
	}
	c.hints.mu.Lock()
	if c.hints.delivering[e] {
		c.hints.mu.Unlock()
		return
	}
	c.hints.delivering[e] = true
	c.hints.mu.Unlock()
	c.background.Go(func() {
		defer func() {
			c.hints.mu.Lock()
			delete(c.hints.delivering, e)
			c.hints.mu.Unlock()
		}()
		if err := c.sendHints(e); err != nil && !errors.Is(err, messaging.ErrClosed) {
			c.cfg.Logger.Warn().Err(err).Str("replica", string(e)).Msg("coordinator: delivering hints; they wait for the next time it is seen up")
		}
	})
}

func (c *Coordinator) sendHints(e ring.Endpoint) error {
	c.hints.mu.Lock()
	ms, err := c.hints.read(e)
	c.hints.mu.Unlock()
	if err != nil || len(ms) == 0 {
		return err
	}
	for _, m := range ms {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
		_, err := c.cfg.Network.Request(ctx, string(e), messaging.VerbHint, EncodeMutations([]*mutation.Mutation{m}))
		cancel()
		if err != nil {
			return err
		}
	}
	// Every hint read was taken; hints added since are kept for next time.
	c.hints.mu.Lock()
	defer c.hints.mu.Unlock()
	after, err := c.hints.read(e)
	if err != nil {
		return err
	}
	if err := c.hints.fs.Remove(c.hints.file(e)); err != nil {
		return err
	}
	delete(c.hints.ends, e)
	c.Stats.HintsDelivered.Add(int64(len(ms)))
	for _, m := range after[len(ms):] {
		if err := c.hints.storeLocked(e, m); err != nil {
			return err
		}
	}
	return nil
}
