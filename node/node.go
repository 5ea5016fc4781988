package node

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/cql/native"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// Config is a node's configuration. The zero value of a field means its
// default: zero configuration runs a single node with data in ./data.
type Config struct {
	// DataDir holds everything the node keeps on disk: data/<keyspace>/...
	// for SSTables and commitlog/ for the commit log. Default "data".
	DataDir string
	// CommitLogSync is commitlog_sync: periodic (default), group or batch.
	CommitLogSync string
	// ClusterName is cluster_name; default "Test Cluster", as Cassandra's.
	ClusterName string
	// ListenAddress is listen_address, the node's address; default
	// 127.0.0.1.
	ListenAddress string
	// NativePort is native_transport_port; default 9042.
	NativePort int
	// DataCenter and Rack place the node; default datacenter1 and rack1.
	DataCenter, Rack string
	// Logger receives the node's events; default none.
	Logger *zerolog.Logger
}

// EnsureDefaults fills unset fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	if c.CommitLogSync == "" {
		c.CommitLogSync = "periodic"
	}
	if c.ClusterName == "" {
		c.ClusterName = "Test Cluster"
	}
	if c.ListenAddress == "" {
		c.ListenAddress = "127.0.0.1"
	}
	if c.NativePort == 0 {
		c.NativePort = 9042
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
	if c.ListenAddress != "" && net.ParseIP(c.ListenAddress) == nil {
		errs = append(errs, fmt.Errorf("listen_address: %q is not an IP address", c.ListenAddress))
	}
	if c.NativePort < 0 || c.NativePort > 65535 {
		errs = append(errs, fmt.Errorf("native_transport_port: %d is not a port", c.NativePort))
	}
	return errors.Join(errs...)
}

// Node is one running node.
type Node struct {
	cfg    Config
	engine *storage.Engine
	schema *schema.Schema
	// Recovery is what commit log replay did at start-up.
	Recovery storage.RecoveryStats

	native     *native.Server
	nativeDone chan error
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
	opts := storage.Options{DataDir: filepath.Join(cfg.DataDir, "data"), Logger: cfg.Logger}
	opts.CommitLog.Dir = filepath.Join(cfg.DataDir, "commitlog")
	opts.CommitLog.SyncMode, _ = storage.ParseCommitLogSync(cfg.CommitLogSync)
	engine, err := storage.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	n := &Node{cfg: cfg, engine: engine}
	if err := n.start(); err != nil {
		return nil, errors.Join(err, engine.Close())
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
	if err := n.openTables(s); err != nil {
		return err
	}
	if n.Recovery, err = n.engine.Recover(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if s, err = n.loadSchema(); err != nil {
		return err
	}
	n.schema = s
	if err := n.openTables(s); err != nil {
		return err
	}
	if err := n.describeSystemKeyspaces(); err != nil {
		return err
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
	return n.Apply(ms)
}

// Close stops the node: the native protocol server drains (no new
// requests; those in flight are answered), memtables are flushed, and the
// engine closes.
func (n *Node) Close() error {
	err := n.stopNative()
	if ferr := n.engine.Flush(); ferr != nil {
		err = errors.Join(err, fmt.Errorf("node: flushing at shutdown: %w", ferr))
	}
	return errors.Join(err, n.engine.Close())
}
