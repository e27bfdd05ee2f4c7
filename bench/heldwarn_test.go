package bench_test

import (
	"strings"
	"testing"

	"qbench/results"
)

// An engine's own stall fills the producers' in-flight slots; the messages that fall due
// meanwhile are sent late, and that lateness is the engine's latency. The late-producers rule
// must say so, not blame the load generator.
func TestEngineStallIsNotBlamedOnTheGenerator(t *testing.T) {
	res := run(t, scenario(t, `
engine: embedded
design: list
rate: 500
duration: 5s
warmup: 0s
drain_timeout: 2s
faults:
  - {at: 2s, kind: stall, duration: 500ms}
`))
	g := res.Summary.Generator
	if g.LateHeldByEngine == 0 || g.LateHeldByEngine <= g.LateOwn {
		t.Fatalf("late messages held by the engine %d, late for qbench's own reasons %d: want most held", g.LateHeldByEngine, g.LateOwn)
	}
	tr := results.Assess(res)
	codes := strings.Join(tr.Codes(), " ")
	if strings.Contains(codes, results.CodeGeneratorLate) || !strings.Contains(codes, results.CodeEngineHeld) {
		t.Errorf("flags %v: want %s and no %s", tr.Codes(), results.CodeEngineHeld, results.CodeGeneratorLate)
	}
	for _, w := range res.Summary.Warnings {
		if strings.Contains(w, "describe the load generator") {
			t.Errorf("warning blames qbench for the engine's stall: %s", w)
		}
	}
}
