package results

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A figure JSON cannot hold (NaN, infinite) must not lose a finished run: Write records it as 0
// and names it in a warning. Before, Write failed with "json: unsupported value: NaN" and the
// run's result was never written.
func TestWriteSurvivesNonFiniteFigures(t *testing.T) {
	r := &Result{SchemaVersion: SchemaVersion, Scenario: json.RawMessage(`{"name":"x"}`)}
	r.Summary.DrainSeconds = math.NaN()
	r.Summary.OfferedRate = math.Inf(1)
	r.Summary.Latency = map[string]Latency{"e2e": {Count: 3, Mean: math.NaN(), P99: 7}}
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	var back Result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("written result does not decode: %v\n%s", err, buf.String())
	}
	if back.Summary.DrainSeconds != 0 || back.Summary.OfferedRate != 0 || back.Summary.Latency["e2e"].Mean != 0 {
		t.Errorf("non-finite figures not written as 0: %+v", back.Summary)
	}
	if back.Summary.Latency["e2e"].P99 != 7 || back.Summary.Latency["e2e"].Count != 3 {
		t.Errorf("finite figures changed: %+v", back.Summary.Latency["e2e"])
	}
	w := strings.Join(back.Summary.Warnings, "\n")
	for _, path := range []string{"summary.drain_seconds", "summary.offered_rate", "summary.latency.e2e.mean_ns"} {
		if !strings.Contains(w, path) {
			t.Errorf("warning %q does not name %s", w, path)
		}
	}
}

func TestFiniteReachesEveryFloat(t *testing.T) {
	type inner struct{ F float64 }
	type outer struct {
		P   *inner
		I   any
		M   map[string]float64
		S   []inner
		Raw json.RawMessage
		ok  float64 // unexported: json ignores it, so does Finite
	}
	v := &outer{P: &inner{math.NaN()}, I: inner{math.Inf(-1)}, M: map[string]float64{"a": math.NaN(), "b": 2},
		S: []inner{{1}, {math.Inf(1)}}, Raw: json.RawMessage(`1`), ok: math.NaN()}
	got := strings.Join(Finite(v), " ")
	if want := "I.F M.a P.F S[1].F"; got != want {
		t.Errorf("Finite fixed %q, want %q", got, want)
	}
	if _, err := json.Marshal(struct {
		P *inner
		I any
		M map[string]float64
		S []inner
	}{v.P, v.I, v.M, v.S}); err != nil {
		t.Errorf("still not encodable: %v", err)
	}
	if v.M["b"] != 2 || v.S[0].F != 1 {
		t.Errorf("finite values changed: %+v", v)
	}
}
