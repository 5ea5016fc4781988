package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/sibyldb/sibyl/cql/native"
	"github.com/sibyldb/sibyl/gossip"
)

// drainTimeout bounds how long a shutdown waits for the requests being
// answered.
const drainTimeout = 10 * time.Second

// StartNative starts the CQL native protocol server on the node's
// rpc_address and native_transport_port, and returns the address it
// listens on. A port in use stops it with a message naming the setting.
func (n *Node) StartNative() (net.Addr, error) {
	srv, err := native.NewServer(native.Options{
		NewSession:       n.newSession,
		MaxFrameSize:     int(n.cfg.NativeMaxFrameSize),
		Logger:           n.cfg.Logger,
		Authenticator:    n.nativeAuthenticator(),
		Tracer:           n.tracer,
		SlowQueryTimeout: time.Duration(*n.cfg.SlowQueryLogTimeout),

		MaxRequestDataInFlight:      int64(n.cfg.NativeMaxRequestDataInFlight),
		MaxRequestDataInFlightPerIP: int64(n.cfg.NativeMaxRequestDataInFlightPerIP),
		MaxRequestsPerSecond:        n.requestsPerSecond(),
	})
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(n.cfg.RPCAddress, strconv.Itoa(n.cfg.NativePort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("native_transport_port: cannot listen on %s: %w", addr, err)
	}
	if enc := n.cfg.ClientEncryptionOptions; enc.Enabled {
		t, err := n.tlsServer(&n.nativeTLS, "client_encryption_options", "native", enc)
		if err != nil {
			l.Close()
			return nil, err
		}
		l = t.Listener(l)
	}
	n.nativeMu.Lock()
	n.native, n.nativeDone = srv, make(chan error, 1)
	n.events.Store(srv)
	go func() { n.nativeDone <- srv.Serve(l) }()
	n.nativeMu.Unlock()
	n.cfg.Logger.Info().Str("address", l.Addr().String()).Msg("CQL native protocol: listening")
	// Not under nativeMu: the news goes to every peer over TCP.
	n.setRPCReady(true)
	return l.Addr(), nil
}

// setRPCReady tells the other nodes whether this one serves clients
// (RPC_READY): they announce it to their clients (NEW_NODE, UP, DOWN) by
// it. It goes to every live node at once, not in the next gossip round.
func (n *Node) setRPCReady(ready bool) {
	g := n.gossiper()
	if g != nil {
		g.SetNow(gossip.RPCReady, strconv.FormatBool(ready))
	}
}

// nativeRunning reports whether the native protocol server serves.
func (n *Node) nativeRunning() bool {
	n.nativeMu.Lock()
	defer n.nativeMu.Unlock()
	return n.native != nil
}

// EnableNative starts the native protocol server again after nodetool
// disablebinary, as nodetool enablebinary does: not on a node drained,
// failed or leaving (its transports stay down), and nothing when it runs.
func (n *Node) EnableNative() error {
	mode := n.operationMode()
	switch {
	case mode == "DRAINED":
		return badRequest("Unable to start native transport because the node was drained.")
	case n.failed.Load():
		return badRequest("Unable to start native transport because the node stopped on a storage failure (see the failure policies).")
	case mode != "NORMAL":
		return badRequest("Unable to start native transport because the node is not in the normal state.")
	case n.nativeRunning():
		return nil
	}
	_, err := n.StartNative()
	return err
}

// stopNative drains the native protocol server: no new connections or
// requests, and those being answered finish.
func (n *Node) stopNative() error {
	n.nativeMu.Lock()
	defer n.nativeMu.Unlock()
	if n.native == nil {
		return nil
	}
	n.setRPCReady(false)
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	err := n.native.Shutdown(ctx)
	if serveErr := <-n.nativeDone; !errors.Is(serveErr, native.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	n.native = nil
	return err
}

// nativeServer is the CQL server running, or nil.
func (n *Node) nativeServer() *native.Server {
	n.nativeMu.Lock()
	defer n.nativeMu.Unlock()
	return n.native
}

// requestsPerSecond is the native server's bound on requests started a
// second: none unless rate limiting is on.
func (n *Node) requestsPerSecond() int {
	if !n.cfg.NativeRateLimitingEnabled {
		return 0
	}
	return n.cfg.NativeMaxRequestsPerSecond
}
