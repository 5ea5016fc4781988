package coordinator

import (
	"errors"
	"fmt"

	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/ring"
)

// The pure half of counter writes, as Cassandra (2.1 and later) makes
// them: a write of a counter table goes to one replica of its partition,
// the leader, which turns each counter update (a delta) into its own
// shard at the next clock, holding its count plus the delta (reading its
// current shard under a lock, from its counter cache or its data),
// applies that, and replicates it to the other replicas as any write; an
// increment is thus applied once, and replicas merge the leaders' shards.
// counter_driver.go sends and waits.

// counterLeader chooses the leader of a counter write: this node when it
// is a natural replica (it is alive), else a live natural replica of this
// data centre, picked at random, else the first live one elsewhere; ok is
// false when none is alive.
func counterLeader(replicas []ring.Endpoint, self ring.Endpoint, localDC string, alive func(ring.Endpoint) bool,
	locate func(ring.Endpoint) ring.Location, pick func(n int) int) (ring.Endpoint, bool) {
	var local, remote []ring.Endpoint
	for _, r := range replicas {
		switch {
		case r == self:
			return self, true
		case !alive(r):
		case locate(r).DataCenter == localDC:
			local = append(local, r)
		default:
			remote = append(remote, r)
		}
	}
	switch {
	case len(local) > 0:
		return local[pick(len(local))], true
	case len(remote) > 0:
		return remote[0], true
	}
	return "", false
}

// appendCounterWrite encodes COUNTER_MUTATION's payload: the level and
// the mutation with its updates.
func appendCounterWrite(dst []byte, l request.Consistency, m *mutation.Mutation) []byte {
	w := wire.Writer{B: dst}
	w.Uint(uint64(l))
	return mutation.AppendMutation(w.B, m)
}

func decodeCounterWrite(b []byte) (request.Consistency, *mutation.Mutation, error) {
	r := wire.Reader{B: b}
	l := request.Consistency(r.Uint())
	if r.Err != nil {
		return 0, nil, r.Err
	}
	if !l.Valid() {
		return 0, nil, fmt.Errorf("coordinator: a counter write at level %d", uint16(l))
	}
	m, err := mutation.DecodeCounterUpdate(r.B)
	if err != nil {
		return 0, nil, fmt.Errorf("coordinator: a counter write: %w", err)
	}
	return l, m, nil
}

// The outcomes a leader answers a counter write with.
const (
	outcomeOK = iota
	outcomeUnavailable
	outcomeTimeout
	outcomeFailure
)

// encodeOutcome is a leader's answer: how its write went, with the
// failure's fields, for the coordinator to report as its own.
func encodeOutcome(err error) ([]byte, error) {
	var w wire.Writer
	var (
		u  *request.Unavailable
		wt *request.WriteTimeout
		f  *request.Failure
	)
	switch {
	case err == nil:
		w.Int(outcomeOK)
	case errors.As(err, &u):
		w.Int(outcomeUnavailable)
		w.Uint(uint64(u.Consistency))
		w.Int(int64(u.Required))
		w.Int(int64(u.Alive))
		w.String(u.DataCenter)
	case errors.As(err, &wt):
		w.Int(outcomeTimeout)
		w.Uint(uint64(wt.Consistency))
		w.Int(int64(wt.Received))
		w.Int(int64(wt.BlockFor))
	case errors.As(err, &f):
		w.Int(outcomeFailure)
		w.Uint(uint64(f.Consistency))
		w.Int(int64(f.Received))
		w.Int(int64(f.BlockFor))
		w.Int(int64(len(f.Failures)))
		for _, r := range f.Failures {
			w.String(r.Replica)
			w.Uint(uint64(r.Reason))
		}
	default:
		return nil, err // the leader failed: an error of its own
	}
	return w.B, nil
}

// decodeOutcome reads a leader's answer: nil, or the failure (of type
// COUNTER) the coordinator reports.
func decodeOutcome(b []byte, port int) (error, error) {
	r := wire.Reader{B: b}
	var out error
	switch r.Int() {
	case outcomeOK:
	case outcomeUnavailable:
		out = &request.Unavailable{Consistency: request.Consistency(r.Uint()), Required: int(r.Int()), Alive: int(r.Int()), DataCenter: r.String()}
	case outcomeTimeout:
		out = &request.WriteTimeout{Consistency: request.Consistency(r.Uint()), Received: int(r.Int()), BlockFor: int(r.Int()), WriteType: request.WriteCounter}
	case outcomeFailure:
		f := &request.Failure{Write: true, Consistency: request.Consistency(r.Uint()), Received: int(r.Int()), BlockFor: int(r.Int()),
			WriteType: request.WriteCounter, Port: port}
		n := r.Count()
		for i := 0; i < n && r.Err == nil; i++ {
			f.Failures = append(f.Failures, request.ReplicaFailed{Replica: r.String(), Reason: request.FailureReason(r.Uint())})
		}
		out = f
	default:
		if r.Err == nil {
			r.Fail(errors.New("coordinator: an unknown counter write outcome"))
		}
	}
	if err := r.Done(); err != nil {
		return nil, err
	}
	return out, nil
}
