package coordinator

import (
	"context"
)

// admit checks the ring epoch a request was routed by against this
// replica's: an older one is refused (StaleRing); for a later one the
// replica catches up first, for up to its timeout's worth, then serves.
func (c *Coordinator) admit(b []byte) ([]byte, error) {
	epoch, payload, err := unfence(b)
	if err != nil {
		return nil, err
	}
	var mine uint64
	if c.cfg.Ring != nil {
		if m := c.cfg.Ring(); m != nil { // nil while this node starts
			mine = m.Epoch()
		}
	}
	switch {
	case epoch < mine:
		return nil, &StaleRing{Epoch: mine}
	case epoch > mine && c.cfg.CatchUp != nil:
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write/2)
		defer cancel()
		if err := c.cfg.CatchUp(ctx, epoch); err != nil {
			c.cfg.Logger.Debug().Err(err).Uint64("epoch", epoch).Msg("coordinator: a request routed by a ring this replica has not reached")
		}
	}
	return payload, nil
}

// caughtUp reports whether a request failed on a replica that knows a
// later ring, and if so waits for this node to reach it: the request is
// then to be sent again, once.
func (c *Coordinator) caughtUp(err error) bool {
	stale, ok := staleRingOf(err)
	if !ok || c.cfg.CatchUp == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeouts.Write)
	defer cancel()
	if err := c.cfg.CatchUp(ctx, stale.Epoch); err != nil {
		c.cfg.Logger.Warn().Err(err).Uint64("epoch", stale.Epoch).Msg("coordinator: catching up to the ring a replica knows")
		return false
	}
	return true
}
