package results

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Gate is one regression bound: "e2e.p99 <= 20ms" (absolute), "lost == 0" (absolute),
// "produce.p99 <= +10%" (relative to the baseline), "produce_rate >= -5%" (relative).
type Gate struct {
	Expr   string `json:"gate"`
	Metric string `json:"metric"`
	Op     string `json:"op"`
	// Value is the absolute bound in the metric's unit (ns for latencies), or the percentage
	// change allowed when Relative.
	Value    float64 `json:"value"`
	Relative bool    `json:"relative,omitempty"`
	// Source says where the gate came from: "flag" or "scenario".
	Source string `json:"source,omitempty"`
	metric Metric
}

var gateOps = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseGate reads a gate expression: METRIC OP VALUE. VALUE is a duration for latencies (20ms,
// 1.5s, 250us; a bare number is nanoseconds), a number for rates and counts, or a signed
// percentage (+10%, -5%) for a bound relative to the baseline.
func ParseGate(expr string) (Gate, error) {
	g := Gate{Expr: strings.TrimSpace(expr)}
	at, op := -1, ""
	for i := 0; i < len(g.Expr) && at < 0; i++ {
		for _, o := range gateOps {
			if strings.HasPrefix(g.Expr[i:], o) {
				at, op = i, o
				break
			}
		}
	}
	if at < 0 {
		return g, fmt.Errorf("gate %q: want METRIC OP VALUE with OP one of %s (e.g. e2e.p99 <= 20ms, produce.p99 <= +10%%, lost == 0)", expr, strings.Join(gateOps, " "))
	}
	g.Op = op
	g.Metric = strings.TrimSpace(g.Expr[:at])
	val := strings.TrimSpace(g.Expr[at+len(op):])
	m, err := LookupMetric(g.Metric)
	if err != nil {
		return g, fmt.Errorf("gate %q: %w", expr, err)
	}
	g.metric = m
	if val == "" {
		return g, fmt.Errorf("gate %q: no value after %s", expr, op)
	}
	if strings.HasSuffix(val, "%") {
		if op == "==" || op == "!=" {
			return g, fmt.Errorf("gate %q: a relative bound needs <, <=, > or >=", expr)
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return g, fmt.Errorf("gate %q: %q is not a percentage (write e.g. +10%%)", expr, val)
		}
		g.Value, g.Relative = v, true
		return g, nil
	}
	v, err := parseValue(m.Unit, val)
	if err != nil {
		return g, fmt.Errorf("gate %q: %w", expr, err)
	}
	g.Value = v
	return g, nil
}

func parseValue(u Unit, s string) (float64, error) {
	if u == UnitNs {
		if d, err := time.ParseDuration(strings.ReplaceAll(s, "µ", "u")); err == nil {
			return float64(d), nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if u == UnitNs {
			return 0, fmt.Errorf("%q is not a duration (write e.g. 20ms, 1.5s or 250us)", s)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// ParseGates parses several gates, all marked with source.
func ParseGates(exprs []string, source string) ([]Gate, error) {
	var out []Gate
	for _, e := range exprs {
		g, err := ParseGate(e)
		if err != nil {
			return nil, err
		}
		g.Source = source
		out = append(out, g)
	}
	return out, nil
}

// ScenarioGates reads the gates a result's scenario declares (its gates: list). A result only
// carries the scenario as JSON, and this package does not import scenarios.
func ScenarioGates(r *Result) ([]Gate, error) {
	if len(r.Scenario) == 0 {
		return nil, nil
	}
	var sc struct {
		Gates []string `json:"gates"`
	}
	if err := json.Unmarshal(r.Scenario, &sc); err != nil {
		return nil, fmt.Errorf("reading the scenario's gates: %w", err)
	}
	return ParseGates(sc.Gates, "scenario")
}

// Gate verdicts. A gate is inconclusive when it missed its bound but the miss is no evidence of
// a regression: either result is flagged (Trust: its figures may describe the generator or the
// machine rather than the engine), or the change is within the repetitions' range.
const (
	GatePass         = "pass"
	GateFail         = "fail"
	GateInconclusive = "inconclusive"
)

// GateResult is one gate checked.
type GateResult struct {
	Gate
	Current float64 `json:"current"`
	// Baseline is set for relative gates.
	Baseline *float64 `json:"baseline,omitempty"`
	// Limit is the bound the current value was held to, in the metric's unit: the absolute
	// value, or the baseline moved by the gate's percentage.
	Limit float64 `json:"limit"`
	// Noise is the repetitions' range R (max - min, the wider of baseline's and current's) in
	// noise-aware mode, relative gates only; NoiseLimit is the baseline moved by R in the
	// gate's direction (baseline + R for <=), the bound a miss must also pass to be conclusive.
	Noise      float64 `json:"noise,omitempty"`
	NoiseLimit float64 `json:"noise_limit,omitempty"`
	// Pass is true when the current value held the bound (Verdict pass); false for a failed or
	// inconclusive gate.
	Pass bool `json:"pass"`
	// Verdict is pass, fail or inconclusive; Why says why an inconclusive gate is not a failure.
	Verdict string `json:"verdict"`
	Why     string `json:"why,omitempty"`
	// WithinNoise marks a relative gate that missed its limit by no more than the repetitions'
	// range (inconclusive).
	WithinNoise bool `json:"within_noise,omitempty"`
	// Error says why the gate could not be checked (a relative gate without a baseline, a
	// metric the run did not measure); such a gate fails.
	Error string `json:"error,omitempty"`
}

// GateOptions tune gate checking.
type GateOptions struct {
	// Noise enables the noise-aware mode: a relative gate that misses its percentage is
	// inconclusive, not failed, when the change is within the range R (max - min) across the
	// repetitions of the baseline or the current result, whichever is wider.
	Noise bool
	// Effective fills a result's scenario JSON with the defaults of the current schema, so that a
	// baseline recorded before a default existed compares equal to a run that has it (this
	// package does not import scenarios; cmd/qbench passes it). Nil compares the JSON as recorded.
	Effective func(json.RawMessage) (json.RawMessage, error)
}

// CheckGates holds current (and, for relative gates, baseline) to every gate. A gate that misses
// is inconclusive when either result is flagged (Assess) in a way that touches the gate's
// metric (flagDoubts), or, in noise-aware mode, when the change is within the repetitions' range.
func CheckGates(gates []Gate, baseline, current *Result, opt GateOptions) []GateResult {
	out := make([]GateResult, 0, len(gates))
	var sides []flaggedSide
	for _, side := range []flaggedSide{{name: "baseline", r: baseline}, {name: "current", r: current}} {
		if side.r != nil {
			side.t = Assess(side.r)
			sides = append(sides, side)
		}
	}
	for _, g := range gates {
		r := checkGate(g, baseline, current, opt)
		if r.Verdict == GateFail && r.Error == "" {
			if why := doubts(sides, r.metric); why != "" {
				r.Verdict, r.Why = GateInconclusive, why
			}
		}
		out = append(out, r)
	}
	return out
}

type flaggedSide struct {
	name string
	r    *Result
	t    Trust
}

// countDoubts are the flags that make a count (lost, unsent, duplicates...) doubtful: a part of a
// run, or a run stopped early, has not counted everything, and a failed final sweep leaves in
// lost what the engine may still hold. A busy machine or a late generator makes timings
// doubtful, not counts: a message lost on a busy machine is lost.
var countDoubts = map[string]bool{CodePartial: true, CodeInterrupted: true, CodeSweepFailed: true}

// doubts says which sides carry a suspect flag that makes a miss of metric m no evidence of a
// regression, "" when none does.
func doubts(sides []flaggedSide, m Metric) string {
	var parts []string
	for _, side := range sides {
		var codes []string
		for _, f := range side.t.Suspect() {
			if m.Unit != UnitCount || countDoubts[f.Code] {
				codes = append(codes, f.Code)
			}
		}
		if len(codes) > 0 {
			parts = append(parts, side.name+" flagged "+strings.Join(codes, ","))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": the miss may not be the engine's (see the flags)"
}

func checkGate(g Gate, baseline, current *Result, opt GateOptions) (r GateResult) {
	if g.metric.get == nil && g.metric.of == nil {
		// A Gate built by hand or decoded from JSON: find its metric again.
		m, err := LookupMetric(g.Metric)
		if err != nil {
			return GateResult{Gate: g, Verdict: GateFail, Error: err.Error()}
		}
		g.metric = m
	}
	m := g.metric
	r = GateResult{Gate: g, Current: m.Of(current), Verdict: GateFail}
	if miss := m.Missing(current); miss != "" {
		r.Error = miss
		return r
	}
	defer func() {
		if r.Pass {
			r.Verdict = GatePass
		}
	}()
	if !g.Relative {
		r.Limit = g.Value
		r.Pass = holds(r.Current, g.Op, r.Limit)
		return r
	}
	if baseline == nil {
		r.Error = "a relative gate needs a baseline"
		return r
	}
	if miss := m.Missing(baseline); miss != "" {
		r.Error = "baseline: " + miss
		return r
	}
	base := m.Of(baseline)
	r.Baseline = &base
	r.Limit = base * (1 + g.Value/100)
	r.Pass = holds(r.Current, g.Op, r.Limit)
	if opt.Noise {
		r.Noise = math.Max(Spread(baseline, m), Spread(current, m))
		r.NoiseLimit = r.Limit
		switch g.Op {
		case "<", "<=":
			r.NoiseLimit = math.Max(r.Limit, base+r.Noise)
		case ">", ">=":
			r.NoiseLimit = math.Min(r.Limit, base-r.Noise)
		}
		if !r.Pass && r.Noise > 0 && holds(r.Current, g.Op, r.NoiseLimit) {
			r.WithinNoise = true
			r.Verdict = GateInconclusive
			r.Why = fmt.Sprintf("the change is within the repetitions' range %s (up to %s)", FormatValue(m.Unit, r.Noise), FormatValue(m.Unit, r.NoiseLimit))
		}
	}
	return r
}

func holds(v float64, op string, limit float64) bool {
	switch op {
	case "<=":
		return v <= limit
	case "<":
		return v < limit
	case ">=":
		return v >= limit
	case ">":
		return v > limit
	case "==":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}

// Spread is the range (max - min) of a metric across a result's repetitions, 0 when it has fewer
// than two. With the handful of repetitions a CI job can afford, the range is a more honest
// measure of noise than a standard deviation.
func Spread(r *Result, m Metric) float64 {
	if r == nil || len(r.Repetitions) < 2 {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range r.Repetitions {
		v := m.Of(&Result{Summary: r.Repetitions[i].Summary})
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi - lo
}

// Describe says in one line what a checked gate found.
func (r GateResult) Describe() string {
	u := r.metric.Unit
	if r.metric.get == nil && r.metric.of == nil {
		if m, err := LookupMetric(r.Metric); err == nil {
			u = m.Unit
		}
	}
	if r.Error != "" {
		return fmt.Sprintf("%s: %s", r.Expr, r.Error)
	}
	s := fmt.Sprintf("%s: %s", r.Expr, FormatValue(u, r.Current))
	if r.Baseline != nil {
		s += fmt.Sprintf(", baseline %s", FormatValue(u, *r.Baseline))
		if *r.Baseline != 0 {
			s += fmt.Sprintf(" (%+.1f%%)", 100*(r.Current-*r.Baseline) / *r.Baseline)
		}
		s += fmt.Sprintf(", limit %s", FormatValue(u, r.Limit))
		if r.Noise > 0 {
			s += fmt.Sprintf(" (range %s: up to %s)", FormatValue(u, r.Noise), FormatValue(u, r.NoiseLimit))
		}
	}
	if r.Verdict == GateInconclusive && r.Why != "" {
		s += "; inconclusive: " + r.Why
	}
	return s
}

// Status is a gate's verdict in capitals, for a terminal: PASS, FAIL or INCONCLUSIVE.
func (r GateResult) Status() string {
	switch r.verdict() {
	case GatePass:
		return "PASS"
	case GateInconclusive:
		return "INCONCLUSIVE"
	}
	return "FAIL"
}

// verdict is Verdict, or for a GateResult decoded from a file written before verdicts, pass or
// fail from Pass.
func (r GateResult) verdict() string {
	switch {
	case r.Verdict != "":
		return r.Verdict
	case r.Pass:
		return GatePass
	}
	return GateFail
}

// FailedGates returns the gates that failed conclusively (a regression).
func FailedGates(rs []GateResult) []GateResult { return gatesWith(rs, GateFail) }

// InconclusiveGates returns the gates that missed their bound without evidence of a regression.
func InconclusiveGates(rs []GateResult) []GateResult { return gatesWith(rs, GateInconclusive) }

func gatesWith(rs []GateResult, verdict string) []GateResult {
	var out []GateResult
	for _, r := range rs {
		if r.verdict() == verdict {
			out = append(out, r)
		}
	}
	return out
}

// Overall verdicts of a comparison: a regression when any gate failed conclusively, else
// inconclusive when any gate was, else pass.
const (
	VerdictPass         = "pass"
	VerdictInconclusive = "inconclusive"
	VerdictRegression   = "regression"
)

// OverallVerdict folds gate verdicts into one.
func OverallVerdict(rs []GateResult) string {
	switch {
	case len(FailedGates(rs)) > 0:
		return VerdictRegression
	case len(InconclusiveGates(rs)) > 0:
		return VerdictInconclusive
	}
	return VerdictPass
}
