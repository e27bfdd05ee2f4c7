package results

import (
	"slices"
	"strings"
	"testing"
)

// quietResult is a healthy run with enough samples for its p99s.
func quietResult() *Result {
	s := quietSummary()
	s.Latency["produce"] = Latency{Count: 10000, P99: 2_000_000}
	s.Latency["e2e"] = Latency{Count: 10000, P99: 3_000_000}
	return &Result{Summary: s}
}

func TestAssess(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Result)
		verdict string
		codes   []string // every flag's code, in order
		text    string   // a substring of some flag's text
	}{
		{"quiet", func(*Result) {}, VerdictTrusted, nil, ""},
		{"generator late", func(r *Result) {
			r.Summary.Latency["send_delay"] = Latency{P99: 1_500_000}
			r.Summary.Generator.LateOwn = 90
			r.Summary.Generator.LateHeldByEngine = 10
		}, VerdictFlagged, []string{CodeGeneratorLate}, "describe the load generator"},
		{"engine held the producers", func(r *Result) {
			// A 500 ms stall: every slot awaited the engine, and the late sends were its.
			r.Summary.Latency["send_delay"] = Latency{P99: 400_000_000}
			r.Summary.Latency["produce"] = Latency{Count: 10000, P99: 500_000_000}
			r.Summary.Generator.LateHeldByEngine = 240
			r.Summary.Generator.LateOwn = 3
			r.Summary.Generator.InFlightFull = 30
		}, VerdictTrusted, []string{CodeEngineHeld, CodeInFlightLimit}, "the wait is the engine's latency"},
		{"unsent", func(r *Result) {
			r.Summary.Unsent = 42361
			r.Summary.Ledger.Sent = 41723
		}, VerdictFlagged, []string{CodeUnsent}, "42361 of 84084 scheduled"},
		{"failed sends outside faults", func(r *Result) {
			r.Summary.ProduceErrors = 3
		}, VerdictFlagged, []string{CodeFailedSends}, "3 of 10000 sends failed outside any fault window"},
		{"failed sends charged to a fault", func(r *Result) {
			r.Summary.ProduceErrors = 3
			r.Faults = []FaultWindow{{Kind: "crash", ProduceErrors: 3}}
		}, VerdictTrusted, []string{CodeFailedSends}, "all during fault windows"},
		{"in process", func(r *Result) {
			r.Summary.Generator.InProcessEngine = true
		}, VerdictTrusted, []string{CodeInProcess}, "include qbench's own"},
		{"few samples", func(r *Result) {
			r.Summary.Latency["e2e"] = Latency{Count: 250, P99: 3_000_000}
		}, VerdictFlagged, []string{CodeFewSamples}, "e2e 250 values"},
		{"busy machine", func(r *Result) {
			r.Summary.MachineLoad = &MachineLoad{OtherCores: 1.52, OtherShare: 0.76}
		}, VerdictFlagged, []string{CodeMachineBusy}, "other processes used 1.52 cores"},
		{"interrupted", func(r *Result) { r.Interrupted = true }, VerdictFlagged, []string{CodeInterrupted}, "stopped early"},
		{"engine died", func(r *Result) {
			r.Engine.Name = "redis"
			r.Engine.Died = &EngineDeath{AtNs: 2_010_000_000, Status: "exit status 1",
				Log: []string{"* Ready to accept connections", "# Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..."}}
		}, VerdictFlagged, []string{CodeEngineDied}, "the redis server exited on its own at 2.01s (exit status 1); its last log line: # Can't recover from AOF write error"},
		{"retention deleted what was lost", func(r *Result) {
			r.Engine.Stats = map[string]int64{StatRetentionDeleted: 949}
			r.Summary.Ledger.Lost = 640
		}, VerdictTrusted, []string{CodeRetention}, "deleted 949 acknowledged messages by the queue's policy; lost (640)"},
		{"retention deleted only what was read", func(r *Result) {
			r.Engine.Stats = map[string]int64{StatRetentionDeleted: 949}
		}, VerdictTrusted, nil, ""},
		{"sweep failed with messages lost", func(r *Result) {
			r.Summary.Ledger.Lost = 12
			r.Errors = []ErrorCount{{Where: ErrorWhereSweep, Message: "rabbitmq: sweep: read 53 messages and no end marker came in 15s", Count: 1}}
		}, VerdictFlagged, []string{CodeSweepFailed}, "failed (rabbitmq: sweep: read 53 messages and no end marker came in 15s): lost (12) counts every acknowledged message no consumer received, including any the engine still holds; it is at most that, and queued (0) at least"},
		{"sweep failed with nothing lost", func(r *Result) {
			r.Errors = []ErrorCount{{Where: ErrorWhereSweep, Message: "connection refused", Count: 1}}
		}, VerdictTrusted, nil, ""},
		{"segment", func(r *Result) {
			r.Segment = &Segment{Index: 1, Count: 2}
			r.Summary.Warnings = []string{SegmentWarning(1, 2, "x")}
		}, VerdictFlagged, []string{CodePartial}, "known only after qbench merge"},
		{"run's own note", func(r *Result) {
			r.Summary.Warnings = []string{"stopped producing at the memory budget's message cap"}
		}, VerdictFlagged, []string{CodeRunNote}, "message cap"},
		{"stale rule warning is recomputed, not kept", func(r *Result) {
			r.Summary.Warnings = []string{"producers were late: send delay p99 9ms of produce p99 10ms: ..."}
		}, VerdictTrusted, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := quietResult()
			c.edit(r)
			tr := Assess(r)
			if tr.Verdict != c.verdict {
				t.Errorf("verdict %q, want %q (flags %v)", tr.Verdict, c.verdict, tr.Flags)
			}
			if got := tr.Codes(); !slices.Equal(got, c.codes) && !(len(got) == 0 && len(c.codes) == 0) {
				t.Errorf("codes %v, want %v", got, c.codes)
			}
			if tr.Trusted() != (c.verdict == VerdictTrusted) {
				t.Errorf("Trusted() %v with verdict %q", tr.Trusted(), tr.Verdict)
			}
			if c.text != "" && !strings.Contains(strings.Join(tr.Texts(), "\n"), c.text) {
				t.Errorf("no flag says %q: %q", c.text, tr.Texts())
			}
		})
	}
}

func TestTrustLabel(t *testing.T) {
	cases := []struct {
		flags []Flag
		want  string
	}{
		{nil, "ok"},
		{[]Flag{{Code: CodeInProcess, Severity: SeverityNote}}, "ok+inproc"},
		{[]Flag{{Code: CodeGeneratorLate, Severity: SeveritySuspect}, {Code: CodeMachineBusy, Severity: SeveritySuspect}, {Code: CodeEngineHeld, Severity: SeverityNote}}, "!late,busy+held"},
		{[]Flag{{Code: CodeRunNote, Severity: SeveritySuspect}, {Code: CodeRunNote, Severity: SeveritySuspect}}, "!note"},
	}
	for _, c := range cases {
		if got := newTrust(c.flags).Label(); got != c.want {
			t.Errorf("Label of %v = %q, want %q", c.flags, got, c.want)
		}
	}
	leg := FlagLegend([]Trust{newTrust(cases[2].flags)})
	if len(leg) != 3 || !strings.HasPrefix(leg[0], "late: ") {
		t.Errorf("legend %q", leg)
	}
}

// Every code has a tag and a meaning, so no table shows a raw code or an empty legend entry.
func TestEveryCodeHasTagAndMeaning(t *testing.T) {
	for _, c := range []string{CodeGeneratorLate, CodeEngineHeld, CodeQbenchCPU, CodeMachineCPU, CodeInFlightLimit, CodeInFlightBound,
		CodeConsumersBehind, CodeSteal, CodeMachineBusy, CodeGCPauses, CodeTimers, CodeUnsent, CodeFailedSends,
		CodeInProcess, CodeFewSamples, CodeInterrupted, CodePartial, CodeHistDropped, CodeRunNote, CodeMarkedFaults} {
		if flagTags[c] == "" || flagMeanings[c] == "" {
			t.Errorf("code %q: tag %q meaning %q", c, flagTags[c], flagMeanings[c])
		}
	}
}
