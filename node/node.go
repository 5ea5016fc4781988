package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/native"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/repair"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/streaming"
	"github.com/sibyldb/sibyl/tracing"
	"github.com/sibyldb/sibyl/virtual"
)

// Node is one running node.
type Node struct {
	cfg    Config
	engine *storage.Engine
	// schema is the current schema: replaced whole by each change, read
	// by every request.
	schema atomic.Pointer[schema.Schema]
	// schemaMu makes schema changes one at a time (a client's DDL, or a
	// change another node sends).
	schemaMu sync.Mutex
	// Recovery is what commit log replay did at start-up.
	Recovery storage.RecoveryStats

	// nativeMu guards native and nativeDone: a storage failure may stop
	// the server while Close or Drain does.
	nativeMu   sync.Mutex
	native     *native.Server
	nativeDone chan error
	nativeTLS  *tlsconf.Server // client_encryption_options, once enabled
	adminTLS   *tlsconf.Server // admin_encryption_options, once enabled
	// internodeTLS is server_encryption_options' TLS, once enabled.
	internodeTLS *tlsconf.Server
	hostID       []byte // the node's host id, kept in system.local
	// counterID is the host id as the counter shards this node leads
	// name it, once it is known.
	counterID atomic.Pointer[mutation.CounterID]
	tokens    []string // the node's tokens, as system.local holds them
	// ring is the token ring as this node knows it: the metadata log's
	// nodes (topology), as last applied here.
	ring      atomic.Pointer[ring.Metadata]
	topology  atomic.Pointer[topology]
	ringMu    sync.Mutex         // one ring rebuild at a time
	gossip    *gossip.Gossiper   // nil when the node has no seeds
	messaging *messaging.Service // internode requests; nil with no seeds
	// auth is who may connect and what each role may do: system_auth as
	// last applied here.
	auth *auth.Service
	// meta is the node's member of the metadata log, through which every
	// schema change commits.
	meta *metadata.Log
	// unopened are the tables this node's clients' schema changes added
	// that could not be opened, by epoch, for the statement to undo;
	// guarded by schemaMu.
	unopened map[uint64]unopenedTables
	// coord coordinates the requests of the node's clients.
	coord   *coordinator.Coordinator
	metrics *metrics
	// events is the native server clients register with for cluster
	// events (set once it serves; gossip's changes read it).
	events    atomic.Pointer[native.Server]
	viewMu    sync.Mutex
	views     map[string]peerView // what clients were last told of each peer
	seenAlive map[string]bool     // the peers gossip last showed alive
	stopped   chan struct{}       // closed by Close, for the node's own goroutines
	// startLogLevel is the log level when the node opened, which
	// setlogginglevel with no arguments goes back to.
	startLogLevel zerolog.Level
	// tracer makes the traces of the requests this node coordinates or
	// serves; traces writes them to system_traces.
	tracer  *tracing.Tracer
	traces  *traceWriter
	admin   *http.Server
	drained atomic.Bool
	// rebuilding is set while a nodetool rebuild runs: one at a time.
	rebuilding atomic.Bool
	// mode is the operation mode a join or departure puts the node in
	// (modeJoining...), "" when none.
	mode atomic.Value
	// moving is set while this node runs a decommission or a removenode:
	// one at a time.
	moving atomic.Bool
	// removal is the removenode this node runs, for removenode status.
	removal atomic.Pointer[removal]
	// replacing is the metadata id of the dead node this one replaces
	// while it joins (replace_address_first_boot); 0 otherwise.
	replacing atomic.Uint64
	// failed is set once a storage failure stopped the transports.
	failed  atomic.Bool
	started time.Time
	// virtual answers reads of system_views and system_virtual_schema.
	virtual *virtual.Tables
	// lastRotation is when the histograms last started a new window
	// (Unix nanoseconds; 0 before the first).
	lastRotation atomic.Int64
	// cacheRates samples the block cache's requests and hits.
	cacheRates recentRates
	// activity is every node's recent activity, for the dashboard.
	activity activity
	// gossipOff is nodetool disablegossip on a node alone (no seeds).
	gossipOff atomic.Bool
	// hints are what the coordinator keeps for replicas that missed
	// writes; nil for a node alone.
	hints *hints.Store
	// streaming sends and receives token ranges' data (nil without seeds).
	streaming *streaming.Service
	// repair builds this node's repair trees and asks others for theirs
	// (nil without seeds).
	repair *repair.Service
	// history is where repairs made every replica of a table agree
	// (system.repair_history), which the engine purges by; historyMu
	// orders its changes and their writes, the newest of which was at
	// historyWritten (microseconds).
	history        *repair.History
	historyMu      sync.Mutex
	historyWritten int64
	// autoRepairDone is closed when auto repair has stopped, which
	// autoRepairCancel asks; both nil when it never ran.
	autoRepairDone   chan struct{}
	autoRepairCancel context.CancelFunc
	// streamThroughput and entireSSTableStreamThroughput are
	// stream_throughput_outbound and
	// entire_sstable_stream_throughput_outbound in bytes a second as
	// nodetool setstreamthroughput last left them; a node without seeds
	// keeps them for the streaming it may never start.
	streamThroughput, entireSSTableStreamThroughput atomic.Int64
}

// Open starts a node: the storage engine; the system tables; the schema,
// read from the system_schema SSTables; every table it names; commit log
// replay, which needs them all open (it skips the records of tables it
// does not know, and the segments then go); and the schema once more, for
// changes replay brought back.
func Open(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.EnsureDefaults()
	part, _ := partitioner.ByName(cfg.Partitioner)
	opts := storage.Options{FS: cfg.FS, DataDir: cfg.DataFileDirectories[0], Logger: cfg.Logger, Partitioner: part,
		BlockCacheSize: int64(cfg.FileCacheSize), MemtableTotalSpace: int64(cfg.MemtableHeapSpace),
		IgnoreReplayErrors:     cfg.CommitLogIgnoreReplayErrors,
		TombstoneWarnThreshold: cfg.TombstoneWarnThreshold, TombstoneFailureThreshold: cfg.TombstoneFailureThreshold}
	history := &repair.History{Partitioner: part}
	opts.RepairHistory = history
	var n *Node
	opts.OnFailure = func(kind storage.FailureKind, err error) {
		if n != nil {
			n.onStorageFailure(kind, err)
		}
	}
	opts.SSTable.LargePartitionBytes = int64(cfg.CompactionLargePartitionWarningThreshold)
	opts.DescribeRead = func(id mutation.TableID, key []byte, q request.Slice) string {
		return n.describeRead(id, key, q)
	}
	opts.DescribeKey = func(id mutation.TableID, key []byte) string { return n.describeKey(id, key) }
	opts.CommitLog.Dir = cfg.CommitLogDirectory
	opts.CommitLog.SyncMode, _ = storage.ParseCommitLogSync(cfg.CommitLogSync)
	opts.CommitLog.SyncPeriod = time.Duration(cfg.CommitLogSyncPeriod)
	engine, err := storage.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	n = &Node{cfg: cfg, engine: engine, auth: newAuth(cfg), history: history, started: time.Now(), stopped: make(chan struct{}), unopened: map[uint64]unopenedTables{}, metrics: newMetrics(), views: map[string]peerView{}}
	n.streamThroughput.Store(int64(*cfg.StreamThroughputOutbound))
	n.entireSSTableStreamThroughput.Store(int64(*cfg.EntireSSTableStreamThroughputOutbound))
	n.startLogLevel = zerolog.GlobalLevel()
	n.traces = newTraceWriter(n)
	n.tracer = n.newTracer(n.traces)
	n.virtual = n.newVirtualTables()
	n.cacheRates.sample(n.started, 0, 0)
	if n.coord, err = n.newCoordinator(); err != nil {
		n.traces.close()
		return nil, errors.Join(err, engine.Close())
	}
	n.metrics.watchEngine(engine)
	n.metrics.watchAuth(n.auth)
	n.metrics.watchGossip(func() int64 {
		n.ringMu.Lock()
		defer n.ringMu.Unlock()
		if n.gossip == nil {
			return 0
		}
		return n.gossip.Refused()
	})
	n.metrics.watchCoordinator(&n.coord.Stats)
	n.metrics.watchTracing(&n.traces.dropped)
	n.metrics.registry.MustRegister(scrapeCollector{n})
	n.metrics.watchSlowQueries(func() int64 {
		if s := n.nativeServer(); s != nil {
			return s.SlowQueries()
		}
		return 0
	})
	n.metrics.watchOverloads(func() *native.OverloadCounts {
		if s := n.nativeServer(); s != nil {
			return s.Overloads()
		}
		return nil
	})
	if n.hints != nil {
		n.metrics.watchHints(n.hints)
	}
	if err := n.start(); err != nil {
		return nil, errors.Join(err, n.shutdown(false))
	}
	return n, nil
}

func (n *Node) start() error {
	if err := n.openTables(schema.New(nil)); err != nil {
		return err
	}
	s, err := n.loadSchema()
	if err != nil {
		return err
	}
	if err := n.openStoredTables(s); err != nil {
		return err
	}
	if n.Recovery, err = n.engine.Recover(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if s, err = n.loadSchema(); err != nil {
		return err
	}
	n.schema.Store(s)
	if err := n.openStoredTables(s); err != nil {
		return err
	}
	if err := n.loadRepairHistory(); err != nil {
		return err
	}
	if err := n.describeSystemKeyspaces(); err != nil {
		return err
	}
	if err := n.loadRoles(); err != nil {
		return err
	}
	if err := n.identify(); err != nil {
		return err
	}
	go n.rotateHistograms()
	go n.sampleActivity()
	if n.auth.Authenticating() {
		// With no logins the role is not needed; a node restarted with
		// PasswordAuthenticator makes it then.
		go n.setupDefaultSuperuser()
	}
	return n.writeLocal()
}

// describeSystemKeyspaces writes the system keyspaces' rows in the
// system_schema tables (their definitions are the code's, so each start
// writes them afresh).
func (n *Node) describeSystemKeyspaces() error {
	now := time.Now()
	ms, err := schema.SystemKeyspaceMutations(&schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()})
	if err != nil {
		return fmt.Errorf("node: describing the system keyspaces: %w", err)
	}
	return n.applyLocal(ms)
}

// stopMetadata stops the node's member of the metadata log.
func (n *Node) stopMetadata() error {
	if n.meta == nil {
		return nil
	}
	return n.meta.Close()
}

// Close stops the node: the native protocol server drains (no new
// requests; those in flight are answered), memtables are flushed, and the
// engine closes.
func (n *Node) Close() error { return n.shutdown(true) }

// shutdown stops what runs, in an order that leaves nothing holding the
// engine's files when it closes; a start that failed does it without the
// flush.
func (n *Node) shutdown(flush bool) error {
	n.engine.StopCompactions() // a clean stop does not wait for a long compaction
	if n.streaming != nil {
		// Before messaging closes, which waits for its handlers: a pull
		// another node asked for would hold it until its session ended.
		n.streaming.Close()
	}
	err := n.leaveCluster()
	n.stopAutoRepair() // its repair fails at once: the node stopped, its streams closed
	err = errors.Join(err, n.stopAdmin(), n.stopNative(), n.stopMetadata())
	n.traces.close()
	n.coord.Settle() // messaging is closed: what is still on its way ends at once
	if n.hints != nil {
		err = errors.Join(err, n.hints.Close())
	}
	if flush {
		if ferr := n.engine.Flush(); ferr != nil {
			err = errors.Join(err, fmt.Errorf("node: flushing at shutdown: %w", ferr))
		}
	}
	return errors.Join(err, n.engine.Close())
}
