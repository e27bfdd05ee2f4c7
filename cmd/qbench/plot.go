package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"qbench/plots"
	"qbench/results"
)

func plotCmd() *cobra.Command {
	var dir, formats, binBy string
	cmd := &cobra.Command{
		Use:   "plot RESULT.json... -o DIR",
		Short: "Draw charts of results (PNG and SVG): percentile spectra, latency, throughput and lag over time, loss",
		Long: `plot draws, for all the results given (overlaid, one colour each, labelled by file name):
  spectrum-KIND     latency by percentile on the "nines" axis, per latency kind
  latency-KIND      p50, p99 and max over time, warm-up and fault windows shaded: produce and
                    e2e in bins of 100 ms for runs with faults (1 s otherwise) by completion;
                    with --bin-by intended, by intended send time (latency-intended-KIND), so
                    the messages sent into a fault stand in its band
  throughput        acknowledged and delivered messages per second
  lag               consumer lag, the load generator's and the engine's view
  loss              lost and duplicated messages per result
KIND is produce, send_delay and e2e. An index.json of a sweep stands for its cells' results and
adds, for a matrix, the grid of p99 by the swept fields (grid-produce, grid-e2e) and, for a rate
search, the capacity curve (capacity-KIND).`,
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
			by, err := binByFlag(binBy)
			if err != nil {
				return err
			}
			runs, extra, err := readRunsAndIndexes(args, plots.SLO{})
			if err != nil {
				return err
			}
			charts, err := plots.AllWith(runs, plots.Options{BinBy: by})
			if err != nil {
				return err
			}
			charts = append(charts, extra...)
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
	cmd.Flags().StringVar(&binBy, "bin-by", results.BinByCompleted, "latency over time by completed (when seen) or intended (when the schedule meant to send)")
	return cmd
}

// binByFlag checks --bin-by.
func binByFlag(v string) (string, error) {
	switch v {
	case results.BinByCompleted, results.BinByIntended:
		return v, nil
	}
	return "", usageError{fmt.Errorf("--bin-by %q: want %s or %s", v, results.BinByCompleted, results.BinByIntended)}
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

// readRunsAndIndexes reads result files and sweep indexes: an index contributes its cells'
// results as runs and its own charts (the grid of a matrix, with each cell's verdict and, given
// objectives, coloured by them; the capacity curve of a search).
func readRunsAndIndexes(paths []string, slo plots.SLO) ([]plots.Run, []plots.Chart, error) {
	var runs []plots.Run
	var charts []plots.Chart
	var plain []string
	for _, p := range paths {
		ix, ok := readIndex(p)
		if !ok {
			plain = append(plain, p)
			continue
		}
		var cellResults []*results.Result
		var passes []bool
		for _, c := range ix.Cells {
			r, err := readResult(filepath.Join(filepath.Dir(p), c.File))
			if err != nil {
				return nil, nil, err
			}
			runs = append(runs, plots.Run{Label: cellLabel(c), Result: r})
			cellResults = append(cellResults, r)
			passes = append(passes, c.Pass != nil && *c.Pass)
		}
		switch ix.Kind {
		case "matrix":
			g, err := plots.GridsFromRuns(ix, cellResults, slo)
			if err != nil {
				return nil, nil, err
			}
			charts = append(charts, g...)
		case "rate-search":
			best := 0.0
			if ix.Search != nil {
				best = ix.Search.Best
			}
			c, err := plots.Capacity(plots.CapacityPoints(cellResults, passes, "produce"), "produce", 0, best)
			if err != nil {
				return nil, nil, err
			}
			charts = append(charts, c)
		}
	}
	more, err := readRuns(plain)
	if err != nil {
		return nil, nil, err
	}
	return append(runs, more...), charts, nil
}

// readIndex reads path as a sweep index if it is one.
func readIndex(path string) (*results.Index, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var probe struct {
		Kind  string          `json:"kind"`
		Cells json.RawMessage `json:"cells"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Kind == "" || probe.Cells == nil {
		return nil, false
	}
	ix, err := results.ReadIndexFile(path)
	if err != nil {
		return nil, false
	}
	return ix, true
}

// cellLabel is a matrix cell's short label in legends and tables: its axis values
// ("redis aof-always"), not the whole cell name.
func cellLabel(c results.IndexCell) string {
	if len(c.Params) == 0 {
		return c.Name
	}
	vals := make([]string, len(c.Params))
	for i, p := range c.Params {
		vals[i] = p.Value
	}
	return strings.Join(vals, " ")
}
