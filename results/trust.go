package results

import (
	"fmt"
	"strings"
)

// Severity says whether a flag makes a result's figures doubtful or only qualifies them.
type Severity string

const (
	// SeverityNote qualifies a figure that still describes the engine: the engine runs inside
	// qbench's process (CPU and memory include qbench's), the engine held the producers back.
	SeverityNote Severity = "note"
	// SeveritySuspect marks figures that may describe the load generator, the machine, or less
	// than the scenario asked for, rather than the engine: a gate comparing them is inconclusive.
	SeveritySuspect Severity = "suspect"
)

// Flag codes: stable names of the reasons a result's figures need qualifying. Tables show a
// flag by its tag (flagTags), reports and files by its code and text.
const (
	CodeGeneratorLate   = "generator-late"
	CodeEngineHeld      = "engine-held"
	CodeQbenchCPU       = "qbench-cpu"
	CodeMachineCPU      = "machine-cpu"
	CodeInFlightLimit   = "in-flight-limit"
	CodeInFlightBound   = "in-flight-bound"
	CodeConsumersBehind = "consumers-behind"
	CodeSteal           = "steal"
	CodeMachineBusy     = "machine-busy"
	CodeGCPauses        = "gc-pauses"
	CodeTimers          = "timers"
	CodeUnsent          = "unsent"
	CodeFailedSends     = "failed-sends"
	CodeInProcess       = "in-process"
	CodeFewSamples      = "few-samples"
	CodeInterrupted     = "interrupted"
	CodePartial         = "partial"
	CodeHistDropped     = "histogram-dropped"
	CodeRunNote         = "run-note"
	CodeRetention       = "retention"
	CodeMarkedFaults    = "marked-faults"
	CodeEngineDied      = "engine-died"
	CodeCheckpoint      = "checkpoint"
	CodeSweepFailed     = "sweep-failed"
)

// ErrorWhereSweep is the Where of the error a failed final sweep leaves in Result.Errors: the
// messages the sweep did not read count as lost, though the engine may still hold them.
const ErrorWhereSweep = "sweep"

// StatRetentionDeleted is the engine statistic counting acknowledged messages the engine's own
// retention deleted (a RabbitMQ stream's max-length or max-age): gone by policy, and counted in
// lost when no consumer had read them.
const StatRetentionDeleted = "retention_deleted"

// flagTags are the codes' short forms for table cells, where width is scarce; FlagLegend spells
// them out.
var flagTags = map[string]string{
	CodeGeneratorLate: "late", CodeEngineHeld: "held", CodeQbenchCPU: "cpu", CodeMachineCPU: "mcpu",
	CodeInFlightLimit: "inflight", CodeInFlightBound: "window", CodeConsumersBehind: "behind", CodeSteal: "steal",
	CodeMachineBusy: "busy", CodeGCPauses: "gc", CodeTimers: "timers", CodeUnsent: "unsent",
	CodeFailedSends: "failed", CodeInProcess: "inproc", CodeFewSamples: "few", CodeInterrupted: "intr",
	CodePartial: "partial", CodeHistDropped: "hdrop", CodeRunNote: "note", CodeRetention: "retention",
	CodeMarkedFaults: "marked", CodeEngineDied: "died", CodeCheckpoint: "ckpt", CodeSweepFailed: "sweep",
}

// flagMeanings says in a few words what each code means, for the legend under a table.
var flagMeanings = map[string]string{
	CodeGeneratorLate:   "producers late for qbench's own reasons: latency describes the generator",
	CodeEngineHeld:      "producers held back by the engine's answers (its latency, correctly charged)",
	CodeQbenchCPU:       "qbench near its CPU limit",
	CodeMachineCPU:      "qbench and the engine's server used up the machine's CPU",
	CodeInFlightLimit:   "due messages waited for an in-flight slot",
	CodeInFlightBound:   "a closed loop's rate set by qbench's in-flight window, not the engine",
	CodeConsumersBehind: "consumers fell behind: e2e latency includes queueing",
	CodeSteal:           "the hypervisor took CPU (steal): a shared machine",
	CodeMachineBusy:     "other processes used the machine: a busy machine",
	CodeGCPauses:        "qbench's GC pauses set part of the tail",
	CodeTimers:          "the machine's timers woke producers late",
	CodeUnsent:          "scheduled messages never sent: less load than asked",
	CodeFailedSends:     "sends failed outside any fault window",
	CodeInProcess:       "engine inside qbench's process: CPU and memory include qbench",
	CodeFewSamples:      "p99 from fewer than 1,000 values",
	CodeInterrupted:     "the run was stopped early",
	CodePartial:         "a partial result (one segment, or a merge missing some)",
	CodeHistDropped:     "latency values could not be recorded",
	CodeRunNote:         "the run's own warning",
	CodeRetention:       "lost includes what the engine's retention deleted by policy",
	CodeMarkedFaults:    "fault windows marked by an outside tool, not injected by qbench",
	CodeEngineDied:      "the engine's server exited on its own during the run",
	CodeCheckpoint:      "a checkpoint of a run not finished: lost and queued not known",
	CodeSweepFailed:     "the final sweep failed: lost may count messages the engine still holds",
}

// MinSamplesP99 is the fewest latency values from which a p99 is taken as a figure: ten values
// lie beyond it. Fewer, and one slow message moves it.
const MinSamplesP99 = 1000

// Flag is one reason a result's figures need qualifying.
type Flag struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Text     string   `json:"text"`
}

// Trust is a result's verdict on its own figures: trusted (no suspect flag) or flagged, with
// every flag. Assess computes it; every surface (summary, sweep table, CSV, compare, gates,
// report, plots) reads it from there.
type Trust struct {
	Verdict string `json:"verdict"`
	Flags   []Flag `json:"flags,omitempty"`
}

// Verdicts.
const (
	VerdictTrusted = "trusted"
	VerdictFlagged = "flagged"
)

// sweepError is the failed final sweep's error message, "" when the sweep did not fail.
func sweepError(r *Result) string {
	for _, e := range r.Errors {
		if e.Where == ErrorWhereSweep {
			return e.Message
		}
	}
	return ""
}

// Assess is the one place a result's trust is decided: the warning rules applied to its summary
// again (so an older file gets today's verdict), then what no warning says: unsent messages,
// failed sends outside fault windows, an engine inside qbench's process, too few samples for a
// p99, an interrupted or partial run, dropped histogram values, a failed final sweep (lost
// then counts what the engine may still hold), and the run's own notes.
func Assess(r *Result) Trust {
	s := r.Summary
	flags := ruleFlags(s)
	if s.Unsent > 0 {
		scheduled := s.Ledger.Sent + s.Unsent
		flags = append(flags, suspect(CodeUnsent, "unsent: %d of %d scheduled messages were never sent (producers still behind at the end): the engine got less load than the scenario asked for",
			s.Unsent, scheduled))
	}
	if failed := s.ProduceErrors; failed > 0 {
		var charged int64
		for _, f := range r.Faults {
			charged += f.ProduceErrors
		}
		if out := failed - charged; out > 0 {
			flags = append(flags, suspect(CodeFailedSends, "failed sends: %d of %d sends failed outside any fault window: the engine refused or dropped writes it was not made to",
				out, s.Ledger.Sent))
		} else {
			flags = append(flags, Flag{Code: CodeFailedSends, Severity: SeverityNote,
				Text: fmt.Sprintf("failed sends: %d, all during fault windows (the faults' cost, charged to them)", failed)})
		}
	}
	if d := r.Engine.Died; d != nil {
		text := fmt.Sprintf("engine died: the %s server exited on its own at %s (%s)", r.Engine.Name, FormatNs(d.AtNs), d.Status)
		if reason := d.Reason(); reason != "" {
			text += "; its last log line: " + reason
		}
		flags = append(flags, suspect(CodeEngineDied, "%s; nothing after it was served by that process", text))
	}
	if marked := markedFaults(r.Faults); marked != "" {
		flags = append(flags, Flag{Code: CodeMarkedFaults, Severity: SeverityNote,
			Text: "marked faults: " + marked + " injected by something other than qbench (qbench mark): each window runs from when its start mark arrived to when its end mark did, on qbench's clock, and is costed as qbench's own faults are"})
	}
	if s.Generator.InProcessEngine {
		flags = append(flags, Flag{Code: CodeInProcess, Severity: SeverityNote,
			Text: "the engine runs inside qbench's process: its CPU and memory figures include qbench's own, and the two share the CPU"})
	}
	if few := fewSamples(s); few != "" {
		flags = append(flags, suspect(CodeFewSamples, "%s", few))
	}
	if r.Interrupted {
		flags = append(flags, suspect(CodeInterrupted, "interrupted: the run was stopped early; its figures cover what ran"))
	}
	if h := MissingHeadline(r); h != "" {
		flags = append(flags, suspect(CodePartial, "%s", strings.TrimPrefix(h, "PARTIAL: ")))
	}
	if h := CheckpointHeadline(r); h != "" {
		flags = append(flags, suspect(CodeCheckpoint, "%s", strings.TrimPrefix(h, "PARTIAL: ")))
	}
	if r.Segment != nil {
		flags = append(flags, suspect(CodePartial, "partial: segment %d/%d of run %s: lost, queued and duplicates are known only after qbench merge joins every segment",
			r.Segment.Index, r.Segment.Count, r.RunID))
	}
	if s.HistogramDropped > 0 {
		flags = append(flags, suspect(CodeHistDropped, "%d latency values could not be recorded (out of the histograms' range): the percentiles leave them out", s.HistogramDropped))
	}
	if why := sweepError(r); why != "" && s.Ledger.Lost > 0 {
		flags = append(flags, suspect(CodeSweepFailed, "sweep failed: the final sweep of what the engine still holds failed (%s): lost (%d) counts every acknowledged message no consumer received, including any the engine still holds; it is at most that, and queued (%d) at least",
			why, s.Ledger.Lost, s.Ledger.Queued))
	}
	if n := r.Engine.Stats[StatRetentionDeleted]; n > 0 && s.Ledger.Lost > 0 {
		flags = append(flags, Flag{Code: CodeRetention, Severity: SeverityNote,
			Text: fmt.Sprintf("retention: the engine's retention deleted %d acknowledged messages by the queue's policy; lost (%d) counts those no consumer had read, beside any a failure lost",
				n, s.Ledger.Lost)})
	}
	for _, w := range s.Warnings {
		if !ruleWarning(w) {
			flags = append(flags, suspect(CodeRunNote, "%s", w))
		}
	}
	return newTrust(flags)
}

func newTrust(flags []Flag) Trust {
	t := Trust{Verdict: VerdictTrusted, Flags: flags}
	if len(t.Suspect()) > 0 {
		t.Verdict = VerdictFlagged
	}
	return t
}

// fewSamples names the latency kinds whose p99 rests on fewer than MinSamplesP99 values; empty
// when none does. A kind with no values at all is not measured, not flagged.
func fewSamples(s Summary) string {
	var parts []string
	for _, k := range []string{"produce", "e2e"} {
		if n := s.Latency[k].Count; n > 0 && n < MinSamplesP99 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("few samples: p99 taken from %s values, fewer than %d (one slow message moves it): run longer or faster", strings.Join(parts, " and "), MinSamplesP99)
}

// Trusted says no flag makes the figures doubtful (notes may qualify them).
func (t Trust) Trusted() bool { return len(t.Suspect()) == 0 }

// Suspect is the flags that make the figures doubtful.
func (t Trust) Suspect() []Flag {
	var out []Flag
	for _, f := range t.Flags {
		if f.Severity == SeveritySuspect {
			out = append(out, f)
		}
	}
	return out
}

// Codes is every flag's code, in order.
func (t Trust) Codes() []string {
	out := make([]string, 0, len(t.Flags))
	for _, f := range t.Flags {
		out = append(out, f.Code)
	}
	return out
}

// Label is the verdict for a table cell: "ok", or "!" and the suspect flags' tags joined by
// commas; notes follow after "+" ("ok+inproc", "!late,busy+held").
func (t Trust) Label() string {
	var sus, notes []string
	for _, f := range t.Flags {
		tag := Tag(f.Code)
		if f.Severity == SeveritySuspect {
			sus = appendOnce(sus, tag)
		} else {
			notes = appendOnce(notes, tag)
		}
	}
	l := "ok"
	if len(sus) > 0 {
		l = "!" + strings.Join(sus, ",")
	}
	if len(notes) > 0 {
		l += "+" + strings.Join(notes, ",")
	}
	return l
}

// Tag is a flag code's short form for table cells (the code itself when it has none).
func Tag(code string) string {
	if t, ok := flagTags[code]; ok {
		return t
	}
	return code
}

// FlagLegend spells out the tags that appear in labels, one "tag: meaning" per entry, in the
// order of first appearance, for the line under a table.
func FlagLegend(ts []Trust) []string {
	var seen []string
	for _, t := range ts {
		for _, f := range t.Flags {
			seen = appendOnce(seen, f.Code)
		}
	}
	out := make([]string, 0, len(seen))
	for _, c := range seen {
		out = append(out, Tag(c)+": "+flagMeanings[c])
	}
	return out
}

// Texts is every flag's text, suspect ones first.
func (t Trust) Texts() []string {
	var out []string
	for _, sev := range []Severity{SeveritySuspect, SeverityNote} {
		for _, f := range t.Flags {
			if f.Severity == sev {
				out = append(out, f.Text)
			}
		}
	}
	return out
}

func appendOnce(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

// markedFaults names the marked fault windows ("network-partition on node-2"), empty for none.
func markedFaults(fs []FaultWindow) string {
	var names []string
	for _, f := range fs {
		if f.Marked {
			names = append(names, f.Kind+" on "+f.Target)
		}
	}
	return strings.Join(names, ", ")
}
