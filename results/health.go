package results

import "sort"

// EngineHealth mirrors engines.Health: one reading of the server's health counters.
type EngineHealth struct {
	Counters map[string]int64  `json:"counters,omitempty"`
	Status   map[string]string `json:"status,omitempty"`
	Events   []LatencyEvent    `json:"latency_events,omitempty"`
}

// LatencyEvent mirrors engines.LatencyEvent (LATENCY LATEST).
type LatencyEvent struct {
	Name       string `json:"name"`
	LatestUnix int64  `json:"latest_unix"`
	LatestMs   int64  `json:"latest_ms"`
	MaxMs      int64  `json:"max_ms"`
}

// HealthRow is one counter over a run: its first and last readings, their difference and the
// largest reading (a gauge such as used_memory is read by its max, a counter by its delta).
type HealthRow struct {
	Name             string
	First, Last, Max int64
	Delta            int64
	Readings         int
	StatusesSeen     []string // for a status: every value it took, in order of first sight
}

// HealthSummary reads a result's per-second health readings into one row per counter and per
// status, sorted by name, and the latency events seen (each event once, its largest maximum).
func HealthSummary(r *Result) (rows []HealthRow, events []LatencyEvent) {
	byName := map[string]*HealthRow{}
	ev := map[string]LatencyEvent{}
	for _, iv := range r.Series {
		h := iv.Health
		if h == nil {
			continue
		}
		for k, v := range h.Counters {
			row := byName[k]
			if row == nil {
				row = &HealthRow{Name: k, First: v, Max: v}
				byName[k] = row
			}
			row.Last, row.Max, row.Readings = v, max(row.Max, v), row.Readings+1
			row.Delta = row.Last - row.First
		}
		for k, v := range h.Status {
			row := byName[k]
			if row == nil {
				row = &HealthRow{Name: k}
				byName[k] = row
			}
			row.Readings++
			if !contains(row.StatusesSeen, v) {
				row.StatusesSeen = append(row.StatusesSeen, v)
			}
		}
		for _, e := range h.Events {
			if old, ok := ev[e.Name]; !ok || e.MaxMs > old.MaxMs || e.LatestUnix > old.LatestUnix {
				if ok {
					e.MaxMs = max(e.MaxMs, old.MaxMs)
				}
				ev[e.Name] = e
			}
		}
	}
	for _, row := range byName {
		rows = append(rows, *row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	for _, e := range ev {
		events = append(events, e)
	}
	sort.Slice(events, func(i, j int) bool { return events[i].Name < events[j].Name })
	return rows, events
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
