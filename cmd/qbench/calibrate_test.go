package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// calibrate replays a scenario's shape on the null engine, whatever engine the scenario names,
// and reports the floor and a bounded rate search; --json is machine-readable.
func TestCalibrate(t *testing.T) {
	// A Redis scenario with a fault and a gate: calibrate drops both and keeps the shape.
	sc := writeFile(t, "c.yaml", `name: shape
engine: redis
design: pubsub
producers: 2
consumers: 2
batch: 4
message_size: 100
rate: 1000
duration: 30s
gates:
  - e2e.p50 <= 1ns
faults:
  - {at: 1s, kind: stall, duration: 1s}
`)
	stdout, stderr, code := qbench(t, "calibrate", sc, "--json", "--duration", "1s", "--probe", "500ms", "--high", "4000", "--max-runs", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "floor: 1000 msg/s") || !strings.Contains(stderr, "ceiling: trying 1000 msg/s") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	var cal calibration
	if err := json.Unmarshal([]byte(stdout), &cal); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	want := calShape{Engine: "nullq", Design: "pubsub", Producers: 2, Consumers: 2, Batch: 4, InFlight: 8, MessageSize: 100}
	if cal.Shape != want {
		t.Errorf("shape %+v, want %+v", cal.Shape, want)
	}
	f := cal.Floor
	if f.OfferedRate != 1000 || f.Latency["produce"].Count == 0 || f.Latency["e2e"].Count != 2*f.Latency["produce"].Count {
		t.Errorf("floor: offered %v, latency %+v (e2e must count both subscribers' deliveries)", f.OfferedRate, f.Latency)
	}
	if l := f.Latency["send_delay"]; l.P50 <= 0 || l.P99 < l.P50 || l.P999 < l.P99 {
		t.Errorf("send delay percentiles %+v", l)
	}
	if !f.Generator.InProcessEngine || f.Generator.CPUPerMessageNs <= 0 || f.Generator.CPUShare <= 0 {
		t.Errorf("floor generator %+v", f.Generator)
	}
	// 1000, 2000, 4000 at most: the ceiling and --max-runs bound the search.
	c := cal.Ceiling
	if n := len(c.Steps); n == 0 || n > 3 || c.Steps[0].Rate != 1000 || c.Steps[n-1].Rate > 4000 {
		t.Fatalf("steps %+v", c.Steps)
	}
	for _, s := range c.Steps {
		if s.Pass && s.Rate > c.Best {
			t.Errorf("step %+v passed above the best rate %v", s, c.Best)
		}
		if s.ProduceRate <= 0 || s.CPUPerMessageNs <= 0 || s.ProduceBytes <= 0 {
			t.Errorf("step %+v has no figures", s)
		}
	}

	// An objective nothing meets: the search steps down from a quarter of the lowest miss, to
	// 100 msg/s, within --max-runs.
	stdout, stderr, code = qbench(t, "calibrate", "-q", sc, "--json", "--duration", "1s", "--probe", "500ms", "--max-send-delay", "1ns", "--max-runs", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	cal = calibration{}
	if err := json.Unmarshal([]byte(stdout), &cal); err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for _, s := range cal.Ceiling.Steps {
		rates = append(rates, s.Rate)
	}
	if fmt.Sprint(rates) != "[1000 250 100]" || cal.Ceiling.Best != 0 || cal.Ceiling.FailedAt != 100 {
		t.Errorf("steps %v, best %v, failed at %v; want [1000 250 100], 0, 100", rates, cal.Ceiling.Best, cal.Ceiling.FailedAt)
	}

	// The table names the floor, the ceiling and every step.
	stdout, stderr, code = qbench(t, "calibrate", "-q", sc, "--duration", "1s", "--probe", "500ms", "--high", "1000")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, s := range []string{"calibration of shape on the null engine (design pubsub): 2 producers", "generator floor at 1000 msg/s, ", "KiB/s (", "bytes/s", "send_delay", "CPU:", "generator ceiling:", "  1000  "} {
		if !strings.Contains(stdout, s) {
			t.Errorf("table lacks %q:\n%s", s, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("-q still wrote progress: %s", stderr)
	}
}

func TestCalibrateUsageErrors(t *testing.T) {
	matrix := writeFile(t, "m.yaml", "name: m\nduration: 1s\nmatrix:\n  rate: [100, 200]\n")
	plain := writeFile(t, "p.yaml", "name: p\nrate: 100\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a matrix", []string{"calibrate", matrix}, "has a matrix"},
		{"too short", []string{"calibrate", plain, "--duration", "10ms"}, "--duration must be at least 1s"},
		{"negative rate", []string{"calibrate", plain, "--rate", "-5"}, "--rate must not be negative"},
		{"no file", []string{"calibrate", "/nonexistent.yaml"}, "no such file"},
		{"no argument", []string{"calibrate"}, "accepts 1 arg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
		})
	}
}
