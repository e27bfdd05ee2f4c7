package plots

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"qbench/results"
)

// SearchBest is what a rate search found, for the decision table.
type SearchBest struct {
	Scenario string
	Best     float64
	FailedAt float64
}

// decisionRow is one run (one design or policy) in the decision table at the top of a multi-run
// report: what it sustains, what it costs, what it loses.
type decisionRow struct {
	Label, Colour     string
	Offered, Produced string
	P50, P99          string
	LostByKind        string
	Lost              int64
	GeneratorCPU      string
	EngineCPU, RSS    string
	Fsync             string
	// LogBytesPerMsg is what the engine appended to its log per message (never preallocated
	// zeros); DeviceBytesPerMsg what the device wrote for the server process (/proc write_bytes).
	LogBytesPerMsg, DeviceBytesPerMsg string
	// FsyncNA: qbench started the engine's server but the engine counts no fsyncs it can read
	// (the report's footnote says why).
	FsyncNA bool
	// The trust verdict and the capacity figures (decisiontrust.go).
	decisionTrust
}

// engineStat keys: what an engine qbench starts itself reports from /proc of its server process
// (Engine.Stats), summed across its restarts, and the fsyncs and log bytes the engine itself
// counted over the run (the in-repo server's log, in process too). A run without them shows a
// dash, or n/a with the reason: fsyncs where qbench started the server and it counts none, log
// bytes where it keeps no log, every cost where a restart left it unknown.
const (
	statCPUNs       = "proc_cpu_ns"
	statRSSBytes    = "proc_rss_bytes"
	statWriteBytes  = "proc_write_bytes"
	statFsyncs      = "engine_fsyncs"
	statLogBytes    = "engine_log_bytes"
	statRestarts    = "proc_restarts"
	statCostUnknown = "proc_cost_unknown"
	statLogUnknown  = "engine_log_unknown"
)

// anyFsyncNA says whether the decision table needs its footnote on n/a fsyncs.
func anyFsyncNA(rows []decisionRow) bool {
	for _, r := range rows {
		if r.FsyncNA {
			return true
		}
	}
	return false
}

func decisionRows(runs []reportRun) []decisionRow {
	var out []decisionRow
	for _, rr := range runs {
		s := rr.R.Summary
		row := decisionRow{Label: rr.Label, Colour: rr.Colour, Produced: fmt.Sprintf("%.0f/s (%s)", s.ProduceRate, results.FormatValue(results.UnitBytes, s.ProduceBytesRate)),
			P50: results.FormatNs(s.Latency["e2e"].P50), P99: results.FormatNs(s.Latency["e2e"].P99),
			Lost: s.Ledger.Lost, LostByKind: lostByKind(rr.R), GeneratorCPU: "—", EngineCPU: "—", RSS: "—", LogBytesPerMsg: "—", DeviceBytesPerMsg: "—", Fsync: "—"}
		row.Offered = "max"
		if s.OfferedRate > 0 {
			row.Offered = fmt.Sprintf("%.0f/s", s.OfferedRate)
		}
		if s.Generator.CPUPerMessageNs > 0 {
			row.GeneratorCPU = results.FormatNs(int64(s.Generator.CPUPerMessageNs))
		}
		msgs := float64(s.Ledger.Acked)
		st := rr.R.Engine.Stats
		restarts := ""
		if n := st[statRestarts]; n > 0 {
			restarts = fmt.Sprintf(" (across %d restart%s)", n, map[bool]string{true: "s"}[n > 1])
		}
		if v, ok := st[statCPUNs]; ok && msgs > 0 {
			row.EngineCPU = results.FormatNs(int64(float64(v)/msgs)) + restarts
		}
		if v, ok := st[statRSSBytes]; ok {
			row.RSS = fmt.Sprintf("%.1f MiB", float64(v)/(1<<20))
		}
		if v, ok := st[statWriteBytes]; ok && msgs > 0 {
			row.DeviceBytesPerMsg = fmt.Sprintf("%.0f B", float64(v)/msgs) + restarts
		}
		_, started := st[statRSSBytes]
		if v, ok := st[statLogBytes]; ok && msgs > 0 {
			row.LogBytesPerMsg = fmt.Sprintf("%.0f B", float64(v)/msgs) + restarts
		} else if st[statLogUnknown] > 0 {
			row.LogBytesPerMsg = "n/a (log rewritten)" // its growth is not what was appended
		} else if started {
			row.LogBytesPerMsg = "n/a (no log)"
		}
		if s.Generator.InProcessEngine {
			// One process: qbench's CPU holds the engine's, and the engine's memory qbench's.
			if row.GeneratorCPU != "—" {
				row.GeneratorCPU += " (includes the engine)"
			}
			row.EngineCPU = "in process (includes qbench)"
			row.RSS = "— (includes qbench)"
			if m := usedMemoryPeak(rr.R); m > 0 {
				row.RSS = fmt.Sprintf("%.1f MiB (includes qbench)", float64(m)/(1<<20))
			}
		}
		if v, ok := st[statFsyncs]; ok && msgs > 0 {
			row.Fsync = fmt.Sprintf("%.3f", float64(v)/msgs)
		} else if !ok && started {
			row.Fsync, row.FsyncNA = "n/a", true
		}
		if st[statCostUnknown] > 0 {
			// The server's process changed unseen: its cost over the run cannot be summed.
			na := "n/a (restarted)"
			row.EngineCPU, row.DeviceBytesPerMsg, row.LogBytesPerMsg, row.Fsync, row.FsyncNA = na, na, na, na, false
		}
		out = append(out, row)
	}
	return out
}

// usedMemoryPeak is the largest used_memory the engine's health readings gave (0 without).
func usedMemoryPeak(r *results.Result) int64 {
	rows, _ := results.HealthSummary(r)
	for _, h := range rows {
		if h.Name == "used_memory" {
			return h.Max
		}
	}
	return 0
}

// lostByKind sums the acknowledged messages lost per fault kind ("server-crash 120,
// consumer-pause 0"); "no faults" when the run had none. For merged repetitions (whose windows
// add up every repetition's, results.Merge) it also gives each repetition's own figure, so a
// loss seen once in five runs reads differently from one seen every time.
func lostByKind(r *results.Result) string {
	if len(r.Faults) == 0 {
		return "no faults"
	}
	kinds, by := sumByKind(r.Faults)
	var reps []map[string]int64
	if len(r.Repetitions) > 1 {
		for _, rep := range r.Repetitions {
			_, m := sumByKind(rep.Faults)
			reps = append(reps, m)
		}
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, by[k])
		if reps != nil {
			each := make([]string, len(reps))
			for j, m := range reps {
				each[j] = fmt.Sprint(m[k])
			}
			parts[i] += " (" + strings.Join(each, " + ") + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// sumByKind adds each window's lost by fault kind, kinds sorted.
func sumByKind(ws []results.FaultWindow) ([]string, map[string]int64) {
	by := map[string]int64{}
	for _, w := range ws {
		by[w.Kind] += w.Lost
	}
	kinds := make([]string, 0, len(by))
	for k := range by {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds, by
}

// faultRow is one fault as it happened and what it cost, for the report's fault table.
type faultRow struct {
	Kind, Target, At, Lasting string
	Lost, Duplicates, LagPeak int64
	Recovered, ProduceErrors  string
	LossWindow, LastDurable   string
	HasCost                   bool
}

func faultRows(r *results.Result) ([]faultRow, error) {
	bands, err := Bands(r)
	if err != nil {
		return nil, err
	}
	var out []faultRow
	for _, b := range bands {
		row := faultRow{Kind: b.Kind, Target: b.Target, At: b.Start.Round(time.Millisecond).String(),
			Lasting: (b.End - b.Start).Round(time.Millisecond).String()}
		if b.Instant {
			row.Lasting = "instant"
		}
		if b.Marked {
			row.Kind += " (marked)"
		}
		if b.Open {
			row.Lasting = "never came back"
			if b.Target == "server" || b.Target == "" {
				row.Lasting = "did not end before the run did"
			}
		}
		if len(r.Faults) == len(bands) {
			w := windowAt(r.Faults, b)
			row.HasCost = true
			row.Lost, row.Duplicates, row.LagPeak = w.Lost, w.Duplicates, w.LagPeak
			row.ProduceErrors = fmt.Sprint(w.ProduceErrors)
			row.Recovered = recovered(w)
			if w.Lost > 0 {
				row.LossWindow = fmt.Sprintf("%s (%d msgs)", results.FormatNs(w.LossWindowNs), w.Lost)
				if w.LossWindowNs == 0 {
					row.LossWindow = fmt.Sprintf("0 (%d msgs, all sent during the fault)", w.Lost)
				}
				row.LastDurable = "none"
				if w.LastDurableNs >= 0 {
					row.LastDurable = time.Duration(w.LastDurableNs).Round(time.Millisecond).String()
				}
			}
			if w.Error != "" {
				row.Lasting = "not injected: " + w.Error
			}
		}
		out = append(out, row)
	}
	return out, nil
}

func windowAt(ws []results.FaultWindow, b Band) results.FaultWindow {
	for _, w := range ws {
		if w.Kind == b.Kind && w.Target == b.Target && time.Duration(w.StartNs) == b.Start {
			return w
		}
	}
	return results.FaultWindow{}
}

// recovered is the time from the fault's end until both a write was acknowledged and a message
// delivered again; "never" when one of them did not happen.
func recovered(w results.FaultWindow) string {
	if w.RecoverWriteNs < 0 || w.RecoverReadNs < 0 {
		return "never"
	}
	return results.FormatNs(max(w.RecoverWriteNs, w.RecoverReadNs))
}

// shortTitle names a multi-run report by what its runs share (the scenario) and how many there
// are, not by every label.
func shortTitle(runs []Run) string {
	if len(runs) == 1 {
		return "qbench: " + runs[0].Label
	}
	name := scenarioName(runs[0].Result)
	for _, r := range runs[1:] {
		if scenarioName(r.Result) != name {
			name = ""
		}
	}
	if name == "" {
		return fmt.Sprintf("qbench: %s and %d more", runs[0].Label, len(runs)-1)
	}
	return fmt.Sprintf("qbench: %s, %d runs", name, len(runs))
}

func scenarioName(r *results.Result) string {
	var sc struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(r.Scenario, &sc)
	name, _, _ := strings.Cut(sc.Name, "/") // a matrix cell is named scenario/cell
	return name
}
