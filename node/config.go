package node

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/gossip"
	"github.com/sibyldb/sibyl/hints"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/storage"
	"github.com/sibyldb/sibyl/streaming"
	"go.yaml.in/yaml/v3"
)

// Config is a node's configuration. The zero value of a field means its
// default: zero configuration runs a single node on 127.0.0.1:9042 with
// data in ./data. In sibyl.yaml the keys are cassandra.yaml's where it
// has one (docs/configuration.md lists them all).
type Config struct {
	// DataDir is the directory everything goes under unless placed
	// elsewhere: data/ for SSTables, commitlog/ for the commit log.
	// Default "data". (--data-dir; no cassandra.yaml key.)
	DataDir string `yaml:"-"`
	// DataFileDirectories is data_file_directories: where SSTables go.
	// One directory; default DataDir/data.
	DataFileDirectories []string `yaml:"data_file_directories"`
	// CommitLogDirectory is commitlog_directory; default DataDir/commitlog.
	CommitLogDirectory string `yaml:"commitlog_directory"`
	// MetadataDirectory is metadata_directory (as Cassandra 5.1 names its
	// cluster metadata's): the metadata log and its snapshots; default
	// DataDir/metadata.
	MetadataDirectory string `yaml:"metadata_directory"`
	// CommitLogIgnoreReplayErrors sets aside, in a quarantine file in the
	// commit log directory, each record replay cannot decode, where start-up
	// would otherwise stop at it (--commitlog-ignore-replay-errors; Cassandra's
	// cassandra.commitlog.ignorereplayerrors system property, so no key in
	// sibyl.yaml).
	CommitLogIgnoreReplayErrors bool `yaml:"-"`
	// CommitFailurePolicy is commit_failure_policy: what the node does
	// when a write or fsync of the commit log fails (after which the log
	// refuses every write until a restart): stop (default: stop the native
	// transport and gossip, as Cassandra does; the admin API stays),
	// stop_commit (keep serving reads) or die (stop and exit).
	CommitFailurePolicy string `yaml:"commit_failure_policy"`
	// DiskFailurePolicy is disk_failure_policy: what the node does when a
	// data file cannot be written or read, or is corrupt: stop (default:
	// stop the transports on a file system error; corruption is logged and
	// the request fails), stop_paranoid (stop on corruption too), die (stop
	// and exit on either) or ignore (log, and let the requests fail). A full
	// disk is not a disk failure: flushes and compactions are tried again
	// and resume once there is space.
	DiskFailurePolicy string `yaml:"disk_failure_policy"`
	// Exit ends the process for the die policies; default os.Exit. Tests
	// replace it.
	Exit func(code int) `yaml:"-"`
	// CommitLogSync is commitlog_sync: periodic (default), group or batch.
	CommitLogSync string `yaml:"commitlog_sync"`
	// CommitLogSyncPeriod is commitlog_sync_period ("10000ms", "10s"): the
	// fsync interval of periodic mode; default 10s.
	CommitLogSyncPeriod Duration `yaml:"commitlog_sync_period"`
	// WriteRequestTimeout, ReadRequestTimeout, RangeRequestTimeout and
	// TruncateRequestTimeout are cassandra.yaml's write_request_timeout,
	// read_request_timeout, range_request_timeout and
	// truncate_request_timeout: how long a coordinator waits for replicas
	// before a request times out; defaults 2s, 5s, 10s and 60s, Cassandra's.
	WriteRequestTimeout    Duration `yaml:"write_request_timeout"`
	ReadRequestTimeout     Duration `yaml:"read_request_timeout"`
	RangeRequestTimeout    Duration `yaml:"range_request_timeout"`
	TruncateRequestTimeout Duration `yaml:"truncate_request_timeout"`
	// CASContentionTimeout is cas_contention_timeout: how long a
	// lightweight transaction's Paxos rounds (retries of contended ones
	// included) may take before it times out; default 1s, Cassandra's.
	CASContentionTimeout Duration `yaml:"cas_contention_timeout"`
	// CounterWriteRequestTimeout is counter_write_request_timeout: how
	// long a counter write waits for its leader; default 5s, Cassandra's.
	CounterWriteRequestTimeout Duration `yaml:"counter_write_request_timeout"`
	// PartitionedNodePolicy is partitioned_node_policy: what the node does
	// with its clients' requests while it cannot reach a majority of the
	// cluster metadata voters (for PartitionedNodeTimeout): serve (default:
	// answer from what it has, as Cassandra does) or refuse (Unavailable,
	// for every table but the node's own system tables, until it rejoins).
	// Schema changes are refused either way.
	PartitionedNodePolicy string `yaml:"partitioned_node_policy"`
	// PartitionedNodeTimeout is partitioned_node_timeout: how long the node
	// goes without hearing from a metadata leader before it counts itself
	// partitioned; default 5s.
	PartitionedNodeTimeout Duration `yaml:"partitioned_node_timeout"`
	// ClusterName is cluster_name; default "Test Cluster", as Cassandra's.
	ClusterName string `yaml:"cluster_name"`
	// ListenAddress is listen_address, the node's address; default
	// 127.0.0.1.
	ListenAddress string `yaml:"listen_address"`
	// RPCAddress is rpc_address, where clients connect (the native
	// protocol listens there); default the listen address.
	RPCAddress string `yaml:"rpc_address"`
	// NativePort is native_transport_port; default 9042.
	NativePort int `yaml:"native_transport_port"`
	// AdminPort is where the admin API (nodetool's) listens, on the
	// listen address; default 7199, Cassandra's JMX port. (admin_port;
	// Cassandra sets its JMX port outside cassandra.yaml.)
	AdminPort int `yaml:"admin_port"`
	// NativeMaxFrameSize is native_transport_max_frame_size ("16MiB"):
	// the largest request accepted; default 16 MiB.
	NativeMaxFrameSize Size `yaml:"native_transport_max_frame_size"`
	// NativeMaxRequestDataInFlight is
	// native_transport_max_request_data_in_flight: the bytes of client
	// request bodies being answered (past a v5 connection's own MiB) that
	// the node takes before a connection is no longer read after its
	// request or, for a client that asked at STARTUP (THROW_ON_OVERLOAD),
	// a request is refused as Overloaded; default a tenth of the Go memory limit
	// (GOMEMLIMIT), as Cassandra's is of its heap, or 256 MiB without
	// one. NativeMaxRequestDataInFlightPerIP
	// (native_transport_max_request_data_in_flight_per_ip) is the same
	// from one client address; default a fortieth of the limit, or 64 MiB.
	NativeMaxRequestDataInFlight      Size `yaml:"native_transport_max_request_data_in_flight"`
	NativeMaxRequestDataInFlightPerIP Size `yaml:"native_transport_max_request_data_in_flight_per_ip"`
	// NativeRateLimitingEnabled (native_transport_rate_limiting_enabled,
	// default false) bounds the client requests started each second to
	// NativeMaxRequestsPerSecond (native_transport_max_requests_per_second,
	// default 1,000,000), with the same wait or refusal.
	NativeRateLimitingEnabled  bool `yaml:"native_transport_rate_limiting_enabled"`
	NativeMaxRequestsPerSecond int  `yaml:"native_transport_max_requests_per_second"`
	// FileCacheSize is file_cache_size: the memory that caches SSTable
	// blocks read; default the smaller of 512 MiB and a quarter of the Go
	// memory limit (GOMEMLIMIT), as Cassandra's is of its heap.
	FileCacheSize Size `yaml:"file_cache_size"`
	// MemtableHeapSpace is memtable_heap_space: the memory all memtables
	// together may hold before the largest is flushed (past a third of it)
	// and writes wait for flushes (all of it); default a quarter of the Go
	// memory limit, or 1 GiB without one.
	MemtableHeapSpace Size `yaml:"memtable_heap_space"`
	// TombstoneWarnThreshold is tombstone_warn_threshold: a read that
	// meets more tombstones warns the client (when this node read it) and
	// the log; default 1000. TombstoneFailureThreshold is
	// tombstone_failure_threshold: a read that meets more is given up, a
	// ReadFailure (READ_TOO_MANY_TOMBSTONES); default 100000. Zero takes
	// the default.
	TombstoneWarnThreshold    int `yaml:"tombstone_warn_threshold"`
	TombstoneFailureThreshold int `yaml:"tombstone_failure_threshold"`
	// CompactionLargePartitionWarningThreshold is
	// compaction_large_partition_warning_threshold: a partition a flush or
	// compaction writes larger than this is logged; default 100 MiB.
	CompactionLargePartitionWarningThreshold Size `yaml:"compaction_large_partition_warning_threshold"`
	// NumTokens is num_tokens, the node's tokens (vnodes), chosen at its
	// first start; default 16, as Cassandra 4's.
	NumTokens int `yaml:"num_tokens"`
	// Partitioner is partitioner: Murmur3Partitioner (default) or
	// RandomPartitioner, by class name or short name. A node keeps the
	// partitioner its data was written with.
	Partitioner string `yaml:"partitioner"`
	// DataCenter and Rack place the node (Cassandra reads them from the
	// snitch's properties file); default datacenter1 and rack1.
	DataCenter string `yaml:"data_center"`
	Rack       string `yaml:"rack"`
	// Seeds are the contact points through which the node joins its
	// cluster, "address" or "address:port" (on the gossip port). In
	// sibyl.yaml they are seed_provider's seeds parameter, as in
	// cassandra.yaml. A node with no seeds runs alone and opens no gossip
	// port. (--seeds)
	Seeds        []string       `yaml:"-"`
	SeedProvider []SeedProvider `yaml:"seed_provider"`
	// GossipPort is where gossip (memberlist, TCP and UDP) listens, on the
	// listen address; default 7001. (gossip_port; Cassandra gossips on its
	// storage_port.)
	GossipPort int `yaml:"gossip_port"`
	// StoragePort is storage_port: internode messaging, on the listen
	// address, for a node with seeds; default 7000.
	StoragePort int `yaml:"storage_port"`
	// Logger receives the node's events; default none.
	Logger *zerolog.Logger `yaml:"-"`
	// Transport carries internode messages; default TCP. Tests wrap it to
	// drop, delay or cut messages.
	Transport messaging.Transport `yaml:"-"`
	// GossipTransport carries gossip; default memberlist's UDP and TCP on
	// gossip_port. The simulation carries it over its own network.
	GossipTransport gossip.Transport `yaml:"-"`
	// FS holds every file of the node (data, commit log, metadata log,
	// hints); default the operating system's. The simulation gives each
	// node an in-memory one.
	FS vfs.FS `yaml:"-"`
	// HintsDirectory is hints_directory: where a node of a cluster keeps
	// hints; default DataDir/hints.
	HintsDirectory string `yaml:"hints_directory"`
	// AutoBootstrap is auto_bootstrap: whether a new node that is not a
	// seed, joining a ring that has nodes, streams the data of the ranges
	// it takes before it serves them (default true); false takes them at
	// once, empty, for nodetool rebuild to fill.
	AutoBootstrap *bool `yaml:"auto_bootstrap"`
	// ReplaceAddressFirstBoot is Cassandra's replace_address_first_boot:
	// the address of a dead node this new node replaces, taking its
	// tokens and streaming its ranges from the other replicas; ignored
	// once the node has joined (a restart).
	ReplaceAddressFirstBoot string `yaml:"replace_address_first_boot"`
	// HintedHandoffEnabled is hinted_handoff_enabled: whether writes a
	// replica missed are kept as hints for it; default true.
	HintedHandoffEnabled *bool `yaml:"hinted_handoff_enabled"`
	// MaxHintWindow is max_hint_window: a replica down for longer (or
	// whose oldest hint is older) gets no more hints; default 3h.
	MaxHintWindow Duration `yaml:"max_hint_window"`
	// HintedHandoffThrottle is hinted_handoff_throttle ("1024KiB"): the
	// bytes a second one delivery sends, divided by the other nodes (which
	// may be delivering to the same replica); 0 for no throttle; default
	// 1024KiB, Cassandra's.
	HintedHandoffThrottle *Size `yaml:"hinted_handoff_throttle"`
	// MaxHintsDeliveryThreads is max_hints_delivery_threads: how many
	// replicas get their hints at once; default 2.
	MaxHintsDeliveryThreads int `yaml:"max_hints_delivery_threads"`
	// MaxHintsFileSize is max_hints_file_size: the size at which a hints
	// file is closed and another begun; default 128MiB.
	MaxHintsFileSize Size `yaml:"max_hints_file_size"`
	// MaxHintsSizePerHost is max_hints_size_per_host: the space one
	// replica's hints may take, past which its hints are refused; 0 for no
	// bound. Default 1GiB, where Cassandra's is 0: hints that fill a disk
	// take the node down with the replica.
	MaxHintsSizePerHost *Size `yaml:"max_hints_size_per_host"`
	// StreamThroughputOutbound is stream_throughput_outbound ("24MiB/s"):
	// the bytes a second this node streams to others as entries, over all
	// sessions; 0 for no bound; default 24MiB/s, Cassandra's.
	StreamThroughputOutbound *Rate `yaml:"stream_throughput_outbound"`
	// EntireSSTableStreamThroughputOutbound is
	// entire_sstable_stream_throughput_outbound: the same for the SSTables
	// sent whole, which cost the source no decoding; default 24MiB/s.
	EntireSSTableStreamThroughputOutbound *Rate `yaml:"entire_sstable_stream_throughput_outbound"`
	// AutoRepair is auto_repair: repair the node runs by itself.
	AutoRepair AutoRepair `yaml:"auto_repair"`
	// MetadataSnapshotEntries is how many entries the metadata log applies
	// between snapshots; default the log's (1,000). Tests lower it.
	MetadataSnapshotEntries uint64 `yaml:"-"`
	// Authenticator is authenticator: AllowAllAuthenticator (default:
	// every client gets in, anonymous) or PasswordAuthenticator (clients
	// log in as a role of system_auth, with its password), by short or
	// full class name. (--authenticator)
	Authenticator string `yaml:"authenticator"`
	// Authorizer is authorizer: AllowAllAuthorizer (default) or
	// CassandraAuthorizer (each statement needs the permissions GRANT
	// gave the role), which needs PasswordAuthenticator. (--authorizer)
	Authorizer string `yaml:"authorizer"`
	// RoleManager is role_manager: CassandraRoleManager, the only one.
	RoleManager string `yaml:"role_manager"`
	// CredentialsValidity is credentials_validity: how long a login
	// checked against a role's password hash is taken again without
	// bcrypt (a driver opens several connections at once); default 2s, 0
	// checks every login. A changed password ends it at once.
	CredentialsValidity *Duration `yaml:"credentials_validity"`
	// CredentialsCacheMaxEntries is credentials_cache_max_entries; default
	// 1000.
	CredentialsCacheMaxEntries int `yaml:"credentials_cache_max_entries"`
	// RolesValidity and PermissionsValidity are roles_validity and
	// permissions_validity, taken so that a cassandra.yaml's settings
	// load; they change nothing: every node holds system_auth, and a
	// role or permission change holds on a node as soon as it applies
	// there, with no cache to wait for.
	RolesValidity       Duration `yaml:"roles_validity"`
	PermissionsValidity Duration `yaml:"permissions_validity"`
	// ClientEncryptionOptions is client_encryption_options: TLS on the
	// native port (docs/security.md).
	ClientEncryptionOptions tlsconf.Options `yaml:"client_encryption_options"`
	// ServerEncryptionOptions is server_encryption_options: TLS between
	// nodes (internode messaging), as Cassandra's.
	ServerEncryptionOptions ServerEncryptionOptions `yaml:"server_encryption_options"`
	// GossipEncryptionKeys is gossip_encryption_keys: base64 AES keys
	// (16, 24 or 32 bytes) that seal every gossip packet and stream, so
	// that gossip from outside the cluster is dropped (and counted). The
	// first encrypts; any opens. To rotate: add the new key second on
	// every node, then put it first on every node, then remove the old
	// one, restarting a node at a time. Every node needs the same keys.
	GossipEncryptionKeys []string `yaml:"gossip_encryption_keys"`
	// AdminAuthentication is admin_authentication: who may use the admin
	// API (nodetool's): none (default: whoever reaches admin_port on the
	// listen address, as a local JMX), roles (HTTP basic credentials of a
	// superuser role of system_auth that may log in) or password_file (the
	// users of AdminPasswordFile).
	AdminAuthentication string `yaml:"admin_authentication"`
	// AdminPasswordFile is admin_password_file: "user password" lines, as
	// JMX's jmxremote.password, readable by its owner alone.
	AdminPasswordFile string `yaml:"admin_password_file"`
	// AdminEncryptionOptions is admin_encryption_options: TLS on the
	// admin API, with client_encryption_options' keys.
	AdminEncryptionOptions tlsconf.Options `yaml:"admin_encryption_options"`
	// SuperuserSetupDelay is how long after its start a node of a cluster
	// with no roles waits before it creates the default superuser
	// (cassandra/cassandra): default 10s, as Cassandra's
	// cassandra.superuser_setup_delay_ms system property.
	SuperuserSetupDelay *Duration `yaml:"superuser_setup_delay"`
	// SlowQueryLogTimeout is slow_query_log_timeout: a request that takes
	// longer is logged, with its statement, its time and its trace id when
	// it was traced; default 500ms, Cassandra's; 0 logs none.
	SlowQueryLogTimeout *Duration `yaml:"slow_query_log_timeout"`
}

// AutoRepair is the auto_repair block, a smaller form of Cassandra
// 5.1's:
//
//	auto_repair:
//	  enabled: true
//	  min_repair_interval: 24h
//	  repair_check_interval: 5m
//
// A node repairs the ranges it is the first replica of (so that each
// range is repaired by one node), one range of one table at a time: the
// one repaired longest ago, once its last repair (system.repair_history)
// is min_repair_interval old, never-repaired ones first. It goes straight
// on to the next range due, and looks again every repair_check_interval
// when none is, or after a repair failed (a replica down).
type AutoRepair struct {
	Enabled bool `yaml:"enabled"`
	// MinRepairInterval is how often each range is repaired; default 24h.
	MinRepairInterval Duration `yaml:"min_repair_interval"`
	// RepairCheckInterval is how long the node waits, when no range is
	// due or a repair failed, before it looks again; default 5m.
	RepairCheckInterval Duration `yaml:"repair_check_interval"`
}

// ServerEncryptionOptions is server_encryption_options: the keys of
// client_encryption_options (the keystore is also the certificate a node
// shows the peers it dials; the truststore checks theirs) and
// internode_encryption: none (default), all, dc (between data centres
// only) or rack (between racks only). With dc or rack the storage port
// takes plaintext too, from the peers that need no TLS.
type ServerEncryptionOptions struct {
	tlsconf.Options     `yaml:",inline"`
	InternodeEncryption string `yaml:"internode_encryption"`
	// RequireEndpointVerification checks that a peer's certificate names
	// the address dialled; the authority is always checked.
	RequireEndpointVerification bool `yaml:"require_endpoint_verification"`
}

// The internode_encryption values.
const (
	InternodeNone = "none"
	InternodeAll  = "all"
	InternodeDC   = "dc"
	InternodeRack = "rack"
)

// EnsureDefaults fills unset fields: the TLS settings' defaults, no
// internode encryption.
func (o *ServerEncryptionOptions) EnsureDefaults() {
	o.Options.EnsureDefaults()
	if o.InternodeEncryption == "" {
		o.InternodeEncryption = InternodeNone
	}
}

// Validate reports what is wrong with the options, each naming its
// setting.
func (o *ServerEncryptionOptions) Validate() error {
	switch o.InternodeEncryption {
	case "", InternodeNone, InternodeAll, InternodeDC, InternodeRack:
	default:
		return fmt.Errorf("server_encryption_options.internode_encryption: %q is not one of none, all, dc, rack", o.InternodeEncryption)
	}
	opts, ok := o.tls()
	if !ok {
		return nil
	}
	var errs []error
	if err := opts.Validate("server_encryption_options"); err != nil {
		errs = append(errs, err)
	}
	if opts.Truststore == "" {
		errs = append(errs, errors.New("server_encryption_options.truststore: internode TLS needs the authority of the nodes' certificates"))
	}
	return errors.Join(errs...)
}

// tls is the TLS of the storage port, with enabled and optional set as
// internode_encryption says; ok is false for none.
func (o ServerEncryptionOptions) tls() (opts tlsconf.Options, ok bool) {
	opts = o.Options
	switch o.InternodeEncryption {
	case "", InternodeNone:
		return opts, false
	case InternodeDC, InternodeRack:
		opts.Optional = true
	}
	opts.Enabled = true
	return opts, true
}

// The partitioned_node_policy values.
const (
	PartitionedServe  = "serve"
	PartitionedRefuse = "refuse"
)

// SeedProvider is cassandra.yaml's seed_provider entry:
//
//	seed_provider:
//	  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
//	    parameters:
//	      - seeds: "127.0.0.1,127.0.0.2"
type SeedProvider struct {
	ClassName  string              `yaml:"class_name"`
	Parameters []map[string]string `yaml:"parameters"`
}

// LoadConfigFile reads a sibyl.yaml. Unknown keys are refused, with the
// key and its line, so that a misspelt setting never goes unnoticed.
func LoadConfigFile(path string) (Config, error) {
	var cfg Config
	raw, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	// An empty file (io.EOF) is zero configuration.
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// EnsureDefaults fills unset fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	if len(c.DataFileDirectories) == 0 {
		c.DataFileDirectories = []string{filepath.Join(c.DataDir, "data")}
	}
	if c.CommitLogDirectory == "" {
		c.CommitLogDirectory = filepath.Join(c.DataDir, "commitlog")
	}
	if c.MetadataDirectory == "" {
		c.MetadataDirectory = filepath.Join(c.DataDir, "metadata")
	}
	if c.HintsDirectory == "" {
		c.HintsDirectory = filepath.Join(c.DataDir, "hints")
	}
	if c.HintedHandoffEnabled == nil {
		c.HintedHandoffEnabled = new(true)
	}
	c.Authenticator = shortAuthClass(c.Authenticator, auth.AllowAllAuthenticator)
	c.Authorizer = shortAuthClass(c.Authorizer, auth.AllowAllAuthorizer)
	c.RoleManager = shortAuthClass(c.RoleManager, auth.CassandraRoleManager)
	if c.CredentialsValidity == nil {
		c.CredentialsValidity = new(Duration(2 * time.Second))
	}
	if c.CredentialsCacheMaxEntries == 0 {
		c.CredentialsCacheMaxEntries = 1000
	}
	if c.SlowQueryLogTimeout == nil {
		c.SlowQueryLogTimeout = new(Duration(500 * time.Millisecond))
	}
	if c.SuperuserSetupDelay == nil {
		c.SuperuserSetupDelay = new(Duration(10 * time.Second))
	}
	c.ClientEncryptionOptions.EnsureDefaults()
	c.AdminEncryptionOptions.EnsureDefaults()
	c.ServerEncryptionOptions.EnsureDefaults()
	if c.AutoBootstrap == nil {
		c.AutoBootstrap = new(true)
	}
	if c.MaxHintWindow == 0 {
		c.MaxHintWindow = Duration(coordinator.DefaultHintedHandoff.MaxWindow)
	}
	if c.HintedHandoffThrottle == nil {
		c.HintedHandoffThrottle = new(Size(1024 << 10))
	}
	if c.MaxHintsDeliveryThreads == 0 {
		c.MaxHintsDeliveryThreads = coordinator.DefaultHintedHandoff.DeliveryThreads
	}
	if c.MaxHintsFileSize == 0 {
		c.MaxHintsFileSize = hints.DefaultMaxFileSize
	}
	if c.MaxHintsSizePerHost == nil {
		c.MaxHintsSizePerHost = new(Size(1 << 30))
	}
	if c.StreamThroughputOutbound == nil {
		c.StreamThroughputOutbound = new(Rate(streaming.DefaultThroughput))
	}
	if c.EntireSSTableStreamThroughputOutbound == nil {
		c.EntireSSTableStreamThroughputOutbound = new(Rate(streaming.DefaultThroughput))
	}
	if c.CommitLogSync == "" {
		c.CommitLogSync = "periodic"
	}
	if c.CommitFailurePolicy == "" {
		c.CommitFailurePolicy = "stop"
	}
	if c.DiskFailurePolicy == "" {
		c.DiskFailurePolicy = "stop"
	}
	if c.Exit == nil {
		c.Exit = os.Exit
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.CommitLogSyncPeriod == 0 {
		c.CommitLogSyncPeriod = Duration(10 * time.Second)
	}
	if c.AutoRepair.MinRepairInterval == 0 {
		c.AutoRepair.MinRepairInterval = Duration(24 * time.Hour)
	}
	if c.AutoRepair.RepairCheckInterval == 0 {
		c.AutoRepair.RepairCheckInterval = Duration(5 * time.Minute)
	}
	for _, t := range []struct {
		d   *Duration
		def time.Duration
	}{{&c.WriteRequestTimeout, coordinator.DefaultTimeouts.Write}, {&c.ReadRequestTimeout, coordinator.DefaultTimeouts.Read},
		{&c.RangeRequestTimeout, coordinator.DefaultTimeouts.Range}, {&c.TruncateRequestTimeout, coordinator.DefaultTimeouts.Truncate},
		{&c.CASContentionTimeout, coordinator.DefaultTimeouts.CAS}, {&c.CounterWriteRequestTimeout, coordinator.DefaultTimeouts.Counter}} {
		if *t.d == 0 {
			*t.d = Duration(t.def)
		}
	}
	if c.ClusterName == "" {
		c.ClusterName = "Test Cluster"
	}
	if c.PartitionedNodePolicy == "" {
		c.PartitionedNodePolicy = PartitionedServe
	}
	if c.PartitionedNodeTimeout == 0 {
		c.PartitionedNodeTimeout = Duration(5 * time.Second)
	}
	if c.ListenAddress == "" {
		c.ListenAddress = "127.0.0.1"
	}
	if c.RPCAddress == "" {
		c.RPCAddress = c.ListenAddress
	}
	if c.NativePort == 0 {
		c.NativePort = 9042
	}
	if c.AdminPort == 0 {
		c.AdminPort = 7199
	}
	if c.NativeMaxFrameSize == 0 {
		c.NativeMaxFrameSize = 16 << 20
	}
	inFlight, inFlightPerIP := Size(256<<20), Size(64<<20)
	if limit, ok := storage.MemoryLimit(); ok {
		inFlight, inFlightPerIP = Size(limit/10), Size(limit/40)
	}
	if c.NativeMaxRequestDataInFlight == 0 {
		c.NativeMaxRequestDataInFlight = inFlight
	}
	if c.NativeMaxRequestDataInFlightPerIP == 0 {
		c.NativeMaxRequestDataInFlightPerIP = inFlightPerIP
	}
	if c.NativeMaxRequestsPerSecond == 0 {
		c.NativeMaxRequestsPerSecond = 1_000_000
	}
	if c.NumTokens == 0 {
		c.NumTokens = 16
	}
	if c.Partitioner == "" {
		c.Partitioner = partitioner.Murmur3Name
	}
	if c.DataCenter == "" {
		c.DataCenter = "datacenter1"
	}
	if c.Rack == "" {
		c.Rack = "rack1"
	}
	if c.Logger == nil {
		nop := zerolog.Nop()
		c.Logger = &nop
	}
	if len(c.Seeds) == 0 {
		c.Seeds = c.providedSeeds()
	}
	if c.GossipPort == 0 {
		c.GossipPort = 7001
	}
	if c.StoragePort == 0 {
		c.StoragePort = 7000
	}
}

// providedSeeds are seed_provider's seeds, split at commas.
func (c *Config) providedSeeds() []string {
	var out []string
	for _, p := range c.SeedProvider {
		for _, params := range p.Parameters {
			for _, s := range strings.Split(params["seeds"], ",") {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Validate reports every problem with the configuration at once, naming the
// setting.
func (c *Config) Validate() error {
	var errs []error
	if c.CommitLogSync != "" {
		if _, err := storage.ParseCommitLogSync(c.CommitLogSync); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.CommitFailurePolicy {
	case "", "stop", "stop_commit", "die":
	case "ignore":
		errs = append(errs, errors.New("commit_failure_policy: ignore is not supported: after a failed write or fsync what reached the commit log is unknown, so it cannot take more writes safely; use stop_commit to keep serving reads"))
	default:
		errs = append(errs, fmt.Errorf("commit_failure_policy: %q is not one of stop, stop_commit, die", c.CommitFailurePolicy))
	}
	switch c.PartitionedNodePolicy {
	case "", PartitionedServe, PartitionedRefuse:
	default:
		errs = append(errs, fmt.Errorf("partitioned_node_policy: %q is not one of serve, refuse", c.PartitionedNodePolicy))
	}
	switch c.DiskFailurePolicy {
	case "", "stop", "stop_paranoid", "die", "ignore":
	case "best_effort":
		errs = append(errs, errors.New("disk_failure_policy: best_effort stops using a failed one of several data directories, and a node has one (data_file_directories); use stop or ignore"))
	default:
		errs = append(errs, fmt.Errorf("disk_failure_policy: %q is not one of stop, stop_paranoid, die, ignore", c.DiskFailurePolicy))
	}
	for _, d := range []struct {
		key   string
		value Duration
	}{{"commitlog_sync_period", c.CommitLogSyncPeriod}, {"write_request_timeout", c.WriteRequestTimeout},
		{"read_request_timeout", c.ReadRequestTimeout}, {"range_request_timeout", c.RangeRequestTimeout},
		{"truncate_request_timeout", c.TruncateRequestTimeout}, {"cas_contention_timeout", c.CASContentionTimeout},
		{"counter_write_request_timeout", c.CounterWriteRequestTimeout},
		{"partitioned_node_timeout", c.PartitionedNodeTimeout}, {"roles_validity", c.RolesValidity},
		{"permissions_validity", c.PermissionsValidity},
		{"max_hint_window", c.MaxHintWindow}, {"auto_repair.min_repair_interval", c.AutoRepair.MinRepairInterval},
		{"auto_repair.repair_check_interval", c.AutoRepair.RepairCheckInterval}} {
		if d.value < 0 {
			errs = append(errs, fmt.Errorf("%s: %s is negative", d.key, time.Duration(d.value)))
		}
	}
	for _, a := range []struct{ key, value string }{{"listen_address", c.ListenAddress}, {"rpc_address", c.RPCAddress},
		{"replace_address_first_boot", c.ReplaceAddressFirstBoot}} {
		if a.value != "" && net.ParseIP(a.value) == nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an IP address", a.key, a.value))
		}
	}
	errs = append(errs, c.validateAuth()...)
	if err := c.ClientEncryptionOptions.Validate("client_encryption_options"); err != nil {
		errs = append(errs, err)
	}
	if err := c.AdminEncryptionOptions.Validate("admin_encryption_options"); err != nil {
		errs = append(errs, err)
	}
	if err := c.ServerEncryptionOptions.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.gossipKeys(); err != nil {
		errs = append(errs, err)
	}
	switch c.AdminAuthentication {
	case AdminAuthRoles:
		if shortAuthClass(c.Authenticator, auth.AllowAllAuthenticator) != auth.PasswordAuthenticator {
			errs = append(errs, errors.New("admin_authentication: roles needs authenticator: PasswordAuthenticator (with AllowAllAuthenticator no role has a password to log in with)"))
		}
	case "", AdminAuthNone:
	case AdminAuthPasswordFile:
		if _, err := ReadAdminPasswordFile(c.AdminPasswordFile); err != nil {
			errs = append(errs, fmt.Errorf("admin_password_file: %w", err))
		}
	default:
		errs = append(errs, fmt.Errorf("admin_authentication: %q is not one of none, roles, password_file", c.AdminAuthentication))
	}
	if c.NativePort < 0 || c.NativePort > 65535 {
		errs = append(errs, fmt.Errorf("native_transport_port: %d is not a port", c.NativePort))
	}
	if c.AdminPort < 0 || c.AdminPort > 65535 {
		errs = append(errs, fmt.Errorf("admin_port: %d is not a port", c.AdminPort))
	}
	if c.GossipPort < 0 || c.GossipPort > 65535 {
		errs = append(errs, fmt.Errorf("gossip_port: %d is not a port", c.GossipPort))
	}
	if c.StoragePort < 0 || c.StoragePort > 65535 {
		errs = append(errs, fmt.Errorf("storage_port: %d is not a port", c.StoragePort))
	}
	for _, p := range c.SeedProvider {
		if p.ClassName != "" && p.ClassName != "org.apache.cassandra.locator.SimpleSeedProvider" && p.ClassName != "SimpleSeedProvider" {
			errs = append(errs, fmt.Errorf("seed_provider: class_name %q is not supported; use org.apache.cassandra.locator.SimpleSeedProvider", p.ClassName))
		}
	}
	for _, seed := range append(slices.Clone(c.Seeds), c.providedSeeds()...) {
		host, port, err := net.SplitHostPort(seed)
		if err != nil {
			host = seed
		} else if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("seeds: %q has no valid port", seed))
			continue
		}
		if net.ParseIP(host) == nil {
			errs = append(errs, fmt.Errorf("seeds: %q is not an IP address", seed))
		}
	}
	if c.NativeMaxFrameSize < 0 {
		errs = append(errs, fmt.Errorf("native_transport_max_frame_size: %d is negative", c.NativeMaxFrameSize))
	}
	if c.NativeMaxRequestDataInFlight < 0 {
		errs = append(errs, fmt.Errorf("native_transport_max_request_data_in_flight: %d is negative", c.NativeMaxRequestDataInFlight))
	}
	if c.NativeMaxRequestDataInFlightPerIP < 0 {
		errs = append(errs, fmt.Errorf("native_transport_max_request_data_in_flight_per_ip: %d is negative", c.NativeMaxRequestDataInFlightPerIP))
	}
	if c.NativeMaxRequestsPerSecond < 0 {
		errs = append(errs, fmt.Errorf("native_transport_max_requests_per_second: %d is negative", c.NativeMaxRequestsPerSecond))
	}
	if c.FileCacheSize < 0 {
		errs = append(errs, fmt.Errorf("file_cache_size: %d is negative", c.FileCacheSize))
	}
	if c.CompactionLargePartitionWarningThreshold < 0 {
		errs = append(errs, fmt.Errorf("compaction_large_partition_warning_threshold: %d is negative", c.CompactionLargePartitionWarningThreshold))
	}
	if c.TombstoneWarnThreshold < 0 {
		errs = append(errs, fmt.Errorf("tombstone_warn_threshold: %d is negative", c.TombstoneWarnThreshold))
	}
	if c.TombstoneFailureThreshold < 0 {
		errs = append(errs, fmt.Errorf("tombstone_failure_threshold: %d is negative", c.TombstoneFailureThreshold))
	}
	if c.MemtableHeapSpace < 0 {
		errs = append(errs, fmt.Errorf("memtable_heap_space: %d is negative", c.MemtableHeapSpace))
	}
	if len(c.DataFileDirectories) > 1 {
		errs = append(errs, fmt.Errorf("data_file_directories: %d directories given; one is supported", len(c.DataFileDirectories)))
	}
	if c.MaxHintsDeliveryThreads < 0 {
		errs = append(errs, fmt.Errorf("max_hints_delivery_threads: %d is negative", c.MaxHintsDeliveryThreads))
	}
	if c.NumTokens < 0 || c.NumTokens > 1536 {
		errs = append(errs, fmt.Errorf("num_tokens: %d is not between 1 and 1536", c.NumTokens))
	}
	if c.Partitioner != "" {
		if _, err := partitioner.ByName(c.Partitioner); err != nil {
			errs = append(errs, fmt.Errorf("partitioner: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Duration is a cassandra.yaml duration: a number with a unit (ms, s, m,
// h, d; Cassandra 4.1's "10000ms"), or a bare number of milliseconds.
type Duration time.Duration

// UnmarshalYAML reads the forms Cassandra accepts.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		unit   time.Duration
	}{{"ms", time.Millisecond}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"ns", time.Nanosecond},
		{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil {
				break
			}
			return time.Duration(n) * u.unit, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	return 0, fmt.Errorf("%q is not a duration (a number with ms, s, m, h or d)", s)
}

// Rate is a cassandra.yaml data rate: a data size a second ("24MiB/s",
// "512KiB/s", "100B/s").
type Rate int64

// UnmarshalYAML reads the forms Cassandra accepts.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	size, ok := strings.CutSuffix(strings.TrimSpace(n.Value), "/s")
	v, err := parseSize(size)
	if !ok || err != nil {
		return fmt.Errorf("line %d: %q is not a data rate (a number with B/s, KiB/s, MiB/s or GiB/s)", n.Line, n.Value)
	}
	*r = Rate(v)
	return nil
}

// Size is a cassandra.yaml data size: a number with a unit (B, KiB, MiB,
// GiB), or a bare number of bytes.
type Size int64

// UnmarshalYAML reads the forms Cassandra accepts.
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*z = Size(v)
	return nil
}

func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 {
				break
			}
			return n << u.shift, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	return 0, fmt.Errorf("%q is not a data size (a number with B, KiB, MiB or GiB)", s)
}

// shortAuthClass is an auth class name without Cassandra's package, or
// the default for none.
func shortAuthClass(name, byDefault string) string {
	if name == "" {
		return byDefault
	}
	return strings.TrimPrefix(name, "org.apache.cassandra.auth.")
}

// validateAuth checks the authentication and authorization settings as
// Cassandra does, with its messages where it has them.
func (c *Config) validateAuth() []error {
	var errs []error
	authn := shortAuthClass(c.Authenticator, auth.AllowAllAuthenticator)
	authz := shortAuthClass(c.Authorizer, auth.AllowAllAuthorizer)
	roles := shortAuthClass(c.RoleManager, auth.CassandraRoleManager)
	switch authn {
	case auth.AllowAllAuthenticator, auth.PasswordAuthenticator:
	default:
		errs = append(errs, fmt.Errorf("authenticator: %q is not one of AllowAllAuthenticator, PasswordAuthenticator", c.Authenticator))
	}
	switch authz {
	case auth.AllowAllAuthorizer, auth.CassandraAuthorizer:
	default:
		errs = append(errs, fmt.Errorf("authorizer: %q is not one of AllowAllAuthorizer, CassandraAuthorizer", c.Authorizer))
	}
	if roles != auth.CassandraRoleManager {
		errs = append(errs, fmt.Errorf("role_manager: %q is not CassandraRoleManager, the only role manager", c.RoleManager))
	}
	if authz == auth.CassandraAuthorizer && authn == auth.AllowAllAuthenticator {
		errs = append(errs, fmt.Errorf("authorizer: %s can't be used with %s: permissions need clients that log in", authn, authz))
	}
	if c.CredentialsValidity != nil && *c.CredentialsValidity < 0 {
		errs = append(errs, fmt.Errorf("credentials_validity: %s is negative", time.Duration(*c.CredentialsValidity)))
	}
	if c.SlowQueryLogTimeout != nil && *c.SlowQueryLogTimeout < 0 {
		errs = append(errs, fmt.Errorf("slow_query_log_timeout: %s is negative", time.Duration(*c.SlowQueryLogTimeout)))
	}
	if c.SuperuserSetupDelay != nil && *c.SuperuserSetupDelay < 0 {
		errs = append(errs, fmt.Errorf("superuser_setup_delay: %s is negative", time.Duration(*c.SuperuserSetupDelay)))
	}
	if c.CredentialsCacheMaxEntries < 0 {
		errs = append(errs, fmt.Errorf("credentials_cache_max_entries: %d is negative", c.CredentialsCacheMaxEntries))
	}
	return errs
}

// gossipKeys are gossip_encryption_keys decoded.
func (c *Config) gossipKeys() ([][]byte, error) {
	var out [][]byte
	for i, k := range c.GossipEncryptionKeys {
		b, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			return nil, fmt.Errorf("gossip_encryption_keys: key %d is not base64: %w", i+1, err)
		}
		if err := gossip.CheckKey(b); err != nil {
			return nil, fmt.Errorf("gossip_encryption_keys: key %d is %w (make one with: head -c 32 /dev/urandom | base64)", i+1, err)
		}
		out = append(out, b)
	}
	return out, nil
}
