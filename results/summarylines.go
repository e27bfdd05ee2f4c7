package results

import (
	"fmt"
	"io"
	"strings"
)

// writeLossWindows prints, for each fault that lost acknowledged messages, its loss window (how
// long before the fault the oldest lost message was intended, and how many were lost) and the
// last durable point: what the JSON and the report carry, in one line each.
func writeLossWindows(w io.Writer, faults []FaultWindow) {
	for _, f := range faults {
		if f.Lost == 0 {
			continue
		}
		window := fmt.Sprintf("the oldest intended %s before it", FormatNs(f.LossWindowNs))
		if f.LossWindowNs == 0 {
			window = "all intended during it"
		}
		durable := "no earlier message survived"
		if f.LastDurableNs >= 0 {
			durable = "last durable point " + FormatNs(f.LastDurableNs)
		}
		fmt.Fprintf(w, "loss window: %s at %s lost %d acknowledged messages, %s; %s\n", f.Kind, FormatNs(f.StartNs), f.Lost, window, durable)
	}
}

// writeHealth prints the engine's health over the run in one line, when it reported one: the
// readings that changed (a counter by how much, a gauge that came back by its peak, memory by its
// peak), statuses other than ok, and latency events.
func writeHealth(w io.Writer, r *Result) {
	rows, events := HealthSummary(r)
	if len(rows) == 0 && len(events) == 0 {
		return
	}
	var changed, statuses []string
	readings := 0
	for _, h := range rows {
		readings = max(readings, h.Readings)
		switch {
		case h.StatusesSeen != nil:
			if len(h.StatusesSeen) > 1 || h.StatusesSeen[0] != "ok" {
				statuses = append(statuses, h.Name+" "+strings.Join(h.StatusesSeen, "/"))
			}
		case strings.Contains(h.Name, "memory") || strings.Contains(h.Name, "buffer"):
			if h.Max > 0 {
				inside := ""
				if h.Name == "used_memory" && r.Summary.Generator.InProcessEngine {
					inside = " (includes qbench: the engine runs in its process)"
				}
				changed = append(changed, fmt.Sprintf("%s max %s%s", h.Name, formatBytes(float64(h.Max)), inside))
			}
		case h.Delta != 0:
			changed = append(changed, fmt.Sprintf("%s %+d", h.Name, h.Delta))
		case h.Max != h.First:
			changed = append(changed, fmt.Sprintf("%s max %d", h.Name, h.Max))
		}
	}
	parts := []string{"nothing changed"}
	if len(changed) > 0 {
		parts = []string{strings.Join(changed, ", ")}
	}
	if len(statuses) > 0 {
		parts = append(parts, strings.Join(statuses, ", "))
	} else if len(rows) > 0 {
		parts = append(parts, "statuses ok")
	}
	if len(events) > 0 {
		var ev []string
		for _, e := range events {
			ev = append(ev, fmt.Sprintf("%s max %dms", e.Name, e.MaxMs))
		}
		parts = append(parts, "latency events: "+strings.Join(ev, ", "))
	}
	fmt.Fprintf(w, "engine health (%d readings): %s\n", readings, strings.Join(parts, "; "))
}

// writeEngineCost prints what the engine's own work cost per acknowledged message, when qbench
// measured it (bench/procstat.go): the server process's CPU and device writes (/proc), the bytes
// the engine appended to its log and its fsyncs, summed across a crash fault's restarts; or, for
// an engine inside qbench's process, that qbench's figures include it.
func writeEngineCost(w io.Writer, r *Result) {
	st, acked := r.Engine.Stats, float64(r.Summary.Ledger.Acked)
	if r.Summary.Generator.InProcessEngine {
		fmt.Fprintf(w, "engine cost: in qbench's process (includes qbench): qbench's CPU (%s per message) includes the engine's work, and the engine's memory is qbench's\n",
			FormatNs(int64(r.Summary.Generator.CPUPerMessageNs)))
	}
	if st[engineStatCostUnknown] > 0 {
		fmt.Fprintln(w, "engine cost: n/a (restarted): the server's process changed without a crash fault qbench injected, (a restart or failover it did not follow), so its CPU and bytes over the run are unknown")
		return
	}
	if acked == 0 {
		return
	}
	var parts []string
	if v, ok := st["proc_cpu_ns"]; ok {
		parts = append(parts, fmt.Sprintf("CPU %s", FormatNs(int64(float64(v)/acked))))
	}
	if v, ok := st["engine_log_bytes"]; ok {
		parts = append(parts, fmt.Sprintf("log bytes %s", formatBytes(float64(v)/acked)))
	} else if st["engine_log_unknown"] > 0 {
		parts = append(parts, "log bytes n/a (log rewritten)")
	}
	if v, ok := st["proc_write_bytes"]; ok {
		parts = append(parts, fmt.Sprintf("device writes %s", formatBytes(float64(v)/acked)))
	}
	if v, ok := st["engine_fsyncs"]; ok {
		parts = append(parts, fmt.Sprintf("fsyncs %.3f", float64(v)/acked))
	}
	if len(parts) == 0 {
		return
	}
	across := ""
	if n := st[engineStatRestarts]; n > 0 {
		across = fmt.Sprintf(", summed across %d restart(s)", n)
	}
	fmt.Fprintf(w, "engine cost per message: %s%s\n", strings.Join(parts, ", "), across)
}

// Engine.Stats keys bench/procstat.go writes that the summary reads by meaning.
const (
	engineStatRestarts    = "proc_restarts"
	engineStatCostUnknown = "proc_cost_unknown"
)
