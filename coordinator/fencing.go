package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/messaging"
)

// A write or partition read a coordinator sends a replica carries the
// epoch of the ring it chose the replicas by (ring.Metadata.Epoch). A
// replica that has applied a later ring refuses it (StaleRing, naming its
// epoch): the coordinator catches up to that epoch and sends the request
// again by the new ring, rather than writing to replicas that no longer
// own the data. A replica behind the coordinator catches up first, for a
// moment, then serves. Rings no metadata log made are all epoch 0, and
// never refused.

// StaleRing is a replica's refusal of a request routed by an older ring
// than the one it has applied.
type StaleRing struct {
	// Epoch is the replica's ring epoch, which the coordinator must reach.
	Epoch uint64
}

const staleRingPrefix = "stale ring: the replica routes by ring epoch "

func (e *StaleRing) Error() string { return staleRingPrefix + strconv.FormatUint(e.Epoch, 10) }

// fenced starts a request's payload with the epoch of the ring it was
// routed by; the payload's encoding appends to it.
func fenced(epoch uint64) []byte { return binary.AppendUvarint(nil, epoch) }

// unfence splits a fenced payload.
func unfence(b []byte) (epoch uint64, payload []byte, err error) {
	r := wire.Reader{B: b}
	epoch = r.Uint()
	if r.Err != nil {
		return 0, nil, fmt.Errorf("coordinator: a request without its ring epoch: %w", r.Err)
	}
	return epoch, r.B, nil
}

// staleRingOf finds a replica's StaleRing in a request's error: it comes
// back as a remote failure's message.
func staleRingOf(err error) (*StaleRing, bool) {
	if err == nil { // before the targets, which escape to the heap
		return nil, false
	}
	var s *StaleRing
	if errors.As(err, &s) {
		return s, true
	}
	var re *messaging.RemoteError
	if !errors.As(err, &re) || !strings.HasPrefix(re.Message, staleRingPrefix) {
		return nil, false
	}
	epoch, perr := strconv.ParseUint(strings.TrimPrefix(re.Message, staleRingPrefix), 10, 64)
	if perr != nil {
		return nil, false
	}
	return &StaleRing{Epoch: epoch}, true
}

func isStale(err error) bool {
	_, ok := err.(*StaleRing)
	return ok
}
