package node

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
)

// autoRepairCandidate is one primary range of one table, and when a repair
// last covered all of it (math.MinInt64: never).
type autoRepairCandidate struct {
	keyspace, table string
	r               partitioner.Range
	repairedAt      int64
}

// pickAutoRepair is the range auto repair runs next at now (Unix
// seconds): of those whose last repair is at least interval seconds old,
// the one repaired longest ago (never-repaired ones first), ties going to
// the first by keyspace, table and range; false when none is due.
func pickAutoRepair(cands []autoRepairCandidate, now, interval int64) (autoRepairCandidate, bool) {
	var due []autoRepairCandidate
	for _, c := range cands {
		if c.repairedAt == math.MinInt64 || now-c.repairedAt >= interval {
			due = append(due, c)
		}
	}
	if len(due) == 0 {
		return autoRepairCandidate{}, false
	}
	return slices.MinFunc(due, func(a, b autoRepairCandidate) int {
		return cmp.Or(cmp.Compare(a.repairedAt, b.repairedAt), cmp.Compare(a.keyspace, b.keyspace),
			cmp.Compare(a.table, b.table), partitioner.Compare(a.r.Start, b.r.Start))
	}), true
}

// autoRepairCandidates are the primary ranges of every table of every
// keyspace with replicas to compare, each with its last repair.
func (n *Node) autoRepairCandidates() ([]autoRepairCandidate, error) {
	m := n.ring.Load()
	if m == nil {
		return nil, nil
	}
	self := n.endpoint()
	var out []autoRepairCandidate
	for _, ks := range n.Schema().Keyspaces() {
		if schema.IsSystemKeyspace(ks.Name) {
			continue
		}
		s, err := n.ringStrategy(ks)
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue
		}
		for i := range m.SortedTokens() {
			r := m.RangeOf(i)
			if replicas := s.Replicas(m, r.End); !isPrimary(replicas, self) || len(replicas) < 2 {
				continue
			}
			for _, t := range ks.Tables {
				c := autoRepairCandidate{keyspace: ks.Name, table: t.Name, r: r, repairedAt: math.MinInt64}
				if at, ok := n.history.CoveredSince(t.ID, r); ok {
					c.repairedAt = at
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// autoRepair repairs, until the node stops, one due range after another
// (pickAutoRepair), waiting repair_check_interval when none is due and
// when the node is not normal (joining, leaving, drained). A range whose
// repair failed, or recorded nothing, waits that long before it is tried
// again, while the others go on, so that a range that cannot be repaired
// (a replica down) holds up none.
func (n *Node) autoRepair(ctx context.Context) {
	defer close(n.autoRepairDone)
	cfg := n.cfg.AutoRepair
	check := time.Duration(cfg.RepairCheckInterval)
	retryAfter := map[autoRepairKey]time.Time{}
	for {
		wait := check
		if n.operationMode() == "NORMAL" {
			if n.autoRepairOne(ctx, int64(time.Duration(cfg.MinRepairInterval)/time.Second), retryAfter, check) {
				wait = 0
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// startAutoRepair starts autoRepair, which runs until the node stops or
// stopAutoRepair.
func (n *Node) startAutoRepair() {
	ctx, cancel := n.untilStopped()
	n.autoRepairDone, n.autoRepairCancel = make(chan struct{}), cancel
	go n.autoRepair(ctx)
}

// stopAutoRepair ends automatic repair, the repair in flight failing at
// once, and waits until it has stopped.
func (n *Node) stopAutoRepair() {
	if n.autoRepairDone == nil {
		return
	}
	n.autoRepairCancel()
	<-n.autoRepairDone
}

// autoRepairKey names a candidate apart from its last repair.
type autoRepairKey struct {
	keyspace, table string
	r               partitioner.Range
}

func (c autoRepairCandidate) key() autoRepairKey { return autoRepairKey{c.keyspace, c.table, c.r} }

// autoRepairOne repairs the range due next, if any, and reports whether
// it tried one (the next may then go at once). Candidates in retryAfter
// wait until their time; one whose repair failed or recorded nothing is
// put there for check.
func (n *Node) autoRepairOne(ctx context.Context, interval int64, retryAfter map[autoRepairKey]time.Time, check time.Duration) bool {
	cands, err := n.autoRepairCandidates()
	if err != nil {
		n.cfg.Logger.Warn().Err(err).Msg("node: auto repair cannot list the ranges to repair")
		return false
	}
	now := time.Now()
	cands = slices.DeleteFunc(cands, func(c autoRepairCandidate) bool { return now.Before(retryAfter[c.key()]) })
	maps.DeleteFunc(retryAfter, func(_ autoRepairKey, at time.Time) bool { return !now.Before(at) })
	c, ok := pickAutoRepair(cands, now.Unix(), interval)
	if !ok {
		return false
	}
	sum, err := n.Repair(ctx, RepairRequest{Keyspace: c.keyspace, Tables: []string{c.table}, Start: c.r.Start.String(), End: c.r.End.String()})
	log := n.cfg.Logger.Info()
	if err != nil {
		log = n.cfg.Logger.Warn().Err(err)
	}
	log.Str("keyspace", c.keyspace).Str("table", c.table).Stringer("range", c.r).Int("mismatched", sum.Mismatched).
		Int64("bytes", sum.Bytes).Int("recorded", sum.Recorded).Int64("millis", sum.Millis).Msg("node: auto repair of a range")
	if err != nil || sum.Recorded == 0 {
		retryAfter[c.key()] = now.Add(check)
	}
	return true
}
