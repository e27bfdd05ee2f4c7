package bench_test

import (
	"strings"
	"testing"

	"qbench/bench"
	"qbench/engines/kafkaq"
	"qbench/scenarios"
)

// A closed loop (rate: max) gets the engine's closed-loop shape for whichever of batch and
// in_flight it does not write (Kafka: kafkaq.ClosedLoopShape, the shape of kafka-max-rate.yaml);
// a paced run and an engine without one get the scenario defaults; a matrix cell of another
// rate or engine is filled again; a written or swept value is kept.
func TestClosedLoopDefaultsAreTheEnginesShape(t *testing.T) {
	k := kafkaq.ClosedLoopShape
	d := [2]int{scenarios.DefaultBatch, scenarios.DefaultInFlight}
	cases := []struct {
		name, yaml string
		want       [][2]int // batch and in_flight of each cell
	}{
		{"kafka closed loop", "engine: kafka\nrate: max\nproducers: 4\n", [][2]int{{k.Batch, k.InFlight}}},
		{"kafka closed loop, batch written", "engine: kafka\nrate: max\nproducers: 4\nbatch: 16\n", [][2]int{{16, k.InFlight}}},
		{"kafka closed loop, both written", "engine: kafka\nrate: max\nbatch: 16\nin_flight: 4\n", [][2]int{{16, 4}}},
		{"kafka paced", "engine: kafka\nrate: 1000\n", [][2]int{d}},
		{"embedded closed loop", "engine: embedded\nrate: max\n", [][2]int{d}},
		{"matrix over rate", "engine: kafka\nrate: max\nmatrix:\n  rate: [max, 1000]\n", [][2]int{{k.Batch, k.InFlight}, d}},
		{"matrix over engine", "engine: embedded\nrate: max\nmatrix:\n  engine: [embedded, kafka]\n", [][2]int{d, {k.Batch, k.InFlight}}},
		{"matrix over batch", "engine: kafka\nrate: max\nmatrix:\n  batch: [2, 8]\n", [][2]int{{2, k.InFlight}, {8, k.InFlight}}},
		// 4 producers x 32 x 64 of 1 MiB is 8 GiB of buffers: narrowed, batch first, to the
		// 2 GiB limit.
		{"large messages", "engine: kafka\nrate: max\nproducers: 4\nmessage_size: 1048576\n", [][2]int{{16, k.InFlight}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := scenarios.Parse("closed.yaml", []byte("design: "+designOf(c.yaml)+"\n"+c.yaml), bench.Checks())
			if err != nil {
				t.Fatal(err)
			}
			cells, err := sc.Cells()
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) != len(c.want) {
				t.Fatalf("%d cells, want %d", len(cells), len(c.want))
			}
			for i, cell := range cells {
				if got := [2]int{cell.Scenario.Batch, cell.Scenario.InFlight}; got != c.want[i] {
					t.Errorf("cell %q: batch, in_flight %v, want %v", cell.Name, got, c.want[i])
				}
			}
		})
	}
}

// designOf is the design of a test scenario's engine when a matrix may change the engine: none
// (each cell takes its engine's first).
func designOf(yaml string) string {
	if strings.Contains(yaml, "engine: [") {
		return "\"\""
	}
	if strings.Contains(yaml, "engine: kafka") {
		return "topic"
	}
	return "stream"
}

// A closed loop narrower than its engine's closed-loop shape says its rate was set by qbench's
// in-flight limit, in the result and in its warnings; one with the default shape does not.
func TestClosedLoopSaysWhenItsWindowSetTheRate(t *testing.T) {
	cases := []struct {
		name, yaml string
		bound      string // "" wants none
	}{
		{"one in flight", "in_flight: 1\n", "rate set by qbench's in-flight limit (1 batches of 1 per producer, x 1 producers: 1 messages in flight, under the 8 of embedded's"},
		{"the defaults", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, scenario(t, "engine: embedded\ndesign: list\nrate: max\nduration: 300ms\n"+c.yaml))
			g := res.Summary.Generator
			warned := strings.Contains(strings.Join(res.Summary.Warnings, "\n"), "in a closed loop: "+g.InFlightBound)
			switch {
			case c.bound == "" && (g.InFlightBound != "" || warned):
				t.Fatalf("in-flight bound %q, warnings %q: want none", g.InFlightBound, res.Summary.Warnings)
			case c.bound != "" && (!strings.HasPrefix(g.InFlightBound, c.bound) || !warned):
				t.Fatalf("in-flight bound %q, warnings %q: want %q, warned", g.InFlightBound, res.Summary.Warnings, c.bound)
			}
		})
	}
}
