package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/tools/stress"
	"github.com/spf13/cobra"
)

// stressGCPercent is sibyl stress's GOGC unless the environment sets one.
// The load generator shares the machine with the nodes it measures, and at
// the default 100 its 1,000 goroutines' stacks and gocql's garbage made it
// the largest consumer of CPU: three stress processes driving three capped
// nodes spent 17.5 µs of CPU a write at 100 and 12.2 µs at 400, leaving the
// machine 4% and 18% idle.
const stressGCPercent = 400

func newStressCommand() *cobra.Command {
	var o stress.Options
	var nodes, cpuProfile, sslCA, sslCert, sslKey string
	var useSSL bool
	cmd := &cobra.Command{
		Use:   "stress WORKLOAD",
		Short: "Load a cluster through CQL: write, read, mixed, dynamo, ycsb-a ... ycsb-f, lwt, counter",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defaultGCPercent(stressGCPercent)
			o.Workload = args[0]
			o.Nodes = strings.Split(nodes, ",")
			if useSSL {
				cfg, err := tlsconf.ClientSettings{CAFile: sslCA, VerifyServer: sslCA != "", CertFile: sslCert, KeyFile: sslKey}.ClientConfig()
				if err != nil {
					return fmt.Errorf("--ssl: %w", err)
				}
				o.TLS = cfg
			}
			o.Out = cmd.OutOrStdout()
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			// The first SIGINT ends the run early, its summary and
			// read-back still done; a second one kills, as by default.
			interrupt := make(chan struct{})
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt)
			go func() {
				<-sig
				signal.Stop(sig)
				close(interrupt)
			}()
			o.Interrupt = interrupt
			_, err := stress.Run(o)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&nodes, "nodes", "127.0.0.1", "contact points, comma-separated")
	f.IntVar(&o.Port, "port", 9042, "the native protocol port")
	f.StringVarP(&o.Username, "username", "u", "", "log in as this role (PasswordAuthenticator)")
	f.StringVarP(&o.Password, "password", "p", "", "its password")
	f.BoolVar(&useSSL, "ssl", false, "connect with TLS (client_encryption_options)")
	f.StringVar(&sslCA, "ssl-ca", "", "--ssl: PEM authorities to check the nodes' certificates against (none: not checked)")
	f.StringVar(&sslCert, "ssl-cert", "", "--ssl: this client's PEM certificate, for require_client_auth")
	f.StringVar(&sslKey, "ssl-key", "", "--ssl: its PEM key")
	f.IntVar(&o.Threads, "threads", 32, "client threads (requests in flight)")
	f.IntVar(&o.Connections, "connections", 2, "connections per node")
	f.Int64Var(&o.Ops, "ops", 0, "operations to run (default 100000 unless --duration)")
	f.DurationVar(&o.Duration, "duration", 0, "how long to run, instead of --ops")
	f.Int64Var(&o.Keys, "keys", 100_000, "the key space of reads and rewrites")
	f.Int64Var(&o.Preload, "preload", 0, "keys to write before the timed run")
	f.Int64Var(&o.Warmup, "warmup", 0, "new keys written after the preload, untimed")
	f.IntVar(&o.KeySize, "key-size", 8, "key size in bytes: the key's number, big-endian, then zeros (at least 8)")
	f.IntVar(&o.ValueSize, "value-size", 128, "value size in bytes")
	f.StringVar(&o.Distribution, "distribution", "uniform", "key choice: uniform, zipfian or sequential")
	f.StringVar(&o.Consistency, "consistency", "ONE", "consistency level")
	f.StringVar(&o.SerialConsistency, "serial-consistency", "SERIAL", "lwt: the Paxos level of conditional writes, SERIAL or LOCAL_SERIAL")
	f.IntVar(&o.ReplicationFactor, "replication-factor", 1, "replication factor of the keyspace created")
	f.StringVar(&o.Keyspace, "keyspace", "stress", "keyspace to use (created if missing)")
	f.BoolVar(&o.TokenAware, "token-aware", false, "send each request to a replica of its key")
	f.Float64Var(&o.Rate, "rate", 0, "operations per second at most (0: no limit)")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed (0: from the clock; the --json report records the one used)")
	f.StringVar(&o.Ratio, "ratio", "1:1", "mixed: writes:reads")
	f.IntVar(&o.Mix, "mix", 1, "dynamo: mix 1 to 4 (B3)")
	f.BoolVar(&o.Overwrite, "overwrite", false, "write and mixed: rewrite keys drawn from the key space (--keys, --distribution) instead of adding new ones")
	f.BoolVar(&o.Verify, "verify", false, "remember every acknowledged write, check reads against them and read every one back at the end; exits 1 on a lost write (or a stale read at a level that forbids them)")
	f.Float64Var(&o.VerifyShare, "verify-share", 1, "with --verify: the share of reads checked, 0 to 1")
	f.StringVar(&o.JSON, "json", "", "write the summary and the per-second series to this JSON file")
	f.StringVar(&o.Plot, "plot", "", "write a self-contained HTML report to this file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write the client's own CPU profile to this file (go tool pprof)")
	return cmd
}
