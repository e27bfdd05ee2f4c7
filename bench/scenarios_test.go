package bench_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/bench"
	"qbench/scenarios"
)

// Every scenario shipped in scenarios/ (but the failure library) runs, shortened to about 2 s (warm-up and fault times
// scaled with it), and loses nothing unless it injects faults.
func TestShippedScenariosRun(t *testing.T) {
	var files []string
	filepath.WalkDir("../scenarios", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "failures" {
			return filepath.SkipDir // TestFailureScenarios runs these, with their expected outcomes
		}
		// Each Kafka scenario starts a broker (5-15 s); the conformance suite and the failure
		// library run Kafka already, so one Kafka scenario stands for the rest here.
		if err == nil && strings.HasPrefix(d.Name(), "kafka-") && d.Name() != "kafka-vs-redis-stream-kafka.yaml" {
			return nil
		}
		// The produce-only / consume-only pairs run against one server (role_test.go): role-*
		// in order, floor-produce and floor-consume at once.
		if err == nil && (strings.HasPrefix(d.Name(), "role-") || d.Name() == "floor-produce.yaml" || d.Name() == "floor-consume.yaml") {
			return nil
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) < 9 {
		t.Fatalf("found %d scenario files", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, "../scenarios/"), func(t *testing.T) {
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
					if len(sc.Faults) == 0 && sc.Stream.MaxLen == 0 && (l.Lost != 0 || l.Duplicates != 0) {
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

// Every shipped scenario file, in every folder of scenarios/ (the failure library, bench/,
// designs/ ...), loads with the real registrations and expands into its cells: the check
// scenarios' own decoding test leaves to this one for engines it has no stand-in for.
func TestShippedScenariosLoad(t *testing.T) {
	var files []string
	filepath.WalkDir("../scenarios", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return nil
	})
	failures := 0
	for _, f := range files {
		if strings.HasPrefix(f, "../scenarios/failures/") {
			failures++
		}
		t.Run(strings.TrimPrefix(f, "../scenarios/"), func(t *testing.T) {
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
