package results

import (
	"sort"
	"strings"
)

// How Merge treats every field of a result, one place for each decision. Each struct that Merge
// builds field by field has a table here naming every one of its fields with the rule for
// machines (and segments, which merge as machines and then join the ledger) and for repetitions.
// A rule that starts with "per run:" means the merged result leaves the field out, for the reason
// given. TestMergeRulesNameEveryField fails when a field is added to one of these structs without
// a rule; TestMergeKeepsEveryMergedField fills every field of two results and fails when Merge
// drops a field whose rule says it is merged (or keeps one said to be per run).
type mergeRule struct{ Machines, Repetitions string }

// perRun marks a rule as "left out of the merged result".
const perRun = "per run:"

func same(rule string) mergeRule { return mergeRule{rule, rule} }

var resultRules = map[string]mergeRule{
	"SchemaVersion": same("this qbench's schema version"),
	"Tool":          same("the first result's"),
	"RunID":         same("the first run ID and the number of others (segments: the run's ID)"),
	"StartedAt":     same("the earliest"),
	"Scenario":      same("the first result's (Merge refuses different scenarios without Force)"),
	"Engine":        same("the first result's; Stats: the server process's CPU and bytes written summed, other readings their largest (mergeStats); Died: the first result's death, else the first in another"),
	"Machine":       {"the first result's, hostnames joined", "the first result's"},
	"Summary":       same("field by field, summaryRules"),
	"Series":        {"added second by second, intervalRules", "the first repetition's"},
	"LagSamples":    {perRun + " each generator samples at its own instants, so the sub-second readings cannot be added; the merged per-second series carries the lag", "the first repetition's, like the series"},
	"Bins":          {perRun + " a bin keeps percentiles, not a histogram, so machines' bins cannot be added exactly; charts fall back to the merged series", "the first repetition's, like the series"},
	"Histograms":    same("added exactly"),
	"Errors":        same("counts summed per message"),
	"Lost":          same("concatenated, the first 100 (segments: the joined ledger's)"),
	"DeadLetters":   same("the first result's (every generator of a merge reads one engine's dead-letter store; a repetition's own stay in its file)"),
	"Interrupted":   same("true if any was"),
	"Checkpoint":    same("the first source's that is a checkpoint: the merge is not finished either"),
	"SeriesFile":    same(perRun + " ReadFile loads a source's side file into its series before the merge"),
	"Merged":        same("how the result was merged"),
	"Faults":        same("aligned by fault index, faultRules (mergeFaults)"),
	"Repetitions":   {perRun + " a machine's share of a run is not a repetition of it", "each repetition's summary and fault windows, in order"},
	"Segment":       same(perRun + " the merged result is the whole run, not a segment"),
	"Segments":      same(perRun + " how a run was split is that run's own (MergeSegments sets each segment's share and clock, without its ledger)"),
}

var summaryRules = map[string]mergeRule{
	"MeasuredSeconds":     {"the longest", "summed"},
	"ProduceRate":         {"summed", "acknowledged messages in all the windows over their total"},
	"ProduceBytesRate":    {"summed", "bytes in all the windows over their total"},
	"DeliverRate":         {"summed", "deliveries in all the windows over their total"},
	"DeliverRatePerGroup": same("the deliver rate over groups"),
	"DeliverBytesRate":    {"summed", "bytes in all the windows over their total"},
	"Groups":              same("the largest"),
	"DrainSeconds":        same("the longest"),
	"SweepSeconds":        same("the longest"),
	"Generator":           same("CPU seconds, in-flight waits, GC cycles, pause and GC CPU summed, CPU per message and GC CPU share read again, shares, longest pause and limit their largest; timer sleeps counted, their percentiles and the pacer's lead the largest (mergeGenerator)"),
	"MachineLoad":         same("seconds summed; steal and other shares, other cores and load averages the largest; idle CPUs halting if any run's did (mergeMachineLoad, mergeIdle)"),
	"Warnings":            same("the rules read again from the merged summary; the runs' other warnings (the message cap's) kept once (Rewarn)"),
	"Knee":                {"found again in the merged series", "the earliest break: the repetition that broke at the lowest offered rate (each repetition's own is in repetitions)"},
	"OfferedRate":         {"summed", "the first repetition's"},
	"Latency":             same("read from the added histograms"),
	"PerGroup":            {"by group: consumers and deliveries summed, lag max read again from the merged series, lag at the end summed", "by group: each figure the largest repetition's"},
	"LagMax":              {"the largest of the merged series (the sum of the results' without one)", "the largest"},
	"EngineLagMax":        same("the largest (every generator reads the same engine)"),
	"Ledger":              same("every count summed (addLedger; segments: joined over the books)"),
	"ProduceErrors":       same("summed"),
	"Unsent":              same("summed"),
	"ConsumeErrors":       same("summed"),
	"HistogramDropped":    same("summed, with what the added histograms could not hold"),
	"Role":                same("the first result's (one scenario, one role)"),
	"NotKnown":            same("every field any result could not know"),
	"PerShard":            same("by shard: backlog and pending at the end and their peaks the largest (machines read the same engine; repetitions: the worst), sent and received summed"),
	"PerConsumer":         same("by consumer index: deliveries, duplicates and missed summed, e2e count, min, max and mean exact, percentiles the worst result's (no per-consumer histogram is kept: an upper bound)"),
	"ReorderScope":        same("the first result's (one scenario, one engine)"),
	"ReorderNotPromised":  same("the first result's (one scenario, one engine)"),
	"DeadLettered":        same("the largest (every generator reads the same engine)"),
	"Backlog":             {"fill counts and drain rates summed, the longest drain (the run drained when the last generator did), latencies from that slowest result", "the slowest repetition's, whole (each repetition's own is in repetitions)"},
}

// intervalRules are for machines (a repetitions' merge keeps the first repetition's series whole).
var intervalRules = map[string]string{
	"StartNs":          "the first result's that has the second",
	"Warmup":           "true if any was",
	"Offered":          "summed",
	"Acked":            "summed",
	"AckedBytes":       "summed",
	"DeliveredBytes":   "summed",
	"Failed":           "summed",
	"Deliveries":       "summed",
	"Lag":              "summed",
	"GroupLag":         "summed group by group (each machine holds part of every group's backlog)",
	"EngineLag":        "the largest reading (every generator reads the same engine)",
	"Produce":          "read from the added histograms",
	"SendDelay":        "read from the added histograms",
	"E2E":              "read from the added histograms",
	"Histograms":       "added exactly",
	"Health":           "the first result's reading (every generator reads the same engine)",
	"WarmupHistograms": "added exactly",
	"Machine":          "each figure the largest machine's (a warning's worth is one busy machine)",
}

// faultRules: the i-th window of every result is the i-th fault of the one scenario (the runner
// fires them in order of their offsets), so windows are aligned by index and kind. A user
// comparing repetitions sees each repetition's own windows in repetitions; the merged windows
// add the costs (their lost sum to the merged ledger's, as one run's do) and keep the worst
// times, so the report's and the decision table's per-kind costs are the whole merge's.
var faultRules = map[string]mergeRule{
	"Kind":           same("the fault's kind (windows of another kind at the same index are kept as rows of their own)"),
	"Target":         same("the first result's"),
	"StartNs":        same("the first result's (the merged series and bins are drawn on the first result's clock)"),
	"EndNs":          same("the first result's"),
	"Instant":        same("the first result's, as its EndNs (an instant in one repetition is an instant in all: the same command)"),
	"Error":          same("every distinct error, joined"),
	"EngineDied":     same("true when the server died in this window in any result"),
	"Marked":         same("the first result's (a mark is one outside fault: every machine saw the same)"),
	"Segment":        same("the first result's (segments: each window is the segment's that fired it, MergeSegments)"),
	"Lost":           same("summed (segments: charged over the union of the books, MergeSegments)"),
	"Duplicates":     same("summed (segments: charged over the union of the books, MergeSegments)"),
	"ProduceErrors":  same("summed (segments: each failed send charged by time over every segment, MergeSegments)"),
	"RecoverWriteNs": same("the longest; -1 (never) if any never recovered"),
	"RecoverReadNs":  same("the longest; -1 (never) if any never recovered"),
	"LagPeak":        {"summed (the generators' backlogs add: an upper bound)", "the largest"},
	"EngineLagPeak":  same("the largest"),
	"LossWindowNs":   same("the widest, with its own last durable point"),
	"LastDurableNs":  same("the widest loss window's"),
}

// mergeFaults aligns the results' fault windows by index and kind and merges them by faultRules.
func mergeFaults(rs []*Result, mode MergeMode) []FaultWindow {
	var out []FaultWindow
	var errs [][]string
	for _, r := range rs {
		for i, w := range r.Faults {
			if i >= len(out) || out[i].Kind != w.Kind { // another scenario's fault (Force): a row of its own
				out = append(out, w)
				errs = append(errs, nonEmpty(w.Error))
				continue
			}
			m := &out[i]
			m.Lost += w.Lost
			m.Duplicates += w.Duplicates
			m.ProduceErrors += w.ProduceErrors
			m.EngineDied = m.EngineDied || w.EngineDied
			m.RecoverWriteNs = worstRecovery(m.RecoverWriteNs, w.RecoverWriteNs)
			m.RecoverReadNs = worstRecovery(m.RecoverReadNs, w.RecoverReadNs)
			if mode == MergeRepetitions {
				m.LagPeak = max(m.LagPeak, w.LagPeak)
			} else {
				m.LagPeak += w.LagPeak
			}
			m.EngineLagPeak = max(m.EngineLagPeak, w.EngineLagPeak)
			// The pair comes from one source: the widest window among those that lost anything.
			if w.Lost > 0 && (m.Lost == w.Lost /* none before */ || w.LossWindowNs > m.LossWindowNs) {
				m.LossWindowNs, m.LastDurableNs = w.LossWindowNs, w.LastDurableNs
			}
			if w.Error != "" && !contains(errs[i], w.Error) {
				errs[i] = append(errs[i], w.Error)
			}
		}
	}
	for i := range out {
		out[i].Error = strings.Join(errs[i], "; ")
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// worstRecovery is the longer of two recovery times, -1 (never) winning.
func worstRecovery(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

// summedStats are the engine's counters over a run (bench/procstat.go): each result's server did
// its own work, so they add. Every other reading (resident memory) is a level: the largest. A
// counter some results lack (their server's cost was unknown: proc_cost_unknown) is left out
// rather than summed over fewer runs, and the merge says it is unknown.
var summedStats = map[string]bool{"proc_cpu_ns": true, "proc_write_bytes": true, "engine_fsyncs": true,
	"engine_log_bytes": true, "proc_restarts": true}

func mergeStats(rs []*Result) map[string]int64 {
	var out map[string]int64
	seen := map[string]int{}
	for _, r := range rs {
		for k, v := range r.Engine.Stats {
			if out == nil {
				out = map[string]int64{}
			}
			seen[k]++
			if summedStats[k] {
				out[k] += v
			} else if old, ok := out[k]; !ok || v > old {
				out[k] = v
			}
		}
	}
	for k := range summedStats {
		if n := seen[k]; n > 0 && n < len(rs) && k != "proc_restarts" {
			delete(out, k)
			out["proc_cost_unknown"] = 1
		}
	}
	return out
}

// mergeConsumers merges each consumer's share by consumer index (summaryRules PerConsumer).
func mergeConsumers(rs []*Result) []ConsumerShare {
	return mergeByIndex(rs, func(r *Result) []ConsumerShare { return r.Summary.PerConsumer },
		func(c ConsumerShare) int { return c.Consumer },
		func(m *ConsumerShare, c ConsumerShare) {
			m.Deliveries += c.Deliveries
			m.Duplicates += c.Duplicates
			m.Missed += c.Missed
			if c.Pending != nil { // nil: the engine cannot tell (n/a); a known count is summed
				sum := *c.Pending
				if m.Pending != nil {
					sum += *m.Pending
				}
				m.Pending = &sum
			}
			m.E2E = mergeLatencyBound(m.E2E, c.E2E)
		})
}

// mergeByIndex merges the rows of every result that carry the same index (a consumer's, a
// shard's): the first row of each index is taken as it is and the later ones added to it by add;
// the merged rows come out in index order.
func mergeByIndex[T any](rs []*Result, rows func(*Result) []T, index func(T) int, add func(m *T, row T)) []T {
	by := map[int]*T{}
	var order []int
	for _, r := range rs {
		for _, row := range rows(r) {
			i := index(row)
			if m, ok := by[i]; ok {
				add(m, row)
				continue
			}
			first := row
			by[i] = &first
			order = append(order, i)
		}
	}
	sort.Ints(order)
	var out []T
	for _, i := range order {
		out = append(out, *by[i])
	}
	return out
}

// mergeLatencyBound merges two latency summaries without their histograms: count, min, max and
// mean exactly, each percentile the larger (an upper bound of the merged percentile).
func mergeLatencyBound(a, b Latency) Latency {
	if a.Count == 0 {
		return b
	}
	if b.Count == 0 {
		return a
	}
	n := a.Count + b.Count
	return Latency{Count: n, Min: min(a.Min, b.Min), Max: max(a.Max, b.Max),
		Mean: (a.Mean*float64(a.Count) + b.Mean*float64(b.Count)) / float64(n),
		P50:  max(a.P50, b.P50), P90: max(a.P90, b.P90), P99: max(a.P99, b.P99), P999: max(a.P999, b.P999), P9999: max(a.P9999, b.P9999)}
}

// mergeShards merges the per-shard lag by shard index (summaryRules PerShard).
func mergeShards(rs []*Result) []ShardLag {
	return mergeByIndex(rs, func(r *Result) []ShardLag { return r.Summary.PerShard },
		func(s ShardLag) int { return s.Shard },
		func(m *ShardLag, s ShardLag) {
			m.Backlog, m.Pending = max(m.Backlog, s.Backlog), max(m.Pending, s.Pending)
			m.MaxBacklog, m.MaxPending = max(m.MaxBacklog, s.MaxBacklog), max(m.MaxPending, s.MaxPending)
			m.Sent += s.Sent
			m.Received += s.Received
		})
}

// mergeBacklog merges the backlog phases (summaryRules Backlog).
func mergeBacklog(rs []*Result, mode MergeMode) *Backlog {
	var slowest *Backlog
	var filled int64
	var drainRate float64
	drained := true
	for _, r := range rs {
		b := r.Summary.Backlog
		if b == nil {
			continue
		}
		filled += b.FilledMessages
		drainRate += b.DrainRate
		drained = drained && b.Drained
		if slowest == nil || (slowest.Drained && !b.Drained) || (slowest.Drained == b.Drained && b.DrainSeconds > slowest.DrainSeconds) {
			slowest = b
		}
	}
	if slowest == nil {
		return nil
	}
	out := *slowest
	if mode == MergeMachines {
		out.FilledMessages, out.DrainRate, out.Drained = filled, drainRate, drained
		out.FillSeconds = 0
		for _, r := range rs {
			if b := r.Summary.Backlog; b != nil {
				out.FillSeconds = max(out.FillSeconds, b.FillSeconds)
			}
		}
		if out.DrainSeconds > 0 {
			out.NetDrainRate = float64(filled) / out.DrainSeconds
		}
	}
	return &out
}

// mergeKnee: machines find the knee again in the merged series; repetitions keep the break at the
// lowest offered rate.
func mergeKnee(rs []*Result, mode MergeMode, series []Interval) *Knee {
	var first, earliest *Knee
	for _, r := range rs {
		k := r.Summary.Knee
		if k == nil {
			continue
		}
		if first == nil {
			first = k
		}
		if k.Reached && (earliest == nil || k.OfferedRate < earliest.OfferedRate) {
			earliest = k
		}
	}
	if first == nil {
		return nil
	}
	if mode == MergeMachines && len(series) > 0 {
		if k, err := FindKnee(first.Objective, series); err == nil {
			return k
		}
	}
	if earliest != nil {
		k := *earliest
		return &k
	}
	k := *first
	return &k
}

// mergeNotKnown is every ledger field any result could not know, in first-seen order.
func mergeNotKnown(rs []*Result) []string {
	var out []string
	for _, r := range rs {
		for _, f := range r.Summary.NotKnown {
			if !contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}
