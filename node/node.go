package node

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/rs/zerolog"
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
	return errors.Join(errs...)
}

// Node is one running node.
type Node struct {
	cfg    Config
	engine *storage.Engine
	// Recovery is what commit log replay did at start-up.
	Recovery storage.RecoveryStats
}

// Open starts a node: it opens the storage engine and replays the commit
// log. The tables the schema knows must be opened between the two (replay
// skips records of tables it does not know, and the segments then go);
// until the schema arrives (issue 3) a node has no tables.
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
	if n.Recovery, err = engine.Recover(); err != nil {
		return nil, errors.Join(fmt.Errorf("node: %w", err), engine.Close())
	}
	return n, nil
}

// Close stops the node; unflushed writes stay in the commit log.
func (n *Node) Close() error { return n.engine.Close() }
