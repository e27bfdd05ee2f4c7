package results

import (
	"strings"
	"testing"
)

// summary is a quiet, healthy run at 1,000 msg/s to start each case from.
func quietSummary() Summary {
	return Summary{
		MeasuredSeconds: 10, ProduceRate: 1000, DeliverRate: 1000, Groups: 1,
		Latency: map[string]Latency{
			"produce":    {P99: 2_000_000},
			"send_delay": {P99: 100_000},
			"e2e":        {P99: 3_000_000},
		},
		LagMax:    20,
		Generator: Generator{CPUShare: 0.1, InFlight: 8},
		Ledger:    Ledger{Sent: 10000, Acked: 10000, Delivered: 10000},
	}
}

func TestWarnings(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Summary)
		want []string // substrings, one per expected warning, in order; nil for none
	}{
		{"quiet run", func(*Summary) {}, nil},
		{"send delay dominates", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 1_500_000}
		}, []string{"producers were late: send delay p99 1.50ms of produce p99 2.00ms: latency figures describe the load generator, not the engine"}},
		{"send delay dominates, with steal", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 1_500_000}
			s.MachineLoad = &MachineLoad{StealShare: 0.022}
		}, []string{"latency figures describe the load generator, not the engine; the hypervisor took 2.2% of the machine's CPU (steal) meanwhile, enough on its own"}},
		{"send delay dominates, steal under 1%", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 1_500_000}
			s.MachineLoad = &MachineLoad{StealShare: 0.009}
		}, []string{"describe the load generator, not the engine"}},
		{"no steal named under 1%", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 1_500_000}
			s.MachineLoad = &MachineLoad{StealShare: 0.009}
			if w := Warnings(*s); len(w) != 1 || strings.Contains(w[0], "hypervisor") {
				t.Errorf("steal 0.9%%: want the late warning without steal, got %q", w)
			}
		}, []string{"producers were late"}},
		{"send delay under half of produce", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 999_999}
		}, nil},
		{"send delay high share but under 1 ms", func(s *Summary) {
			s.Latency["produce"] = Latency{P99: 900_000}
			s.Latency["send_delay"] = Latency{P99: 800_000}
		}, nil},
		{"send delay exactly half and 1 ms", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 1_000_000}
		}, []string{"producers were late"}},
		{"generator CPU, external engine", func(s *Summary) {
			s.Generator.CPUShare = 0.85
		}, []string{"qbench used 85% of the machine's CPU: the load generator is near its limit"}},
		{"generator CPU, in-process engine", func(s *Summary) {
			s.Generator.CPUShare, s.Generator.InProcessEngine = 0.9, true
		}, []string{"the engine shares the generator's CPU"}},
		{"CPU under the threshold", func(s *Summary) {
			s.Generator.CPUShare, s.Generator.InProcessEngine = 0.79, true
		}, nil},
		{"qbench and the engine's server fill the machine", func(s *Summary) {
			s.Generator.CPUShare, s.Generator.EngineCPUShare = 0.74, 0.22
		}, []string{"qbench (74%) and the engine's server (22%) together used 96% of the machine's CPU: the machine is out of CPU"}},
		{"qbench and the engine's server under the threshold", func(s *Summary) {
			s.Generator.CPUShare, s.Generator.EngineCPUShare = 0.5, 0.29
		}, nil},
		{"engine's CPU not known: qbench alone under the threshold", func(s *Summary) {
			s.Generator.CPUShare = 0.79
		}, nil},
		{"qbench alone over the threshold: one CPU warning, not two", func(s *Summary) {
			s.Generator.CPUShare, s.Generator.EngineCPUShare = 0.85, 0.1
		}, []string{"qbench used 85% of the machine's CPU: the load generator is near its limit"}},
		{"in-flight limit reached", func(s *Summary) {
			s.Generator.InFlightFull = 12
		}, []string{"producers reached their in-flight limit (8 batches) 12 times"}},
		{"messages still queued", func(s *Summary) {
			s.Ledger.Queued = 500
		}, []string{"consumers fell behind: 500 acknowledged messages were still queued at the end (not lost)"}},
		{"deliveries short of production", func(s *Summary) {
			s.DeliverRate = 800
		}, []string{"consumers fell behind: delivered 800 msg/s per group against 1000 msg/s produced"}},
		{"deliveries short because messages were lost, not late", func(s *Summary) {
			s.DeliverRate, s.Ledger.Lost = 800, 2000
		}, nil},
		{"fan-out: two groups each keeping up", func(s *Summary) {
			s.DeliverRate, s.Groups = 2000, 2
		}, nil},
		{"fan-out: per-group rate given", func(s *Summary) {
			s.DeliverRate, s.DeliverRatePerGroup, s.Groups = 1400, 700, 2
		}, []string{"delivered 700 msg/s per group"}},
		{"backlog over a second of traffic", func(s *Summary) {
			s.LagMax = 2500
		}, []string{"the backlog reached 2500 messages, 2.5 s of production"}},
		{"large backlog at a high rate is under a second", func(s *Summary) {
			s.ProduceRate, s.DeliverRate, s.LagMax = 100000, 100000, 50000
		}, nil},
		{"small backlog at a tiny rate", func(s *Summary) {
			s.ProduceRate, s.DeliverRate, s.LagMax = 10, 10, 50
		}, nil},
		{"everything at once, in order", func(s *Summary) {
			s.Latency["send_delay"] = Latency{P99: 5_000_000}
			s.Generator.CPUShare, s.Generator.InFlightFull, s.Ledger.Queued = 0.95, 1, 3
		}, []string{"producers were late", "machine's CPU", "in-flight limit", "3 acknowledged messages were still queued"}},
		{"no traffic at all", func(s *Summary) { *s = Summary{} }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := quietSummary()
			c.edit(&s)
			got := Warnings(s)
			assertWarnings(t, got, c.want)
		})
	}
}

// The summary prints each warning on its own "warning:" line.
func TestSummaryPrintsWarnings(t *testing.T) {
	r := &Result{Summary: quietSummary()}
	r.Summary.Warnings = []string{"first thing", "second thing"}
	var b strings.Builder
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nwarning: first thing\nwarning: second thing\n") {
		t.Fatalf("summary:\n%s", b.String())
	}
}

// A merged result keeps the generator's figures (CPU added up, per message over all messages,
// the largest share) and warns from the merged summary.
func TestMergeKeepsGeneratorAndWarnings(t *testing.T) {
	mk := func(id string, user, share float64, full int64) *Result {
		s := quietSummary()
		s.Generator = Generator{UserSeconds: user, SysSeconds: 1, CPUShare: share, InFlight: 8, InFlightFull: full, InProcessEngine: true}
		s.Ledger.Sent, s.Ledger.Deliveries = 1000, 1000
		return &Result{SchemaVersion: SchemaVersion, RunID: id, Scenario: []byte(`{"name":"x"}`), Summary: s, Histograms: map[string]string{}}
	}
	m, err := Merge([]*Result{mk("a", 1, 0.2, 0), mk("b", 2, 0.9, 3)}, MergeOptions{Mode: MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Summary.Generator
	if g.UserSeconds != 3 || g.SysSeconds != 2 || g.CPUShare != 0.9 || g.InFlightFull != 3 || !g.InProcessEngine || g.CPUPerMessageNs != 5e9/4000 {
		t.Fatalf("merged generator %+v", g)
	}
	w := strings.Join(m.Summary.Warnings, "\n")
	if !strings.Contains(w, "shares the generator's CPU") || !strings.Contains(w, "in-flight limit (8 batches) 3 times") {
		t.Fatalf("merged warnings:\n%s", w)
	}
}

// assertWarnings fails t unless got holds exactly one warning for each of want, in order, each
// containing its want.
func assertWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("warning %d is %q, want it to contain %q", i, got[i], w)
		}
	}
}
