package node

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/sibyldb/sibyl/gossip"
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
	dir string
	mu  sync.Mutex // appends and deliveries, one at a time
	// delivering are the replicas whose hints are on their way.
	delivering map[ring.Endpoint]bool
}

var hintCRC = crc32.MakeTable(crc32.Castagnoli)

func (h *hints) file(e ring.Endpoint) string { return filepath.Join(h.dir, string(e)+".hints") }

// store keeps a hint of mu for replica e.
func (h *hints) store(e ring.Endpoint, mu *mutation.Mutation) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.storeLocked(e, mu)
}

func (h *hints) storeLocked(e ring.Endpoint, mu *mutation.Mutation) error {
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(h.file(e), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	body := mutation.AppendMutation(nil, mu)
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	rec = binary.BigEndian.AppendUint32(rec, crc32.Checksum(body, hintCRC))
	_, err = f.Write(append(rec, body...))
	return errors.Join(err, f.Close())
}

// pending reports whether replica e has hints waiting.
func (h *hints) pending(e ring.Endpoint) bool {
	_, err := os.Stat(h.file(e))
	return err == nil
}

// read returns the hints kept for replica e. A torn last record (a crash
// while appending) ends them.
func (h *hints) read(e ring.Endpoint) ([]*mutation.Mutation, error) {
	f, err := os.Open(h.file(e))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var out []*mutation.Mutation
	for {
		var head [8]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return out, nil
		}
		body := make([]byte, binary.BigEndian.Uint32(head[:4]))
		if _, err := io.ReadFull(r, body); err != nil || crc32.Checksum(body, hintCRC) != binary.BigEndian.Uint32(head[4:]) {
			return out, nil
		}
		m, err := mutation.DecodeMutation(body)
		if err != nil {
			return out, fmt.Errorf("hints for %s: %w", e, err)
		}
		out = append(out, m)
	}
}

// hint keeps a write for a replica that could not take it; a failure to
// keep it is logged (the write's other replicas have it).
func (n *Node) hint(e ring.Endpoint, mu *mutation.Mutation) {
	if err := n.hints.store(e, mu); err != nil {
		n.cfg.Logger.Error().Err(err).Str("replica", string(e)).Msg("node: keeping a hint")
		return
	}
	n.metrics.hintsStored.Inc()
}

// deliverHints sends a replica that is up the hints kept for it, in the
// background, and removes them once it has taken them all.
func (n *Node) deliverHints(e ring.Endpoint, s *gossip.EndpointState) {
	if n.messaging == nil || !s.Alive || !n.hints.pending(e) {
		return
	}
	n.hints.mu.Lock()
	if n.hints.delivering[e] {
		n.hints.mu.Unlock()
		return
	}
	n.hints.delivering[e] = true
	n.hints.mu.Unlock()
	go func() {
		defer func() {
			n.hints.mu.Lock()
			delete(n.hints.delivering, e)
			n.hints.mu.Unlock()
		}()
		if err := n.sendHints(e); err != nil && !errors.Is(err, messaging.ErrClosed) {
			n.cfg.Logger.Warn().Err(err).Str("replica", string(e)).Msg("node: delivering hints; they wait for the next time it is seen up")
		}
	}()
}

func (n *Node) sendHints(e ring.Endpoint) error {
	n.hints.mu.Lock()
	ms, err := n.hints.read(e)
	n.hints.mu.Unlock()
	if err != nil || len(ms) == 0 {
		return err
	}
	for _, m := range ms {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		_, err := n.messaging.Request(ctx, string(e), messaging.VerbHint, encodeMutations([]*mutation.Mutation{m}))
		cancel()
		if err != nil {
			return err
		}
	}
	// Every hint read was taken; hints added since are kept for next time.
	n.hints.mu.Lock()
	defer n.hints.mu.Unlock()
	after, err := n.hints.read(e)
	if err != nil {
		return err
	}
	if err := os.Remove(n.hints.file(e)); err != nil {
		return err
	}
	n.metrics.hintsDelivered.Add(float64(len(ms)))
	for _, m := range after[len(ms):] {
		if err := n.hints.storeLocked(e, m); err != nil {
			return err
		}
	}
	return nil
}
