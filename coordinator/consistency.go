package coordinator

import (
	"slices"

	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

func quorum(n int) int { return n/2 + 1 }

// placesByDC reports whether a strategy knows data centres; one that does
// not counts its whole factor as the local data centre's.
func placesByDC(s ring.Strategy) bool {
	_, ok := s.(ring.NetworkTopologyStrategy)
	return ok
}

// BlockFor is how many replicas must answer a request at level l for a
// keyspace replicated by s (Cassandra's counts; a strategy that does not
// place by data centre counts its whole factor as local). ANY is one: for
// a write, any replica's acknowledgement (a hint stands in for it when
// none is alive); reads never take it.
func BlockFor(l request.Consistency, s ring.Strategy, localDC string) int {
	rf := s.ReplicationFactor()
	switch l {
	case request.Any, request.One, request.LocalOne:
		return 1
	case request.Two:
		return 2
	case request.Three:
		return 3
	case request.Quorum, request.Serial:
		return quorum(rf)
	case request.All:
		return rf
	case request.LocalQuorum, request.LocalSerial:
		return quorum(s.DataCenterFactor(localDC))
	case request.EachQuorum:
		nts, ok := s.(ring.NetworkTopologyStrategy)
		if !ok {
			return quorum(rf)
		}
		n := 0
		for _, f := range nts.Factors {
			n += quorum(f)
		}
		return n
	}
	return rf
}

// counts reports whether replica r's answer counts towards level l: for
// the LOCAL_ levels only the local data centre's do (all of them when the
// strategy does not place by data centre).
func counts(l request.Consistency, s ring.Strategy, localDC string, r ring.Endpoint, locate func(ring.Endpoint) ring.Location) bool {
	return !l.IsLocal() || !placesByDC(s) || locate(r).DataCenter == localDC
}

// eachQuorum reports whether a request at level l is counted data centre
// by data centre: EACH_QUORUM on a strategy that places by data centre.
func eachQuorum(l request.Consistency, s ring.Strategy) (ring.NetworkTopologyStrategy, bool) {
	nts, ok := s.(ring.NetworkTopologyStrategy)
	return nts, ok && l == request.EachQuorum
}

// CheckAvailable refuses a request at level l when too few of its
// replicas are alive: the replicas of the local data centre for the
// LOCAL_ levels, each data centre's for EACH_QUORUM, all of them
// otherwise. pending are a write's replicas being given the range (nil
// for a read): each must answer on top of the level, and may. locate
// places a replica.
func CheckAvailable(l request.Consistency, s ring.Strategy, localDC string, replicas, pending []ring.Endpoint, alive func(ring.Endpoint) bool, locate func(ring.Endpoint) ring.Location) error {
	if nts, ok := eachQuorum(l, s); ok {
		for _, dc := range sortedDCs(nts) {
			f := nts.Factors[dc]
			live, extra := 0, 0
			for _, r := range replicas {
				if locate(r).DataCenter == dc && alive(r) {
					live++
				}
			}
			for _, r := range pending {
				if locate(r).DataCenter == dc {
					extra++
					if alive(r) {
						live++
					}
				}
			}
			if need := quorum(f) + extra; f > 0 && live < need {
				return &request.Unavailable{Consistency: l, Required: need, Alive: live, DataCenter: dc}
			}
		}
		return nil
	}
	need := BlockFor(l, s, localDC)
	live := 0
	for _, r := range replicas {
		if alive(r) && counts(l, s, localDC, r, locate) {
			live++
		}
	}
	for _, r := range pending {
		if counts(l, s, localDC, r, locate) {
			need++
			if alive(r) {
				live++
			}
		}
	}
	if live < need {
		return &request.Unavailable{Consistency: l, Required: need, Alive: live}
	}
	return nil
}

// Acks counts a write's acknowledgements towards its level: all of them,
// only the local data centre's for the LOCAL_ levels, or a quorum in
// every data centre for EACH_QUORUM.
type Acks struct {
	level    request.Consistency
	blockFor int
	// waiting are the replicas whose answers count and have not come (a
	// replication factor's worth at most, so a slice); dcs, their data
	// centres, for EACH_QUORUM.
	waiting []ring.Endpoint
	dcs     []string
	// need is, by data centre, the answers still needed there;
	// unanswered, the replicas there not yet answered (EACH_QUORUM only).
	need, unanswered map[string]int
	acked            int
}

// NewAcks counts the answers of the replicas a request was sent to
// (targets) towards level l for a keyspace replicated by s. pending are
// a write's replicas being given the range (nil for a read; those alive
// are among targets): each adds one to what the level needs.
func NewAcks(l request.Consistency, s ring.Strategy, localDC string, targets, pending []ring.Endpoint, locate func(ring.Endpoint) ring.Location) *Acks {
	a := &Acks{level: l, blockFor: BlockFor(l, s, localDC), waiting: make([]ring.Endpoint, 0, len(targets))}
	for _, r := range targets {
		if counts(l, s, localDC, r, locate) {
			a.waiting = append(a.waiting, r)
		}
	}
	nts, each := eachQuorum(l, s)
	if each {
		a.need, a.unanswered = map[string]int{}, map[string]int{}
		for dc, f := range nts.Factors {
			if f > 0 {
				a.need[dc] = quorum(f)
			}
		}
		for _, r := range a.waiting {
			dc := locate(r).DataCenter
			a.dcs = append(a.dcs, dc)
			a.unanswered[dc]++
		}
	}
	for _, r := range pending {
		switch {
		case each:
			if dc := locate(r).DataCenter; nts.Factors[dc] > 0 {
				a.need[dc]++
				a.blockFor++
			}
		case counts(l, s, localDC, r, locate):
			a.blockFor++
		}
	}
	return a
}

// BlockFor is how many answers the level needs in all.
func (a *Acks) BlockFor() int { return a.blockFor }

// Received is how many answers counted so far.
func (a *Acks) Received() int { return a.acked }

// Ack records replica r's answer (ok false: it failed) and reports
// whether the request is now complete. An answer from a replica that was
// not sent the request, or a second one, is ignored.
func (a *Acks) Ack(r ring.Endpoint, ok bool) (done bool) {
	i := slices.Index(a.waiting, r)
	if i < 0 {
		return a.Done()
	}
	a.waiting = slices.Delete(a.waiting, i, i+1)
	if a.need != nil {
		dc := a.dcs[i]
		a.dcs = slices.Delete(a.dcs, i, i+1)
		a.unanswered[dc]--
		if ok && a.need[dc] > 0 {
			a.need[dc]--
		}
	}
	if ok {
		a.acked++
	}
	return a.Done()
}

// Done reports whether enough replicas answered.
func (a *Acks) Done() bool {
	if a.need != nil {
		for _, n := range a.need {
			if n > 0 {
				return false
			}
		}
		return true
	}
	return a.acked >= a.blockFor
}

// Hopeless reports whether so many replicas failed that the level can no
// longer be met by those still to answer.
func (a *Acks) Hopeless() bool {
	if a.need != nil {
		for dc, n := range a.need {
			if n > a.unanswered[dc] {
				return true
			}
		}
		return false
	}
	return a.acked+len(a.waiting) < a.blockFor
}

// Timeout is the WriteTimeout to report now, with the count clamped as
// Cassandra clamps it.
func (a *Acks) Timeout(writeType string) *request.WriteTimeout {
	return &request.WriteTimeout{Consistency: a.level, Received: min(a.acked, a.blockFor-1), BlockFor: a.blockFor, WriteType: writeType}
}
