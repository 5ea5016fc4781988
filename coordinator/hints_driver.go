package coordinator

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/ring"
)

// Hinted handoff: a write meant for a replica that is down (or that failed
// to take it) is kept as a hint and handed to the replica once it is up,
// as Cassandra does. The hints package keeps them; what is bounded here is
// which writes become hints (max_hint_window, max_hints_size_per_host) and
// how deliveries run (max_hints_delivery_threads, hinted_handoff_throttle).

// HintedHandoff are the hint settings of cassandra.yaml.
type HintedHandoff struct {
	// Disabled is hinted_handoff_enabled: false.
	Disabled bool
	// MaxWindow is max_hint_window: a replica down for longer gets no
	// more hints, nor one whose oldest hint is older (the window holds
	// across restarts, as Cassandra's hint_window_persistent_enabled);
	// default 3 h.
	MaxWindow time.Duration
	// Throttle is hinted_handoff_throttle in bytes a second: what one
	// delivery may send, shared by the other nodes' deliveries (divided
	// by the nodes but one, which may all be delivering to the same
	// replica); 0 for none. Cassandra's default is 1 MiB.
	Throttle int64
	// DeliveryThreads is max_hints_delivery_threads: how many replicas get
	// their hints at once; default 2.
	DeliveryThreads int
}

// DefaultHintedHandoff are Cassandra's defaults.
var DefaultHintedHandoff = HintedHandoff{MaxWindow: 3 * time.Hour, Throttle: 1 << 20, DeliveryThreads: 2}

// handoff is the coordinator's hinted handoff as it runs.
type handoff struct {
	mu sync.Mutex
	// enabled (nodetool enablehandoff, disablehandoff): whether writes
	// become hints; paused (pausehandoff, resumehandoff): whether hints
	// are delivered.
	enabled, paused bool
	// delivering are the replicas whose hints are on their way.
	delivering map[ring.Endpoint]bool
	slots      chan struct{} // one per delivery thread
}

func newHandoff(h HintedHandoff) *handoff {
	return &handoff{enabled: !h.Disabled, delivering: map[ring.Endpoint]bool{}, slots: make(chan struct{}, h.DeliveryThreads)}
}

// claim marks e's hints as on their way, unless they already are or
// (unlessPaused) deliveries are paused: one delivery of a host's hints
// runs at a time. done ends the claim.
func (h *handoff) claim(e ring.Endpoint, unlessPaused bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.delivering[e] || unlessPaused && h.paused {
		return false
	}
	h.delivering[e] = true
	return true
}

func (h *handoff) done(e ring.Endpoint) {
	h.mu.Lock()
	delete(h.delivering, e)
	h.mu.Unlock()
}

// HandoffStatus is what nodetool statushandoff reports.
type HandoffStatus struct {
	Enabled, Paused bool
}

// Handoff reports whether writes become hints and whether hints are
// delivered.
func (c *Coordinator) Handoff() HandoffStatus {
	c.handoff.mu.Lock()
	defer c.handoff.mu.Unlock()
	return HandoffStatus{Enabled: c.handoff.enabled, Paused: c.handoff.paused}
}

// SetHandoff turns keeping hints on or off (nodetool enablehandoff,
// disablehandoff).
func (c *Coordinator) SetHandoff(enabled bool) {
	c.handoff.mu.Lock()
	defer c.handoff.mu.Unlock()
	c.handoff.enabled = enabled
}

// PauseHandoff stops or resumes delivering hints (nodetool pausehandoff,
// resumehandoff); a delivery running stops before its next page.
func (c *Coordinator) PauseHandoff(paused bool) {
	c.handoff.mu.Lock()
	c.handoff.paused = paused
	c.handoff.mu.Unlock()
	if !paused {
		c.DeliverHints()
	}
}

func (c *Coordinator) paused() bool {
	c.handoff.mu.Lock()
	defer c.handoff.mu.Unlock()
	return c.handoff.paused
}

// hint keeps a write for a replica that could not take it, unless hints
// are off or bounded out for that replica; a failure to keep it is
// logged (the write's other replicas have it).
func (c *Coordinator) hint(e ring.Endpoint, mu *mutation.Mutation) {
	store := c.cfg.Hints
	if store == nil || !c.Handoff().Enabled {
		return
	}
	window := c.cfg.HintedHandoff.MaxWindow
	if c.cfg.Downtime != nil && c.cfg.Downtime(e) > window {
		c.Stats.HintsPastWindow.Add(1)
		return
	}
	if age, ok := store.Age(string(e)); ok && age > window {
		c.Stats.HintsPastWindow.Add(1)
		return
	}
	t := c.current().tables[mu.Table]
	if t == nil {
		return // dropped since the write began: nothing to hand over
	}
	gcGrace := time.Duration(t.Options.GCGraceSeconds) * time.Second
	if gcGrace <= 0 {
		c.Stats.HintsExpired.Add(1) // dead on arrival: it could bring back purged data
		return
	}
	err := store.Write(string(e), mu, gcGrace)
	switch {
	case errors.Is(err, hints.ErrHostFull):
		c.Stats.HintsOverSize.Add(1)
	case err != nil:
		c.cfg.Logger.Error().Err(err).Str("replica", string(e)).Msg("coordinator: keeping a hint")
	default:
		c.Stats.HintsStored.Add(1)
	}
}

// ReplicaUp starts handing a replica the failure detector sees up the
// hints kept for it, in the background.
func (c *Coordinator) ReplicaUp(e ring.Endpoint) {
	if c.cfg.Network == nil || c.cfg.Hints == nil || !c.cfg.Hints.Has(string(e)) {
		return
	}
	h := c.handoff
	if !h.claim(e, true) {
		return
	}
	c.background.Go(func() {
		defer h.done(e)
		h.slots <- struct{}{}
		defer func() { <-h.slots }()
		// A replica just seen up may not listen yet, or may still be
		// busy: a few tries, spaced out, before the next round.
		backoff := deliveryBackoff
		for try := 1; ; try++ {
			err := c.deliver(e)
			if err == nil || errors.Is(err, messaging.ErrClosed) || errors.Is(err, hints.ErrPaused) {
				return
			}
			if try == deliveryTries || !c.alive()(e) {
				c.cfg.Logger.Warn().Err(err).Str("replica", string(e)).Msg("coordinator: delivering hints; the rest wait for the next round")
				return
			}
			time.Sleep(backoff)
			backoff *= 2
		}
	})
}

// A delivery that fails is tried again deliveryTries times in all, the
// first after deliveryBackoff and each wait twice the last (about 15 s in
// all).
const (
	deliveryTries   = 5
	deliveryBackoff = time.Second
)

// DeliverHints starts the deliveries of every replica that has hints and
// is up: a node runs it every few seconds, so that a delivery a failure
// stopped goes on without waiting for the replica to go down and up
// again (Cassandra's hints dispatch trigger, every 10 s).
func (c *Coordinator) DeliverHints() {
	if c.cfg.Hints == nil {
		return
	}
	alive := c.alive()
	for _, p := range c.cfg.Hints.Pending() {
		if e := ring.Endpoint(p.Host); e != c.cfg.Self && alive(e) {
			c.ReplicaUp(e)
		}
	}
}

// hintsToPending sends hints just delivered to replica e on to the nodes
// being given their ranges, when the ring moves: such a node is filled by
// a stream from one replica, e perhaps (a node leaving streams what it
// holds), which the hint may have reached after the stream was cut, and
// would otherwise lack the write for good. It runs in the background, so
// that the delivery to e goes on at its pace.
func (c *Coordinator) hintsToPending(e ring.Endpoint, ms []*mutation.Mutation) {
	m := c.cfg.Ring()
	if m == nil || m.Future() == nil {
		return
	}
	byNode := c.placeByNode(m, ms, func(p placement) []ring.Endpoint { return p.pending }, e)
	if len(byNode) > 0 {
		c.background.Go(func() { c.sendPlaced(context.Background(), m, byNode) })
	}
}

// RehomeHints hands the hints kept for a node that has left the ring to
// the replicas its ranges went to, in the background: a write it missed
// (down, or restarting) before its ranges were streamed away is otherwise
// on fewer replicas than the keyspace asks for until a repair. Cassandra
// drops these hints. done is told the outcome: nil once none are kept.
func (c *Coordinator) RehomeHints(left ring.Endpoint, done func(error)) {
	if c.cfg.Network == nil || c.cfg.Hints == nil || !c.cfg.Hints.Has(string(left)) {
		done(nil)
		return
	}
	h := c.handoff
	c.background.Go(func() {
		for !h.claim(left, false) { // one to it as it left: this one goes on from where that stops
			time.Sleep(10 * time.Millisecond)
		}
		defer h.done(left)
		res, err := c.cfg.Hints.Deliver(context.Background(), string(left), hints.Delivery{
			Send: func(ctx context.Context, ms []*mutation.Mutation) error {
				m := c.cfg.Ring()
				if m == nil {
					return errNoRing
				}
				c.sendPlaced(ctx, m, c.placeByNode(m, ms, func(p placement) []ring.Endpoint { return slices.Concat(p.replicas, p.pending) }, left))
				return nil
			},
			Taken: func(n int64) { c.Stats.HintsDelivered.Add(n) },
		})
		c.Stats.HintsExpired.Add(res.Expired)
		if err == nil {
			c.cfg.Logger.Info().Str("replica", string(left)).Int64("handed", res.Delivered).Int64("expired", res.Expired).
				Msg("coordinator: the hints of a node that left went to the replicas of its ranges")
		}
		done(err)
	})
}

// errNoRing stops a handing over of hints on a node that has no ring yet.
var errNoRing = errors.New("coordinator: no ring to place the hints by")

// placeByNode groups hinted mutations by the nodes ring m places them on,
// those targets picks from each placement but not, the hints having
// reached it, except.
func (c *Coordinator) placeByNode(m *ring.Metadata, ms []*mutation.Mutation, targets func(placement) []ring.Endpoint, except ring.Endpoint) map[ring.Endpoint][]write {
	look := c.current()
	byNode := map[ring.Endpoint][]write{}
	for _, mu := range ms {
		p, err := c.placeWrite(look, m, mu)
		if err != nil {
			continue // its table dropped since
		}
		for _, node := range targets(p) {
			if node != except {
				byNode[node] = append(byNode[node], write{m: mu, p: p, epoch: m.Epoch()})
			}
		}
	}
	return byNode
}

// sendPlaced sends each node its writes in one request fenced by m's
// epoch, each with a deadline of its own: a node that is down, or fails
// them, is hinted; a node that knows a later ring gets each write placed
// again by that ring. This node applies its own, whose failure is the
// engine's, which a hint would not mend.
func (c *Coordinator) sendPlaced(ctx context.Context, m *ring.Metadata, byNode map[ring.Endpoint][]write) {
	alive := c.alive()
	for node, ws := range byNode {
		ms := make([]*mutation.Mutation, len(ws))
		for i, w := range ws {
			ms[i] = w.m
		}
		if node == c.cfg.Self {
			_ = c.applyHere(nil, ms)
			continue
		}
		var err error
		if alive(node) {
			c.Stats.ForwardedMutations.Add(int64(len(ms)))
			ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeouts.Write)
			_, err = c.request(ctx, nil, node, messaging.VerbMutation, appendMutations(fenced(m.Epoch()), ms))
			cancel()
			if err == nil {
				continue
			}
		}
		for _, w := range ws {
			if stale, ok := staleRingOf(err); ok {
				c.resend(w, node, stale) // to the nodes the later ring names that w's did not
			} else {
				c.hint(node, w.m)
			}
		}
	}
}

func (c *Coordinator) deliver(e ring.Endpoint) error {
	throttle := rate.Inf
	if bps := c.cfg.HintedHandoff.Throttle; bps > 0 {
		// Every other node may be delivering to the same replica.
		others := 1
		if m := c.cfg.Ring(); m != nil { // nil while this node starts
			others = max(1, len(m.Endpoints())-1)
		}
		throttle = rate.Limit(float64(bps) / float64(others))
	}
	const pageBytes = 64 << 10
	res, err := c.cfg.Hints.Deliver(context.Background(), string(e), hints.Delivery{
		Send: func(ctx context.Context, ms []*mutation.Mutation) error {
			ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeouts.Write)
			defer cancel()
			_, err := c.cfg.Network.Request(ctx, string(e), messaging.VerbHint, EncodeMutations(ms))
			if err == nil {
				c.hintsToPending(e, ms)
			}
			return err
		},
		Limiter:   rate.NewLimiter(throttle, pageBytes),
		PageBytes: pageBytes,
		Paused:    c.paused,
		Taken:     func(n int64) { c.Stats.HintsDelivered.Add(n) },
	})
	c.Stats.HintsExpired.Add(res.Expired)
	if res.Torn > 0 || res.Undecodable > 0 {
		c.cfg.Logger.Warn().Str("replica", string(e)).Int64("bytes", res.Torn).Int64("undecodable", res.Undecodable).
			Msg("coordinator: hints after a record that does not check were dropped (a crash while writing it, or a damaged disk)")
	}
	if err == nil && res.Delivered+res.Expired > 0 {
		c.cfg.Logger.Info().Str("replica", string(e)).Int64("delivered", res.Delivered).Int64("expired", res.Expired).
			Msg("coordinator: finished delivering hints")
	}
	return err
}
