package bench_test

import (
	"slices"
	"strings"
	"testing"

	"qbench/bench"
	"qbench/engines"
	_ "qbench/engines/enginetest/dummy" // the test-only engine: its package and this line
	"qbench/scenarios"
)

// An engine is in scenario validation and in the conformance suite by being registered: the
// test-only dummy engine (engines/enginetest/dummy, a registration and nothing else) is linked by
// the blank import above and edits no other file. The suite then runs it for real in the cases
// it promises (TestConformanceExactlyOnceInOrder/dummy/queue, ...). The suite's engines are
// exactly the registrations that declare promises and need no address.
func TestEngineByRegistrationAlone(t *testing.T) {
	var names []string
	for _, r := range suiteEngines() {
		names = append(names, r.Name)
	}
	for _, want := range []string{"dummy", "embedded", "redis", "server"} {
		if !slices.Contains(names, want) {
			t.Errorf("conformance suite engines %v lack %s", names, want)
		}
	}
	for _, r := range engines.All() {
		if in := slices.Contains(names, r.Name); in != (!r.NeedsAddress && len(r.Conformance) > 0) {
			t.Errorf("%s in the suite: %v; needs an address %v, declares %d designs' promises", r.Name, in, r.NeedsAddress, len(r.Conformance))
		}
	}

	sc, err := scenarios.Parse("d.yaml", []byte("engine: dummy\nrate: 10\n"), bench.Checks())
	if err != nil || sc.Design != "queue" {
		t.Fatalf("a scenario on the dummy engine: design %v, %v", sc, err)
	}
	_, err = scenarios.Parse("d.yaml", []byte("engine: dummy\ndesign: stream\nrate: 10\n"), bench.Checks())
	if err == nil || !strings.Contains(err.Error(), `d.yaml:2: design: engine dummy has no design "stream"`) {
		t.Fatalf("a design the dummy lacks: %v", err)
	}
	// Its names: come from its registration too: the keys its design takes, and their rule.
	for _, c := range []struct{ yaml, want string }{
		{"names: {queue: orders}\n", ""},
		{"names:\n  queue: Orders\n", "d.yaml:4: names.queue: must be lowercase letters a to z"},
		{"names:\n  stream: s\n", "d.yaml:4: names.stream: is not a name design queue uses (it takes [queue])"},
	} {
		_, err := scenarios.Parse("d.yaml", []byte("engine: dummy\nrate: 10\n"+c.yaml), bench.Checks())
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("names on the dummy engine, %q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
