package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/tools/cluster"
	"github.com/spf13/cobra"
)

func newClusterCommand() *cobra.Command {
	var dir string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "A local cluster on 127.0.0.x, as ccm makes: up, status, stop, start, down, logs",
	}
	home, _ := os.UserHomeDir()
	cmd.PersistentFlags().StringVar(&dir, "dir", filepath.Join(home, ".sibyl", "cluster"), "the cluster's directory (data, logs, pids)")
	cmd.PersistentFlags().DurationVar(&wait, "wait", 2*time.Minute,
		"how long a node started may take to serve CQL (one that joins streams its ranges first: give a large data set more)")
	open := func(cmd *cobra.Command) (*cluster.Cluster, error) {
		c, err := cluster.Open(dir, cmd.OutOrStdout())
		if err == nil {
			c.UpTimeout = wait
		}
		return c, err
	}
	node := func(arg string) (int, error) {
		k, err := strconv.Atoi(strings.TrimPrefix(arg, "node"))
		if err != nil || k < 1 {
			return 0, fmt.Errorf("%q is not a node (node1, node2, ... or 1, 2, ...)", arg)
		}
		return k, nil
	}
	var cfg cluster.Config
	up := &cobra.Command{
		Use:   "up",
		Short: "Start a cluster of --nodes nodes (node N on 127.0.0.N), one after another, and wait until all are up",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Binary = bin
			return cluster.Up(&cluster.Cluster{Dir: dir, Config: cfg, Out: cmd.OutOrStdout(), UpTimeout: wait})
		},
	}
	f := up.Flags()
	f.IntVar(&cfg.Nodes, "nodes", 3, "how many nodes")
	f.StringVar(&cfg.Name, "name", "Test Cluster", "the cluster_name every node runs with")
	f.IntVar(&cfg.NativePort, "native-transport-port", 9042, "every node's CQL port")
	f.IntVar(&cfg.AdminPort, "admin-port", 7199, "every node's admin API (nodetool) port")
	f.IntVar(&cfg.GossipPort, "gossip-port", 7001, "every node's gossip port")
	f.IntVar(&cfg.StoragePort, "storage-port", 7000, "every node's internode messaging port")
	f.BoolVar(&cfg.PasswordAuth, "pwd-auth", false, "logins and permissions: PasswordAuthenticator and CassandraAuthorizer (cassandra/cassandra)")
	f.BoolVar(&cfg.SSL, "ssl", false, "TLS on every port and gossip sealed, under an authority made in the cluster's pki/ directory")
	f.BoolVar(&cfg.RequireClientAuth, "require-client-auth", false, "with --ssl: clients must show a certificate of that authority")
	// onCluster is a command's action on the cluster in --dir.
	onCluster := func(act func(cmd *cobra.Command, c *cluster.Cluster) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			c, err := open(cmd)
			if err != nil {
				return err
			}
			return act(cmd, c)
		}
	}
	status := &cobra.Command{
		Use: "status", Short: "Which nodes run, and nodetool status from one of them", Args: cobra.NoArgs,
		RunE: onCluster(func(cmd *cobra.Command, c *cluster.Cluster) error { return cluster.Status(c, cmd.ErrOrStderr()) }),
	}
	// onNode is a command's action on the node its argument names.
	onNode := func(act func(cmd *cobra.Command, c *cluster.Cluster, k int) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			return onCluster(func(cmd *cobra.Command, c *cluster.Cluster) error {
				k, err := node(args[0])
				if err != nil {
					return err
				}
				return act(cmd, c, k)
			})(cmd, args)
		}
	}
	stop := &cobra.Command{
		Use: "stop NODE", Short: "Stop one node cleanly", Args: cobra.ExactArgs(1),
		RunE: onNode(func(_ *cobra.Command, c *cluster.Cluster, k int) error { return c.Stop(k) }),
	}
	start := &cobra.Command{
		Use: "start NODE", Short: "Start one stopped node", Args: cobra.ExactArgs(1),
		RunE: onNode(func(_ *cobra.Command, c *cluster.Cluster, k int) error { return c.Start(k) }),
	}
	down := &cobra.Command{
		Use: "down", Short: "Stop every node cleanly (the data stays)", Args: cobra.NoArgs,
		RunE: onCluster(func(_ *cobra.Command, c *cluster.Cluster) error { return cluster.Down(c) }),
	}
	logs := &cobra.Command{
		Use: "logs NODE", Short: "Print a node's log", Args: cobra.ExactArgs(1),
		RunE: onNode(func(cmd *cobra.Command, c *cluster.Cluster, k int) error {
			raw, err := os.ReadFile(c.LogFile(k))
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(raw)
			return err
		}),
	}
	var at cluster.Place
	add := &cobra.Command{
		Use: "add", Short: "Add a node to the running cluster (node N+1 on 127.0.0.N+1), start it, and wait until all see it up", Args: cobra.NoArgs,
		RunE: onCluster(func(_ *cobra.Command, c *cluster.Cluster) error { return cluster.Add(c, at) }),
	}
	add.Flags().StringVar(&at.DataCenter, "dc", "", "the new node's data centre (default: the server's, datacenter1)")
	add.Flags().StringVar(&at.Rack, "rack", "", "the new node's rack (default: the server's, rack1)")
	var force bool
	decommission := &cobra.Command{
		Use: "decommission NODE", Short: "Decommission a running node (nodetool decommission: its ranges stream to the others), stop it, and wait until the rest see it gone", Args: cobra.ExactArgs(1),
		RunE: onNode(func(_ *cobra.Command, c *cluster.Cluster, k int) error { return cluster.Decommission(c, k, force) }),
	}
	decommission.Flags().BoolVarP(&force, "force", "f", false, "decommission even when a keyspace is left with fewer nodes than its replication factor")
	replace := &cobra.Command{
		Use: "replace NODE", Short: "Replace a stopped node by a new, empty one at its address (--replace-address): it takes the node's tokens and streams its ranges from the other replicas", Args: cobra.ExactArgs(1),
		RunE: onNode(func(_ *cobra.Command, c *cluster.Cluster, k int) error { return cluster.Replace(c, k) }),
	}
	cmd.AddCommand(up, add, decommission, replace, status, stop, start, down, logs)
	return cmd
}
