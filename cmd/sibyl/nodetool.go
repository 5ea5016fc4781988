package main

import (
	"os"

	"github.com/sibyldb/sibyl/tools/nodetool"
	"github.com/spf13/cobra"
)

func newNodetoolCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "nodetool [-h host] [-p port] [-u user -pw password | -pwf file] [--ssl [--truststore ca.pem]] COMMAND [args]",
		Short: "Operate a node, as Cassandra's nodetool (status, info, ring, flush, compact, tablestats, snapshot, ...)",
		// nodetool's own flags (-h is the host, not help) come before the
		// command; it parses them.
		DisableFlagParsing: true,
		Run: func(cmd *cobra.Command, args []string) {
			os.Exit(nodetool.Run(args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
}
