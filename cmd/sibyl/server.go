package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/rs/zerolog/log"
	"github.com/sibyldb/sibyl/node"
	"github.com/spf13/cobra"
)

func newServerCommand() *cobra.Command {
	var cfg node.Config
	var configPath string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a Sibyl node",
		Long: "Run a Sibyl node: the storage engine and the CQL native protocol on " +
			"listen_address:native_transport_port (127.0.0.1:9042 by default, data in ./data). " +
			"SIGTERM or SIGINT drains it: no new requests, those in flight answered, memtables flushed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defaultGCPercent(serverGCPercent)
			if configPath != "" {
				file, err := node.LoadConfigFile(configPath)
				if err != nil {
					return err
				}
				cfg = withFlags(file, cfg, cmd)
			}
			cfg.Logger = &log.Logger
			n, err := node.Open(cfg)
			if err != nil {
				return err
			}
			log.Info().Str("data", cfg.DataDir).Int("replayed", n.Recovery.Applied).Msg("storage engine started")
			if _, err := n.StartNative(); err != nil {
				n.Close()
				return err
			}
			if _, err := n.StartAdmin(); err != nil {
				n.Close()
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			log.Info().Msg("draining: no new requests; flushing memtables")
			if err := n.Close(); err != nil {
				return err
			}
			log.Info().Msg("stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "sibyl.yaml to read (keys as in cassandra.yaml; flags override it)")
	f.StringVar(&cfg.DataDir, "data-dir", "data", "directory for SSTables and the commit log")
	f.StringVar(&cfg.CommitLogSync, "commitlog-sync", "periodic", "commitlog_sync: periodic, group or batch")
	f.BoolVar(&cfg.CommitLogIgnoreReplayErrors, "commitlog-ignore-replay-errors", false,
		"set aside in a quarantine file each commit log record replay cannot decode, and start (cassandra.commitlog.ignorereplayerrors)")
	f.StringVar(&cfg.ListenAddress, "listen-address", "127.0.0.1", "listen_address: the address the node serves on")
	f.IntVar(&cfg.NativePort, "native-transport-port", 9042, "native_transport_port: the CQL native protocol port")
	f.StringVar(&cfg.ClusterName, "cluster-name", "Test Cluster", "cluster_name")
	f.IntVar(&cfg.AdminPort, "admin-port", 7199, "admin_port: the admin API (nodetool) port, on the listen address")
	f.StringSliceVar(&cfg.Seeds, "seeds", nil, "seed_provider's seeds: contact points (address or address:port) to join a cluster through; none runs the node alone")
	f.IntVar(&cfg.GossipPort, "gossip-port", 7001, "gossip_port: the gossip (membership) port, on the listen address")
	f.IntVar(&cfg.StoragePort, "storage-port", 7000, "storage_port: the internode messaging port, on the listen address")
	f.StringVar(&cfg.DataCenter, "dc", "datacenter1", "the node's data centre")
	f.StringVar(&cfg.Rack, "rack", "rack1", "the node's rack")
	f.StringVar(&cfg.Authenticator, "authenticator", "AllowAllAuthenticator", "authenticator: AllowAllAuthenticator (anyone gets in) or PasswordAuthenticator (clients log in as a role)")
	f.StringVar(&cfg.Authorizer, "authorizer", "AllowAllAuthorizer", "authorizer: AllowAllAuthorizer or CassandraAuthorizer (statements need granted permissions)")
	f.StringVar(&cfg.ReplaceAddressFirstBoot, "replace-address", "", "replace_address_first_boot: on a new node's first start, the address of the dead node it replaces (its tokens, its data streamed from the other replicas)")
	return cmd
}

// withFlags is the file's configuration with the flags given on the
// command line laid over it.
func withFlags(file, flags node.Config, cmd *cobra.Command) node.Config {
	set := cmd.Flags().Changed
	if set("data-dir") || file.DataDir == "" {
		file.DataDir = flags.DataDir
	}
	if set("commitlog-sync") {
		file.CommitLogSync = flags.CommitLogSync
	}
	file.CommitLogIgnoreReplayErrors = flags.CommitLogIgnoreReplayErrors
	if set("listen-address") {
		file.ListenAddress = flags.ListenAddress
	}
	if set("native-transport-port") {
		file.NativePort = flags.NativePort
	}
	if set("cluster-name") {
		file.ClusterName = flags.ClusterName
	}
	if set("admin-port") {
		file.AdminPort = flags.AdminPort
	}
	if set("seeds") {
		file.Seeds = flags.Seeds
	}
	if set("gossip-port") {
		file.GossipPort = flags.GossipPort
	}
	if set("storage-port") {
		file.StoragePort = flags.StoragePort
	}
	if set("dc") {
		file.DataCenter = flags.DataCenter
	}
	if set("rack") {
		file.Rack = flags.Rack
	}
	if set("replace-address") {
		file.ReplaceAddressFirstBoot = flags.ReplaceAddressFirstBoot
	}
	if set("authenticator") {
		file.Authenticator = flags.Authenticator
	}
	if set("authorizer") {
		file.Authorizer = flags.Authorizer
	}
	return file
}

// serverGCPercent is the node's GOGC unless the environment sets one. A
// node's live heap is mostly memtables, which every collection marks
// again; collecting at three times the live heap instead of twice cut the
// CPU of a write by a sixth to a quarter (one node, overwrites of 500,000
// keys: 13.2-14.9 against 10.7-11.7 µs) for a larger peak heap under load.
const serverGCPercent = 200

// defaultGCPercent sets the collector's percent unless GOGC is in the
// environment, which always wins.
func defaultGCPercent(percent int) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(percent)
	}
}
