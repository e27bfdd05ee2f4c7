package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"qbench/results"
)

func exportCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "export RESULT.json... -o DIR",
		Short: "Write HdrHistogram .hgrm and .hlog files and CSV of the series and summary",
		Long: `For each result NAME.json, export writes into DIR:
  NAME.KIND.hgrm     percentile distribution (HdrHistogram's format, values in ms)
  NAME.KIND.hlog     per-second interval log (HdrHistogram log format 1.3, values in ns)
  NAME.series.csv    the per-second series
  NAME.faults.csv    one row per fault window, marked ones included (only for a run with faults)
and summary.csv with one row per result. KIND is produce, send_delay and e2e.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usageError{fmt.Errorf("-o DIR is required")}
			}
			rs, names, err := readResults(args)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			var written []string
			write := func(name string, f func(io.Writer) error) error {
				p := filepath.Join(dir, name)
				written = append(written, p)
				return writeFileWith(p, f)
			}
			for i, r := range rs {
				for _, k := range results.LatencyKinds {
					if err := write(names[i]+"."+k+".hgrm", func(w io.Writer) error { return results.WriteHgrm(w, r, k) }); err != nil {
						return err
					}
					if err := write(names[i]+"."+k+".hlog", func(w io.Writer) error { return results.WriteHlog(w, r, k) }); err != nil {
						return err
					}
				}
				if err := write(names[i]+".series.csv", func(w io.Writer) error { return results.WriteSeriesCSV(w, r) }); err != nil {
					return err
				}
				if len(r.Faults) > 0 {
					if err := write(names[i]+".faults.csv", func(w io.Writer) error { return results.WriteFaultsCSV(w, r) }); err != nil {
						return err
					}
				}
			}
			if err := write("summary.csv", func(w io.Writer) error { return results.WriteSummaryCSV(w, names, rs) }); err != nil {
				return err
			}
			for _, p := range written {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "output", "o", "", "directory to write into (created if needed)")
	return cmd
}

// readResults reads result files and names each by its file name without .json; names that
// repeat get a numeric suffix.
func readResults(paths []string) ([]*results.Result, []string, error) {
	var rs []*results.Result
	var names []string
	seen := map[string]int{}
	for _, p := range paths {
		r, err := readResult(p)
		if err != nil {
			return nil, nil, err
		}
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
		rs = append(rs, r)
		names = append(names, name)
	}
	return rs, names, nil
}

func mergeCmd() *cobra.Command {
	var out string
	var repetitions, force, allowMissing bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "merge RESULT.json... -o MERGED.json",
		Short: "Combine results of one scenario: from several machines at once, or repetitions",
		Long: `merge adds histograms exactly, sums counters and merges the ledgers.

By default the results are load from several machines at the same time: rates add and the
per-second series add second by second. With --repetitions they are the same scenario run one
after another: rates are the total over the total measured time, and each repetition's summary
is kept so that compare --noise can tell noise from a regression.

Segments of one run (qbench run --segment i/N) are joined as one run: their ledgers are matched
message by message, so a message produced in one segment and consumed in another counts as
delivered; results that are not exactly the N segments of one run are refused (exit 2).
With --allow-missing a run some of whose segments are missing (a lost pod) is merged from the
others, marked PARTIAL: the missing segments' messages are unknown, never counted lost; with
--wait, an input still absent when the wait ends is then treated as missing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("-o MERGED.json is required")}
			}
			if wait > 0 {
				present, err := waitForResults(args, wait, allowMissing)
				if err != nil {
					return err
				}
				args = present
			}
			if len(args) == 0 {
				return usageError{fmt.Errorf("--allow-missing: none of the inputs is there: nothing to merge")}
			}
			rs, _, err := readResults(args)
			if err != nil {
				return err
			}
			if results.IsSegment(rs) {
				m, err := mergeSegments(rs, allowMissing)
				if err != nil {
					return err
				}
				return writeMerged(cmd, out, m)
			}
			mode := results.MergeMachines
			if repetitions {
				mode = results.MergeRepetitions
			}
			m, err := results.Merge(rs, results.MergeOptions{Mode: mode, Force: force})
			if err != nil {
				return usageError{err}
			}
			return writeMerged(cmd, out, m)
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for every input to be a complete result (segments still running)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the merged result to this file")
	cmd.Flags().BoolVar(&repetitions, "repetitions", false, "the results are repetitions of one scenario, not parallel load generators")
	cmd.Flags().BoolVar(&force, "force", false, "merge even if the scenarios differ")
	cmd.Flags().BoolVar(&allowMissing, "allow-missing", false, "merge the segments of a run that are there, marked partial, when some are missing (a lost pod)")
	return cmd
}

func writeMerged(cmd *cobra.Command, out string, m *results.Result) error {
	if m.Summary.HistogramDropped > 0 {
		fmt.Fprintf(os.Stderr, "qbench: warning: %d values did not fit the merged histograms\n", m.Summary.HistogramDropped)
	}
	if err := results.WriteFile(out, m); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "qbench: wrote %s\n", out)
	return results.WriteSummary(cmd.OutOrStdout(), m)
}
