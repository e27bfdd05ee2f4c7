package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/plots"
	"qbench/results"
	"qbench/scenarios"
)

func logf(quiet bool) func(string, ...any) {
	return func(f string, a ...any) {
		if !quiet {
			fmt.Fprintf(os.Stderr, "qbench: "+f+"\n", a...)
		}
	}
}

// checkSweepOutput checks, before any run, where a sweep writes: a matrix needs a directory
// (made now) in which index.json can be written; repeat: writes one merged result to -o.
func checkSweepOutput(sc *scenarios.Scenario, out string, g *gating) error {
	if len(sc.Matrix.Axes) == 0 {
		return checkOutputPath("-o", out)
	}
	if out == "" {
		return usageError{errors.New("a matrix writes one result per cell: give -o DIR")}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usageError{fmt.Errorf("-o %s: cannot make the results directory: %w", out, err)}
	}
	return checkOutputPath("-o", filepath.Join(out, "index.json"))
}

// runSweep runs a scenario's matrix: (one result per cell) or repeat: (one merged result), for
// qbench run, which has loaded sc and prepared g.
func runSweep(cmd *cobra.Command, sc *scenarios.Scenario, g *gating, rec *record, base bench.Options, checkpoint string) error {
	out, _ := cmd.Flags().GetString("output")
	quiet, _ := cmd.Flags().GetBool("quiet")
	matrix := len(sc.Matrix.Axes) > 0
	every, err := checkpointEvery(checkpoint, sc.Duration.D())
	if err != nil {
		return err
	}
	ctx, stop, cancel := loadContext()
	defer cancel()
	ix := &results.Index{Kind: "matrix", Scenario: sc.Name, StartedAt: time.Now().UTC()}
	base.Logf = logf(false)
	opts := bench.SweepOptions{Options: base}
	opts.OnRun = func(p bench.SweepProgress) {
		name := p.Name
		if name == "" {
			name = sc.Name
		}
		logf(quiet)("cell %d/%d %s: run %d/%d", p.Cell, p.Cells, name, p.Rep, p.Reps)
	}
	opts.OnCell = func(cr bench.CellResult) error {
		if !matrix {
			return nil
		}
		file := results.Slug(cr.Cell.Name) + ".json"
		rec.stamp(cr.Result)
		if err := results.WriteFile(filepath.Join(out, file), cr.Result); err != nil {
			return err
		}
		removeRepetitions(filepath.Join(out, file), len(cr.Runs))
		var params []results.Param
		for _, p := range cr.Cell.Params {
			params = append(params, results.Param{Key: p.Key, Value: p.Value})
		}
		ix.Cells = append(ix.Cells, results.NewIndexCell(cr.Cell.Name, params, file, cr.Result))
		// Rewritten after every cell, so a sweep stopped half-way leaves a valid index.
		return results.WriteIndexFile(filepath.Join(out, "index.json"), ix)
	}
	if out != "" {
		opts.Stream = sweepStream(out, matrix, every, base.Logf)
	}
	cells, err := bench.Sweep(ctx, stop, sc, opts)
	if errors.Is(err, bench.ErrStartInterrupted) && len(cells) > 0 {
		err = nil // Ctrl-C while a later run was starting: the cells finished so far stand
	}
	if err != nil {
		return startInterrupted(err)
	}
	if len(cells) == 0 {
		if stop.Err() != nil {
			return interruptedError{start: errors.New("interrupted: the sweep was stopped before any run finished")}
		}
		return errors.New("the sweep was stopped before any run finished")
	}
	if !matrix {
		// repeat: N of one scenario: one merged result, gated like a single run.
		// The summary first: if the result cannot be written, the figures are still shown.
		res := cells[0].Result
		rec.stamp(res)
		if err := results.WriteSummary(cmd.OutOrStdout(), res); err != nil {
			return err
		}
		if out != "" {
			if err := results.WriteFile(out, res); err != nil {
				return fmt.Errorf("writing the result: %w", err)
			}
			removeRepetitions(out, len(cells[0].Runs))
			fmt.Fprintf(os.Stderr, "qbench: wrote %s (%d repetitions merged)\n", out, len(cells[0].Runs))
		}
		return interrupted(res.Interrupted || stop.Err() != nil, g.check(cmd, out, res, ""))
	}
	if stop.Err() != nil {
		ix.Interrupted = true
		if err := results.WriteIndexFile(filepath.Join(out, "index.json"), ix); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "qbench: wrote %s and %d cell results\n", filepath.Join(out, "index.json"), len(cells))
	if err := results.WriteIndexTable(cmd.OutOrStdout(), ix); err != nil {
		return err
	}
	if ix.Interrupted {
		return interruptedError{}
	}
	if g.baselineIndex != nil {
		// --baseline index.json: every cell compared with the baseline's cell of the same
		// parameters, one verdict per cell and one overall.
		fmt.Fprintln(cmd.OutOrStdout())
		return g.o.matrixVerdict(cmd, g.flagGates, g.baselineIndex, ix, g.baselinePath, filepath.Join(out, "index.json"))
	}
	// Each cell's gates (the scenario's absolute ones and --gate).
	var errs []error
	for i, c := range cells {
		// A cell without gates or a baseline prints nothing more: no empty "cell NAME:" lines.
		if err := g.check(cmd, filepath.Join(out, ix.Cells[i].File), c.Result, "cell "+c.Cell.Name+":"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func searchCmd() *cobra.Command {
	var out string
	var objectives []string
	var lim bench.SearchLimits
	var allowLag, quiet bool
	cmd := &cobra.Command{
		Use:   "search SCENARIO.yaml -o DIR --objective EXPR...",
		Short: "Find the highest sustainable rate: step up, then bisect, holding each rate to an objective",
		Long: `search runs the scenario at increasing rates, doubling from --low until a rate misses the
objective (or --high passes), then bisects between the highest rate that met it and the lowest
that missed, until they are within --precision. A rate meets the objective when every
--objective gate holds (absolute gates: 'produce.p99 <= 5ms', 'lost == 0'), the producers
achieved 95% of the offered rate, and the lag was not growing at the end of the measured window
(--allow-lag-growth turns that off).

DIR gets one result per rate tried (rate-N.json), index.json with every step and the verdict,
and capacity-KIND.png/.svg: p50 and p99 against achieved throughput, with the objective and the
rate found. KIND is that of the first latency objective (produce if none).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{errors.New("-o DIR is required")}
			}
			sc, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			if len(sc.Matrix.Axes) > 0 {
				return usageError{errors.New("search varies the rate of one scenario; this one has a matrix")}
			}
			gates, err := results.ParseGates(objectives, "objective")
			if err != nil {
				return usageError{err}
			}
			kind, objNs := "produce", int64(0)
			for i, g := range gates {
				if g.Relative {
					return usageError{fmt.Errorf("objective %q is relative; a search needs absolute bounds", g.Expr)}
				}
				if dot := strings.IndexByte(g.Metric, '.'); dot > 0 && objNs == 0 && (g.Op == "<=" || g.Op == "<") {
					kind, objNs = g.Metric[:dot], int64(gates[i].Value)
				}
			}
			if lim.Low <= 0 {
				if !sc.Rate.Max && sc.Rate.PerSecond > 0 {
					lim.Low = sc.Rate.PerSecond
				} else {
					return usageError{errors.New("give --low, or a rate in the scenario to start from")}
				}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			obj := results.Objective{Gates: gates, Duration: sc.Duration.D(), AllowLagGrowth: allowLag}
			ctx, stop, cancel := loadContext()
			defer cancel()
			ix := &results.Index{Kind: "rate-search", Scenario: sc.Name, StartedAt: time.Now().UTC(),
				Search: &results.SearchOutcome{Objective: append([]string(nil), objectives...)}}
			if !allowLag {
				ix.Search.Objective = append(ix.Search.Objective, "lag not growing")
			}
			ix.Search.Objective = append(ix.Search.Objective, "95% of the offered rate achieved")
			var runs []*results.Result
			var passes []bool
			probe := func(_ context.Context, rate float64) (bool, error) {
				c := *sc
				c.Rate = scenarios.Rate{PerSecond: rate}
				name := fmt.Sprintf("rate=%.0f", rate)
				c.Name = sc.Name + "/" + name
				if err := c.CheckMemory(); err != nil {
					return false, usageError{fmt.Errorf("search at %.0f msg/s: %w (--high bounds the search)", rate, err)}
				}
				logf(quiet)("trying %.0f msg/s", rate)
				res, err := bench.Run(ctx, stop, &c, bench.Options{Logf: logf(false)})
				if err != nil {
					return false, err
				}
				if res.Interrupted {
					return false, bench.ErrSearchStopped
				}
				pass, why := obj.Check(res)
				file := fmt.Sprintf("rate-%.0f.json", rate)
				if err := results.WriteFile(filepath.Join(out, file), res); err != nil {
					return false, err
				}
				cell := results.NewIndexCell(name, []results.Param{{Key: "rate", Value: fmt.Sprintf("%.0f", rate)}}, file, res)
				cell.Pass, cell.Reasons = &pass, why
				ix.Cells = append(ix.Cells, cell)
				runs, passes = append(runs, res), append(passes, pass)
				verdict := "met"
				if !pass {
					verdict = "missed: " + strings.Join(why, "; ")
				}
				logf(quiet)("%.0f msg/s: objective %s", rate, verdict)
				return pass, results.WriteIndexFile(filepath.Join(out, "index.json"), ix)
			}
			best, failedAt, _, err := bench.SearchRate(stop, probe, lim)
			ix.Search.Best, ix.Search.FailedAt = best, failedAt
			if errors.Is(err, bench.ErrSearchStopped) {
				ix.Interrupted = true
				err = nil
			}
			if werr := results.WriteIndexFile(filepath.Join(out, "index.json"), ix); werr != nil && err == nil {
				err = werr
			}
			if err != nil {
				return err
			}
			chart, err := plots.Capacity(plots.CapacityPoints(runs, passes, kind), kind, objNs, best)
			if err != nil {
				return err
			}
			if _, err := plots.Save([]plots.Chart{chart}, out, []string{"png", "svg"}); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "qbench: wrote %s, %d results and %s.png/.svg\n", filepath.Join(out, "index.json"), len(runs), chart.Name)
			if err := results.WriteIndexTable(cmd.OutOrStdout(), ix); err != nil {
				return err
			}
			return interrupted(ix.Interrupted, nil)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory for the results, the index and the capacity chart")
	cmd.Flags().StringArrayVar(&objectives, "objective", nil, "an absolute gate each rate must meet, e.g. 'produce.p99 <= 5ms' (repeatable)")
	cmd.Flags().Float64Var(&lim.Low, "low", 0, "first rate to try, msg/s (default: the scenario's rate)")
	cmd.Flags().Float64Var(&lim.High, "high", 0, "highest rate to try, msg/s (0: no ceiling but --max-runs)")
	cmd.Flags().Float64Var(&lim.Precision, "precision", 0.05, "stop when the highest pass and lowest miss are within this fraction")
	cmd.Flags().IntVar(&lim.MaxRuns, "max-runs", 12, "most runs to make")
	cmd.Flags().BoolVar(&allowLag, "allow-lag-growth", false, "do not require the lag to stay flat")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	memoryBudgetFlag(cmd)
	switchFlag(cmd)
	return cmd
}
