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
				changed = append(changed, fmt.Sprintf("%s max %s", h.Name, formatBytes(float64(h.Max))))
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
