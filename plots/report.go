package plots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"qbench/results"
)

// ReportOptions tune the HTML report.
type ReportOptions struct {
	Title string
	// Comparison, when set, adds the baseline comparison and its gates.
	Comparison *results.Comparison
	// Generated is the time printed in the footer (fixed in tests).
	Generated time.Time
	// Extra charts follow the standard ones (a sweep's grid or capacity curve).
	Extra []Chart
	// Searches are the rate searches among the inputs, for the decision table.
	Searches []SearchBest
	// BinBy is the clock of the latency-over-time charts (Options.BinBy). With the default, a
	// report of runs with faults also shows end-to-end and produce latency by intended send
	// time, where a spike lines up with the fault that caused it.
	BinBy string
	// SLO, when set, colours the decision table by the objectives and ranks the runs that meet
	// them by cost per message (slo.go).
	SLO SLO
}

type reportRun struct {
	Label    string
	Colour   string
	R        *results.Result
	Scenario []kv
	Settings []kv
	Faults   []Fault
	Rows     []faultRow
	Bands    []Band
	Health   []results.HealthRow
	Events   []results.LatencyEvent
	Warmup   time.Duration
	Duration time.Duration
	Timeline template.HTML
	Trust    results.Trust
}

type kv struct{ K, V string }

type reportChart struct {
	Title string
	SVG   template.HTML
	// Empty is the one line printed instead of a chart with nothing to show.
	Empty string
}

type reportData struct {
	Title     string
	Runs      []reportRun
	Kinds     []string
	Charts    []reportChart
	Cmp       *results.Comparison
	Failed    int
	Generated string
	Decision  []decisionRow
	FsyncNote bool
	Searches  []SearchBest
	SLO       string
	Cheapest  string
	KneeCol   bool
	Flagged   bool
	// AnyKnee: some run has a knee (the summary table's knee column).
	AnyKnee bool
	// Capacity is the highest offered rate meeting the objective per design (SLO.Capacity).
	Capacity []string
	// FlaggedRuns are the runs with a suspect flag, for the banner of a multi-run report.
	FlaggedRuns []reportRun
}

// WriteReport writes one self-contained HTML file: scenario, environment, summary tables, every
// chart as inline SVG, the fault timeline and, given a comparison, the gates. It loads nothing
// from anywhere: no scripts, fonts or images from outside the file.
func WriteReport(w io.Writer, runs []Run, opt ReportOptions) error {
	if len(runs) == 0 {
		return fmt.Errorf("no results to report")
	}
	d := reportData{Title: opt.Title, Kinds: results.LatencyKinds, Cmp: opt.Comparison, Searches: opt.Searches}
	if d.Title == "" {
		d.Title = shortTitle(runs)
	}
	if opt.Generated.IsZero() {
		opt.Generated = time.Now()
	}
	d.Generated = opt.Generated.UTC().Format(time.RFC3339)
	if d.Cmp != nil {
		d.Failed = len(results.FailedGates(d.Cmp.Gates))
	}
	for i, run := range runs {
		rr := reportRun{Label: run.Label, Colour: hexColour(i), R: run.Result, Warmup: Warmup(run.Result)}
		var err error
		if rr.Faults, err = Faults(run.Result); err != nil {
			return err
		}
		if rr.Rows, err = faultRows(run.Result); err != nil {
			return err
		}
		if rr.Bands, err = Bands(run.Result); err != nil {
			return err
		}
		rr.Health, rr.Events = results.HealthSummary(run.Result)
		rr.Scenario, rr.Duration = scenarioFields(run.Result)
		for k, v := range run.Result.Engine.Settings {
			rr.Settings = append(rr.Settings, kv{k, v})
		}
		sort.Slice(rr.Settings, func(a, b int) bool { return rr.Settings[a].K < rr.Settings[b].K })
		rr.Timeline = timeline(rr)
		rr.Trust = trustOf(run.Result)
		d.AnyKnee = d.AnyKnee || run.Result.Summary.Knee != nil
		if !rr.Trust.Trusted() {
			d.Flagged = true
			d.FlaggedRuns = append(d.FlaggedRuns, rr)
		}
		d.Runs = append(d.Runs, rr)
	}
	if len(d.Runs) > 1 {
		d.Decision = decisionRows(d.Runs)
		d.FsyncNote = anyFsyncNA(d.Decision)
		annotateDecision(d.Decision, d.Runs, opt.SLO)
		d.KneeCol = anyKnee(d.Decision)
		if opt.SLO.Set() {
			d.SLO, d.Cheapest = opt.SLO.String(), opt.SLO.Verdict(runs)
			d.Capacity = opt.SLO.Capacity(runs)
		}
	}
	charts, err := AllWith(runs, Options{BinBy: opt.BinBy})
	if err != nil {
		return err
	}
	if opt.BinBy != results.BinByIntended && anyFaults(d.Runs) {
		for _, k := range []string{"produce", "e2e"} {
			c, err := overTime(runs, func(rs []Run) (Chart, error) { return LatencyOverTime(rs, k, results.BinByIntended) })
			if err != nil {
				return err
			}
			charts = append(charts, c)
		}
	}
	AlignTimeCharts(charts)
	for _, c := range append(charts, opt.Extra...) {
		if c.Empty != "" {
			d.Charts = append(d.Charts, reportChart{Title: c.Title, Empty: c.Empty})
			continue
		}
		b, err := Render(c, "svg")
		if err != nil {
			return err
		}
		d.Charts = append(d.Charts, reportChart{Title: c.Title, SVG: template.HTML(inlineSVG(b))})
	}
	return reportTemplate.Execute(w, d)
}

func anyFaults(runs []reportRun) bool {
	for _, r := range runs {
		if len(r.Faults) > 0 || len(r.R.Faults) > 0 {
			return true
		}
	}
	return false
}

// inlineSVG drops the XML prologue and comments before the <svg> element.
func inlineSVG(b []byte) []byte {
	if i := bytes.Index(b, []byte("<svg")); i >= 0 {
		b = b[i:]
	}
	return b
}

func hexColour(i int) string {
	r, g, b, _ := Colour(i).RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// scenarioFields flattens the scenario as run into sorted key/value rows.
func scenarioFields(r *results.Result) ([]kv, time.Duration) {
	var m map[string]any
	if json.Unmarshal(r.Scenario, &m) != nil {
		return nil, 0
	}
	var out []kv
	var flatten func(prefix string, v any)
	flatten = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				flatten(join(prefix, k), t[k])
			}
		case []any:
			if prefix == "gates" || prefix == "faults" {
				b, _ := json.Marshal(t)
				out = append(out, kv{prefix, string(b)})
				return
			}
			for i, e := range t {
				flatten(fmt.Sprintf("%s.%d", prefix, i), e)
			}
		default:
			out = append(out, kv{prefix, fmt.Sprint(t)})
		}
	}
	flatten("", m)
	var dur time.Duration
	if s, ok := m["duration"].(string); ok {
		dur, _ = time.ParseDuration(s)
	}
	return out, dur
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// timeline draws the run's schedule as a small inline SVG: the run and its warm-up on the top
// row, then each fault as it happened on a row of its own, its label beside its band, so that
// labels of faults close in time never overprint each other.
func timeline(r reportRun) template.HTML {
	total := max(r.Duration, runEnd(r.R))
	for _, b := range r.Bands {
		total = max(total, b.End)
	}
	if total <= 0 {
		return ""
	}
	const W, left, right, row = 900.0, 10.0, 10.0, 18.0
	x := func(d time.Duration) float64 { return left + (W-left-right)*d.Seconds()/total.Seconds() }
	height := 50 + row*float64(len(r.Bands))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %.0f %.0f" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="run timeline">`, W, height)
	fmt.Fprintf(&b, `<rect x="%.1f" y="14" width="%.1f" height="12" fill="#dfe8f3"><title>run %s</title></rect>`, x(0), x(total)-x(0), total)
	fmt.Fprintf(&b, `<text x="%.1f" y="10" font-size="10" font-family="sans-serif">0s</text>`, x(0))
	if r.Warmup > 0 {
		fmt.Fprintf(&b, `<rect x="%.1f" y="14" width="%.1f" height="12" fill="#bbbbbb"><title>warm-up %s</title></rect>`, x(0), x(r.Warmup)-x(0), r.Warmup)
		fmt.Fprintf(&b, `<text x="%.1f" y="38" font-size="10" font-family="sans-serif">warm-up %s</text>`, x(0), r.Warmup)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="10" font-size="10" font-family="sans-serif" text-anchor="end">%s</text>`, x(total), total.Round(time.Millisecond))
	for k, f := range r.Bands {
		y := 56 + row*float64(k) // below the warm-up label
		w := max(x(f.End)-x(f.Start), 2)
		c := FaultKindColour(f.Kind)
		label := f.Kind
		if f.Marked {
			label += " (marked)"
		}
		if f.Target != "" {
			label += " (" + f.Target + ")"
		}
		label += " at " + f.Start.Round(time.Millisecond).String()
		switch {
		case f.Open && (f.Target == "server" || f.Target == ""):
			label += ", did not end before the run did" // as in the fault table
		case f.Open:
			label += ", never came back"
		}
		if f.Instant {
			label += ", instant"
		}
		esc := template.HTMLEscapeString(label)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="10" fill="rgb(%d,%d,%d)" fill-opacity="0.75"><title>%s</title></rect>`, x(f.Start), y-9, w, c.R, c.G, c.B, esc)
		// The label goes right of the band, or left of it when the band ends near the right edge.
		if lx := x(f.Start) + w + 4; lx+float64(len(label))*5.5 < W {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10" font-family="sans-serif">%s</text>`, lx, y, esc)
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10" font-family="sans-serif" text-anchor="end">%s</text>`, x(f.Start)-4, y, esc)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var reportFuncs = template.FuncMap{
	"ns":      func(v int64) string { return results.FormatNs(v) },
	"pending": results.FormatPending,
	"pendingNA": func(cs []results.ConsumerShare) string {
		for _, c := range cs {
			if c.Pending == nil {
				return results.PendingNA
			}
		}
		return ""
	},
	"lat": func(r *results.Result, kind string) results.Latency {
		return r.Summary.Latency[kind]
	},
	"val": func(u results.Unit, v float64) string { return results.FormatValue(u, v) },
	"deref": func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	},
	"pct": func(p *float64) string {
		if p == nil {
			return ""
		}
		return fmt.Sprintf("%+.1f%%", *p)
	},
	"f0":       func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"join":     func(s []string) string { return strings.Join(s, "; ") },
	"sign":     func() string { return WarnSign },
	"codes":    suspectCodes,
	"achieved": achievedOfOffered,
	"knee":     func(r *results.Result) string { return kneeText(r.Summary.Knee, results.KneeRate(r)) },
	"mark":     func() string { return FlagMark },
}

var reportTemplate = template.Must(template.New("report").Funcs(reportFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: right; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px; vertical-align: middle; margin-right: .3em; }
.pass { color: #16802b; font-weight: bold; } .fail { color: #c0161b; font-weight: bold; } .inconclusive { color: #a15c00; font-weight: bold; }
.worse { color: #c0161b; } .better { color: #16802b; }
figure { margin: 1em 0 2em; } figure svg { width: 100%; height: auto; border: 1px solid #eee; }
svg.timeline { width: 100%; height: auto; max-width: 900px; }
.meta { color: #666; font-size: .85em; }
details { margin: .5em 0; }
td.flag { background: #fff3cd; color: #7a4b00; font-weight: bold; font-size: .85em; text-align: left; outline: 2px dashed #b36b00; outline-offset: -3px; }
td.trusted { color: #16802b; text-align: left; }
td.meets { background: #e3f4e6; } td.misses { background: #fbe3e4; }
ul.flags { margin: .3em 0 1em; } ul.flags li { margin: .15em 0; }
.cheapest { font-size: 1.05em; }
.wide { overflow-x: auto; }
p.banner { background: #fff3cd; border: 2px dashed #b36b00; padding: .4em .6em; color: #5c3900; }
</style>
</head>
<body>
<h1 id="title">{{.Title}}</h1>
<p class="meta">Generated {{.Generated}} by qbench. Latency is measured from each message's intended send time.</p>
{{if .Decision}}{{with .FlaggedRuns}}<p class="banner" role="alert">{{sign}} <strong>{{len .}} of {{len $.Runs}} runs are flagged</strong>: {{range $i, $r := .}}{{if $i}}; {{end}}<span class="swatch" style="background:{{$r.Colour}}"></span>{{$r.Label}} ({{codes $r.Trust}}){{end}}. Their figures may describe the load generator, the machine or a partial run rather than the engine: the reasons are under the decision table and in each run's section.</p>{{end}}{{else}}{{range .Runs}}{{if not .Trust.Trusted}}<p class="banner" role="alert"><span class="swatch" style="background:{{.Colour}}"></span>{{sign}} <strong>{{.Label}}</strong> is flagged ({{codes .Trust}}): {{range $i, $f := .Trust.Suspect}}{{if $i}}; {{end}}{{$f.Text}}{{end}}</p>{{end}}{{end}}{{end}}
{{if .Decision}}<h2 id="decision">Decision table</h2>
<p>What each run (design, policy) sustained, what it cost and what it lost. Latency is end-to-end at the offered rate; CPU per message is per acknowledged message; the engine's own CPU, memory and device writes come from /proc of a server qbench started itself, summed across its restarts (a dash otherwise; n/a (restarted) when its process changed unseen); log bytes are what the engine appended to its log (Redis: INFO persistence <code>aof_current_size</code> growth; a Kafka broker qbench started: its topic's segment files), never the zeros a log is preallocated with, which device writes count; fsyncs are the engine's own count (the in-repo server's, in process too). An engine inside qbench's process shares its figures with qbench: they read "includes qbench".</p>
{{range .Searches}}<p>Rate search{{with .Scenario}} <code>{{.}}</code>{{end}}: highest sustainable rate <strong>{{f0 .Best}} msg/s</strong>{{if .FailedAt}} (failed at {{f0 .FailedAt}} msg/s){{end}}.</p>{{end}}
{{with .SLO}}<p class="cheapest" id="cheapest"><strong>Objective <code>{{.}}</code>:</strong> {{$.Cheapest}}</p>{{end}}
{{with .Capacity}}<p id="capacity"><strong>Highest offered rate meeting the objective</strong>, per design: {{join .}}.</p>{{end}}
{{if .Flagged}}<p class="meta">{{sign}} flagged: at least one figure of the run may describe the load generator, the machine or a partial run rather than the engine (the codes are listed under the table; the same run is marked {{mark}} in the charts' legends and grid). A flagged run is marked, never silently coloured.</p>{{end}}
<div class="wide"><table><tr><th class="l">run</th><th class="l">trust</th>{{if .SLO}}<th>objective</th><th>cost / msg (rank)</th>{{end}}<th>offered</th><th>achieved / offered</th><th>unsent</th>{{if .KneeCol}}<th>knee</th>{{end}}<th>produced</th><th>e2e p50</th><th>e2e p99</th><th>lost</th><th class="l">lost per fault kind</th><th>generator CPU / msg</th><th>engine CPU / msg</th><th>engine RSS</th><th>log bytes / msg</th><th>device writes / msg</th><th>fsyncs / msg</th></tr>
{{range .Decision}}<tr><td class="l"><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}</td><td class="{{if .Flagged}}flag{{else}}trusted{{end}}" title="{{join .FlagTexts}}">{{.Verdict}}{{with .Notes}} <small>(note: {{.}})</small>{{end}}</td>{{if $.SLO}}<td class="{{.SLO}}"{{with .Missed}} title="{{join .}}"{{end}}>{{.SLO}}</td><td>{{.Cost}}{{if .Rank}} (#{{.Rank}}){{end}}</td>{{end}}<td>{{.Offered}}</td><td>{{.Achieved}}</td><td{{if .Unsent}} class="fail"{{end}}>{{.Unsent}}</td>{{if $.KneeCol}}<td>{{.Knee}}</td>{{end}}<td>{{.Produced}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td{{if .Lost}} class="fail"{{end}}>{{.Lost}}</td><td class="l">{{.LostByKind}}</td><td>{{.GeneratorCPU}}</td><td>{{.EngineCPU}}</td><td>{{.RSS}}</td><td>{{.LogBytesPerMsg}}</td><td>{{.DeviceBytesPerMsg}}</td><td>{{.Fsync}}{{if .FsyncNA}}<sup>*</sup>{{end}}</td></tr>
{{end}}</table></div>
{{if .Flagged}}<ul class="flags" id="decision-flags">{{range .Decision}}{{if .FlagTexts}}<li><span class="swatch" style="background:{{.Colour}}"></span><strong>{{.Label}}</strong>{{if .Flagged}} {{sign}}{{end}}: {{join .FlagTexts}}</li>{{end}}{{end}}</ul>{{end}}
{{if .FsyncNote}}<p class="meta" id="fsync-note"><sup>*</sup> n/a: qbench started this server, but the engine counts no fsyncs qbench can read. redis-server 7.0's INFO persistence has no fsync counter (<code>aof_delayed_fsync</code> counts only fsyncs that fell behind), Kafka counts its flushes only in JMX (LogFlushStats), which qbench does not read, and /proc keeps no count of a process's fsyncs. The in-repo server's figure is its append-only log's fsyncs (INFO persistence <code>aof_fsyncs</code>) per acknowledged message; a snapshot's own one or two are not in it.</p>{{end}}{{end}}
{{with .Cmp}}
<h2 id="gates">Gates: {{if $.Failed}}<span class="fail">{{$.Failed}} of {{len .Gates}} failed</span>{{else}}<span class="pass">{{if .Gates}}all {{len .Gates}} hold{{else}}none{{end}}</span>{{end}}</h2>
{{if .Baseline}}<p>Baseline <code>{{.Baseline.File}}</code> ({{.Baseline.Engine}}/{{.Baseline.Design}}), current <code>{{.Current.File}}</code> ({{.Current.Engine}}/{{.Current.Design}}).</p>{{end}}
{{range .Notes}}<p><strong>Note:</strong> {{.}}</p>{{end}}
{{if .Gates}}<table><tr><th class="l"></th><th class="l">gate</th><th class="l">found</th></tr>
{{range .Gates}}<tr><td class="l">{{if .Pass}}<span class="pass">PASS</span>{{else if eq .Status "INCONCLUSIVE"}}<span class="inconclusive">INCONCLUSIVE</span>{{else}}<span class="fail">FAIL</span>{{end}}</td><td class="l"><code>{{.Expr}}</code></td><td class="l">{{.Describe}}</td></tr>
{{end}}</table>{{end}}
{{if .Baseline}}<details><summary>All metrics against the baseline</summary>
<table><tr><th class="l">metric</th><th>baseline</th><th>current</th><th>change</th></tr>
{{range .Metrics}}<tr><td class="l">{{.Metric}}</td><td>{{val .Unit (deref .Baseline)}}</td><td>{{val .Unit .Current}}</td><td class="{{.Verdict}}">{{pct .ChangePct}}</td></tr>
{{end}}</table></details>{{end}}
{{end}}
<h2 id="summary">Summary</h2>
<div class="wide"><table>
<tr><th class="l">run</th><th class="l">trust</th><th class="l">engine / design</th><th>offered</th><th>produced</th><th>achieved / offered</th><th>delivered</th><th>measured</th><th>sent</th><th>unsent</th><th>acked</th><th>failed</th><th>lost</th><th>duplicates</th><th>lag max</th>{{if .AnyKnee}}<th>knee</th>{{end}}</tr>
{{range .Runs}}<tr><td class="l"><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}</td>{{if .Trust.Trusted}}<td class="trusted">ok</td>{{else}}<td class="flag" title="{{join .Trust.Texts}}">{{sign}} {{codes .Trust}}</td>{{end}}<td class="l">{{.R.Engine.Name}} / {{.R.Engine.Design}}</td>
<td>{{if .R.Summary.OfferedRate}}{{f0 .R.Summary.OfferedRate}}/s{{else}}max{{end}}</td><td>{{f0 .R.Summary.ProduceRate}}/s<br><small>{{val "B/s" .R.Summary.ProduceBytesRate}}</small></td><td>{{achieved .R.Summary}}</td><td>{{f0 .R.Summary.DeliverRate}}/s<br><small>{{val "B/s" .R.Summary.DeliverBytesRate}}</small></td><td>{{printf "%.1f" .R.Summary.MeasuredSeconds}} s</td>
<td>{{.R.Summary.Ledger.Sent}}</td><td{{if .R.Summary.Unsent}} class="fail"{{end}}>{{.R.Summary.Unsent}}</td><td>{{.R.Summary.Ledger.Acked}}</td><td>{{.R.Summary.Ledger.Failed}}</td><td{{if .R.Summary.Ledger.Lost}} class="fail"{{end}}>{{.R.Summary.Ledger.Lost}}</td><td>{{.R.Summary.Ledger.Duplicates}}</td><td>{{.R.Summary.LagMax}}</td>{{if $.AnyKnee}}<td>{{knee .R}}</td>{{end}}</tr>
{{end}}</table></div>
{{range .Runs}}{{if .R.Summary.PerGroup}}<h3><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}: per group</h3>
<p class="meta">Lag is acknowledged messages the group has not received yet (the load generator's view); at the end, what it never received.</p>
<table><tr><th>group</th><th>consumers</th><th>delivered</th><th>lag max</th><th>lag at end</th></tr>
{{range .R.Summary.PerGroup}}<tr><td>{{.Group}}</td><td>{{.Consumers}}</td><td>{{.Delivered}}</td><td>{{.LagMax}}</td><td{{if .LagEnd}} class="fail"{{end}}>{{.LagEnd}}</td></tr>
{{end}}</table>{{end}}
{{if .R.Summary.PerConsumer}}<h3><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}: per consumer</h3>
<table><tr><th>consumer</th><th>group</th><th>deliveries</th><th>duplicates</th><th>missed</th><th>pending at end</th><th>e2e p50</th><th>e2e p99</th></tr>
{{range .R.Summary.PerConsumer}}<tr><td>{{.Consumer}}</td><td>{{.Group}}</td><td>{{.Deliveries}}</td><td>{{.Duplicates}}</td><td{{if .Missed}} class="fail"{{end}}>{{.Missed}}</td><td>{{pending .Pending}}</td><td>{{ns .E2E.P50}}</td><td>{{ns .E2E.P99}}</td></tr>
{{end}}</table>{{with pendingNA .R.Summary.PerConsumer}}<p class="meta">Pending n/a: {{.}}.</p>{{end}}{{end}}{{end}}
{{range $k := .Kinds}}
<h3>{{$k}} latency</h3>
<table><tr><th class="l">run</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr>
{{range $.Runs}}{{$l := lat .R $k}}<tr><td class="l"><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}</td><td>{{$l.Count}}</td><td>{{ns $l.P50}}</td><td>{{ns $l.P90}}</td><td>{{ns $l.P99}}</td><td>{{ns $l.P999}}</td><td>{{ns $l.P9999}}</td><td>{{ns $l.Max}}</td></tr>
{{end}}</table>
{{end}}
<h2 id="charts">Charts</h2>
{{range .Charts}}{{if .Empty}}<p class="empty-chart"><strong>{{.Title}}:</strong> {{.Empty}}</p>
{{else}}<figure aria-label="{{.Title}}">
{{.SVG}}
</figure>
{{end}}{{end}}
<h2 id="timeline">Fault timeline</h2>
{{range .Runs}}<h3><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}</h3>
{{if .Rows}}<table><tr><th class="l">fault</th><th class="l">target</th><th>at</th><th>lasting</th><th>lost</th><th>duplicates</th><th>produce errors</th><th>recovered after</th><th>lag peak</th><th>loss window</th><th>last durable point</th></tr>{{range .Rows}}<tr><td class="l">{{.Kind}}</td><td class="l">{{.Target}}</td><td>{{.At}}</td><td>{{.Lasting}}</td>{{if .HasCost}}<td{{if .Lost}} class="fail"{{end}}>{{.Lost}}</td><td>{{.Duplicates}}</td><td>{{.ProduceErrors}}</td><td>{{.Recovered}}</td><td>{{.LagPeak}}</td><td>{{.LossWindow}}</td><td>{{.LastDurable}}</td>{{else}}<td colspan="7" class="l">planned (the result has no measured window)</td>{{end}}</tr>{{end}}</table>{{else}}<p>No faults injected.</p>{{end}}
{{if .Bands}}{{.Timeline}}{{end}}
{{if .Health}}<details><summary>Engine health (sampled each second)</summary>
<table><tr><th class="l">counter</th><th>first</th><th>last</th><th>change</th><th>max</th></tr>
{{range .Health}}<tr><td class="l">{{.Name}}</td>{{if .StatusesSeen}}<td colspan="4" class="l">{{range $i, $s := .StatusesSeen}}{{if $i}} → {{end}}{{$s}}{{end}}</td>{{else}}<td>{{.First}}</td><td>{{.Last}}</td><td>{{.Delta}}</td><td>{{.Max}}</td>{{end}}</tr>
{{end}}</table>
{{if .Events}}<table><tr><th class="l">latency event (LATENCY LATEST)</th><th>latest</th><th>max</th></tr>{{range .Events}}<tr><td class="l">{{.Name}}</td><td>{{.LatestMs}} ms</td><td>{{.MaxMs}} ms</td></tr>{{end}}</table>{{end}}
</details>{{end}}
{{end}}
<h2 id="environment">Scenario and environment</h2>
{{range .Runs}}<h3><span class="swatch" style="background:{{.Colour}}"></span>{{.Label}}</h3>
<p>Run <code>{{.R.RunID}}</code> started {{.R.StartedAt.UTC.Format "2006-01-02 15:04:05 UTC"}} by {{.R.Tool}}{{if .R.Interrupted}} — <span class="fail">interrupted</span>{{end}}{{with .R.Checkpoint}} — <span class="fail">{{if .Recovered}}recovered from a checkpoint{{else}}a checkpoint{{end}}: the run had not finished</span>{{end}}{{with .R.Merged}}; merged ({{.Mode}}) from {{len .Sources}} runs{{end}}.</p>
<div class="trust"><p><strong>Trust:</strong> {{if .Trust.Trusted}}<span class="pass">trusted</span>{{else}}<span class="fail">{{sign}} flagged</span>{{end}}{{if .Trust.Flags}}, because:{{end}}</p>
{{if .Trust.Flags}}<ul class="flags">{{range .Trust.Flags}}<li>{{if eq .Severity "suspect"}}{{sign}} {{else}}note: {{end}}<code>{{.Code}}</code> {{.Text}}</li>{{end}}</ul>{{end}}</div>
<table><tr><th class="l">engine</th><td class="l">{{.R.Engine.Name}} {{.R.Engine.Version}}, design {{.R.Engine.Design}}{{with .R.Engine.Address}} at {{.}}{{end}}</td></tr>
{{range .Settings}}<tr><th class="l">{{.K}}</th><td class="l">{{.V}}</td></tr>{{end}}
<tr><th class="l">load generator</th><td class="l">{{.R.Machine.CPUs}} CPUs, {{.R.Machine.OS}}/{{.R.Machine.Arch}}, {{.R.Machine.GoVersion}}{{with .R.Machine.Hostname}}, {{.}}{{end}}</td></tr></table>
<details open><summary>Scenario as run</summary>
<table>{{range .Scenario}}<tr><th class="l">{{.K}}</th><td class="l"><code>{{.V}}</code></td></tr>{{end}}</table>
</details>
{{end}}
</body>
</html>
`))
