package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"qbench/engines"
)

func enginesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "engines",
		Short: "List the engines and designs a scenario may name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, r := range engines.All() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-10s designs: %-30s %s\n", r.Name, strings.Join(r.Designs, ", "), r.Summary)
			}
			return nil
		},
	}
}
