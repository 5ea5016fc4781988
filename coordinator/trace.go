package coordinator

import (
	"context"
	"net"
	"strconv"

	"github.com/sibyldb/sibyl/internal/workers"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/tracing"
)

// A traced request records what its coordinator and each replica do, in
// the words of Cassandra's traces, so that an operator used to those reads
// these: the messages sent and received with their sizes, the replicas
// asked for data or a digest, the commit log and memtable writes, and
// (storage's) what a read merged. A replica joins the session the
// request's messages carry.

// peerName is how a trace names a node: Cassandra's /address:port.
func (c *Coordinator) peerName(e string) string {
	if _, _, err := net.SplitHostPort(e); err == nil {
		return "/" + e
	}
	return "/" + net.JoinHostPort(e, strconv.Itoa(c.cfg.StoragePort))
}

// request sends a request to a replica and waits for its answer, as
// Network.Request; a traced request records the send and the answer, and
// the replica joins its session.
func (c *Coordinator) request(ctx context.Context, tr *tracing.Trace, to ring.Endpoint, v messaging.Verb, payload []byte) ([]byte, error) {
	defer c.Stats.RequestResponse.Count()
	if tr == nil {
		return c.cfg.Network.Request(ctx, string(to), v, payload)
	}
	peer := c.peerName(string(to))
	tr.Eventf("Sending %s_REQ message to %s message size %d bytes", v, peer, len(payload))
	out, err := c.cfg.Network.Request(messaging.WithTrace(ctx, tr.ID()), string(to), v, payload)
	if err == nil {
		tr.On(tracing.StageResponse).Eventf("%s_RSP message received from %s", v, peer)
	} else {
		tr.On(tracing.StageResponse).Eventf("%s_REQ to %s failed: %v", v, peer, err)
	}
	return out, err
}

// stage is the count of the replica work of a stage.
func (c *Coordinator) stage(name string) *workers.Stage {
	if name == tracing.StageRead {
		return &c.Stats.Read
	}
	return &c.Stats.Mutation
}

// joined is this replica's part of the trace session a request of verb v
// carries (nil when it carries none, or this node does not trace).
func (c *Coordinator) joined(ctx context.Context, from string, v messaging.Verb, stage string) *tracing.Trace {
	id := messaging.TraceOf(ctx)
	if id == nil || c.cfg.Tracer == nil {
		return nil
	}
	tr := c.cfg.Tracer.Join(tracing.ID(*id), stage)
	tr.Eventf("%s_REQ message received from %s", v, c.peerName(from))
	return tr
}

// tracedHandler is the handler of verb v: h, given this replica's part of
// the request's trace (nil when untraced), counted on its stage, with its
// receipt and answer recorded in the trace.
func (c *Coordinator) tracedHandler(v messaging.Verb, stage string, h func(tr *tracing.Trace, payload []byte) ([]byte, error)) messaging.Handler {
	return c.served(v, stage, func(_ context.Context, tr *tracing.Trace, _ string, payload []byte) ([]byte, error) {
		return h(tr, payload)
	})
}

// receiptTraced is handler h of verb v, counted on its stage, with its
// receipt and answer recorded in the request's trace.
func (c *Coordinator) receiptTraced(v messaging.Verb, stage string, h messaging.Handler) messaging.Handler {
	return c.served(v, stage, func(ctx context.Context, _ *tracing.Trace, from string, payload []byte) ([]byte, error) {
		return h(ctx, from, payload)
	})
}

func (c *Coordinator) served(v messaging.Verb, stage string, h func(ctx context.Context, tr *tracing.Trace, from string, payload []byte) ([]byte, error)) messaging.Handler {
	st := c.stage(stage)
	return func(ctx context.Context, from string, payload []byte) ([]byte, error) {
		st.Begin()
		defer st.Done()
		tr := c.joined(ctx, from, v, stage)
		out, err := h(ctx, tr, from, payload)
		c.traceAnswer(tr, v, from, out, err)
		return out, err
	}
}

func (c *Coordinator) traceAnswer(tr *tracing.Trace, v messaging.Verb, to string, out []byte, err error) {
	if tr == nil {
		return
	}
	peer := c.peerName(to)
	if err != nil {
		tr.Eventf("%s failed: %v", v, err)
	}
	tr.Eventf("Enqueuing response to %s", peer)
	tr.Eventf("Sending %s_RSP message to %s message size %d bytes", v, peer, len(out))
}

// traceLocalRead records that this node reads table t for a traced
// request. The nil check comes before the formatting: an untraced read
// must not pay for its arguments.
func traceLocalRead(tr *tracing.Trace, t *schema.Table) {
	if tr != nil {
		tr.Eventf("Executing single-partition query on %s", t.Name)
	}
}

// applyHere applies mutations on this node's engine, recording it.
func (c *Coordinator) applyHere(tr *tracing.Trace, ms []*mutation.Mutation) error {
	if tr != nil {
		tr.Event("Appending to commitlog")
		look := c.current()
		for _, m := range ms {
			if t := look.tables[m.Table]; t != nil {
				tr.Eventf("Adding to %s memtable", t.Name)
			}
		}
	}
	return c.cfg.Engine.Apply(ms)
}
