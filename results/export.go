package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HgrmTicksPerHalfDistance and HgrmValueScale match HdrHistogram's own percentile output
// (outputPercentileDistribution with 5 ticks per half distance, values in milliseconds).
const (
	HgrmTicksPerHalfDistance = 5
	HgrmValueScale           = 1e6
)

// Histogram decodes the whole-run histogram of one latency kind.
func (r *Result) Histogram(kind string) (*hdrhistogram.Histogram, error) {
	enc, ok := r.Histograms[kind]
	if !ok || enc == "" {
		return NewHistogram(), nil
	}
	return DecodeHistogram(enc)
}

// WriteHgrm writes the percentile distribution of one latency kind in HdrHistogram's .hgrm text
// format (values in milliseconds), which HdrHistogram's plotter and other tools read.
func WriteHgrm(w io.Writer, r *Result, kind string) error {
	h, err := r.Histogram(kind)
	if err != nil {
		return err
	}
	_, err = h.PercentilesPrint(w, HgrmTicksPerHalfDistance, HgrmValueScale)
	return err
}

// WarmupTag tags the warm-up's part of each interval in an .hlog. HdrHistogram's
// HistogramLogProcessor reads untagged intervals unless told a tag (-tag warmup), so by default
// it totals the measured window only, as the summary does.
const WarmupTag = "warmup"

// WriteHlog writes one latency kind's per-second histograms as an HdrHistogram interval log
// (.hlog, format 1.3), the form HdrHistogram's HistogramLogProcessor reads. Time stamps are
// seconds since the run started (the StartTime line, to the millisecond); seconds without any
// value of this kind are written as empty histograms so that the log has no gaps. What was
// recorded for messages intended during the warm-up is written as a separate interval tagged
// WarmupTag, so the untagged intervals add up to the summary's histogram exactly.
func WriteHlog(w io.Writer, r *Result, kind string) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return err
	}
	if err := lw.OutputComment(fmt.Sprintf("[qbench run %s, %s/%s, latency %s in ns; the warm-up is tagged %s]", r.RunID, r.Engine.Name, r.Engine.Design, kind, WarmupTag)); err != nil {
		return err
	}
	// HdrHistogram's Java writer's form, with milliseconds (the Go writer cuts to whole seconds).
	start := r.StartedAt.UTC()
	if _, err := fmt.Fprintf(w, "#[StartTime: %.3f (seconds since epoch), %s]\n", float64(start.UnixMilli())/1e3, start.Format("2006-01-02T15:04:05.000Z07:00")); err != nil {
		return err
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	for i, iv := range r.Series {
		all, warm, err := intervalParts(iv, kind)
		if err != nil {
			return fmt.Errorf("second %d: %w", i, err)
		}
		end := iv.StartNs + int64(1e9)
		if i+1 < len(r.Series) {
			end = r.Series[i+1].StartNs
		}
		for _, h := range []*hdrhistogram.Histogram{warm, all} {
			if h == nil {
				continue
			}
			h.SetStartTimeMs(iv.StartNs / 1e6)
			h.SetEndTimeMs(end / 1e6)
			if err := lw.OutputIntervalHistogram(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// intervalParts splits one interval's histogram of kind into the measured part (untagged) and
// the warm-up part (tagged WarmupTag; nil when there is none). A result written before the
// warm-up part was kept has only the Warmup flag: such an interval is tagged whole.
func intervalParts(iv Interval, kind string) (measured, warm *hdrhistogram.Histogram, err error) {
	all, err := intervalHistogram(iv, kind)
	if err != nil {
		return nil, nil, err
	}
	enc, ok := iv.WarmupHistograms[kind]
	if !ok {
		if iv.Warmup && iv.WarmupHistograms == nil {
			all.SetTag(WarmupTag)
			return NewHistogram(), all, nil
		}
		return all, nil, nil
	}
	warm, err = DecodeHistogram(enc)
	if err != nil {
		return nil, nil, err
	}
	warm.SetTag(WarmupTag)
	return subtract(all, warm), warm, nil
}

// subtract returns a - b for histograms of qbench's range, b's counts being part of a's.
func subtract(a, b *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	sa, sb := a.Export(), b.Export()
	counts := make([]int64, len(sa.Counts))
	for i, c := range sa.Counts {
		counts[i] = c
		if i < len(sb.Counts) {
			counts[i] -= sb.Counts[i]
		}
		if counts[i] < 0 {
			counts[i] = 0
		}
	}
	sa.Counts = counts
	return hdrhistogram.Import(sa)
}

// IntervalHistogram decodes one second's histogram of one latency kind (empty when none).
func intervalHistogram(iv Interval, kind string) (*hdrhistogram.Histogram, error) {
	enc := iv.Histograms[kind]
	if enc == "" {
		return NewHistogram(), nil
	}
	return DecodeHistogram(enc)
}

// IntervalHistograms decodes one latency kind's per-second histograms, one per series entry.
func IntervalHistograms(r *Result, kind string) ([]*hdrhistogram.Histogram, error) {
	out := make([]*hdrhistogram.Histogram, len(r.Series))
	for i, iv := range r.Series {
		h, err := intervalHistogram(iv, kind)
		if err != nil {
			return nil, fmt.Errorf("second %d: %w", i, err)
		}
		out[i] = h
	}
	return out, nil
}

// SeriesCSVHeader names the columns of WriteSeriesCSV. Latencies are in nanoseconds.
var SeriesCSVHeader = func() []string {
	// offered is what the schedule intended in the second (Interval.Offered; empty for a closed
	// loop), beside what was acknowledged.
	h := []string{"second", "start_ns", "warmup", "offered", "acked", "failed", "deliveries", "lag",
		"engine_backlog", "engine_pending", "engine_oldest_pending_ns"}
	for _, k := range LatencyKinds {
		for _, st := range []string{"count", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "max_ns"} {
			h = append(h, k+"_"+st)
		}
	}
	// Bytes beside messages (payload bytes acknowledged and delivered in the second).
	h = append(h, "acked_bytes", "delivered_bytes")
	return h
}()

// WriteSeriesCSV writes the per-second series, one row a second.
func WriteSeriesCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(SeriesCSVHeader); err != nil {
		return err
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	for i, iv := range r.Series {
		offered := ""
		if r.Summary.OfferedRate > 0 || iv.Offered > 0 {
			offered = i64(iv.Offered)
		}
		row := []string{strconv.Itoa(i), i64(iv.StartNs), strconv.FormatBool(iv.Warmup), offered, i64(iv.Acked), i64(iv.Failed),
			i64(iv.Deliveries), i64(iv.Lag)}
		if iv.EngineLag != nil {
			row = append(row, i64(iv.EngineLag.Backlog), i64(iv.EngineLag.Pending), i64(iv.EngineLag.OldestPendingNs))
		} else {
			row = append(row, "", "", "")
		}
		for _, l := range []Latency{iv.Produce, iv.SendDelay, iv.E2E} {
			row = append(row, i64(l.Count), i64(l.P50), i64(l.P90), i64(l.P99), i64(l.P999), i64(l.Max))
		}
		row = append(row, i64(iv.AckedBytes), i64(iv.DeliveredBytes))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// FaultsCSVHeader names the columns of WriteFaultsCSV: times in nanoseconds since the run's
// epoch (end_ns is empty for a fault that did not end in the run), recover times -1 when
// nothing came back; marked is true for a fault injected by something else (qbench mark).
var FaultsCSVHeader = []string{"index", "kind", "target", "marked", "start_ns", "end_ns", "instant", "error",
	"lost", "duplicates", "produce_errors", "recover_write_ns", "recover_read_ns", "lag_peak", "engine_lag_peak",
	"loss_window_ns", "last_durable_ns"}

// WriteFaultsCSV writes one row per fault window.
func WriteFaultsCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(FaultsCSVHeader); err != nil {
		return err
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	for i, f := range r.Faults {
		end := i64(f.EndNs)
		if f.EndNs == math.MaxInt64 {
			end = ""
		}
		row := []string{strconv.Itoa(i), f.Kind, f.Target, strconv.FormatBool(f.Marked), i64(f.StartNs), end,
			strconv.FormatBool(f.Instant), f.Error, i64(f.Lost), i64(f.Duplicates), i64(f.ProduceErrors),
			i64(f.RecoverWriteNs), i64(f.RecoverReadNs), i64(f.LagPeak), i64(f.EngineLagPeak),
			i64(f.LossWindowNs), i64(f.LastDurableNs)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummaryCSV writes one row per result with every metric as a column (latencies in ns), so
// several runs line up in a spreadsheet, then its trust verdict, flag codes (";"-joined) and
// warnings (" | "-joined). names label the rows (file names, usually). A metric a run did not
// measure (knee, engine_cpu_per_msg) is an empty cell, not 0.
func WriteSummaryCSV(w io.Writer, names []string, rs []*Result) error {
	cw := csv.NewWriter(w)
	ms := Metrics()
	header := []string{"name", "run_id", "engine", "design", "started_at", "measured_seconds", "offered_rate", "trust", "flags"}
	for _, m := range ms {
		col := m.Name
		if m.Unit == UnitNs {
			col += "_ns"
		}
		header = append(header, col)
	}
	// in_process_engine true: the engine ran inside qbench's process, so cpu_per_message includes
	// the engine's work and the engine's memory includes qbench's.
	header = append(header, "in_process_engine")
	header = append(header, "warnings")
	if err := cw.Write(header); err != nil {
		return err
	}
	for i, r := range rs {
		row := []string{names[i], r.RunID, r.Engine.Name, r.Engine.Design, r.StartedAt.UTC().Format("2006-01-02T15:04:05Z"),
			strconv.FormatFloat(r.Summary.MeasuredSeconds, 'f', 3, 64), strconv.FormatFloat(r.Summary.OfferedRate, 'f', -1, 64)}
		t := Assess(r)
		row = append(row, t.Verdict, strings.Join(t.Codes(), ";"))
		for _, m := range ms {
			if m.Missing(r) != "" {
				row = append(row, "")
				continue
			}
			v := m.Of(r)
			prec := 0
			if m.Unit == UnitRate {
				prec = 1
			}
			row = append(row, strconv.FormatFloat(v, 'f', prec, 64))
		}
		row = append(row, strconv.FormatBool(r.Summary.Generator.InProcessEngine))
		row = append(row, strings.Join(r.Summary.Warnings, " | "))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
