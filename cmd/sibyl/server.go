package main

import (
	"github.com/rs/zerolog/log"
	"github.com/sibyldb/sibyl/node"
	"github.com/spf13/cobra"
)

func newServerCommand() *cobra.Command {
	var cfg node.Config
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a Sibyl node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = &log.Logger
			n, err := node.Open(cfg)
			if err != nil {
				return err
			}
			log.Info().Str("data", cfg.DataDir).Int("replayed", n.Recovery.Applied).Msg("storage engine started")
			log.Info().Msg("the CQL native protocol arrives with issue 4: this node has nothing to serve yet, so it stops")
			return n.Close()
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data", "data", "directory for SSTables and the commit log")
	cmd.Flags().StringVar(&cfg.CommitLogSync, "commitlog-sync", "periodic", "commitlog_sync: periodic, group or batch")
	return cmd
}
