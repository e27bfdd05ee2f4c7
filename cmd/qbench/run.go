package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"qbench/bench"
	"qbench/results"
)

// runCmd is qbench run, in explicit steps: load the scenario (once), prepare the gates and the
// baseline, run it (a sweep when it has a matrix or repeat), write the result, check the gates.
func runCmd() *cobra.Command {
	var out string
	var quiet bool
	var cpuProfile, memProfile, tracePath string
	var schedLat, idlePoll bool
	var marksListen, checkpoint string
	var g *gating
	var ov overrides
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Run a scenario; print the summary on stdout, write the JSON result with -o",
		Long: `run runs a scenario: the summary goes to stdout, progress to stderr (when it is a
terminal), the JSON result to -o (a directory for a matrix: one file per cell and index.json).
--duration, --rate and --set change the scenario before it is validated; the result records the
scenario as run and the overrides.

Exit codes: 0 ok; 1 runtime error; 2 bad usage or scenario (checked before the run starts,
every output path included); 3 a regression gate failed; 4 interrupted (the first Ctrl-C stops
the load and still writes the result, marked interrupted; a second quits at once);
5 a gate was inconclusive (missed on flagged figures or within the repetitions' range; --strict
makes it 3).`,
		Example: `  qbench run scenarios/quickstart.yaml -o result.json
  qbench run scenarios/quickstart.yaml --duration 3s --rate 2000 --set redis.stream.count=10
  qbench run scenarios/library/start/ci-smoke.yaml --baseline results/baselines/ci-smoke.json --gate 'produce.p99 <= +25%'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := loadScenarioWith(args[0], ov.list())
			if err != nil {
				return err
			}
			rec := newRecord(ov.list(), quiet)
			tuneGC() // gctune.go
			// Everything the run will write is checked before it starts, in every mode.
			if err := g.prepare(sc); err != nil {
				return err
			}
			sweep := len(sc.Matrix.Axes) > 0 || sc.Repeat > 1
			if sweep {
				if err := refuseSegmentedSweep(cmd); err != nil {
					return err
				}
				if err := checkSweepOutput(sc, out, g); err != nil {
					return err
				}
			} else if err := checkOutputPath("-o", out); err != nil {
				return err
			}
			if cpuProfile != "" {
				// The whole process, a sweep's every run included.
				stopProfile, err := startCPUProfile(cpuProfile)
				if err != nil {
					return usageError{fmt.Errorf("--cpuprofile %s: %w", cpuProfile, err)}
				}
				defer stopProfile()
			}
			stopOthers, err := startProfiles(memProfile, tracePath) // profile.go
			if err != nil {
				return err
			}
			defer stopOthers()
			if schedLat {
				defer startSchedLatencies().report(os.Stderr)
			}
			if idlePoll {
				release, err := bench.HoldIdlePoll() // bench/machineidle.go
				if err != nil {
					return fmt.Errorf("--idle-poll: %w", err)
				}
				defer release()
			}
			marks, closeMarks, err := listenMarks(marksListen) // mark.go
			if err != nil {
				return err
			}
			defer closeMarks()
			live, closeLive, err := startMetrics(cmd) // metrics.go
			if err != nil {
				return err
			}
			defer closeLive()
			if sweep {
				return runSweep(cmd, sc, g, rec, bench.Options{Marks: marks, Metrics: live}, checkpoint)
			}
			ctx, stop, cancel := loadContext()
			defer cancel()

			opts := bench.Options{Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "qbench: "+f+"\n", a...) }, Marks: marks, Metrics: live}
			if done, err := applySegment(cmd, sc, &opts); done || err != nil { // segment.go
				return err
			}
			var bar *progressbar.ProgressBar
			if !quiet && term.IsTerminal(int(os.Stderr.Fd())) {
				bar = progressbar.NewOptions64(100,
					progressbar.OptionSetWriter(os.Stderr),
					progressbar.OptionSetDescription(sc.Name),
					progressbar.OptionShowElapsedTimeOnFinish(),
					progressbar.OptionClearOnFinish(),
					// The bar's own estimate counts from its creation (before the engine's
					// set-up) and from progress steps: the run's own clock says better.
					progressbar.OptionSetPredictTime(false),
					progressbar.OptionSetElapsedTime(false),
					progressbar.OptionSetWidth(20))
				opts.Progress = func(p bench.Progress) {
					bar.Describe(progressText(sc.Name, p))
					_ = bar.Set64(progressPercent(p))
				}
			}
			st, err := startStream(out, checkpoint, sc.Duration.D(), &opts) // stream.go
			if err != nil {
				return err
			}
			defer st.finish(false) // an early return keeps what was streamed
			res, err := bench.Run(ctx, stop, sc, opts)
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				st.finish(false) // a checkpoint and the series file stay, for qbench recover
				return startInterrupted(err)
			}
			rec.stamp(res)
			// The summary first: if the result cannot be written, the figures are still shown.
			if err := results.WriteSummary(cmd.OutOrStdout(), res); err != nil {
				return err
			}
			if out != "" {
				if err := st.writeFinal(out, res); err != nil { // stream.go
					return fmt.Errorf("writing the result: %w", err)
				}
				if !quiet {
					fmt.Fprintf(os.Stderr, "qbench: wrote %s\n", out)
				}
			}
			return interrupted(res.Interrupted, g.check(cmd, out, res, ""))
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the JSON result to this file (a directory for a matrix)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "quiet: nothing on stderr but errors and warnings (no progress, no child server's start-up notice)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run (go tool pprof) to this file")
	cmd.Flags().StringVar(&memProfile, "memprofile", "", "write an allocation profile of the run (go tool pprof -sample_index=alloc_space) to this file")
	cmd.Flags().StringVar(&tracePath, "trace", "", "write an execution trace of the run (go tool trace) to this file: GC pauses, scheduling, system calls; keep the run short")
	cmd.Flags().BoolVar(&schedLat, "sched-latencies", false, "print the run's goroutine scheduling latencies (runtime/metrics /sched/latencies:seconds) on stderr")
	cmd.Flags().BoolVar(&idlePoll, "idle-poll", false, "hold a CPU latency limit of 0 (/dev/cpu_dma_latency, root) for the run: idle CPUs poll instead of halting, for every process on the machine (on a VM a halted vCPU's wake-up is charged as steal)")
	cmd.Flags().StringVar(&marksListen, "marks-listen", "", "take fault marks from qbench mark (faults something else injects) over HTTP at HOST:PORT (a bare :PORT is loopback; port 0 picks one and says which)")
	ov.flags(cmd)
	streamFlag(cmd, &checkpoint) // stream.go
	memoryBudgetFlag(cmd)
	switchFlag(cmd)
	segmentFlags(cmd)
	metricsFlags(cmd)
	g = addGating(cmd)
	return cmd
}

// startCPUProfile profiles the whole process (producers, consumers, and an in-process server
// when the engine is embedded) until the returned function is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func validateCmd() *cobra.Command {
	var ov overrides
	cmd := &cobra.Command{
		Use:   "validate SCENARIO.yaml...",
		Short: "Check scenario files without running them (with run's --duration, --rate and --set applied)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var failed int
			for _, path := range args {
				if _, err := loadScenarioWith(path, ov.list()); err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed++
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", path)
			}
			if failed > 0 {
				return usageError{fmt.Errorf("%d of %d scenario files are invalid", failed, len(args))}
			}
			return nil
		},
	}
	ov.flags(cmd)
	memoryBudgetFlag(cmd)
	return cmd
}

// checkOutputPath fails before a run starts when a file the run writes afterwards (the result,
// the comparison's JSON, JUnit or Markdown) could not be written (a missing directory, no
// permission), so an hour's run is not lost for a typo in a flag.
func checkOutputPath(flag, path string) error {
	if path == "" {
		return nil
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return usageError{fmt.Errorf("%s %s: cannot write the result there: %w", flag, path, err)}
	}
	f.Close()
	if os.IsNotExist(statErr) {
		os.Remove(path) // it did not exist before the check
	}
	return nil
}

// progressPercent is the bar's percentage, of the same rounded elapsed time progressText shows
// (the bar once said 66% beside "3s of 3s": it truncated what the text rounded).
func progressPercent(p bench.Progress) int64 {
	if p.Duration <= 0 {
		return 100
	}
	return min(int64(100*p.Elapsed.Round(time.Second)/p.Duration), 100)
}

// progressText describes a run's progress: where it is on its own clock, how long is left, and
// the last second's figures.
func progressText(name string, p bench.Progress) string {
	phase := ""
	if p.Warmup {
		phase = " warm-up"
	}
	left := max(p.Duration-p.Elapsed, 0)
	return fmt.Sprintf("%s%s %s of %s, %s left: %d msg/s, p99 %s, lag %d", name, phase,
		p.Elapsed.Round(time.Second), p.Duration, left.Round(time.Second), p.Rate, results.FormatNs(int64(p.ProduceP99)), p.Lag)
}
