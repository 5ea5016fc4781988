package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/metadata"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// The admin API: what nodetool asks of a node, as HTTP and JSON on
// listen_address:admin_port (7199, Cassandra's JMX port). Reads are GET,
// actions POST; a failure is a 4xx or 5xx answer whose body is
// {"error": "..."}, the message nodetool prints.

// AdminStatus is a node's line in nodetool status and ring.
type AdminStatus struct {
	Address     string   `json:"address"`
	DataCenter  string   `json:"data_center"`
	Rack        string   `json:"rack"`
	Status      string   `json:"status"` // Up or Down
	State       string   `json:"state"`  // Normal, Leaving, Joining, Moving
	LoadBytes   int64    `json:"load_bytes"`
	Tokens      []string `json:"tokens"`
	HostID      string   `json:"host_id"`
	Ownership   float64  `json:"ownership"` // of the token ring, 0..1
	ReleaseVers string   `json:"release_version"`
}

// AdminInfo is nodetool info's.
type AdminInfo struct {
	AdminStatus
	NativeTransport bool    `json:"native_transport_active"`
	GossipActive    bool    `json:"gossip_active"`
	Generation      int64   `json:"generation"`
	UptimeSeconds   int64   `json:"uptime_seconds"`
	HeapUsedMiB     float64 `json:"heap_used_mib"`
	HeapTotalMiB    float64 `json:"heap_total_mib"`
	OffHeapMiB      float64 `json:"off_heap_mib"`
	Drained         bool    `json:"drained"`
	SchemaVersion   string  `json:"schema_version"`
	// ChunkCache is the block cache, Cassandra's chunk cache.
	ChunkCache AdminCache `json:"chunk_cache"`
}

// AdminCompactionStats is nodetool compactionstats': the compactions the
// tables call for, and those running.
type AdminCompactionStats struct {
	Pending        int                   `json:"pending_tasks"`
	PendingByTable []AdminPendingTable   `json:"pending_by_table"`
	Active         []AdminCompactionTask `json:"active"`
	ThroughputMiB  int                   `json:"throughput_mib_per_sec"` // 0: no limit
}

// AdminPendingTable is a table's pending compactions.
type AdminPendingTable struct {
	Keyspace string `json:"keyspace"`
	Table    string `json:"table"`
	Pending  int    `json:"pending"`
}

// AdminCompactionTask is a compaction running, as system_views.sstable_tasks
// shows it too.
type AdminCompactionTask struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"` // Cassandra's operation type: Compaction, Cleanup
	Keyspace  string `json:"keyspace"`
	Table     string `json:"table"`
	Completed int64  `json:"completed"`
	Total     int64  `json:"total"`
	Unit      string `json:"unit"`
	SSTables  int    `json:"sstables"`
}

func (n *Node) compactionStats() AdminCompactionStats {
	out := AdminCompactionStats{PendingByTable: []AdminPendingTable{}, Active: []AdminCompactionTask{}, ThroughputMiB: n.engine.CompactionThroughput()}
	sch := n.Schema()
	for _, st := range n.engine.Tables() {
		t := sch.TableByID(st.ID())
		if t == nil {
			continue
		}
		if p := st.PendingCompactions(); p > 0 {
			out.Pending += p
			out.PendingByTable = append(out.PendingByTable, AdminPendingTable{t.Keyspace, t.Name, p})
		}
	}
	slices.SortFunc(out.PendingByTable, func(a, b AdminPendingTable) int {
		return strings.Compare(a.Keyspace+"."+a.Table, b.Keyspace+"."+b.Table)
	})
	for _, t := range n.engine.Tasks() {
		kind := strings.ToUpper(t.Kind[:1]) + t.Kind[1:]
		out.Active = append(out.Active, AdminCompactionTask{ID: cqltype.FormatUUID(taskID(t)), Kind: kind, Keyspace: t.Keyspace,
			Table: t.Table, Completed: t.Completed, Total: t.Total, Unit: "bytes", SSTables: t.SSTables})
	}
	return out
}

// AdminCache is a cache as nodetool info shows it.
type AdminCache struct {
	Entries, SizeBytes, CapacityBytes int64
	Hits, Misses, Requests            int64
	// RecentHitRate is the share of the last quarter of an hour's
	// requests that hit; nil when there were none (nodetool prints NaN).
	RecentHitRate *float64
	// recentRequests and recentHits are that quarter's rates a second
	// (system_views.caches shows them).
	recentRequests, recentHits float64
}

// AdminTableStats is one table in nodetool tablestats.
type AdminTableStats struct {
	Keyspace string `json:"keyspace"`
	Table    string `json:"table"`
	storage.TableStats
}

// AdminSnapshot is one table's snapshot in nodetool listsnapshots.
type AdminSnapshot struct {
	Tag       string `json:"tag"`
	Keyspace  string `json:"keyspace"`
	Table     string `json:"table"`
	Bytes     int64  `json:"bytes"`
	TrueBytes int64  `json:"true_bytes"`
}

// AdminGossip is one node in nodetool gossipinfo.
type AdminGossip struct {
	Endpoint string `json:"endpoint"`
	// Port is the endpoint's storage port (internode messaging).
	Port       int                `json:"port"`
	Generation int64              `json:"generation"`
	Heartbeat  int64              `json:"heartbeat"`
	States     []AdminGossipState `json:"states"`
}

// AdminGossipState is one application state, in Cassandra's order.
type AdminGossipState struct {
	Name    string `json:"name"`
	Version int64  `json:"version"`
	Value   string `json:"value"`
}

// AdminRange is one token range in nodetool describering.
type AdminRange struct {
	Start     string          `json:"start_token"`
	End       string          `json:"end_token"`
	Endpoints []string        `json:"endpoints"`
	Details   []AdminEndpoint `json:"endpoint_details"`
}

// AdminEndpoint places a replica.
type AdminEndpoint struct {
	Host       string `json:"host"`
	DataCenter string `json:"data_center"`
	Rack       string `json:"rack"`
}

// AdminErrorBody is what the admin API answers a request it could not
// serve with: 400 for a request it refuses, 500 for a failure of its own.
// Failure says nodetool reports it as a failed command rather than as bad
// use.
type AdminErrorBody struct {
	Error   string `json:"error"`
	Failure bool   `json:"failure,omitempty"`
}

// adminError is a request the node refuses (400). failure says how
// nodetool reports it, as Cassandra's does: a failure of the command
// ("error: ..." and exit status 2, for what Cassandra's nodetool meets as an
// exception from the node) rather than bad use (exit status 1).
type adminError struct {
	msg     string
	failure bool
}

func (e *adminError) Error() string { return e.msg }

// badRequest refuses a request that nodetool reports as bad use.
func badRequest(format string, args ...any) error {
	return &adminError{msg: fmt.Sprintf(format, args...)}
}

// badArgument refuses a request that nodetool reports as a failed command.
func badArgument(format string, args ...any) error {
	return &adminError{msg: fmt.Sprintf(format, args...), failure: true}
}

// StartAdmin serves the admin API on listen_address:admin_port and
// returns the address it listens on.
func (n *Node) StartAdmin() (net.Addr, error) {
	addr := net.JoinHostPort(n.cfg.ListenAddress, strconv.Itoa(n.cfg.AdminPort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin_port: cannot listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	handle := func(pattern string, fn func(r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			v, err := fn(r)
			w.Header().Set("Content-Type", "application/json")
			if err != nil {
				body := AdminErrorBody{Error: err.Error(), Failure: true}
				status := http.StatusInternalServerError
				var ae *adminError
				if errors.As(err, &ae) {
					status, body.Failure = http.StatusBadRequest, ae.failure
				}
				w.WriteHeader(status)
				_ = json.NewEncoder(w).Encode(body)
				return
			}
			_ = json.NewEncoder(w).Encode(v)
		})
	}
	handle("GET /status", n.adminStatuses)
	mux.Handle("GET /metrics", n.metrics.handler())
	handle("GET /info", func(*http.Request) (any, error) { return n.adminInfo(), nil })
	handle("GET /version", func(*http.Request) (any, error) {
		return map[string]string{"release_version": ReleaseVersion}, nil
	})
	handle("GET /describering", n.adminDescribeRing)
	handle("GET /gossipinfo", func(*http.Request) (any, error) { return n.gossipInfo(), nil })
	handle("GET /gossipkeys", n.adminGossipKeys)
	handle("POST /gossipkeys", n.adminGossipKeys)
	handle("GET /metadata", func(*http.Request) (any, error) { return n.adminMetadata(), nil })
	handle("GET /describecluster", n.adminDescribeCluster)
	handle("GET /endpoints", n.adminEndpoints)
	handle("POST /flush", func(r *http.Request) (any, error) {
		return nil, n.eachTable(r, func(_ *schema.Table, st *storage.Table) error { return st.Flush() })
	})
	handle("POST /compact", func(r *http.Request) (any, error) {
		return nil, n.eachTable(r, func(_ *schema.Table, st *storage.Table) error { return st.CompactMajor() })
	})
	handle("POST /cleanup", n.adminCleanup)
	handle("GET /tablestats", n.adminTableStats)
	handle("GET /tablehistograms", n.adminTableHistograms)
	handle("GET /proxyhistograms", n.adminProxyHistograms)
	handle("GET /tpstats", n.adminTPStats)
	handle("POST /toppartitions", n.adminTopPartitions)
	handle("GET /logginglevels", n.adminLoggingLevels)
	handle("POST /logginglevel", n.adminSetLoggingLevel)
	handle("GET /compactionstats", func(*http.Request) (any, error) { return n.compactionStats(), nil })
	handle("GET /compactionthroughput", func(*http.Request) (any, error) {
		return map[string]int{"mib_per_sec": n.engine.CompactionThroughput()}, nil
	})
	handle("POST /compactionthroughput", func(r *http.Request) (any, error) {
		v, err := strconv.Atoi(r.URL.Query().Get("value"))
		if err != nil {
			return nil, badRequest("compaction throughput: %q is not a number", r.URL.Query().Get("value"))
		}
		if err := n.engine.SetCompactionThroughput(v); err != nil {
			return nil, badRequest("%v", err)
		}
		return nil, nil
	})
	handle("GET /statusbinary", func(*http.Request) (any, error) { return map[string]bool{"running": n.nativeRunning()}, nil })
	handle("GET /statusgossip", func(*http.Request) (any, error) { return map[string]bool{"running": n.gossipRunning()}, nil })
	handle("POST /disablebinary", func(*http.Request) (any, error) { return nil, n.stopNative() })
	handle("POST /enablebinary", func(*http.Request) (any, error) { return nil, n.EnableNative() })
	handle("POST /disablegossip", func(*http.Request) (any, error) { return nil, n.disableGossip() })
	handle("POST /enablegossip", func(*http.Request) (any, error) { return nil, n.enableGossip() })
	handle("GET /traceprobability", func(*http.Request) (any, error) {
		return map[string]float64{"probability": n.TraceProbability()}, nil
	})
	handle("POST /traceprobability", func(r *http.Request) (any, error) {
		v, err := strconv.ParseFloat(r.URL.Query().Get("value"), 64)
		if err != nil {
			return nil, badRequest("trace probability: %q is not a number", r.URL.Query().Get("value"))
		}
		if err := n.SetTraceProbability(v); err != nil {
			return nil, badRequest("%v", err)
		}
		return nil, nil
	})
	handle("POST /snapshot", n.adminSnapshot)
	handle("GET /snapshots", n.adminListSnapshots)
	handle("POST /clearsnapshot", n.adminClearSnapshot)
	handle("POST /drain", func(*http.Request) (any, error) { return nil, n.Drain() })
	n.handleHints(handle)
	n.handleStreaming(handle)
	n.handleDashboard(mux, handle)
	// Go's profiler, as etcd and CockroachDB serve it: where a node's CPU
	// and memory go under load (go tool pprof http://host:7199/debug/pprof/profile).
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	handler, err := n.adminAuthenticated(mux)
	if err != nil {
		l.Close()
		return nil, err
	}
	if enc := n.cfg.AdminEncryptionOptions; enc.Enabled {
		t, err := n.tlsServer(&n.adminTLS, "admin_encryption_options", "admin", enc)
		if err != nil {
			l.Close()
			return nil, err
		}
		l = t.Listener(l)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	n.admin = srv
	go func() { _ = srv.Serve(l) }()
	n.cfg.Logger.Info().Str("address", l.Addr().String()).Msg("admin API: listening")
	return l.Addr(), nil
}

func (n *Node) stopAdmin() error {
	if n.admin == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	err := n.admin.Shutdown(ctx)
	n.admin = nil
	return err
}

// Drain stops the node taking requests, stops its automatic repair and
// its running compactions (they give up; their inputs stay) and flushes
// its memtables, as nodetool drain does; the process goes on until
// stopped.
func (n *Node) Drain() error {
	n.drained.Store(true)
	n.stopAutoRepair() // before the flush: its streams write to the memtables
	n.engine.StopCompactions()
	if err := n.stopNative(); err != nil {
		return err
	}
	return n.engine.Flush()
}

// adminStatuses describe every node of the ring: this one, and those
// gossip knows, by address. Ownership is each node's share of the ring,
// or with ?keyspace= its effective share of that keyspace's data.
func (n *Node) adminStatuses(r *http.Request) (any, error) {
	return n.statuses(r.URL.Query().Get("keyspace"))
}

// statuses are nodetool status's lines: every node of the ring, with
// its ownership of a keyspace's data ("": of the token ring).
func (n *Node) statuses(keyspace string) ([]AdminStatus, error) {
	m := n.ring.Load()
	own := m.Ownership()
	if name := keyspace; name != "" {
		ks, err := n.keyspace(name)
		if err != nil {
			return nil, err
		}
		s, err := n.strategy(ks)
		if err != nil {
			return nil, err
		}
		own = m.EffectiveOwnership(s)
	}
	self := n.adminStatus()
	self.Ownership = own[n.endpoint()]
	out := []AdminStatus{self}
	if n.gossip != nil {
		for e, s := range n.gossip.Endpoints() {
			kind := gossip.StatusKind(s.Get(gossip.Status))
			if e == n.cfg.ListenAddress || s.Get(gossip.HostID) == "" || kind == gossip.StatusLeft || n.leftRing(e) {
				continue
			}
			st := AdminStatus{Address: e, DataCenter: s.Get(gossip.DataCenter), Rack: s.Get(gossip.Rack),
				Status: "Down", State: gossipStates[kind], HostID: s.Get(gossip.HostID),
				Ownership: own[ring.Endpoint(e)], ReleaseVers: s.Get(gossip.ReleaseVersion)}
			if s.Alive {
				st.Status = "Up"
			}
			// The log's record says what a node that stopped no longer
			// gossips: a dead node being removed, a join that failed.
			switch {
			case n.recordIn(e, metadata.Leaving):
				st.State = "Leaving"
			case n.recordIn(e, metadata.Joining):
				st.State = "Joining"
			}
			if st.State == "" {
				st.State = "Normal"
			}
			load, _ := strconv.ParseFloat(s.Get(gossip.Load), 64)
			st.LoadBytes = int64(load)
			if t := s.Get(gossip.Tokens); t != "" {
				st.Tokens = strings.Split(t, ",")
			}
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b AdminStatus) int { return compareAddresses(a.Address, b.Address) })
	return out, nil
}

// gossipStates are nodetool's states for the gossiped statuses.
var gossipStates = map[string]string{gossip.StatusNormal: "Normal", gossip.StatusShutdown: "Normal",
	gossip.StatusBoot: "Joining", gossip.StatusLeaving: "Leaving"}

// compareAddresses orders IP addresses numerically (127.0.0.10 after
// 127.0.0.9).
func compareAddresses(a, b string) int {
	return bytes.Compare(inetBytes(a), inetBytes(b))
}

func (n *Node) adminStatus() AdminStatus {
	hostID, _ := n.localIdentityCached()
	return AdminStatus{Address: n.cfg.ListenAddress, DataCenter: n.cfg.DataCenter, Rack: n.cfg.Rack,
		Status: "Up", State: "Normal", LoadBytes: n.engine.Load(), Tokens: slices.Clone(n.tokens),
		HostID: hostID, Ownership: n.ring.Load().Ownership()[n.endpoint()], ReleaseVers: ReleaseVersion}
}

func (n *Node) adminInfo() AdminInfo {
	version := n.Schema().Version()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	const mib = 1 << 20
	return AdminInfo{
		AdminStatus:     n.adminStatus(),
		NativeTransport: n.nativeRunning(),
		GossipActive:    n.gossipRunning(),
		Generation:      n.started.Unix(),
		UptimeSeconds:   int64(time.Since(n.started).Seconds()),
		HeapUsedMiB:     float64(ms.HeapAlloc) / mib,
		HeapTotalMiB:    float64(ms.HeapSys) / mib,
		OffHeapMiB:      float64(ms.Sys-ms.HeapSys) / mib,
		Drained:         n.drained.Load(),
		SchemaVersion:   cqltype.UUIDType.Format(version[:]),
		ChunkCache:      n.chunkCache(),
	}
}

// chunkCache is the block cache's figures.
func (n *Node) chunkCache() AdminCache {
	c := n.engine.CacheStats()
	out := AdminCache{Entries: c.Entries, SizeBytes: c.Size, CapacityBytes: c.Capacity, Hits: c.Hits, Misses: c.Misses, Requests: c.Hits + c.Misses}
	out.recentRequests, out.recentHits = n.cacheRates.rates(time.Now(), out.Requests, c.Hits)
	if out.recentRequests > 0 {
		rate := out.recentHits / out.recentRequests
		out.RecentHitRate = &rate
	}
	return out
}

// localIdentityCached is the host id as system.local holds it.
func (n *Node) localIdentityCached() (string, error) {
	rows, err := n.readRows(schema.LocalTable)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return cqltype.UUIDType.Format(rows[0]["host_id"].Value), nil
}

func (n *Node) keyspace(name string) (*schema.Keyspace, error) {
	ks := n.Schema().Keyspace(name)
	if ks == nil {
		return nil, badRequest("Keyspace [%s] does not exist.", name)
	}
	return ks, nil
}

// adminDescribeRing lists the token ranges of a keyspace, each with its
// replicas.
func (n *Node) adminDescribeRing(r *http.Request) (any, error) {
	ks, err := n.keyspace(r.URL.Query().Get("keyspace"))
	if err != nil {
		return nil, err
	}
	if ks.Replication.Class == schema.LocalStrategy {
		return nil, badArgument("There is no ring for the keyspace: %s", ks.Name)
	}
	s, err := n.strategy(ks)
	if err != nil {
		return nil, err
	}
	m := n.ring.Load()
	var out []AdminRange
	for i, end := range m.SortedTokens() {
		rng := m.RangeOf(i)
		ar := AdminRange{Start: rng.Start.String(), End: end.String()}
		for _, e := range s.Replicas(m, end) {
			loc := m.Location(e)
			ar.Endpoints = append(ar.Endpoints, string(e))
			ar.Details = append(ar.Details, AdminEndpoint{Host: string(e), DataCenter: loc.DataCenter, Rack: loc.Rack})
		}
		out = append(out, ar)
	}
	return out, nil
}

// adminEndpoints answers getendpoints: the replicas of a key (its
// partition key as text; a composite one with its parts joined by ':').
func (n *Node) adminEndpoints(r *http.Request) (any, error) {
	q := r.URL.Query()
	ks := n.Schema().Keyspace(q.Get("keyspace"))
	if ks == nil {
		return nil, badRequest("Unknown keyspace '%s'", q.Get("keyspace"))
	}
	t := ks.Tables[q.Get("table")]
	if t == nil {
		return nil, badRequest("Unknown table '%s' in keyspace '%s'", q.Get("table"), ks.Name)
	}
	key, err := partitionKeyFromString(t, q.Get("key"))
	if err != nil {
		return nil, badArgument("Unable to make %s from '%s'", t.PartitionKey[0].Type.SchemaString(), q.Get("key"))
	}
	s, err := n.strategy(ks)
	if err != nil {
		return nil, err
	}
	m := n.ring.Load()
	var out []string
	for _, e := range s.Replicas(m, n.engine.Partitioner().Token(key)) {
		out = append(out, string(e))
	}
	return out, nil
}

// partitionKeyFromString reads a partition key as nodetool takes it.
func partitionKeyFromString(t *schema.Table, key string) ([]byte, error) {
	parts := []string{key}
	if len(t.PartitionKey) > 1 {
		parts = strings.Split(key, ":")
		if len(parts) != len(t.PartitionKey) {
			return nil, badRequest("the key %q has %d parts, the partition key %d", key, len(parts), len(t.PartitionKey))
		}
	}
	vals := make([][]byte, len(parts))
	for i, p := range parts {
		v, err := t.PartitionKey[i].Type.FromString(p)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		vals[i] = v
	}
	return t.PartitionKeyBytes(vals)
}

func (n *Node) table(ks, name string) (*schema.Table, error) {
	k, err := n.keyspace(ks)
	if err != nil {
		return nil, err
	}
	t := k.Tables[name]
	if t == nil {
		return nil, badRequest("Table %s does not exist in keyspace %s", name, ks)
	}
	return t, nil
}

// selectedTables are the tables a request names: ?keyspace=ks&table=a&table=b,
// a whole keyspace, or every table (system ones included when no keyspace
// is named, as nodetool does for flush).
func (n *Node) selectedTables(r *http.Request) ([]*schema.Table, error) {
	q := r.URL.Query()
	ks := q.Get("keyspace")
	var out []*schema.Table
	if ks == "" {
		for _, k := range n.Schema().Keyspaces() {
			for _, name := range slices.Sorted(mapsKeys(k.Tables)) {
				out = append(out, k.Tables[name])
			}
		}
		return out, nil
	}
	if schema.IsVirtualKeyspace(ks) {
		return nil, badRequest("%s is a virtual keyspace: its tables hold nothing on this node's disk", ks)
	}
	k, err := n.keyspace(ks)
	if err != nil {
		return nil, err
	}
	names := q["table"]
	if len(names) == 0 {
		names = slices.Sorted(mapsKeys(k.Tables))
	}
	for _, name := range names {
		t := k.Tables[name]
		if t == nil {
			return nil, badArgument("Unknown keyspace/cf pair (%s.%s)", ks, name)
		}
		out = append(out, t)
	}
	return out, nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (n *Node) eachTable(r *http.Request, fn func(*schema.Table, *storage.Table) error) error {
	tables, err := n.selectedTables(r)
	if err != nil {
		return err
	}
	for _, t := range tables {
		st, err := n.storageTable(t)
		if err != nil {
			return err
		}
		if err := fn(t, st); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) adminTableStats(r *http.Request) (any, error) {
	var out []AdminTableStats
	err := n.eachTable(r, func(t *schema.Table, st *storage.Table) error {
		out = append(out, AdminTableStats{Keyspace: t.Keyspace, Table: t.Name, TableStats: st.Stats()})
		return nil
	})
	return out, err
}

// adminSnapshot snapshots the tables named (every user table when none),
// writing beside each the statement that recreates it.
func (n *Node) adminSnapshot(r *http.Request) (any, error) {
	tag := r.URL.Query().Get("tag")
	if tag == "" {
		tag = strconv.FormatInt(time.Now().UnixMilli(), 10)
	}
	if err := storage.CheckSnapshotTag(tag); err != nil {
		return nil, badRequest("%v", err)
	}
	tables, err := n.selectedTables(r)
	if err != nil {
		return nil, err
	}
	s := exec.NewSession(n)
	for _, t := range tables {
		if r.URL.Query().Get("keyspace") == "" && schema.IsSystemKeyspace(t.Keyspace) {
			continue
		}
		st, err := n.storageTable(t)
		if err != nil {
			return nil, err
		}
		var cql string
		if !schema.IsSystemKeyspace(t.Keyspace) {
			res, err := s.Run(fmt.Sprintf("DESCRIBE TABLE %q.%q WITH INTERNALS", t.Keyspace, t.Name))
			if err != nil {
				return nil, err
			}
			cql = strings.Replace(string(res[0].Rows[0][3]), "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1)
		}
		if err := st.Snapshot(tag, cql); err != nil {
			if exists := (*storage.SnapshotExistsError)(nil); errors.As(err, &exists) {
				return nil, badRequest("%v", err)
			}
			return nil, err
		}
	}
	return map[string]string{"tag": tag}, nil
}

func (n *Node) adminListSnapshots(r *http.Request) (any, error) {
	var out []AdminSnapshot
	err := n.eachTable(r, func(t *schema.Table, st *storage.Table) error {
		snaps, err := st.Snapshots()
		for _, s := range snaps {
			out = append(out, AdminSnapshot{Tag: s.Tag, Keyspace: t.Keyspace, Table: t.Name, Bytes: s.Bytes, TrueBytes: s.TrueBytes})
		}
		return err
	})
	return out, err
}

func (n *Node) adminClearSnapshot(r *http.Request) (any, error) {
	tag := r.URL.Query().Get("tag")
	if tag == "" && r.URL.Query().Get("all") != "true" {
		return nil, badRequest("Specify snapshot name or --all")
	}
	if tag != "" {
		if err := storage.CheckSnapshotTag(tag); err != nil {
			return nil, badRequest("%v", err)
		}
	}
	return nil, n.eachTable(r, func(_ *schema.Table, st *storage.Table) error { return st.ClearSnapshot(tag) })
}
