package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"qbench/plots"
	"qbench/results"
)

// defaultReportPath is report.html beside the first input (a sweep's index.json: in its
// directory).
func defaultReportPath(args []string) string {
	return filepath.Join(filepath.Dir(args[0]), "report.html")
}

func reportCmd() *cobra.Command {
	var out, baselinePath, title, binBy string
	var sloExprs []string
	var o gateOptions
	cmd := &cobra.Command{
		Use:   "report RESULT.json... [-o report.html]",
		Short: "Write one self-contained HTML report: scenario, environment, summaries, charts, faults, gates",
		Long: `report writes a single HTML file with everything inline (charts as SVG; no scripts,
fonts or images loaded from anywhere): the scenario and environment of each result, summary
tables, every chart of qbench plot, the fault timeline and, with --baseline or --gate, the gates
checked against the last result. The report shows failed gates; it does not change the exit
code (use qbench compare in CI). A sweep's index.json stands for its cells' results and adds
its grid or capacity curve. Each run's trust verdict (results.Assess) is shown in the decision
table, the grid, the legends and the run's own section: a flagged run is marked, never only
coloured. --slo 'e2e.p99<=10ms' (repeatable) holds every run to an absolute objective: the grid
and decision table are coloured by it, and the report says which run meeting every objective
costs the least CPU per message (the engine's own, or the generator's where the engine's was
not measured), and whether that run is flagged.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = defaultReportPath(args)
			}
			flagGates, err := o.parse()
			if err != nil {
				return err
			}
			slo, err := plots.ParseSLOs(sloExprs)
			if err != nil {
				return usageError{err}
			}
			runs, extra, err := readRunsAndIndexes(args, slo)
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				return usageError{fmt.Errorf("no results to report")}
			}
			by, err := binByFlag(binBy)
			if err != nil {
				return err
			}
			opt := plots.ReportOptions{Title: title, Extra: extra, Searches: searchesIn(args), BinBy: by, SLO: slo}
			var baseline *results.Result
			if baselinePath != "" {
				if baseline, err = readResult(baselinePath); err != nil {
					return err
				}
			}
			cur := runs[len(runs)-1]
			gates, err := o.gatesFor(flagGates, cur.Result, baseline != nil)
			if err != nil {
				return err
			}
			if baseline != nil || len(gates) > 0 {
				opt.Comparison = results.Compare(baseline, cur.Result, baselinePath, cur.Label, gates, o.gateOpts(cmd, baseline))
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := plots.WriteReport(f, runs, opt); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "qbench: wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write (default: report.html beside the first input)")
	cmd.Flags().StringVar(&baselinePath, "baseline", "", "compare the last result with this baseline and show the gates")
	cmd.Flags().StringVar(&title, "title", "", "the report's title")
	cmd.Flags().StringVar(&binBy, "bin-by", results.BinByCompleted, "latency over time by completed or intended send time (runs with faults also get the intended charts)")
	cmd.Flags().StringArrayVar(&sloExprs, "slo", nil, "an absolute objective, e.g. 'e2e.p99<=10ms' (repeatable): colours the grid and decision table by met/missed and ranks the runs meeting every one by CPU cost per message")
	cmd.Flags().StringArrayVar(&o.gates, "gate", nil, "a gate to show (repeatable), as in qbench compare")
	cmd.Flags().BoolVar(&o.noise, "noise", false, "noise-aware relative gates, as in qbench compare")
	cmd.Flags().BoolVar(&o.noScenarioGates, "no-scenario-gates", false, "ignore the gates: the scenario declares")
	return cmd
}

// searchesIn lists what the rate searches among paths (their index.json) found.
func searchesIn(paths []string) []plots.SearchBest {
	var out []plots.SearchBest
	for _, p := range paths {
		if ix, ok := readIndex(p); ok && ix.Search != nil {
			out = append(out, plots.SearchBest{Scenario: ix.Scenario, Best: ix.Search.Best, FailedAt: ix.Search.FailedAt})
		}
	}
	return out
}
