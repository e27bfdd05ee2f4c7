package bench_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"qbench/bench"
	"qbench/scenarios"
)

// libraryDir is the shipped scenario library, from this package's folder.
const libraryDir = "../scenarios/library"

// library returns the paths of the shipped files whose manifest entry's ci is one of ci.
func library(t *testing.T, ci ...string) []string {
	t.Helper()
	entries, err := scenarios.ReadLibrary(libraryDir)
	if err != nil {
		t.Fatal(err)
	}
	return scenarios.LibraryFiles(libraryDir, entries, ci...)
}

// libraryName is a shipped file's name in a subtest: its path in the library (quickstart.yaml,
// beside the parser, by its name).
func libraryName(f string) string {
	name, _ := filepath.Rel(libraryDir, f)
	return strings.TrimPrefix(filepath.ToSlash(name), "../")
}

// Every shipped scenario the manifest marks ci: run runs, shortened to about 2 s (warm-up and
// fault times scaled with it), and loses nothing unless it injects faults. The failure library
// (ci: failure) runs in TestFailureScenarios with its expected outcomes; the produce-only /
// consume-only pairs (ci: pair) in role_test.go, against one server; of the Kafka scenarios,
// each starting a broker (5-15 s), one stands for the rest (the others ci: load), as the
// conformance suite and the failure library run Kafka already.
func TestShippedScenariosRun(t *testing.T) {
	files := library(t, "run")
	if len(files) < 9 {
		t.Fatalf("found %d scenario files", len(files))
	}
	// role_test.go runs these by name: a new pair would go unrun.
	if pairs := library(t, "pair"); !slices.Equal(pairs, []string{
		libraryDir + "/workloads/role-consume.yaml", libraryDir + "/workloads/role-produce.yaml",
		libraryDir + "/generator/floor-consume.yaml", libraryDir + "/generator/floor-produce.yaml",
	}) {
		t.Errorf("the manifest's ci: pair files %v are not the ones role_test.go runs", pairs)
	}
	for _, f := range files {
		t.Run(libraryName(f), func(t *testing.T) {
			base, err := scenarios.Load(f, bench.Checks())
			if err != nil {
				t.Fatal(err)
			}
			cells, err := base.Cells()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cells {
				sc := c.Scenario
				t.Run(c.Name, func(t *testing.T) {
					needTarget(t, sc.Engine)
					shorten(sc, 2*time.Second)
					moveToSharedKafka(t, sc)
					res := run(t, sc)
					l := res.Summary.Ledger
					if l.Acked == 0 || l.Delivered == 0 {
						t.Fatalf("nothing went through: %+v", l)
					}
					if len(sc.Faults) == 0 && !trims(sc) && (l.Lost != 0 || l.Duplicates != 0) {
						t.Fatalf("a run without faults lost or duplicated messages: %+v", l)
					}
				})
			}
		})
	}
}

// shorten scales a scenario's times down to d in total.
func shorten(sc *scenarios.Scenario, d time.Duration) {
	if sc.Duration.D() <= d {
		return
	}
	f := float64(d) / float64(sc.Duration)
	scale := func(x scenarios.Duration) scenarios.Duration { return scenarios.Duration(float64(x) * f) }
	sc.Duration = scenarios.Duration(d)
	sc.Warmup = scale(sc.Warmup)
	sc.Backlog.Duration = scale(sc.Backlog.Duration)
	// A profile's times scale with the run, so its shape is kept in the shortened run.
	steps := append([]scenarios.Step(nil), sc.Profile.Steps...)
	for i := range steps {
		steps[i].For = scale(steps[i].For)
	}
	sc.Profile.Steps = steps
	sc.Profile.Burst.Every, sc.Profile.Burst.For = scale(sc.Profile.Burst.Every), scale(sc.Profile.Burst.For)
	for i := range sc.Faults {
		sc.Faults[i].At = scale(sc.Faults[i].At)
		sc.Faults[i].Duration = scale(sc.Faults[i].Duration)
		sc.Faults[i].RestartAfter = scale(sc.Faults[i].RestartAfter)
	}
}

// Every shipped scenario file in the manifest, whatever its ci (the failure library, generator/,
// designs/ ...), loads with the real registrations and expands into its cells: the check
// scenarios' own decoding test leaves to this one for engines it has no stand-in for.
func TestShippedScenariosLoad(t *testing.T) {
	files := library(t, "run", "pair", "failure", "load")
	failures := len(library(t, "failure"))
	for _, f := range files {
		t.Run(libraryName(f), func(t *testing.T) {
			sc, err := scenarios.Load(f, bench.Checks())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sc.Cells(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if len(files) < 20 || failures == 0 {
		t.Fatalf("found %d scenario files, %d of them in failures/", len(files), failures)
	}
}

// trims says the scenario's engine trims its queue (redis.stream.maxlen), so a run may lose
// messages without a fault.
func trims(sc *scenarios.Scenario) bool {
	b, _ := json.Marshal(sc)
	return strings.Contains(string(b), `"maxlen":`)
}
