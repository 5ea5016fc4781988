package coordinator

import (
	"context"
	"fmt"
	"maps"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/tracing"
)

// Handlers are the internode verbs a replica answers, for the network to
// serve: writes and hints, partition reads (data or digest), range reads,
// truncates, the Paxos verbs, the batchlog's and counter writes, each on
// this node's engine.
func (c *Coordinator) Handlers() map[messaging.Verb]messaging.Handler {
	apply := func(tr *tracing.Trace, payload []byte) ([]byte, error) {
		ms, err := DecodeMutations(payload)
		if err != nil {
			return nil, err
		}
		return nil, c.applyHere(tr, ms)
	}
	handlers := map[messaging.Verb]messaging.Handler{
		messaging.VerbMutation: c.tracedHandler(messaging.VerbMutation, tracing.StageMutation, func(tr *tracing.Trace, payload []byte) ([]byte, error) {
			payload, err := c.admit(payload)
			if err != nil {
				return nil, err
			}
			return apply(tr, payload)
		}),
		// Meant for this node, whatever the ring.
		messaging.VerbHint: func(_ context.Context, _ string, payload []byte) ([]byte, error) { return apply(nil, payload) },
		messaging.VerbRead: c.tracedHandler(messaging.VerbRead, tracing.StageRead, func(tr *tracing.Trace, payload []byte) ([]byte, error) {
			payload, err := c.admit(payload)
			if err != nil {
				return nil, err
			}
			id, q, digest, err := decodeRead(payload)
			if err != nil {
				return nil, err
			}
			if err := c.knows(id); err != nil {
				return nil, err
			}
			if t := c.current().tables[id]; t != nil {
				traceLocalRead(tr, t)
			}
			q.Trace = tr
			es, err := c.cfg.Engine.ReadEntries(id, q.Key, q.Slice)
			if err != nil {
				return nil, err
			}
			if digest {
				return EntriesDigest(es), nil
			}
			return encodeEntries(es), nil
		}),
		messaging.VerbRangeRead: c.tracedHandler(messaging.VerbRangeRead, tracing.StageRead, func(tr *tracing.Trace, payload []byte) ([]byte, error) {
			id, q, err := decodeScan(payload, c.cfg.Engine.Partitioner())
			if err != nil {
				return nil, err
			}
			if err := c.knows(id); err != nil {
				return nil, err
			}
			if t := c.current().tables[id]; t != nil && tr != nil {
				tr.Eventf("Executing seq scan on %s", t.Name)
			}
			parts, err := c.cfg.Engine.ScanEntries(id, q)
			if err != nil {
				return nil, err
			}
			if tr != nil {
				tr.Eventf("Read %d partitions", len(parts))
			}
			return encodeRawPartitions(parts), nil
		}),
		messaging.VerbTruncate: func(_ context.Context, _ string, payload []byte) ([]byte, error) {
			id, err := tableIDFrom(payload)
			if err != nil {
				return nil, err
			}
			if err := c.knows(id); err != nil {
				return nil, err
			}
			return nil, c.truncateHere(id)
		},
	}
	maps.Copy(handlers, c.paxosHandlers())
	maps.Copy(handlers, c.batchlogHandlers())
	maps.Copy(handlers, c.counterHandlers())
	for _, v := range []messaging.Verb{messaging.VerbPaxosPrepare, messaging.VerbPaxosPropose, messaging.VerbPaxosCommit, messaging.VerbCounterMutation} {
		handlers[v] = c.receiptTraced(v, tracing.StageMutation, handlers[v])
	}
	return handlers
}

// knows refuses a request for a table this node's schema does not hold.
func (c *Coordinator) knows(id mutation.TableID) error {
	if c.current().tables[id] == nil {
		return fmt.Errorf("no table %x here", id)
	}
	return nil
}
