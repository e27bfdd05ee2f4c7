package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/results"
	"qbench/scenarios"
)

// gateError is a run or comparison with a gate that failed conclusively (or, under --strict,
// an inconclusive one): exit code 3. names are the gates (with their cell in a matrix).
type gateError struct {
	names  []string
	strict bool
}

func (e gateError) Error() string {
	if e.strict {
		return fmt.Sprintf("%d gate(s) failed or inconclusive (--strict): %s", len(e.names), strings.Join(e.names, "; "))
	}
	return fmt.Sprintf("%d gate(s) failed: %s", len(e.names), strings.Join(e.names, "; "))
}

// inconclusiveError is a comparison whose gates did not fail conclusively but did not all hold
// either: a gate missed on flagged figures or within the repetitions' range. Exit code 5.
type inconclusiveError struct{ names []string }

func (e inconclusiveError) Error() string {
	return fmt.Sprintf("inconclusive: %d gate(s) missed on flagged figures or within the repetitions' range (not a regression; --strict fails on it): %s",
		len(e.names), strings.Join(e.names, "; "))
}

// gateExprs names gates, each prefixed with prefix (a matrix cell's name and ": ", or "").
func gateExprs(prefix string, gs []results.GateResult) []string {
	var out []string
	for _, g := range gs {
		out = append(out, prefix+g.Expr)
	}
	return out
}

// gateOptions are the flags shared by compare and run --baseline.
type gateOptions struct {
	gates           []string
	noise           bool
	allowDifferent  bool
	noScenarioGates bool
	strict          bool
	format          string
	jsonOut         string
	junitOut        string
	markdownOut     string
}

func (o *gateOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.gates, "gate", nil, "a gate, e.g. 'e2e.p99 <= 20ms', 'lost == 0', 'produce.p99 <= +10%' (repeatable); added to the scenario's own gates: list")
	f.BoolVar(&o.noise, "noise", false, "noise-aware relative gates: allow for the spread across repetitions (see qbench merge --repetitions); on by default when the baseline has repetitions")
	f.BoolVar(&o.allowDifferent, "allow-different", false, "compare results of different scenarios (otherwise a usage error, exit 2)")
	f.BoolVar(&o.noScenarioGates, "no-scenario-gates", false, "ignore the scenario's own gates: list")
	f.BoolVar(&o.strict, "strict", false, "an inconclusive verdict (a gate missed on flagged figures or within the repetitions' range) fails like a regression: exit 3, not 5")
	f.BoolVar(&o.strict, "fail-on-inconclusive", false, "same as --strict")
	f.StringVar(&o.jsonOut, "json", "", "write the gates' verdicts and every metric's baseline, current value and change as JSON to this file (the result itself is -o)")
	f.StringVar(&o.junitOut, "junit", "", "also write the gates as JUnit XML to this file")
	f.StringVar(&o.markdownOut, "markdown", "", "also write a Markdown summary (for a pull-request comment) to this file")
}

// parse checks the flag gates before any work is done; errors are usage errors.
func (o *gateOptions) parse() ([]results.Gate, error) {
	gs, err := results.ParseGates(o.gates, "flag")
	if err != nil {
		return nil, usageError{err}
	}
	switch o.format {
	case "", "text", "json", "markdown", "junit":
	default:
		return nil, usageError{fmt.Errorf("--format %q: want text, json, markdown or junit", o.format)}
	}
	return gs, nil
}

// gatesFor adds the scenario's gates to the flag gates. Without a baseline, the scenario's
// relative gates cannot be checked and are skipped with a warning.
func (o *gateOptions) gatesFor(flagGates []results.Gate, current *results.Result, haveBaseline bool) ([]results.Gate, error) {
	gates := append([]results.Gate(nil), flagGates...)
	if o.noScenarioGates {
		return gates, nil
	}
	sg, err := results.ScenarioGates(current)
	if err != nil {
		return nil, usageError{err}
	}
	for _, g := range sg {
		if g.Relative && !haveBaseline {
			fmt.Fprintf(os.Stderr, "qbench: warning: scenario gate %q is relative and there is no baseline; skipped\n", g.Expr)
			continue
		}
		gates = append(gates, g)
	}
	return gates, nil
}

// gateOpts resolves --noise: given explicitly it wins; otherwise the noise-aware mode is on when
// the baseline carries repetitions (a baseline recorded that way was recorded to measure noise).
func (o *gateOptions) gateOpts(cmd *cobra.Command, baseline *results.Result) results.GateOptions {
	opt := results.GateOptions{Noise: baseline != nil && len(baseline.Repetitions) >= 2, Effective: effectiveScenario}
	if f := cmd.Flags().Lookup("noise"); f != nil && f.Changed {
		opt.Noise = o.noise
	}
	return opt
}

// checkSame refuses a comparison of different scenarios unless --allow-different was given.
func (o *gateOptions) checkSame(c *results.Comparison) error {
	if len(c.ScenarioDiffers) == 0 || o.allowDifferent {
		return nil
	}
	return usageError{fmt.Errorf("baseline and current ran different scenarios (they differ in %s, defaults filled in); compare like with like, or pass --allow-different",
		strings.Join(c.ScenarioDiffers, ", "))}
}

// comparisonOut is what report writes: a comparison of two results or of two sweeps.
type comparisonOut interface {
	WriteText(io.Writer) error
	WriteJSON(io.Writer) error
	WriteMarkdown(io.Writer) error
	WriteJUnit(io.Writer) error
}

// report writes the comparison to stdout and the requested files, names the failing and
// inconclusive gates on stderr and returns a gateError (a gate failed; or, with --strict, was
// inconclusive) or an inconclusiveError.
func (o *gateOptions) report(stdout io.Writer, c *results.Comparison) error {
	if err := o.write(stdout, c, c.WriteGates); err != nil {
		return err
	}
	failed, inc := results.FailedGates(c.Gates), results.InconclusiveGates(c.Gates)
	for _, g := range failed {
		fmt.Fprintf(os.Stderr, "qbench: gate failed: %s\n", g.Describe())
	}
	for _, g := range inc {
		fmt.Fprintf(os.Stderr, "qbench: gate inconclusive: %s\n", g.Describe())
	}
	return o.verdictError(gateExprs("", failed), gateExprs("", inc))
}

// reportMatrix is report for two sweeps compared cell by cell.
func (o *gateOptions) reportMatrix(stdout io.Writer, mc *results.MatrixComparison) error {
	if err := o.write(stdout, mc, mc.WriteText); err != nil {
		return err
	}
	var failed, inc []string
	for _, c := range mc.Cells {
		if c.Comparison == nil {
			fmt.Fprintf(os.Stderr, "qbench: cell %s inconclusive: %s\n", c.Name, c.Missing)
			inc = append(inc, c.Name+": "+c.Missing)
			continue
		}
		for _, g := range results.FailedGates(c.Comparison.Gates) {
			fmt.Fprintf(os.Stderr, "qbench: cell %s: gate failed: %s\n", c.Name, g.Describe())
		}
		for _, g := range results.InconclusiveGates(c.Comparison.Gates) {
			fmt.Fprintf(os.Stderr, "qbench: cell %s: gate inconclusive: %s\n", c.Name, g.Describe())
		}
		failed = append(failed, gateExprs(c.Name+": ", results.FailedGates(c.Comparison.Gates))...)
		inc = append(inc, gateExprs(c.Name+": ", results.InconclusiveGates(c.Comparison.Gates))...)
	}
	return o.verdictError(failed, inc)
}

// write prints c on stdout in --format (gatesOnly for the "gates" format run uses without a
// baseline) and to the --json, --junit and --markdown files.
func (o *gateOptions) write(stdout io.Writer, c comparisonOut, gatesOnly func(io.Writer) error) error {
	writers := map[string]func(io.Writer) error{
		"text": c.WriteText, "": c.WriteText, "gates": gatesOnly, "json": c.WriteJSON, "markdown": c.WriteMarkdown, "junit": c.WriteJUnit,
	}
	if err := writers[o.format](stdout); err != nil {
		return err
	}
	for path, write := range map[string]func(io.Writer) error{o.jsonOut: c.WriteJSON, o.junitOut: c.WriteJUnit, o.markdownOut: c.WriteMarkdown} {
		if path == "" {
			continue
		}
		if err := writeFileWith(path, write); err != nil {
			return err
		}
	}
	return nil
}

// verdictError is the exit status of a comparison: a regression (3) when a gate failed, else
// inconclusive (5; 3 with --strict) when one was, else none.
func (o *gateOptions) verdictError(failed, inconclusive []string) error {
	switch {
	case len(failed) > 0:
		return gateError{names: failed}
	case len(inconclusive) > 0 && o.strict:
		return gateError{names: inconclusive, strict: true}
	case len(inconclusive) > 0:
		return inconclusiveError{inconclusive}
	}
	return nil
}

func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readResult reads a result file named on the command line; a missing or foreign file is the
// user's mistake (exit 2).
func readResult(path string) (*results.Result, error) {
	r, err := results.ReadFile(path)
	if err != nil {
		return nil, usageError{err}
	}
	return r, nil
}

func compareCmd() *cobra.Command {
	var o gateOptions
	cmd := &cobra.Command{
		Use:   "compare BASELINE.json CURRENT.json",
		Short: "Compare a result (or a sweep's index.json) with a baseline and check gates; exit 3 on a regression, 5 when inconclusive",
		Long: `Compare prints each metric's baseline, current value and change, then checks the gates:
those given with --gate and those in the current result's scenario (gates:). Each side's trust
verdict is shown first: trusted, or flagged with the codes of what makes its figures doubtful
(generator-late, machine-busy, unsent, ...), each with its text.

Gates: METRIC OP VALUE, OP one of <= < >= > == !=.
  absolute   e2e.p99 <= 20ms    lost == 0    unsent == 0    produce_rate >= 4900
  relative   produce.p99 <= +10%    produce_rate >= -5%   (against the baseline)
Metrics: KIND.STAT with KIND produce, send_delay, e2e and STAT p50 p90 p99 p99.9 p99.99
max mean min; produce_rate, deliver_rate, lost, duplicates, failed (failed sends), unsent,
knee (the knee's offered rate), engine_cpu_per_msg (the engine server's CPU per acknowledged
message), delivered_unacked, phantom, produce_errors, consume_errors, lag_max,
engine_lag_max, histogram_dropped.

Each gate passes, fails, or is inconclusive: it missed its bound, but either side is flagged
(its figures may describe the machine or the generator), or, with --noise (the default when
the baseline has repetitions; --noise=false turns it off), the change is within the range R
(max - min) of the repetitions' values (results merged with qbench merge --repetitions):
the bound a miss must also pass to be conclusive is baseline + R (baseline - R for >=).

Two sweeps' index.json files are compared cell by cell (cells matched by their parameters),
one verdict per cell and one overall; a cell in one sweep only is inconclusive.

The two results must have run the same scenario: their scenarios are compared with today's
defaults filled in (so a baseline recorded before a default existed still matches) and the seed
left out. Different scenarios are a usage error unless --allow-different is given.

Exit codes: 0 every gate holds, 1 runtime error, 2 usage error (including different scenarios),
3 a regression: a gate failed conclusively (named on stderr), 5 inconclusive: no gate failed
conclusively but one missed (named on stderr); --strict (--fail-on-inconclusive) makes that 3.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			flagGates, err := o.parse()
			if err != nil {
				return err
			}
			if matrix, err := indexArgs(args[0], args[1]); err != nil {
				return err
			} else if matrix {
				return o.compareMatrix(cmd, flagGates, args[0], args[1])
			}
			base, err := readResult(args[0])
			if err != nil {
				return err
			}
			cur, err := readResult(args[1])
			if err != nil {
				return err
			}
			gates, err := o.gatesFor(flagGates, cur, true)
			if err != nil {
				return err
			}
			c := results.Compare(base, cur, args[0], args[1], gates, o.gateOpts(cmd, base))
			if err := o.checkSame(c); err != nil {
				return err
			}
			return o.report(cmd.OutOrStdout(), c)
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.format, "format", "text", "what to print on stdout: text, json, markdown or junit")
	return cmd
}

// indexArgs tells whether compare's two files are sweeps' index.json files (compared cell by
// cell) or results; one of each is a usage error.
func indexArgs(base, cur string) (bool, error) {
	bi, err := results.IsIndexFile(base)
	if err != nil {
		return false, usageError{err}
	}
	ci, err := results.IsIndexFile(cur)
	if err != nil {
		return false, usageError{err}
	}
	if bi != ci {
		return false, usageError{fmt.Errorf("compare two results or two sweeps' index.json files, not one of each (%s is %s, %s is %s)",
			base, kindName(bi), cur, kindName(ci))}
	}
	return bi, nil
}

func kindName(index bool) string {
	if index {
		return "an index"
	}
	return "a result"
}

// compareMatrix compares two sweeps cell by cell and reports one verdict per cell and overall.
func (o *gateOptions) compareMatrix(cmd *cobra.Command, flagGates []results.Gate, basePath, curPath string) error {
	base, err := results.ReadIndexFile(basePath)
	if err != nil {
		return usageError{err}
	}
	cur, err := results.ReadIndexFile(curPath)
	if err != nil {
		return usageError{err}
	}
	return o.matrixVerdict(cmd, flagGates, base, cur, basePath, curPath)
}

// matrixVerdict is compareMatrix's work on indexes already read (run --baseline of a matrix
// shares it): each current cell's gates are the flags' and its scenario's.
func (o *gateOptions) matrixVerdict(cmd *cobra.Command, flagGates []results.Gate, base, cur *results.Index, basePath, curPath string) error {
	mc, err := results.CompareMatrix(base, cur, basePath, curPath, results.MatrixInputs{
		Gates:   func(r *results.Result) ([]results.Gate, error) { return o.gatesFor(flagGates, r, true) },
		Options: func(b *results.Result) results.GateOptions { return o.gateOpts(cmd, b) },
	})
	if err != nil {
		return usageError{err}
	}
	for _, c := range mc.Cells {
		if c.Comparison != nil {
			if err := o.checkSame(c.Comparison); err != nil {
				return usageError{fmt.Errorf("cell %s: %w", c.Name, err)}
			}
		}
	}
	return o.reportMatrix(cmd.OutOrStdout(), mc)
}

// gating is qbench run's --baseline and gate flags: prepare checks them before the run, check
// compares the result with the baseline and checks the gates after the summary. Both are
// explicit steps of run (and of each cell of a sweep).
type gating struct {
	o            gateOptions
	baselinePath string
	flagGates    []results.Gate
	baseline     *results.Result
	// baselineIndex is set instead of baseline when --baseline is a sweep's index.json: the
	// matrix run is then compared with it cell by cell.
	baselineIndex *results.Index
}

// addGating adds --baseline and the gate flags to cmd.
func addGating(cmd *cobra.Command) *gating {
	g := &gating{}
	g.o.register(cmd)
	cmd.Flags().StringVar(&g.baselinePath, "baseline", "", "compare the run with this result file (see results/baselines/), or a matrix with a sweep's index.json cell by cell, and check the gates")
	return g
}

// prepare parses the gate flags, reads the baseline, checks that it ran the same scenario as sc
// (unless --allow-different) and that the comparison's files can be written, so that each of
// these mistakes fails before the run rather than after it.
func (g *gating) prepare(sc *scenarios.Scenario) error {
	var err error
	if g.flagGates, err = g.o.parse(); err != nil {
		return err
	}
	for _, gt := range g.flagGates {
		if gt.Relative && g.baselinePath == "" {
			return usageError{fmt.Errorf("gate %q is relative: it needs --baseline", gt.Expr)}
		}
	}
	if g.baselinePath != "" {
		index, err := results.IsIndexFile(g.baselinePath)
		if err != nil {
			return usageError{err}
		}
		switch matrix := len(sc.Matrix.Axes) > 0; {
		case index && !matrix:
			return usageError{fmt.Errorf("--baseline %s is a sweep's index; this scenario has no matrix: give a result file", g.baselinePath)}
		case !index && matrix:
			return usageError{fmt.Errorf("--baseline %s is one result; a matrix is compared with a sweep's index.json, cell by cell", g.baselinePath)}
		case index:
			if g.baselineIndex, err = results.ReadIndexFile(g.baselinePath); err != nil {
				return usageError{err}
			}
		default:
			if g.baseline, err = readResult(g.baselinePath); err != nil {
				return err
			}
			if err := g.sameScenario(sc); err != nil {
				return err
			}
		}
	}
	for _, f := range []struct{ flag, path string }{{"--json", g.o.jsonOut}, {"--junit", g.o.junitOut}, {"--markdown", g.o.markdownOut}} {
		if err := checkOutputPath(f.flag, f.path); err != nil {
			return err
		}
	}
	return nil
}

// sameScenario compares the baseline's scenario with sc as the run will record it (results hold
// the scenario as run: sc in JSON), by the rule compare applies afterwards (results.ScenarioDiff).
// A matrix is refused elsewhere; a cell's scenario would differ in its swept keys.
func (g *gating) sameScenario(sc *scenarios.Scenario) error {
	if g.o.allowDifferent || len(sc.Matrix.Axes) > 0 {
		return nil
	}
	raw, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	if d := results.ScenarioDiff(g.baseline, &results.Result{Scenario: raw}, effectiveScenario); len(d) > 0 {
		return usageError{fmt.Errorf("--baseline %s ran a different scenario (it differs in %s, defaults filled in); compare like with like, or pass --allow-different",
			g.baselinePath, strings.Join(d, ", "))}
	}
	return nil
}

// check compares res (written to out) with the baseline and checks the gates: the scenario's
// absolute ones and the flags'. Its report, when there is one, opens with header (a sweep's cell
// name; "" for none).
func (g *gating) check(cmd *cobra.Command, out string, res *results.Result, header string) error {
	if res.Segment != nil {
		return nil // a segment is part of a run: its gates are checked on the merged result
	}
	gates, err := g.o.gatesFor(g.flagGates, res, g.baseline != nil)
	if err != nil {
		return err
	}
	if g.baseline == nil && len(gates) == 0 {
		return nil
	}
	if out == "" {
		out = "(this run)"
	}
	fmt.Fprintln(cmd.OutOrStdout())
	if header != "" {
		fmt.Fprintln(cmd.OutOrStdout(), header)
	}
	o := g.o
	c := results.Compare(g.baseline, res, g.baselinePath, out, gates, o.gateOpts(cmd, g.baseline))
	if err := o.checkSame(c); err != nil {
		return err
	}
	if g.baseline == nil && (o.format == "" || o.format == "text") {
		// The summary above has the figures; without a baseline only the gates are news.
		o.format = "gates"
	}
	return o.report(cmd.OutOrStdout(), c)
}

// effectiveScenario reads a result's scenario JSON into today's schema, fills today's defaults
// (the engine's section's included) and writes it back, so that compare sees the scenario as it would run now. The matrix (a
// result's cell has none; a sweep index's does) is carried over as recorded.
func effectiveScenario(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	matrix, hasMatrix := m["matrix"]
	delete(m, "matrix")
	rest, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var sc scenarios.Scenario
	if err := json.Unmarshal(rest, &sc); err != nil {
		return nil, err
	}
	sc.ApplyDefaults()
	// The engine's own section with its defaults, and an older result's top-level sections
	// (stream, list, pubsub, wait) read as the redis: section they are now. A scenario its
	// engine cannot decode is compared as recorded.
	_ = sc.Normalize(bench.Checks())
	out, err := json.Marshal(&sc)
	if err != nil || !hasMatrix {
		return out, err
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	m["matrix"] = matrix
	return json.Marshal(m)
}
