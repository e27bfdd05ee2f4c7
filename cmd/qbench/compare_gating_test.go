package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/bench"
	"qbench/results"
	"qbench/results/resultstest"
	"qbench/scenarios"
)

// resultWithScenario writes a fixture result whose scenario is a real one (defaults filled), with
// edit applied to its JSON form, so compare reads it as a result from qbench run would be read.
func resultWithScenario(t *testing.T, dir, name string, o resultstest.Options, edit func(map[string]any)) string {
	t.Helper()
	sc, err := scenarios.Parse("q.yaml", []byte("name: q\nrate: 1000\nduration: 5s\n"), bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sc)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	r := resultstest.Make(o)
	r.Scenario, _ = json.Marshal(m)
	p := filepath.Join(dir, name)
	if err := results.WriteFile(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareRefusesDifferentScenarios(t *testing.T) {
	dir := t.TempDir()
	o := resultstest.Options{Name: "q", Seed: 1}
	base := resultWithScenario(t, dir, "base.json", o, nil)
	// A baseline recorded before in_flight and redis.list.count existed: the defaults fill them in.
	old := resultWithScenario(t, dir, "old.json", o, func(m map[string]any) {
		delete(m, "in_flight")
		delete(m["redis"].(map[string]any)["list"].(map[string]any), "count")
	})
	// A result from before the redis: section: its Redis options at the top level, as
	// results/baselines/ci-smoke.json has them.
	preSection := resultWithScenario(t, dir, "pre.json", o, func(m map[string]any) {
		for k, v := range m["redis"].(map[string]any) {
			m[k] = v
		}
		m["pubsub"], m["wait"] = map[string]any{}, map[string]any{}
		delete(m, "redis")
	})
	reseeded := resultWithScenario(t, dir, "seed.json", resultstest.Options{Name: "q", Seed: 2}, func(m map[string]any) {
		m["seed"] = 99
		m["gates"] = []string{"lost == 0"}
	})
	faster := resultWithScenario(t, dir, "faster.json", o, func(m map[string]any) {
		m["rate"] = map[string]any{"PerSecond": 2000, "Max": false}
		m["producers"] = 4
	})
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		notStdout  string
		wantStderr string
	}{
		{"same scenario", []string{"compare", base, base}, 0, "produce.p99", "scenarios differ", ""},
		{"only later defaults differ", []string{"compare", old, base}, 0, "produce.p99", "scenarios differ", ""},
		{"a result from before the redis: section", []string{"compare", preSection, base}, 0, "produce.p99", "scenarios differ", ""},
		{"and the other way round", []string{"compare", base, preSection}, 0, "produce.p99", "scenarios differ", ""},
		{"seed and gates are not the workload", []string{"compare", base, reseeded, "--no-scenario-gates"}, 0, "produce.p99", "scenarios differ", ""},
		{"different workload", []string{"compare", base, faster}, 2, "", "", "differ in producers, rate"},
		{"different workload allowed", []string{"compare", base, faster, "--allow-different"}, 0, "the scenarios differ in producers, rate", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := qbench(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			if !strings.Contains(stdout, c.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", c.wantStdout, stdout)
			}
			if c.notStdout != "" && strings.Contains(stdout, c.notStdout) {
				t.Errorf("stdout has %q:\n%s", c.notStdout, stdout)
			}
			if !strings.Contains(stderr, c.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", c.wantStderr, stderr)
			}
		})
	}
}

// A baseline merged from repetitions turns the noise-aware mode on without --noise, and a change
// within the repetitions' range is called that in the table and makes a relative gate that
// misses its percentage inconclusive (exit 5; 3 with --strict); --noise=false turns it off again.
func TestCompareNoiseAwareByDefaultWithRepetitions(t *testing.T) {
	dir := t.TempDir()
	var reps []string
	for i, med := range []time.Duration{200 * time.Microsecond, 260 * time.Microsecond, 320 * time.Microsecond} {
		reps = append(reps, writeResult(t, dir, "rep"+string(rune('a'+i))+".json", resultstest.Options{Name: "q", Seed: uint64(i + 1), ProduceMedian: med}))
	}
	merged := filepath.Join(dir, "base.json")
	if _, stderr, code := qbench(t, append([]string{"merge", "--repetitions", "-o", merged}, reps...)...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	cur := writeResult(t, dir, "cur.json", resultstest.Options{Name: "q", Seed: 7, ProduceMedian: 300 * time.Microsecond})
	gate := "produce.p50 <= +5%"
	stdout, stderr, code := qbench(t, "compare", merged, cur, "--gate", gate)
	if code != 5 {
		t.Fatalf("noise-aware by default: exit %d, want 5 (inconclusive)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "gate inconclusive: "+gate) {
		t.Errorf("stderr does not name the inconclusive gate:\n%s", stderr)
	}
	for _, w := range []string{"within noise", "noise-aware mode: a change within the spread", "INCONCLUSIVE  " + gate, "within the repetitions' range", "inconclusive: 1 of 1 gates missed"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	for _, strict := range []string{"--strict", "--fail-on-inconclusive"} {
		if _, _, code := qbench(t, "compare", merged, cur, "--gate", gate, strict); code != 3 {
			t.Errorf("%s: exit %d, want 3", strict, code)
		}
	}
	if _, _, code := qbench(t, "compare", merged, cur, "--gate", gate, "--noise=false"); code != 3 {
		t.Fatalf("--noise=false: exit %d, want 3 (the gate fails on the plain percentage)", code)
	}
}
