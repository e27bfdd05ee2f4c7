package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/engines"
	"qbench/engines/nullq"
	"qbench/results"
	"qbench/scenarios"
)

// nullEngine is the engine calibrate replays a scenario's shape on.
const nullEngine = "nullq"

// calibration is what `qbench calibrate --json` prints.
type calibration struct {
	Scenario string          `json:"scenario"`
	Shape    calShape        `json:"shape"`
	Machine  results.Machine `json:"machine"`
	// Floor is the generator's own latency at a low rate: no engine can be measured below it.
	Floor calRun `json:"floor"`
	// Ceiling is the highest rate the generator sustains with this shape.
	Ceiling calCeiling `json:"ceiling"`
	// Interrupted is true when Ctrl-C stopped the search early.
	Interrupted bool `json:"interrupted,omitempty"`
}

// calShape is what of the scenario the null engine replays.
type calShape struct {
	Engine      string `json:"engine"`
	Design      string `json:"design"`
	Producers   int    `json:"producers"`
	Consumers   int    `json:"consumers"`
	Batch       int    `json:"batch"`
	InFlight    int    `json:"in_flight"`
	MessageSize int    `json:"message_size"`
}

type calRun struct {
	OfferedRate     float64                    `json:"offered_rate"`
	ProduceRate     float64                    `json:"produce_rate"`
	ProduceBytes    float64                    `json:"produce_bytes_rate"`
	MeasuredSeconds float64                    `json:"measured_seconds"`
	Latency         map[string]results.Latency `json:"latency"`
	Generator       results.Generator          `json:"generator"`
	Warnings        []string                   `json:"warnings,omitempty"`
}

type calCeiling struct {
	// Objective is what each rate was held to.
	Objective []string `json:"objective"`
	// Best is the highest rate that met it; FailedAt the lowest that missed (0: none did).
	Best     float64   `json:"best_rate"`
	FailedAt float64   `json:"failed_at,omitempty"`
	Steps    []calStep `json:"steps"`
}

type calStep struct {
	Rate            float64  `json:"rate"`
	Pass            bool     `json:"pass"`
	Reasons         []string `json:"reasons,omitempty"`
	ProduceRate     float64  `json:"produce_rate"`
	ProduceBytes    float64  `json:"produce_bytes_rate"`
	SendDelayP99    int64    `json:"send_delay_p99_ns"`
	ProduceP99      int64    `json:"produce_p99_ns"`
	CPUPerMessageNs float64  `json:"cpu_per_message_ns"`
	CPUShare        float64  `json:"cpu_share"`
}

type calOptions struct {
	rate          float64
	duration      time.Duration
	probe         time.Duration
	maxSendDelay  time.Duration
	lim           bench.SearchLimits
	asJSON, quiet bool
}

func calibrateCmd() *cobra.Command {
	var o calOptions
	cmd := &cobra.Command{
		Use:   "calibrate SCENARIO.yaml",
		Short: "Measure the load generator itself: its latency floor and highest rate with the scenario's shape, on the null engine",
		Long: `calibrate replays the scenario's shape (producers, consumers, batch, in_flight, message size,
work, and the design's fan-out) on the null engine, an in-process channel with no network or
storage, so that everything measured is qbench's own cost on this machine:

  the floor: produce, send-delay and end-to-end latency at a low rate (--rate, default the
  scenario's rate, or 1000 msg/s for a closed loop), and the CPU per message;
  the ceiling: the highest rate the generator sustains (step up from the floor's rate, doubling,
  then bisect), where a rate is sustained when the producers achieve 95% of it, the backlog does
  not grow, and send delay p99 stays within --max-send-delay.

A result on a real engine whose latency is near the floor, or whose rate is near the ceiling,
describes qbench rather than the engine. Faults, gates, persistence and replicas are ignored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			if len(sc.Matrix.Axes) > 0 {
				return usageError{errors.New("calibrate measures one shape; this scenario has a matrix (calibrate one of its cells)")}
			}
			if o.duration < time.Second || o.probe < 500*time.Millisecond {
				return usageError{fmt.Errorf("--duration must be at least 1s and --probe at least 500ms (got %s, %s)", o.duration, o.probe)}
			}
			if o.rate < 0 || o.maxSendDelay <= 0 {
				return usageError{errors.New("--rate must not be negative and --max-send-delay must be positive")}
			}
			if o.rate == 0 {
				o.rate = 1000
				if !sc.Rate.Max && sc.Rate.PerSecond > 0 {
					o.rate = sc.Rate.PerSecond
				}
			}
			ctx, stop, cancel := loadContext()
			defer cancel()
			cal, err := calibrate(ctx, stop, sc, o)
			if err != nil {
				return err
			}
			if o.asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(cal)
			}
			return writeCalibration(cmd.OutOrStdout(), cal)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.rate, "rate", 0, "rate of the floor run and first rate of the search, msg/s (default: the scenario's rate, or 1000)")
	f.DurationVar(&o.duration, "duration", 5*time.Second, "length of the floor run")
	f.DurationVar(&o.probe, "probe", 3*time.Second, "length of each run of the rate search")
	f.DurationVar(&o.maxSendDelay, "max-send-delay", time.Millisecond, "a sustained rate keeps send delay p99 within this")
	f.Float64Var(&o.lim.High, "high", 0, "highest rate to try, msg/s (0: no ceiling but --max-runs)")
	f.Float64Var(&o.lim.Precision, "precision", 0.05, "stop when the highest pass and lowest miss are within this fraction")
	f.IntVar(&o.lim.MaxRuns, "max-runs", 10, "most runs of the rate search")
	f.BoolVar(&o.asJSON, "json", false, "print the calibration as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	memoryBudgetFlag(cmd)
	switchFlag(cmd)
	return cmd
}

// nullShape is sc's shape on the null engine: what the generator does stays, what only an engine
// would do (faults, persistence, replicas, waits, gates) goes.
func nullShape(sc *scenarios.Scenario, rate float64, d time.Duration) *scenarios.Scenario {
	c := *sc
	c.Engine, c.Address, c.Replicas = nullEngine, "", 0
	c.Policy, c.Persistence = "", nil
	// The engine's section goes (the null engine does not read it); what it did to who receives
	// what stays: a stream's groups (the registration's count) become the null engine's.
	c.Sections, c.Options = nil, nil
	if g := sc.ReceivingGroups(); sc.Design == "stream" && g > 1 {
		c.Options = nullq.Options{Capacity: nullq.Capacity, Groups: g}
	}
	c.Faults, c.Gates, c.Matrix, c.Repeat, c.PoisonEvery = nil, nil, scenarios.Matrix{}, 0, 0
	if reg, err := engines.Lookup(nullEngine); err == nil && !reg.Supports(c.Design) {
		c.Design = reg.Designs[0]
	}
	c.Rate = scenarios.Rate{PerSecond: rate}
	c.Duration, c.Warmup = scenarios.Duration(d), scenarios.Duration(d/5)
	// The null engine drains at once unless the generator fell behind; a short drain bounds a
	// probe that overran.
	c.DrainTimeout = scenarios.Duration(time.Second)
	return &c
}

func calibrate(ctx, stop context.Context, sc *scenarios.Scenario, o calOptions) (*calibration, error) {
	progress := logf(o.quiet)
	shape := nullShape(sc, o.rate, o.duration)
	cal := &calibration{Scenario: sc.Name,
		Shape: calShape{Engine: nullEngine, Design: shape.Design, Producers: shape.Producers, Consumers: shape.Consumers,
			Batch: shape.Batch, InFlight: shape.InFlight, MessageSize: shape.MessageSize.Largest()},
		Machine: results.Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}}
	if h, err := os.Hostname(); err == nil {
		cal.Machine.Hostname = h
	}
	runOpts := bench.Options{Logf: logf(false)}

	progress("floor: %.0f msg/s for %s on the null engine", o.rate, o.duration)
	res, err := bench.Run(ctx, stop, shape, runOpts)
	if err != nil {
		return nil, err
	}
	if res.Interrupted {
		return nil, errors.New("interrupted during the floor run")
	}
	s := res.Summary
	cal.Floor = calRun{OfferedRate: s.OfferedRate, ProduceRate: s.ProduceRate, ProduceBytes: s.ProduceBytesRate, MeasuredSeconds: s.MeasuredSeconds,
		Latency: s.Latency, Generator: s.Generator, Warnings: s.Warnings}

	objective := fmt.Sprintf("send_delay.p99 <= %s", o.maxSendDelay)
	gates, err := results.ParseGates([]string{objective}, "objective")
	if err != nil {
		return nil, err
	}
	obj := results.Objective{Gates: gates, Duration: o.probe}
	cal.Ceiling.Objective = []string{objective, "lag not growing", "95% of the offered rate achieved"}
	probe := func(_ context.Context, rate float64) (bool, error) {
		progress("ceiling: trying %.0f msg/s for %s", rate, o.probe)
		res, err := bench.Run(ctx, stop, nullShape(sc, rate, o.probe), runOpts)
		if err != nil {
			return false, err
		}
		if res.Interrupted {
			return false, bench.ErrSearchStopped
		}
		pass, why := obj.Check(res)
		s := res.Summary
		cal.Ceiling.Steps = append(cal.Ceiling.Steps, calStep{Rate: rate, Pass: pass, Reasons: why, ProduceRate: s.ProduceRate, ProduceBytes: s.ProduceBytesRate,
			SendDelayP99: s.Latency["send_delay"].P99, ProduceP99: s.Latency["produce"].P99,
			CPUPerMessageNs: s.Generator.CPUPerMessageNs, CPUShare: s.Generator.CPUShare})
		verdict := "met"
		if !pass {
			verdict = "missed: " + strings.Join(why, "; ")
		}
		progress("%.0f msg/s: %s", rate, verdict)
		return pass, nil
	}
	// Up from the floor's rate; when even that misses, start again from a quarter of it (below
	// the lowest miss), down to minRate, within --max-runs in all.
	const minRate = 100
	lim := o.lim
	lim.Low = o.rate
	var best, failedAt float64
	for {
		var steps []bench.SearchStep
		best, failedAt, steps, err = bench.SearchRate(stop, probe, lim)
		lim.MaxRuns -= len(steps)
		if err != nil || best > 0 || lim.Low <= minRate || lim.MaxRuns <= 0 {
			break
		}
		lim.High = failedAt - 1
		lim.Low = max(minRate, math.Round(lim.Low/4))
		progress("%.0f msg/s missed; starting again from %.0f msg/s", failedAt, lim.Low)
	}
	// The lowest miss above the best pass, over both searches.
	failedAt = 0
	for _, st := range cal.Ceiling.Steps {
		if !st.Pass && st.Rate > best && (failedAt == 0 || st.Rate < failedAt) {
			failedAt = st.Rate
		}
	}
	cal.Ceiling.Best, cal.Ceiling.FailedAt = best, failedAt
	if errors.Is(err, bench.ErrSearchStopped) {
		cal.Interrupted, err = true, nil
	}
	return cal, err
}

func writeCalibration(w io.Writer, c *calibration) error {
	sh := c.Shape
	fmt.Fprintf(w, "calibration of %s on the null engine (design %s): %d producers, %d consumers, batch %d, in_flight %d, %d-byte messages; %d CPUs\n",
		c.Scenario, sh.Design, sh.Producers, sh.Consumers, sh.Batch, sh.InFlight, sh.MessageSize, c.Machine.CPUs)
	if c.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the rate search was stopped early")
	}
	f := c.Floor
	fmt.Fprintf(w, "\ngenerator floor at %.0f msg/s, %s/s (%.1f s measured): no engine measures below this\n", f.OfferedRate, results.FormatBytes(f.ProduceBytes), f.MeasuredSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency\tp50\tp99\tp99.9\tmax\t")
	for _, k := range results.LatencyKinds {
		l := f.Latency[k]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", k, results.FormatNs(l.P50), results.FormatNs(l.P99), results.FormatNs(l.P999), results.FormatNs(l.Max))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "CPU: %s per message (sent + deliveries), %.0f%% of the machine\n", formatCPU(f.Generator.CPUPerMessageNs), 100*f.Generator.CPUShare)
	for _, msg := range f.Warnings {
		fmt.Fprintf(w, "warning: %s\n", msg)
	}

	ce := c.Ceiling
	fmt.Fprintln(w)
	switch {
	case ce.Best == 0:
		fmt.Fprintf(w, "generator ceiling: below %.0f msg/s (the lowest rate tried missed)\n", ce.FailedAt)
	case ce.FailedAt == 0:
		fmt.Fprintf(w, "generator ceiling: at least %.0f msg/s (nothing tried missed)\n", ce.Best)
	default:
		fmt.Fprintf(w, "generator ceiling: %.0f msg/s (missed at %.0f)\n", ce.Best, ce.FailedAt)
	}
	fmt.Fprintf(w, "  a rate is sustained when: %s\n", strings.Join(ce.Objective, ", "))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  rate\tachieved\tbytes/s\tsend delay p99\tproduce p99\tCPU/msg\tCPU share\tverdict")
	for _, s := range ce.Steps {
		verdict := "met"
		if !s.Pass {
			verdict = "missed: " + strings.Join(s.Reasons, "; ")
		}
		fmt.Fprintf(tw, "  %.0f\t%.0f\t%s/s\t%s\t%s\t%s\t%.0f%%\t%s\n", s.Rate, s.ProduceRate, results.FormatBytes(s.ProduceBytes), results.FormatNs(s.SendDelayP99),
			results.FormatNs(s.ProduceP99), formatCPU(s.CPUPerMessageNs), 100*s.CPUShare, verdict)
	}
	return tw.Flush()
}

func formatCPU(ns float64) string {
	if ns <= 0 {
		return "-"
	}
	return results.FormatNs(int64(ns + 0.5))
}
