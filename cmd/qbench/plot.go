package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"qbench/plots"
)

func plotCmd() *cobra.Command {
	var dir, formats string
	cmd := &cobra.Command{
		Use:   "plot RESULT.json... -o DIR",
		Short: "Draw charts of results (PNG and SVG): percentile spectra, latency, throughput and lag over time, loss",
		Long: `plot draws, for all the results given (overlaid, one colour each, labelled by file name):
  spectrum-KIND     latency by percentile on the "nines" axis, per latency kind
  latency-KIND      p50, p99 and max of each second, warm-up and fault windows shaded
  throughput        acknowledged and delivered messages per second
  lag               consumer lag, the load generator's and the engine's view
  loss              lost and duplicated messages per result
KIND is produce, send_delay and e2e.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usageError{fmt.Errorf("-o DIR is required")}
			}
			var fs []string
			for _, f := range strings.Split(formats, ",") {
				f = strings.ToLower(strings.TrimSpace(f))
				switch f {
				case "png", "svg", "pdf":
					fs = append(fs, f)
				case "":
				default:
					return usageError{fmt.Errorf("--format %q: want png, svg or pdf", f)}
				}
			}
			runs, err := readRuns(args)
			if err != nil {
				return err
			}
			charts, err := plots.All(runs)
			if err != nil {
				return err
			}
			paths, err := plots.Save(charts, dir, fs)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "output", "o", "", "directory to write the charts into (created if needed)")
	cmd.Flags().StringVar(&formats, "format", "png,svg", "comma-separated formats: png, svg, pdf")
	return cmd
}

// readRuns reads result files and labels each by its file name.
func readRuns(paths []string) ([]plots.Run, error) {
	rs, names, err := readResults(paths)
	if err != nil {
		return nil, err
	}
	runs := make([]plots.Run, len(rs))
	for i := range rs {
		runs[i] = plots.Run{Label: names[i], Result: rs[i]}
	}
	return runs, nil
}
