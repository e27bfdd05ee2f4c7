package results

import (
	"strings"
	"testing"
)

// quietMachine is a machine that nothing else used: no steal, a few hundredths of a core of
// other processes, a short GC.
func quietMachine(s *Summary) {
	s.MachineLoad = &MachineLoad{LoadAvg: [3]float64{0.3, 0.2, 0.1}, WallSeconds: 10, MachineSeconds: 20, BusySeconds: 4,
		StealSeconds: 0.1, StealShare: 0.005, OtherCPUSeconds: 0.4, OtherCores: 0.04, OtherShare: 0.02}
	s.Generator.GCCycles, s.Generator.GCPauseTotalNs, s.Generator.GCPauseMaxNs, s.Generator.GCPauseShare = 12, 600_000, 80_000, 0.00006
}

func TestMachineWarnings(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Summary)
		want []string // substrings, one per expected warning, in order; nil for none
	}{
		{"quiet machine", func(*Summary) {}, nil},
		{"no machine figures (an older result, not Linux)", func(s *Summary) { s.MachineLoad = nil }, nil},
		{"steal over the threshold", func(s *Summary) { s.MachineLoad.StealShare = 0.06 },
			[]string{"the hypervisor took 6% of the machine's CPU (steal) during the run: figures from a shared machine can be off by 1.5x; measure on a quiet machine"}},
		{"steal with idle vCPUs halting: says how to keep them polling", func(s *Summary) {
			s.MachineLoad.StealShare = 0.2
			s.MachineLoad.Idle = &MachineIdle{Driver: "haltpoll", LatencyLimitUs: 2_000_000_000, Halts: true}
		}, []string{"measure on a quiet machine; idle vCPUs halt here (cpuidle haltpoll), and the wake-up of a halted vCPU waits for the host, counted as steal: qbench run --idle-poll (root) keeps them polling for the run"}},
		{"steal while idle vCPUs polled: no advice", func(s *Summary) {
			s.MachineLoad.StealShare = 0.05
			s.MachineLoad.Idle = &MachineIdle{Driver: "haltpoll", PollHeld: true}
		}, []string{"off by 1.5x; measure on a quiet machine"}},
		{"idle vCPUs halting, no steal: nothing to say", func(s *Summary) {
			s.MachineLoad.Idle = &MachineIdle{Driver: "haltpoll", Halts: true}
		}, nil},
		{"steal just under", func(s *Summary) { s.MachineLoad.StealShare = 0.029 }, nil},
		{"steal exactly at the threshold", func(s *Summary) { s.MachineLoad.StealShare = WarnStealShare }, []string{"(steal)"}},
		{"other processes over a quarter core", func(s *Summary) {
			s.MachineLoad.OtherCores, s.MachineLoad.OtherShare = 1.3, 0.65
		}, []string{"other processes used 1.30 cores during the run (65% of the machine's CPU): figures from a busy machine can be off by 1.5x"}},
		{"other processes, engine's CPU not known", func(s *Summary) {
			s.MachineLoad.OtherCores, s.MachineLoad.OtherShare, s.MachineLoad.OtherIncludesEngine = 0.5, 0.25, true
		}, []string{"the engine's server among them if it runs on this machine: qbench does not know its CPU"}},
		{"other processes just under", func(s *Summary) { s.MachineLoad.OtherCores = 0.24 }, nil},
		{"GC pauses over 1% of the run", func(s *Summary) {
			s.Generator.GCPauseShare, s.Generator.GCPauseTotalNs = 0.015, 150_000_000
		}, []string{"qbench's garbage collector stopped the world for 1.5% of the run (12 cycles, 150.00ms in all)"}},
		{"one pause longer than the produce p99", func(s *Summary) {
			s.Generator.GCPauseMaxNs = 2_500_000
		}, []string{"qbench's garbage collector stopped the world for 2.50ms at once, longer than produce p99 2.00ms"}},
		{"one pause longer than the e2e p99, the lower one", func(s *Summary) {
			s.Latency["e2e"] = Latency{P99: 150_000}
			s.Generator.GCPauseMaxNs = 200_000
		}, []string{"longer than e2e p99 150"}},
		{"a pause over the p99 but under the floor", func(s *Summary) {
			s.Latency["produce"], s.Latency["e2e"] = Latency{P99: 50_000}, Latency{P99: 60_000}
			s.Generator.GCPauseMaxNs = 90_000
		}, nil},
		{"both GC rules: the share is said, once", func(s *Summary) {
			s.Generator.GCPauseShare, s.Generator.GCPauseMaxNs = 0.02, 5_000_000
		}, []string{"of the run ("}},
		{"everything at once, in order", func(s *Summary) {
			s.MachineLoad.StealShare, s.MachineLoad.OtherCores, s.Generator.GCPauseShare = 0.1, 2, 0.05
		}, []string{"(steal)", "other processes used 2.00 cores", "garbage collector"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := quietSummary()
			quietMachine(&s)
			c.edit(&s)
			got := Warnings(s)
			assertWarnings(t, got, c.want)
			// Each is a rule's, so a merge makes it anew rather than keeping it twice.
			for _, w := range got {
				if !ruleWarning(w) {
					t.Errorf("%q has no rule prefix", w)
				}
			}
		})
	}
}

// The summary says the machine's state in one line.
func TestSummaryPrintsMachineLine(t *testing.T) {
	r := &Result{Summary: quietSummary()}
	var b strings.Builder
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "machine:") {
		t.Fatalf("a result without machine figures prints none:\n%s", b.String())
	}
	quietMachine(&r.Summary)
	r.Summary.Generator.GCCycles = 0
	b.Reset()
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(2%); qbench's GC: no cycle\n") {
		t.Fatalf("a run without a collection:\n%s", b.String())
	}
	r.Summary.Generator.GCCycles, r.Summary.Generator.GCCPUShare = 12, 0.04
	b.Reset()
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "machine: load average 0.30 at the start; steal 0.5% of the CPU; other processes 0.04 cores (2%); qbench's GC 12 cycles, stopped the world 600"
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "4% of qbench's CPU\n") {
		t.Fatalf("summary lacks %q:\n%s", want, b.String())
	}
}

// Merging keeps the busiest run's shares and adds the seconds; the GC CPU share is read again.
func TestMergeMachineLoadAndGC(t *testing.T) {
	mk := func(id string, steal, other float64, gcCPU, gcShare float64, maxPause int64) *Result {
		s := quietSummary()
		quietMachine(&s)
		s.MachineLoad.StealShare, s.MachineLoad.OtherCores = steal, other
		s.Generator.GCCPUSeconds, s.Generator.GCCPUShare, s.Generator.GCPauseMaxNs = gcCPU, gcShare, maxPause
		return &Result{SchemaVersion: SchemaVersion, RunID: id, Scenario: []byte(`{"name":"x"}`), Summary: s, Histograms: map[string]string{}}
	}
	// Run a: 0.1 s of GC in 1 s of Go CPU; run b: 0.3 s in 2 s. Together 0.4 s in 3 s.
	m, err := Merge([]*Result{mk("a", 0.05, 0.1, 0.1, 0.1, 90_000), mk("b", 0.01, 0.7, 0.3, 0.15, 40_000)}, MergeOptions{Mode: MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	ml, g := m.Summary.MachineLoad, m.Summary.Generator
	if ml == nil || ml.StealShare != 0.05 || ml.OtherCores != 0.7 || ml.WallSeconds != 20 || ml.OtherCPUSeconds != 0.8 {
		t.Fatalf("merged machine load %+v", ml)
	}
	if g.GCCycles != 24 || g.GCPauseMaxNs != 90_000 || g.GCPauseTotalNs != 1_200_000 || abs(g.GCCPUShare-0.4/3) > 1e-9 {
		t.Fatalf("merged GC %+v", g)
	}
	w := strings.Join(m.Summary.Warnings, "\n")
	if !strings.Contains(w, "the hypervisor took 5%") || !strings.Contains(w, "other processes used 0.70 cores") {
		t.Fatalf("merged warnings:\n%s", w)
	}
	// Results from before these figures merge to none.
	a, b := mk("a", 0, 0, 0, 0, 0), mk("b", 0, 0, 0, 0, 0)
	a.Summary.MachineLoad, b.Summary.MachineLoad = nil, nil
	if m, err := Merge([]*Result{a, b}, MergeOptions{Mode: MergeMachines}); err != nil || m.Summary.MachineLoad != nil {
		t.Fatalf("merged %v, err %v", m.Summary.MachineLoad, err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestIdleText(t *testing.T) {
	for _, c := range []struct {
		idle *MachineIdle
		want string
	}{
		{nil, ""},
		{&MachineIdle{Driver: "haltpoll", Halts: true}, "; idle CPUs halt (cpuidle haltpoll)"},
		{&MachineIdle{Driver: "haltpoll", PollHeld: true}, "; idle CPUs polled (held by this run: --idle-poll)"},
		{&MachineIdle{Driver: "intel_idle"}, "; idle CPUs polled (a CPU latency limit of 0 was held)"},
	} {
		if got := idleText(c.idle); got != c.want {
			t.Errorf("idleText(%+v) = %q, want %q", c.idle, got, c.want)
		}
	}
}

func TestMergeIdle(t *testing.T) {
	held := &MachineIdle{Driver: "haltpoll", PollHeld: true}
	halting := &MachineIdle{Driver: "haltpoll", LatencyLimitUs: 2_000_000_000, Halts: true}
	if got := mergeIdle(nil, held); got != held {
		t.Errorf("nil + held = %+v", got)
	}
	if got := mergeIdle(held, nil); got != held {
		t.Errorf("held + nil = %+v", got)
	}
	got := mergeIdle(held, halting)
	if !got.Halts || got.PollHeld || got.LatencyLimitUs != 2_000_000_000 {
		t.Errorf("held + halting = %+v: want halting, not held, the larger limit", got)
	}
	if !held.PollHeld || held.Halts {
		t.Errorf("merge changed its input: %+v", held)
	}
	if got := mergeIdle(held, held); !got.PollHeld || got.Halts {
		t.Errorf("held + held = %+v", got)
	}
}
