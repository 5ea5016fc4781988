package main

import (
	"github.com/rs/zerolog/log"
	"github.com/spf13/cobra"
)

func newServerCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "server",
		Short: "Run a Sibyl node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log.Info().Msg("the storage engine is being built (issue 2); the CQL server arrives with issue 4, so this node has nothing to serve yet")
			return nil
		},
	}
}
