package results

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// Comparison is a baseline and a current result side by side, with the gates checked.
type Comparison struct {
	// Baseline is nil when only absolute gates were checked against one result.
	Baseline *RunRef        `json:"baseline,omitempty"`
	Current  RunRef         `json:"current"`
	Metrics  []MetricChange `json:"metrics"`
	Gates    []GateResult   `json:"gates"`
	Noise    bool           `json:"noise_aware,omitempty"`
	// Verdict is pass, inconclusive or regression (OverallVerdict of the gates); Pass is true
	// only for pass.
	Verdict string `json:"verdict"`
	Pass    bool   `json:"pass"`
	// Notes are warnings a reader should see (different scenarios, an interrupted run).
	Notes []string `json:"notes,omitempty"`
	// ScenarioDiffers lists the scenario fields (top-level keys of the effective scenario, the
	// seed apart) in which baseline and current differ; qbench compare refuses such a pair
	// (exit 2) unless --allow-different is given.
	ScenarioDiffers []string `json:"scenario_differs,omitempty"`
}

// effective is raw through fill (GateOptions.Effective), or raw as recorded without one.
func effective(raw json.RawMessage, fill func(json.RawMessage) (json.RawMessage, error)) json.RawMessage {
	if fill == nil || len(raw) == 0 {
		return raw
	}
	if e, err := fill(raw); err == nil {
		return e
	}
	return raw
}

// notWorkload are the scenario fields that do not change what a run does to the engine: the seed
// (a repetition's seed is meant to change), the gates a run is held to, how often it is repeated,
// its name and description.
var notWorkload = map[string]bool{"seed": true, "gates": true, "repeat": true, "name": true, "description": true}

// ScenarioDiff names the top-level fields in which two results' effective scenarios differ
// (fill, GateOptions.Effective, may fill in today's defaults), fields that are not the workload
// (notWorkload) apart.
func ScenarioDiff(a, b *Result, fill func(json.RawMessage) (json.RawMessage, error)) []string {
	ea, eb := effective(a.Scenario, fill), effective(b.Scenario, fill)
	if bytes.Equal(ea, eb) {
		return nil
	}
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(ea, &ma) != nil || json.Unmarshal(eb, &mb) != nil {
		return []string{"(scenario)"}
	}
	var out []string
	for k, va := range ma {
		if notWorkload[k] {
			continue
		}
		if vb, ok := mb[k]; !ok || !sameJSON(va, vb) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok && !notWorkload[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// sameJSON compares two JSON values regardless of key order and spacing.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// RunRef names a result in a comparison.
type RunRef struct {
	File        string `json:"file"`
	RunID       string `json:"run_id"`
	Scenario    string `json:"scenario,omitempty"`
	Engine      string `json:"engine"`
	Design      string `json:"design"`
	Repetitions int    `json:"repetitions,omitempty"`
	// Trust is the result's verdict (Assess): whether its figures can be read as the engine's.
	Trust Trust `json:"trust"`
}

// MetricChange is one row of the compare table.
type MetricChange struct {
	Metric   string   `json:"metric"`
	Unit     Unit     `json:"unit"`
	Baseline *float64 `json:"baseline,omitempty"`
	Current  float64  `json:"current"`
	// ChangePct is the relative change; absent when the baseline is 0 or missing.
	ChangePct *float64 `json:"change_pct,omitempty"`
	// Verdict is better, worse or same (within 1%), from the metric's direction.
	Verdict string `json:"verdict,omitempty"`
	// BaselineSpread and CurrentSpread are the repetitions' range R (max - min), when they
	// have repetitions; shown as "range R" and allowed for as baseline + R in noise-aware gates.
	BaselineSpread float64 `json:"baseline_spread,omitempty"`
	CurrentSpread  float64 `json:"current_spread,omitempty"`
	// WithinNoise marks a change no larger than the wider of the two ranges: the repetitions
	// vary that much among themselves, so the change is not evidence of anything.
	WithinNoise bool `json:"within_noise,omitempty"`
}

// SameWithin is the relative change below which the table calls a metric unchanged.
const SameWithin = 0.01

// counters shown in the table only when one of the two results has a non-zero value.
var quietCounters = map[string]bool{"delivered_unacked": true, "phantom": true, "produce_errors": true,
	"consume_errors": true, "histogram_dropped": true, "engine_lag_max": true, "unsent": true, "knee": true, "engine_cpu_per_msg": true}

// Compare builds the table and checks the gates. baseline may be nil; then relative gates fail
// with an error and the table has only current values. Files name the results in the output.
func Compare(baseline, current *Result, baseFile, curFile string, gates []Gate, opt GateOptions) *Comparison {
	c := &Comparison{Current: ref(current, curFile), Noise: opt.Noise}
	if baseline != nil {
		b := ref(baseline, baseFile)
		c.Baseline = &b
		if baseline.Engine.Name != current.Engine.Name || baseline.Engine.Design != current.Engine.Design {
			c.Notes = append(c.Notes, fmt.Sprintf("baseline is %s/%s, current is %s/%s", baseline.Engine.Name, baseline.Engine.Design, current.Engine.Name, current.Engine.Design))
		}
		if d := ScenarioDiff(baseline, current, opt.Effective); len(d) > 0 {
			c.ScenarioDiffers = d
			c.Notes = append(c.Notes, fmt.Sprintf("the scenarios differ in %s (defaults filled, seed apart); the comparison is not like for like", strings.Join(d, ", ")))
		}
		if baseline.Interrupted {
			c.Notes = append(c.Notes, "the baseline run was interrupted")
		}
		if baseline.Checkpoint != nil {
			c.Notes = append(c.Notes, "the baseline is a checkpoint of a run not finished: "+CheckpointHeadline(baseline))
		}
	}
	if current.Interrupted {
		c.Notes = append(c.Notes, "the current run was interrupted")
	}
	if current.Checkpoint != nil {
		c.Notes = append(c.Notes, "the current result is a checkpoint of a run not finished: "+CheckpointHeadline(current))
	}
	if opt.Noise && len(current.Repetitions) < 2 && (baseline == nil || len(baseline.Repetitions) < 2) {
		c.Notes = append(c.Notes, "noise-aware mode: neither result has repetitions, so no noise is allowed for")
	} else if opt.Noise {
		c.Notes = append(c.Notes, fmt.Sprintf("noise-aware mode: a change within the spread of the repetitions (baseline %d, current %d; the range max - min) is inconclusive, not a regression", repCount(baseline), len(current.Repetitions)))
	}
	for _, m := range Metrics() {
		if m.Unit == UnitNs {
			stat := m.Name[strings.IndexByte(m.Name, '.')+1:]
			if !compareStats[stat] {
				continue
			}
		}
		row := MetricChange{Metric: m.Name, Unit: m.Unit, Current: m.Of(current), CurrentSpread: Spread(current, m)}
		if baseline != nil {
			b := m.Of(baseline)
			row.Baseline = &b
			row.BaselineSpread = Spread(baseline, m)
			if b != 0 {
				p := 100 * (row.Current - b) / b
				row.ChangePct = &p
			}
			row.Verdict = verdict(m, b, row.Current)
			noise := math.Max(row.BaselineSpread, row.CurrentSpread)
			row.WithinNoise = row.Verdict != "same" && noise > 0 && math.Abs(row.Current-b) <= noise
		}
		if quietCounters[m.Name] && row.Current == 0 && (row.Baseline == nil || *row.Baseline == 0) {
			continue
		}
		c.Metrics = append(c.Metrics, row)
	}
	c.Gates = CheckGates(gates, baseline, current, opt)
	c.Verdict = OverallVerdict(c.Gates)
	c.Pass = c.Verdict == VerdictPass
	return c
}

func repCount(r *Result) int {
	if r == nil {
		return 0
	}
	return len(r.Repetitions)
}

func ref(r *Result, file string) RunRef {
	rr := RunRef{File: file, RunID: r.RunID, Engine: r.Engine.Name, Design: r.Engine.Design, Repetitions: len(r.Repetitions), Trust: Assess(r)}
	var sc struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(r.Scenario, &sc) == nil {
		rr.Scenario = sc.Name
	}
	return rr
}

func verdict(m Metric, base, cur float64) string {
	if base == cur || (base != 0 && math.Abs(cur-base)/math.Abs(base) < SameWithin) {
		return "same"
	}
	if (cur > base) == m.HigherIsBetter {
		return "better"
	}
	return "worse"
}

func (c *Comparison) unit(name string) Unit {
	if m, err := LookupMetric(name); err == nil {
		return m.Unit
	}
	return UnitCount
}

func changeText(r MetricChange) string {
	if r.Baseline == nil {
		return ""
	}
	s := formatDelta(r.Unit, r.Current-*r.Baseline)
	if r.ChangePct != nil && r.Current != *r.Baseline {
		s += fmt.Sprintf(" (%+.1f%%)", *r.ChangePct)
	}
	return s
}

// withSpread writes a value with its repetitions' range R (max - min), the one convention for
// spread: never a ± of half of it.
func withSpread(u Unit, v, spread float64) string {
	s := FormatValue(u, v)
	if spread > 0 {
		s += " (range " + FormatValue(u, spread) + ")"
	}
	return s
}

// trustLine is a result's verdict in one line: "trusted", or "flagged: CODE, CODE (notes: CODE)".
func trustLine(t Trust) string {
	var sus, notes []string
	for _, f := range t.Flags {
		if f.Severity == SeveritySuspect {
			sus = append(sus, f.Code)
		} else {
			notes = append(notes, f.Code)
		}
	}
	s := "trusted"
	if len(sus) > 0 {
		s = "flagged: " + strings.Join(sus, ", ")
	}
	if len(notes) > 0 {
		s += " (notes: " + strings.Join(notes, ", ") + ")"
	}
	return s
}

// writeRunRef prints one side of a comparison with its verdict and each flag's text.
func writeRunRef(w io.Writer, side string, r RunRef) {
	fmt.Fprintf(w, "%-8s %s (%s/%s, run %s)\n", side, r.File, r.Engine, r.Design, r.RunID)
	fmt.Fprintf(w, "         trust: %s\n", trustLine(r.Trust))
	for _, f := range r.Trust.Flags {
		fmt.Fprintf(w, "           %s %s: %s\n", severityMark(f.Severity), f.Code, f.Text)
	}
}

func severityMark(s Severity) string {
	if s == SeveritySuspect {
		return "!"
	}
	return "+"
}

// WriteText prints the compare table and the gates for a terminal.
func (c *Comparison) WriteText(w io.Writer) error {
	if c.Baseline != nil {
		writeRunRef(w, "baseline", *c.Baseline)
	}
	writeRunRef(w, "current", c.Current)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if c.Baseline != nil {
		fmt.Fprintln(tw, "metric\tbaseline\tcurrent\tchange")
	} else {
		fmt.Fprintln(tw, "metric\tcurrent")
	}
	for _, r := range c.Metrics {
		if r.Baseline == nil {
			fmt.Fprintf(tw, "%s\t%s\n", r.Metric, withSpread(r.Unit, r.Current, r.CurrentSpread))
			continue
		}
		mark := ""
		if r.WithinNoise {
			mark = "within noise"
		} else if r.Verdict != "same" {
			mark = r.Verdict
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Metric, withSpread(r.Unit, *r.Baseline, r.BaselineSpread),
			withSpread(r.Unit, r.Current, r.CurrentSpread), changeText(r), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(c.Gates) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return c.WriteGates(w)
}

// WriteGates prints one line per gate, PASS, FAIL or INCONCLUSIVE, and the verdict.
func (c *Comparison) WriteGates(w io.Writer) error {
	for _, g := range c.Gates {
		fmt.Fprintf(w, "%s  %s\n", g.Status(), g.Describe())
	}
	fmt.Fprintln(w, gatesSummary(c.Gates))
	return nil
}

// gatesSummary is the verdict of a list of gates in words.
func gatesSummary(gs []GateResult) string {
	failed, inc := len(FailedGates(gs)), len(InconclusiveGates(gs))
	switch {
	case failed > 0 && inc > 0:
		return fmt.Sprintf("regression: %d of %d gates failed (%d more inconclusive)", failed, len(gs), inc)
	case failed > 0:
		return fmt.Sprintf("regression: %d of %d gates failed", failed, len(gs))
	case inc > 0:
		return fmt.Sprintf("inconclusive: %d of %d gates missed, but the misses are no evidence of a regression", inc, len(gs))
	}
	return fmt.Sprintf("pass: all %d gates hold", len(gs))
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteMarkdown writes a summary fit for a pull-request comment: the verdict first, then the
// gates, then the table (folded).
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	status := "✅ pass"
	switch {
	case len(FailedGates(c.Gates)) > 0:
		status = "❌ " + gatesSummary(c.Gates)
	case len(InconclusiveGates(c.Gates)) > 0:
		status = "⚠️ " + gatesSummary(c.Gates)
	case len(c.Gates) > 0:
		status = "✅ " + gatesSummary(c.Gates)
	}
	title := c.Current.Scenario
	if title == "" {
		title = c.Current.File
	}
	fmt.Fprintf(w, "### qbench `%s`: %s\n\n", mdCode(title), status)
	if c.Baseline != nil {
		fmt.Fprintf(w, "Baseline `%s` (%s/%s), current `%s` (%s/%s).\n\n", mdCode(c.Baseline.File), c.Baseline.Engine, c.Baseline.Design,
			mdCode(c.Current.File), c.Current.Engine, c.Current.Design)
	}
	if c.Baseline != nil {
		writeTrustMarkdown(w, "Baseline", c.Baseline.Trust)
	}
	writeTrustMarkdown(w, "Current", c.Current.Trust)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "> **Note:** %s\n\n", n)
	}
	if len(c.Gates) > 0 {
		fmt.Fprintln(w, "| | gate | current | baseline | limit |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|")
		for _, g := range c.Gates {
			u := c.unit(g.Metric)
			mark := map[string]string{GatePass: "✅", GateFail: "❌", GateInconclusive: "⚠️ inconclusive"}[g.verdict()]
			base := ""
			if g.Baseline != nil {
				base = FormatValue(u, *g.Baseline)
			}
			limit := FormatValue(u, g.Limit)
			if g.Error != "" {
				limit = g.Error
			} else if g.Noise > 0 {
				limit += fmt.Sprintf(" (range %s: up to %s)", FormatValue(u, g.Noise), FormatValue(u, g.NoiseLimit))
			}
			if g.Why != "" {
				limit += "; " + g.Why
			}
			fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s |\n", mark, mdCode(g.Expr), FormatValue(u, g.Current), base, limit)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "<details><summary>All metrics</summary>")
	fmt.Fprintln(w)
	if c.Baseline != nil {
		fmt.Fprintln(w, "| metric | baseline | current | change |")
		fmt.Fprintln(w, "|---|---:|---:|---:|")
	} else {
		fmt.Fprintln(w, "| metric | current |")
		fmt.Fprintln(w, "|---|---:|")
	}
	for _, r := range c.Metrics {
		if r.Baseline == nil {
			fmt.Fprintf(w, "| %s | %s |\n", r.Metric, withSpread(r.Unit, r.Current, r.CurrentSpread))
			continue
		}
		ch := changeText(r)
		if r.WithinNoise {
			ch += " (within noise)"
		} else if r.Verdict == "worse" {
			ch = "**" + ch + "** 🔺"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.Metric, withSpread(r.Unit, *r.Baseline, r.BaselineSpread),
			withSpread(r.Unit, r.Current, r.CurrentSpread), ch)
	}
	fmt.Fprintln(w)
	_, err := fmt.Fprintln(w, "</details>")
	return err
}

// mdCode makes s safe inside a one-line code span: no backtick to close it, no line break to
// end the line (a result's scenario name is not checked by the loader).
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// writeTrustMarkdown writes one side's verdict: a line, and for a flagged side each flag's text.
func writeTrustMarkdown(w io.Writer, side string, t Trust) {
	if len(t.Flags) == 0 {
		fmt.Fprintf(w, "%s: **trusted**.\n\n", side)
		return
	}
	fmt.Fprintf(w, "%s: **%s**\n\n", side, trustLine(t))
	for _, f := range t.Flags {
		fmt.Fprintf(w, "- `%s` (%s): %s\n", f.Code, f.Severity, f.Text)
	}
	fmt.Fprintln(w)
}

// JUnit XML, the subset CI systems read: one test case per gate.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

// junitCase: an inconclusive gate is skipped (with its reason), so CI shows it apart from a
// failure; each case carries both sides' verdicts as properties and in its output.
type junitCase struct {
	Class      string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Skipped    *junitSkipped   `xml:"skipped,omitempty"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	Error      *junitFailure   `xml:"error,omitempty"`
	Out        string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the gates as a JUnit XML test suite, one test case per gate.
func (c *Comparison) WriteJUnit(w io.Writer) error {
	return writeJUnit(w, []junitSuite{c.junitSuite("")})
}

// trustProperties are a comparison's verdicts as JUnit properties.
func (c *Comparison) trustProperties() []junitProperty {
	var ps []junitProperty
	add := func(side string, t Trust) {
		ps = append(ps, junitProperty{side + ".trust", t.Verdict}, junitProperty{side + ".flags", strings.Join(t.Codes(), ",")})
	}
	if c.Baseline != nil {
		add("baseline", c.Baseline.Trust)
	}
	add("current", c.Current.Trust)
	return ps
}

// trustText is both sides' verdicts and flags in plain lines, for a test case's output.
func (c *Comparison) trustText() string {
	var b strings.Builder
	if c.Baseline != nil {
		writeRunRef(&b, "baseline", *c.Baseline)
	}
	writeRunRef(&b, "current", c.Current)
	return b.String()
}

// junitSuite is the comparison's gates as one suite; cell names a matrix cell ("" for none).
func (c *Comparison) junitSuite(cell string) junitSuite {
	name := "qbench gates"
	if c.Current.Scenario != "" {
		name += ": " + c.Current.Scenario
	}
	class := "qbench.gates"
	if cell != "" {
		name += " [" + cell + "]"
		class += "." + cell
	}
	props := c.trustProperties()
	s := junitSuite{Name: name, Tests: len(c.Gates), Properties: append(props, junitProperty{"verdict", c.Verdict})}
	trust := c.trustText()
	for _, g := range c.Gates {
		tc := junitCase{Class: class, Name: g.Expr, Properties: props, Out: g.Describe() + "\n" + trust}
		switch {
		case g.Error != "":
			s.Errors++
			tc.Error = &junitFailure{Message: g.Error, Type: "gate", Body: g.Describe()}
		case g.verdict() == GateInconclusive:
			s.Skipped++
			tc.Skipped = &junitSkipped{Message: "inconclusive: " + g.Why}
		case !g.Pass:
			s.Failures++
			tc.Failure = &junitFailure{Message: "gate failed: " + g.Expr, Type: "gate", Body: g.Describe()}
		}
		s.Cases = append(s.Cases, tc)
	}
	return s
}

func writeJUnit(w io.Writer, suites []junitSuite) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: suites}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
