package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"qbench/engines"
)

func enginesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "engines",
		Short: "List the engines and designs a scenario may name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ENGINE\tDESIGNS\tSECTIONS\tWHAT")
			for _, r := range engines.All() {
				// The scenario sections it reads: its own first, then the shared ones.
				reads := append([]string(nil), r.Sections...)
				if r.Options != "" {
					reads = append([]string{r.Options + ":"}, reads...)
				}
				if len(reads) == 0 {
					reads = []string{"-"}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, strings.Join(r.Designs, ", "), strings.Join(reads, ", "), r.Summary)
			}
			return tw.Flush()
		},
	}
}
