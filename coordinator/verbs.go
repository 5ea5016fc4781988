package coordinator

import (
	"fmt"
	"maps"

	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
)

// Handlers are the internode verbs a replica answers, for the network to
// serve: writes and hints, partition reads (data or digest), range reads,
// truncates, the Paxos verbs, the batchlog's and counter writes, each on
// this node's engine.
func (c *Coordinator) Handlers() map[messaging.Verb]messaging.Handler {
	apply := func(_ string, payload []byte) ([]byte, error) {
		ms, err := DecodeMutations(payload)
		if err != nil {
			return nil, err
		}
		return nil, c.cfg.Engine.Apply(ms)
	}
	handlers := map[messaging.Verb]messaging.Handler{
		messaging.VerbMutation: func(from string, payload []byte) ([]byte, error) {
			payload, err := c.admit(payload)
			if err != nil {
				return nil, err
			}
			return apply(from, payload)
		},
		messaging.VerbHint: apply, // meant for this node, whatever the ring
		messaging.VerbRead: func(_ string, payload []byte) ([]byte, error) {
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
			es, err := c.cfg.Engine.ReadEntries(id, q.Key, q.Slice)
			if err != nil {
				return nil, err
			}
			if digest {
				return EntriesDigest(es), nil
			}
			return encodeEntries(es), nil
		},
		messaging.VerbRangeRead: func(_ string, payload []byte) ([]byte, error) {
			id, q, err := decodeScan(payload, c.cfg.Engine.Partitioner())
			if err != nil {
				return nil, err
			}
			if err := c.knows(id); err != nil {
				return nil, err
			}
			parts, err := c.cfg.Engine.ScanEntries(id, q)
			if err != nil {
				return nil, err
			}
			return encodeRawPartitions(parts), nil
		},
		messaging.VerbTruncate: func(_ string, payload []byte) ([]byte, error) {
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
	return handlers
}

// knows refuses a request for a table this node's schema does not hold.
func (c *Coordinator) knows(id mutation.TableID) error {
	if c.current().tables[id] == nil {
		return fmt.Errorf("no table %x here", id)
	}
	return nil
}
