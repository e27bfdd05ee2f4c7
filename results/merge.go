package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Merged records how a result was combined from others.
type Merged struct {
	// Mode is machines (the same scenario run at once from several load generators) or
	// repetitions (the same scenario run one after another).
	Mode MergeMode `json:"mode"`
	// Sources are the run IDs combined, in order.
	Sources []string `json:"sources"`
	// ClockBoundNs, for segments, bounds the error of end-to-end latency between segments
	// (clock offsets against the engine's clock; -1: a segment's offset is unknown).
	ClockBoundNs int64 `json:"clock_bound_ns,omitempty"`
	// Interrupted are the sources that were stopped early (Ctrl-C): the merge is partial, and
	// its headline says so (PartialHeadline).
	Interrupted []string `json:"interrupted,omitempty"`
	// Missing, for segments merged with some missing (qbench merge --allow-missing), says what
	// is missing: the merge is partial, and its headline says so (MissingHeadline).
	Missing *Missing `json:"missing,omitempty"`
}

// Repetition is one repetition's own figures inside a merged result.
type Repetition struct {
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
	Summary   Summary   `json:"summary"`
	// Faults are the repetition's own fault windows, so that a fault's cost can be compared
	// across repetitions (the merged result's add them up, mergeFaults).
	Faults []FaultWindow `json:"faults,omitempty"`
}

// MergeMode says how results are combined.
type MergeMode string

const (
	// MergeMachines combines results of one scenario run at the same time from several machines:
	// histograms add, counters and rates sum, the per-second series add second by second.
	MergeMachines MergeMode = "machines"
	// MergeRepetitions combines repetitions of one scenario: histograms add, counters sum, rates
	// are the total over the total measured time, and each repetition's summary is kept so that
	// gates can see the spread. The series is the first repetition's.
	MergeRepetitions MergeMode = "repetitions"
)

// ErrDifferentScenarios is returned by Merge when the results are of different scenarios.
var ErrDifferentScenarios = errors.New("results are of different scenarios")

// MergeOptions tune Merge.
type MergeOptions struct {
	Mode MergeMode
	// Force merges results whose scenarios differ.
	Force bool
}

// Merge combines results of one scenario. Histograms are added exactly (HDR histograms of the
// same geometry merge without loss) and the percentiles are read again from the sums. Every
// other field is merged by the rule mergefields.go states for it, or left out for the reason
// stated there.
func Merge(rs []*Result, opt MergeOptions) (*Result, error) {
	if len(rs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	if opt.Mode == "" {
		opt.Mode = MergeMachines
	}
	if opt.Mode != MergeMachines && opt.Mode != MergeRepetitions {
		return nil, fmt.Errorf("merge mode %q: want machines or repetitions", opt.Mode)
	}
	first := rs[0]
	if !opt.Force {
		for i, r := range rs[1:] {
			if !sameScenario(first.Scenario, r.Scenario) || r.Engine.Name != first.Engine.Name || r.Engine.Design != first.Engine.Design {
				return nil, fmt.Errorf("%w: result %d (run %s) differs from result 1 (run %s)", ErrDifferentScenarios, i+2, r.RunID, first.RunID)
			}
		}
	}
	out := &Result{
		SchemaVersion: SchemaVersion,
		Tool:          first.Tool,
		RunID:         fmt.Sprintf("%s+%d", first.RunID, len(rs)-1),
		StartedAt:     first.StartedAt,
		Scenario:      first.Scenario,
		Engine:        first.Engine,
		Machine:       first.Machine,
		Histograms:    map[string]string{},
		Merged:        &Merged{Mode: opt.Mode},
	}
	var s Summary
	var deliveries float64                 // repetitions: deliveries inside the measured windows
	var produceBytes, deliverBytes float64 // repetitions: payload bytes inside them
	for _, r := range rs {
		out.Merged.Sources = append(out.Merged.Sources, r.RunID)
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Interrupted {
			out.Merged.Interrupted = append(out.Merged.Interrupted, r.RunID)
		}
		if r.Checkpoint != nil && out.Checkpoint == nil {
			c := *r.Checkpoint
			out.Checkpoint = &c // a merge with a checkpoint in it is not finished either
		}
		rsum := r.Summary
		addLedger(&s.Ledger, rsum.Ledger)
		s.ProduceErrors += rsum.ProduceErrors
		s.Unsent += rsum.Unsent
		s.ConsumeErrors += rsum.ConsumeErrors
		s.HistogramDropped += rsum.HistogramDropped
		s.EngineLagMax = max(s.EngineLagMax, rsum.EngineLagMax)
		s.Groups = max(s.Groups, rsum.Groups)
		s.DrainSeconds = max(s.DrainSeconds, rsum.DrainSeconds)
		s.SweepSeconds = max(s.SweepSeconds, rsum.SweepSeconds)
		s.DeadLettered = max(s.DeadLettered, rsum.DeadLettered)
		s.ReorderScope, s.ReorderNotPromised = first.Summary.ReorderScope, first.Summary.ReorderNotPromised
		switch opt.Mode {
		case MergeMachines:
			s.MeasuredSeconds = max(s.MeasuredSeconds, rsum.MeasuredSeconds)
			s.ProduceRate += rsum.ProduceRate
			s.DeliverRate += rsum.DeliverRate
			s.ProduceBytesRate += rsum.ProduceBytesRate
			s.DeliverBytesRate += rsum.DeliverBytesRate
			s.OfferedRate += rsum.OfferedRate
			s.LagMax += rsum.LagMax // an upper bound until the series says better
			deliveries += rsum.DeliverRate * rsum.MeasuredSeconds
			produceBytes += rsum.ProduceBytesRate * rsum.MeasuredSeconds
			deliverBytes += rsum.DeliverBytesRate * rsum.MeasuredSeconds
		case MergeRepetitions:
			s.MeasuredSeconds += rsum.MeasuredSeconds
			deliveries += rsum.DeliverRate * rsum.MeasuredSeconds
			produceBytes += rsum.ProduceBytesRate * rsum.MeasuredSeconds
			deliverBytes += rsum.DeliverBytesRate * rsum.MeasuredSeconds
			s.OfferedRate = first.Summary.OfferedRate
			s.LagMax = max(s.LagMax, rsum.LagMax)
			if len(r.Repetitions) > 0 {
				out.Repetitions = append(out.Repetitions, r.Repetitions...)
			} else {
				out.Repetitions = append(out.Repetitions, Repetition{RunID: r.RunID, StartedAt: r.StartedAt, Summary: rsum, Faults: r.Faults})
			}
		}
		if opt.Mode == MergeMachines && r.Machine.Hostname != first.Machine.Hostname {
			out.Machine.Hostname += "," + r.Machine.Hostname
		}
		out.Lost = append(out.Lost, r.Lost...)
	}
	if len(out.Lost) > 100 {
		out.Lost = out.Lost[:100]
	}
	out.DeadLetters = first.DeadLetters // one engine's store, read by every generator
	out.Errors = mergeErrors(rs)

	// Whole-run histograms: add exactly, then read the percentiles from the sum.
	s.Latency = map[string]Latency{}
	for _, k := range histogramKinds(rs) {
		h, dropped, err := mergeEncoded(rs, func(r *Result) string { return r.Histograms[k] })
		if err != nil {
			return nil, fmt.Errorf("%s histogram: %w", k, err)
		}
		s.HistogramDropped += dropped
		s.Latency[k] = Summarise(h)
		if out.Histograms[k], err = EncodeHistogram(h); err != nil {
			return nil, err
		}
	}
	// Rates of machines stopped early are not summed as if every one had run the whole window:
	// what they all did over the longest window, so a partial merge does not read as the full
	// rate.
	if opt.Mode == MergeRepetitions && s.MeasuredSeconds > 0 || opt.Mode == MergeMachines && out.Interrupted && s.MeasuredSeconds > 0 {
		s.ProduceRate = float64(s.Latency["produce"].Count) / s.MeasuredSeconds
		s.DeliverRate = deliveries / s.MeasuredSeconds
		s.ProduceBytesRate, s.DeliverBytesRate = produceBytes/s.MeasuredSeconds, deliverBytes/s.MeasuredSeconds
	}
	s.DeliverRatePerGroup = s.DeliverRate / float64(max(s.Groups, 1))

	switch opt.Mode {
	case MergeMachines:
		series, dropped, err := mergeSeries(rs)
		if err != nil {
			return nil, err
		}
		s.HistogramDropped += dropped
		out.Series = series
		if len(series) > 0 {
			s.LagMax = 0
			for _, iv := range series {
				s.LagMax = max(s.LagMax, iv.Lag)
			}
		}
		s.PerGroup = mergeGroups(rs, series, true)
	case MergeRepetitions:
		s.PerGroup = mergeGroups(rs, nil, false)
		out.Series = first.Series
		out.Bins = first.Bins             // like the series: the first repetition's
		out.LagSamples = first.LagSamples // likewise
	}
	// Machines' latency bins are not merged: a bin keeps percentiles, not a histogram, so they
	// cannot be added exactly; the charts fall back to the merged per-second series.
	s.Generator = mergeGenerator(rs)
	s.MachineLoad = mergeMachineLoad(rs)
	s.Role = first.Summary.Role
	s.NotKnown = mergeNotKnown(rs)
	s.PerShard = mergeShards(rs)
	s.PerConsumer = mergeConsumers(rs)
	s.Backlog = mergeBacklog(rs, opt.Mode)
	s.Knee = mergeKnee(rs, opt.Mode, out.Series)
	out.Engine.Stats = mergeStats(rs)
	for _, r := range rs {
		if out.Engine.Died == nil && r.Engine.Died != nil {
			out.Engine.Died = r.Engine.Died // a death in any repetition or segment qualifies the merge
		}
	}
	out.Faults = mergeFaults(rs, opt.Mode)
	// The rules read the merged figures again; what the runs wrote of themselves is kept.
	var earlier [][]string
	for _, r := range rs {
		earlier = append(earlier, r.Summary.Warnings)
	}
	s.Warnings = Rewarn(s, earlier...)
	out.Summary = s
	return out, nil
}

// sameScenario compares two scenarios as run, ignoring the seed (repetitions may vary it).
func sameScenario(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return false
	}
	delete(ma, "seed")
	delete(mb, "seed")
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	return bytes.Equal(ja, jb)
}

// addLedger adds every count of l into dst. It walks the struct's fields, so a count added to
// Ledger later is merged without a change here (TestMergeAddsEveryLedgerField checks it).
func addLedger(dst *Ledger, l Ledger) {
	d, v := reflect.ValueOf(dst).Elem(), reflect.ValueOf(l)
	for i := range v.NumField() {
		d.Field(i).SetInt(d.Field(i).Int() + v.Field(i).Int())
	}
}

func histogramKinds(rs []*Result) []string {
	seen := map[string]bool{}
	var kinds []string
	for _, k := range LatencyKinds {
		seen[k] = true
		kinds = append(kinds, k)
	}
	for _, r := range rs {
		for k := range r.Histograms {
			if !seen[k] {
				seen[k] = true
				kinds = append(kinds, k)
			}
		}
	}
	sort.Strings(kinds[len(LatencyKinds):])
	return kinds
}

// mergeEncoded decodes and adds one encoded histogram from each result; empty encodings are
// skipped. It returns the values the sum could not hold (zero with qbench's common geometry).
func mergeEncoded(rs []*Result, enc func(*Result) string) (*hdrhistogram.Histogram, int64, error) {
	sum := NewHistogram()
	var dropped int64
	for _, r := range rs {
		e := enc(r)
		if e == "" {
			continue
		}
		h, err := DecodeHistogram(e)
		if err != nil {
			return nil, 0, fmt.Errorf("run %s: %w", r.RunID, err)
		}
		dropped += sum.Merge(h)
	}
	return sum, dropped, nil
}

// mergeSeries adds the per-second series second by second: the load generators of a
// multi-machine run start together, so their i-th seconds coincide (to within clock skew).
func mergeSeries(rs []*Result) ([]Interval, int64, error) {
	n := 0
	for _, r := range rs {
		n = max(n, len(r.Series))
	}
	out := make([]Interval, n)
	var dropped int64
	for i := range out {
		iv := &out[i]
		var present []*Result
		for _, r := range rs {
			if i >= len(r.Series) {
				continue
			}
			src := r.Series[i]
			if len(present) == 0 {
				iv.StartNs = src.StartNs
			}
			present = append(present, r)
			iv.Warmup = iv.Warmup || src.Warmup
			iv.Offered += src.Offered
			if iv.Health == nil {
				iv.Health = src.Health
			}
			if m := src.Machine; m != nil {
				if iv.Machine == nil {
					iv.Machine = &IntervalMachine{}
				}
				iv.Machine.StealShare = max(iv.Machine.StealShare, m.StealShare)
				iv.Machine.OtherCores = max(iv.Machine.OtherCores, m.OtherCores)
			}
			iv.Acked += src.Acked
			iv.Failed += src.Failed
			iv.Deliveries += src.Deliveries
			iv.AckedBytes += src.AckedBytes
			iv.DeliveredBytes += src.DeliveredBytes
			iv.Lag += src.Lag
			iv.GroupLag = addGroupLag(iv.GroupLag, src.GroupLag)
			if src.EngineLag != nil && (iv.EngineLag == nil || src.EngineLag.Backlog+src.EngineLag.Pending > iv.EngineLag.Backlog+iv.EngineLag.Pending) {
				el := *src.EngineLag
				iv.EngineLag = &el
			}
		}
		iv.Histograms = map[string]string{}
		for _, k := range LatencyKinds {
			h, d, err := mergeEncoded(present, func(r *Result) string { return r.Series[i].Histograms[k] })
			if err != nil {
				return nil, 0, fmt.Errorf("second %d, %s histogram: %w", i, k, err)
			}
			dropped += d
			l := Summarise(h)
			switch k {
			case "produce":
				iv.Produce = l
			case "send_delay":
				iv.SendDelay = l
			case "e2e":
				iv.E2E = l
			}
			if h.TotalCount() > 0 {
				if iv.Histograms[k], err = EncodeHistogram(h); err != nil {
					return nil, 0, err
				}
			}
			// The warm-up's part adds the same way, so a merged .hlog still sums to the summary.
			w, _, err := mergeEncoded(present, func(r *Result) string { return r.Series[i].WarmupHistograms[k] })
			if err != nil {
				return nil, 0, fmt.Errorf("second %d, %s warm-up histogram: %w", i, k, err)
			}
			if w.TotalCount() > 0 {
				if iv.WarmupHistograms == nil {
					iv.WarmupHistograms = map[string]string{}
				}
				if iv.WarmupHistograms[k], err = EncodeHistogram(w); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	return out, dropped, nil
}

func mergeErrors(rs []*Result) []ErrorCount {
	type key struct{ where, msg string }
	counts := map[key]int64{}
	var order []key
	for _, r := range rs {
		for _, e := range r.Errors {
			k := key{e.Where, e.Message}
			if _, ok := counts[k]; !ok {
				order = append(order, k)
			}
			counts[k] += e.Count
		}
	}
	var out []ErrorCount
	for _, k := range order {
		out = append(out, ErrorCount{Where: k.where, Message: k.msg, Count: counts[k]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// addGroupLag adds b's per-group readings to a's, group by group (machines each hold part of
// every group's lag).
func addGroupLag(a, b []int64) []int64 {
	for len(a) < len(b) {
		a = append(a, 0)
	}
	for g, v := range b {
		a[g] += v
	}
	return a
}

// mergeGroups is the per-group table of merged results. Across machines each group's consumers,
// deliveries and lag at the end add, and its lag max is read again from the merged series (the
// sum of the maxima, an upper bound, when the series has no per-group readings); across
// repetitions each figure is the largest any repetition had.
func mergeGroups(rs []*Result, series []Interval, machines bool) []GroupLag {
	var out []GroupLag
	for _, r := range rs {
		for _, g := range r.Summary.PerGroup {
			for len(out) <= g.Group {
				out = append(out, GroupLag{Group: len(out)})
			}
			o := &out[g.Group]
			if machines {
				o.Consumers += g.Consumers
				o.Delivered += g.Delivered
				o.LagEnd += g.LagEnd
				o.LagMax += g.LagMax
			} else {
				o.Consumers = max(o.Consumers, g.Consumers)
				o.Delivered = max(o.Delivered, g.Delivered)
				o.LagEnd = max(o.LagEnd, g.LagEnd)
				o.LagMax = max(o.LagMax, g.LagMax)
			}
		}
	}
	if peak, _ := GroupLagPeaks(series, nil); machines && len(peak) == len(out) {
		for g := range out {
			out[g].LagMax = max(peak[g], out[g].LagEnd)
		}
	}
	return out
}
