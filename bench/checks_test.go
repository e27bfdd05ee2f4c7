package bench_test

import (
	"slices"
	"testing"

	"qbench/bench"
	_ "qbench/engines/nullq"
	"qbench/scenarios"
)

// Every registration speaks the scenario's vocabulary: the faults it lists are engine-side kinds
// of the traits table, its sections are shared sections, and it has designs.
func TestRegistrationsMatchTheScenarioSchema(t *testing.T) {
	checks := bench.Checks()
	if len(checks.Engines) < 7 {
		t.Fatalf("only %d engines registered", len(checks.Engines))
	}
	for _, e := range checks.Engines {
		if len(e.Designs) == 0 {
			t.Errorf("%s: no designs", e.Name)
		}
		for _, f := range e.Faults {
			if !scenarios.FaultKind(f).EngineSide() {
				t.Errorf("%s: fault %q is not an engine-side kind", e.Name, f)
			}
		}
		for _, s := range e.Sections {
			if !slices.Contains(scenarios.SharedSections, s) {
				t.Errorf("%s: section %q is not a shared section", e.Name, s)
			}
		}
		if (e.Options == "") != (e.Decode == nil) {
			t.Errorf("%s: an own section needs a Decode, and a Decode a section", e.Name)
		}
	}
}

// A Kafka scenario without a kafka: section still gets the engine's options, defaults filled,
// and its design from the registration.
func TestEngineOptionsDefaultWithoutSection(t *testing.T) {
	sc, err := scenarios.Parse("k.yaml", []byte("engine: kafka\nrate: 10\n"), bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Design != "topic" || sc.Options == nil {
		t.Fatalf("design %q, options %#v", sc.Design, sc.Options)
	}
}
