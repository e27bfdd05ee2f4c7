package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"
)

// LatencyKinds is the order latency kinds are shown in.
var LatencyKinds = []string{"produce", "send_delay", "e2e"}

var kindTitles = map[string]string{
	"produce":    "produce (intended send -> ack)",
	"send_delay": "send delay (intended -> actual send)",
	"e2e":        "end-to-end (intended send -> receipt)",
}

// WriteSummary prints the human-readable summary of a result.
func WriteSummary(w io.Writer, r *Result) error {
	s := r.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "engine %s (%s) design %s, run %s\n", r.Engine.Name, orDash(r.Engine.Version), r.Engine.Design, r.RunID)
	if h := PartialHeadline(r); h != "" {
		fmt.Fprintln(w, h)
	}
	if h := MissingHeadline(r); h != "" {
		fmt.Fprintln(w, h)
	}
	if h := CheckpointHeadline(r); h != "" {
		fmt.Fprintln(w, h)
	}
	offered := "closed loop (max)"
	switch {
	case s.Role == "consume":
		offered = "nothing (a consume-only run)"
	case s.OfferedRate > 0:
		offered = fmt.Sprintf("%.0f msg/s", s.OfferedRate)
	}
	fmt.Fprintf(w, "offered %s; produced %.0f msg/s (%s/s), %s over %.1f s measured\n",
		offered, s.ProduceRate, formatBytes(s.ProduceBytesRate), deliveredRate(s), s.MeasuredSeconds)
	if k := s.Knee; k != nil {
		if k.Reached {
			fmt.Fprintf(w, "knee: %s first broken at %.0f s, offered %.0f msg/s, produced %.0f msg/s\n", k.Objective, k.AtSeconds, k.OfferedRate, k.ProduceRate)
		} else {
			fmt.Fprintf(w, "knee: %s held in every measured second\n", k.Objective)
		}
	}
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the run was stopped early; figures cover what ran")
	}
	trust := Assess(r)
	writeTrust(w, trust) // trustlines.go
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "latency\tcount\tp50\tp90\tp99\tp99.9\tp99.99\tmax\t")
	for _, k := range LatencyKinds {
		l := s.Latency[k]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", kindTitles[k], l.Count,
			FormatNs(l.P50), FormatNs(l.P90), FormatNs(l.P99), FormatNs(l.P999), FormatNs(l.P9999), FormatNs(l.Max))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	l := s.Ledger
	// Queued and lost are told apart: a backlog left in the engine is not a loss.
	queued := fmt.Sprintf("queued %d", l.Queued)
	if l.Queued > 0 {
		queued += " (still in the engine at the end: a backlog, not a loss)"
	}
	switch s.Role {
	case "produce":
		fmt.Fprintf(w, "messages: sent %d, acked %d, failed %d (a produce-only run: delivered, queued, lost and duplicates are the consuming run's to know)\n",
			l.Sent, l.Acked, l.Failed)
	case "consume":
		e2e := "no end-to-end latency across processes"
		if !slices.Contains(s.NotKnown, "e2e") {
			e2e = "end-to-end latency on the segments' shared clock"
		}
		fmt.Fprintf(w, "messages: delivered %d, duplicates %d, foreign %d (a consume-only run: sent, acked, queued and lost are the producing run's to know; %s)\n",
			l.Delivered, l.Duplicates, l.Foreign, e2e)
	default:
		if r.Segment != nil {
			writeSegmentLedger(w, r)
			break
		}
		if r.Checkpoint != nil {
			writeCheckpointLedger(w, r)
			break
		}
		fmt.Fprintf(w, "messages: sent %d, acked %d, failed %d, delivered %d, %s, lost %d, duplicates %d\n",
			l.Sent, l.Acked, l.Failed, l.Delivered, queued, l.Lost, l.Duplicates)
	}
	if l.Foreign > 0 && s.Role != "consume" {
		fmt.Fprintf(w, "          foreign %d (not this run's messages: ignored)\n", l.Foreign)
	}
	writeBacklog(w, s.Backlog)
	if l.DeliveredUnacked > 0 || l.Phantom > 0 || l.Unknown > 0 {
		fmt.Fprintf(w, "          delivered but not acked %d, phantom %d, unknown %d\n", l.DeliveredUnacked, l.Phantom, l.Unknown)
	}
	writeOrder(w, s)
	writeDeadLetters(w, r)
	fmt.Fprintf(w, "lag max: %d (load generator's view)", s.LagMax)
	if s.EngineLagMax > 0 {
		fmt.Fprintf(w, ", %d (engine: backlog + pending)", s.EngineLagMax)
	}
	fmt.Fprintln(w)
	writeShards(w, s.PerShard)
	if err := writeGroups(w, s.PerGroup); err != nil {
		return err
	}
	if err := writeConsumers(w, s.PerConsumer, s.Groups); err != nil {
		return err
	}
	if s.Unsent > 0 {
		fmt.Fprintf(w, "unsent: %d scheduled messages were never sent (producers still behind at duration + drain timeout)\n", s.Unsent)
	}
	if s.ProduceErrors+s.ConsumeErrors > 0 {
		fmt.Fprintf(w, "errors: produce %d, consume %d\n", s.ProduceErrors, s.ConsumeErrors)
		for i, e := range r.Errors {
			if i == 5 {
				break
			}
			fmt.Fprintf(w, "  %dx %s: %s\n", e.Count, e.Where, e.Message)
		}
	}
	if len(r.Faults) > 0 {
		fmt.Fprintln(w, "faults:")
		fw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(fw, "  at\tfault\ttarget\tlasted\tlost\tduplicates\tproduce errors\twrite back after\tread back after\tlag peak")
		for _, f := range r.Faults {
			kind := f.Kind
			if f.Marked {
				kind += " (marked)" // injected by something else: its times are the marks'
			}
			if f.Segment != nil {
				kind += fmt.Sprintf(" (segment %d)", *f.Segment) // fired by it, costed over all
			}
			if f.Error != "" {
				kind += " (failed: " + f.Error + ")"
			}
			if f.EngineDied {
				kind += " (server died)"
			}
			lost, dups := fmt.Sprint(f.Lost), fmt.Sprint(f.Duplicates)
			if r.Segment != nil { // a segment's share: only the merge of all segments knows them
				lost, dups = "?", "?"
			}
			fmt.Fprintf(fw, "  %s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\n", FormatNs(f.StartNs), kind, f.Target,
				lasted(f), lost, dups, f.ProduceErrors, recovery(f.RecoverWriteNs), recovery(f.RecoverReadNs), f.LagPeak)
		}
		if err := fw.Flush(); err != nil {
			return err
		}
		if r.Segment != nil {
			fmt.Fprintf(w, "  (this segment's windows: lost and duplicates known after merge, which charges every window the costs of all %d segments; produce errors here are this segment's own)\n", r.Segment.Count)
		}
		writeLossWindows(w, r.Faults)
	}
	writeHealth(w, r)
	writeEngineCost(w, r)
	writeMachine(w, s)
	writePacer(w, s.Generator)
	if s.HistogramDropped > 0 {
		fmt.Fprintf(w, "warning: %d latency values were out of the histogram's range\n", s.HistogramDropped)
	}
	for _, msg := range unflaggedWarnings(s.Warnings, trust) {
		fmt.Fprintf(w, "warning: %s\n", msg)
	}
	return nil
}

// deliveredRate says how fast messages arrived inside the measured window, per receiving group
// when every group is owed every message (fan-out), so 16,000 deliveries/s to four subscribers
// reads as 4,000 msg/s to each.
func deliveredRate(s Summary) string {
	if s.Role == "produce" {
		return "deliveries not measured (a produce-only run)"
	}
	if s.Groups > 1 {
		return fmt.Sprintf("delivered %.0f msg/s to each of %d receiving groups (%.0f deliveries/s, %s/s in all)", s.DeliverRatePerGroup, s.Groups, s.DeliverRate, formatBytes(s.DeliverBytesRate))
	}
	return fmt.Sprintf("delivered %.0f msg/s (%s/s)", s.DeliverRate, formatBytes(s.DeliverBytesRate))
}

// FormatNs prints a latency with a unit that suits it.
func FormatNs(ns int64) string {
	if ns == 0 {
		return "-"
	}
	d := time.Duration(ns)
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fus", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	case d < 100*time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// lasted is a fault's length: "instant" for a one-moment fault (a command with no background
// work), "did not end" for one still going when the run ended (its end is the largest int64).
func lasted(f FaultWindow) string {
	switch {
	case f.Instant:
		return "instant"
	case f.EndNs == math.MaxInt64:
		return "did not end"
	}
	return FormatNs(f.EndNs - f.StartNs)
}

func recovery(ns int64) string {
	switch {
	case ns < 0:
		return "never"
	case ns == 0:
		return "at once"
	}
	return FormatNs(ns)
}

// FormatBytes writes a byte count in B, KiB, MiB or GiB.
func FormatBytes(b float64) string { return formatBytes(b) }

// formatBytes writes a byte count in B, KiB, MiB or GiB.
func formatBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

// writeBacklog prints the backlog phase: what was filled, how long the drain took (or that it
// did not finish), and the backlog's latency apart from the new messages'.
func writeBacklog(w io.Writer, b *Backlog) {
	if b == nil {
		return
	}
	fmt.Fprintf(w, "backlog: filled %d messages in %.1f s with consumers off; producers %s during the drain\n", b.FilledMessages, b.FillSeconds, map[string]string{"keep": "kept their rate", "stop": "stopped"}[b.Producers])
	if b.Drained {
		fmt.Fprintf(w, "         drained to zero lag (%s) in %.2f s: %.0f msg/s delivered, the backlog shrank %.0f msg/s\n", b.LagSource, b.DrainSeconds, b.DrainRate, b.NetDrainRate)
	} else {
		fmt.Fprintf(w, "         NOT drained within the run: lag still above zero when consumers stopped after %.2f s (%.0f msg/s delivered)\n", b.DrainSeconds, b.DrainRate)
	}
	fmt.Fprintf(w, "         e2e of the backlog: p50 %s, p99 %s, max %s (%d); of messages sent during the drain: p50 %s, p99 %s, max %s (%d)\n",
		FormatNs(b.BacklogE2E.P50), FormatNs(b.BacklogE2E.P99), FormatNs(b.BacklogE2E.Max), b.BacklogE2E.Count,
		FormatNs(b.DrainE2E.P50), FormatNs(b.DrainE2E.P99), FormatNs(b.DrainE2E.Max), b.DrainE2E.Count)
}
