package results

import (
	"fmt"
	"math"
	"strings"
)

// Unit says how a metric's value is written and parsed.
type Unit string

const (
	UnitNs    Unit = "ns"    // a latency; written 1.23ms, parsed from 20ms or a number of ns
	UnitRate  Unit = "msg/s" // messages per second
	UnitBytes Unit = "B/s"   // payload bytes per second
	UnitCount Unit = "count" // messages or errors
)

// Metric is one named number read from a result's summary. Names are what gates and the compare
// table use: "e2e.p99", "produce.p99.9", "produce_rate", "lost".
type Metric struct {
	Name string
	Unit Unit
	// HigherIsBetter is true for throughput; every other metric is better lower.
	HigherIsBetter bool
	get            func(*Summary) float64
	// of reads a metric that needs more of the result than its summary (the engine's stats, the
	// series); nil for summary metrics.
	of func(*Result) float64
	// missing says why a result has no value of the metric ("" when it has one).
	missing func(*Result) string
}

// Value reads the metric from a summary. A metric that needs the whole result (Of) reads 0 from
// a summary alone.
func (m Metric) Value(s *Summary) float64 {
	if m.get == nil {
		return m.of(&Result{Summary: *s})
	}
	return m.get(s)
}

// Of reads the metric from a result.
func (m Metric) Of(r *Result) float64 {
	if m.of != nil {
		return m.of(r)
	}
	return m.get(&r.Summary)
}

// Missing says why r has no value of the metric, "" when it has one (only knee and
// engine_cpu_per_msg can be missing).
func (m Metric) Missing(r *Result) string {
	if m.missing == nil {
		return ""
	}
	return m.missing(r)
}

var latencyStats = []struct {
	name string
	get  func(Latency) float64
}{
	{"p50", func(l Latency) float64 { return float64(l.P50) }},
	{"p90", func(l Latency) float64 { return float64(l.P90) }},
	{"p99", func(l Latency) float64 { return float64(l.P99) }},
	{"p99.9", func(l Latency) float64 { return float64(l.P999) }},
	{"p99.99", func(l Latency) float64 { return float64(l.P9999) }},
	{"max", func(l Latency) float64 { return float64(l.Max) }},
	{"mean", func(l Latency) float64 { return l.Mean }},
	{"min", func(l Latency) float64 { return float64(l.Min) }},
}

// compareStats are the latency statistics the compare table shows (all remain usable in gates).
var compareStats = map[string]bool{"p50": true, "p90": true, "p99": true, "p99.9": true, "max": true}

func counter(name string, get func(*Summary) int64) Metric {
	return Metric{Name: name, Unit: UnitCount, get: func(s *Summary) float64 { return float64(get(s)) }}
}

var otherMetrics = []Metric{
	{Name: "produce_rate", Unit: UnitRate, HigherIsBetter: true, get: func(s *Summary) float64 { return s.ProduceRate }},
	{Name: "deliver_rate", Unit: UnitRate, HigherIsBetter: true, get: func(s *Summary) float64 { return s.DeliverRate }},
	{Name: "produce_bytes_rate", Unit: UnitBytes, HigherIsBetter: true, get: func(s *Summary) float64 { return s.ProduceBytesRate }},
	{Name: "deliver_bytes_rate", Unit: UnitBytes, HigherIsBetter: true, get: func(s *Summary) float64 { return s.DeliverBytesRate }},
	counter("lost", func(s *Summary) int64 { return s.Ledger.Lost }),
	counter("queued", func(s *Summary) int64 { return s.Ledger.Queued }),
	counter("duplicates", func(s *Summary) int64 { return s.Ledger.Duplicates }),
	counter("failed", func(s *Summary) int64 { return s.Ledger.Failed }),
	counter("delivered_unacked", func(s *Summary) int64 { return s.Ledger.DeliveredUnacked }),
	counter("phantom", func(s *Summary) int64 { return s.Ledger.Phantom }),
	{Name: "cpu_per_message", Unit: UnitNs, get: func(s *Summary) float64 { return s.Generator.CPUPerMessageNs }},
	counter("produce_errors", func(s *Summary) int64 { return s.ProduceErrors }),
	counter("consume_errors", func(s *Summary) int64 { return s.ConsumeErrors }),
	counter("lag_max", func(s *Summary) int64 { return s.LagMax }),
	counter("engine_lag_max", func(s *Summary) int64 { return s.EngineLagMax }),
	counter("histogram_dropped", func(s *Summary) int64 { return s.HistogramDropped }),
	counter("unsent", func(s *Summary) int64 { return s.Unsent }),
	{Name: "knee", Unit: UnitRate, HigherIsBetter: true, of: KneeRate,
		missing: func(r *Result) string {
			if r.Summary.Knee == nil {
				return "the run has no knee objective (scenario knee:)"
			}
			return ""
		}},
	{Name: "engine_cpu_per_msg", Unit: UnitNs, of: func(r *Result) float64 { v, _ := EngineCPUPerMessage(r); return v },
		missing: func(r *Result) string {
			if _, ok := EngineCPUPerMessage(r); !ok {
				return "the engine's CPU is not known (qbench did not start its server, or nothing was acknowledged)"
			}
			return ""
		}},
}

// KneeRate is the offered rate (msg/s) of the second in which a run first broke its knee
// objective; when the objective held throughout, the highest offered rate of any measured second
// (the knee is at least that); 0 without a knee objective.
func KneeRate(r *Result) float64 {
	k := r.Summary.Knee
	switch {
	case k == nil:
		return 0
	case k.Reached:
		return k.OfferedRate
	}
	best := 0.0
	for i, iv := range r.Series {
		if iv.Warmup {
			continue
		}
		secs := 1.0
		if i+1 < len(r.Series) {
			secs = float64(r.Series[i+1].StartNs-iv.StartNs) / 1e9
		}
		if secs > 0 {
			best = math.Max(best, float64(iv.Offered)/secs)
		}
	}
	return best
}

// EngineCPUPerMessage is the engine's server process's CPU (Engine.Stats proc_cpu_ns, summed
// across restarts) per acknowledged message, in ns; false when it is not known.
func EngineCPUPerMessage(r *Result) (float64, bool) {
	v, ok := r.Engine.Stats["proc_cpu_ns"]
	if !ok || r.Summary.Ledger.Acked <= 0 {
		return 0, false
	}
	return float64(v) / float64(r.Summary.Ledger.Acked), true
}

// Metrics lists every metric in display order: latencies by kind, then throughput, then counts.
func Metrics() []Metric {
	var out []Metric
	for _, k := range LatencyKinds {
		for _, st := range latencyStats {
			k, st := k, st
			out = append(out, Metric{Name: k + "." + st.name, Unit: UnitNs,
				get: func(s *Summary) float64 { return st.get(s.Latency[k]) }})
		}
	}
	return append(out, otherMetrics...)
}

// LookupMetric finds a metric by name.
func LookupMetric(name string) (Metric, error) {
	for _, m := range Metrics() {
		if m.Name == name {
			return m, nil
		}
	}
	return Metric{}, fmt.Errorf("unknown metric %q (known: KIND.STAT with KIND %s and STAT %s; or %s)",
		name, strings.Join(LatencyKinds, ", "), statNames(), otherNames())
}

func statNames() string {
	var s []string
	for _, st := range latencyStats {
		s = append(s, st.name)
	}
	return strings.Join(s, ", ")
}

func otherNames() string {
	var s []string
	for _, m := range otherMetrics {
		s = append(s, m.Name)
	}
	return strings.Join(s, ", ")
}

// FormatValue writes a metric value in its unit.
func FormatValue(u Unit, v float64) string {
	switch u {
	case UnitNs:
		if v == 0 {
			return "0"
		}
		return FormatNs(int64(v))
	case UnitRate:
		return fmt.Sprintf("%.0f msg/s", v)
	case UnitBytes:
		return formatBytes(v) + "/s"
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// formatDelta writes a signed difference in the metric's unit.
func formatDelta(u Unit, d float64) string {
	if u != UnitNs {
		d = math.Round(d)
	}
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	if d == 0 {
		return "0"
	}
	switch u {
	case UnitNs:
		return sign + FormatNs(int64(d))
	case UnitRate:
		return fmt.Sprintf("%s%.0f msg/s", sign, d)
	case UnitBytes:
		return sign + formatBytes(d) + "/s"
	default:
		return fmt.Sprintf("%s%.0f", sign, d)
	}
}
