package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"qbench/bench"
	"qbench/engines"
	_ "qbench/engines/all"
	"qbench/results"
	"qbench/scenarios"
)

// targets are the servers every Redis-design test runs against: the in-repo server (in process
// and as a child process) and a real
// redis-server started by the engine (Debian's package; required when CI=true).
var targets = []string{"embedded", "server", "redis"}

func needTarget(t *testing.T, engine string) {
	needTargetOnly(t, engine)
}

// needTargetOnly skips a test whose engine cannot run here (its registration's Requires: a
// missing server binary or jars) and fails it under CI=true, where every server is installed.
func needTargetOnly(t *testing.T, engine string) {
	t.Helper()
	r, err := engines.Lookup(engine)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CanRun(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("engine %s is required under CI=true: %v", engine, err)
		}
		t.Skipf("engine %s cannot run here: %v", engine, err)
	}
}

// scenario parses a test's scenario. One on engine kafka that needs no broker of its own runs on
// the package's shared broker (kafka_shared_test.go).
func scenario(t testing.TB, yaml string) *scenarios.Scenario {
	t.Helper()
	yaml, shared := onSharedKafka(t, yaml)
	sc, err := scenarios.Parse(t.Name()+".yaml", []byte(yaml), bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	if shared {
		onShared.Store(sc, true)
	}
	return sc
}

// onShared holds the scenarios scenario moved to the shared Kafka broker.
var onShared sync.Map

func run(t *testing.T, sc *scenarios.Scenario) *results.Result {
	t.Helper()
	ctx := context.Background()
	opts := bench.Options{Logf: t.Logf}
	if _, ok := onShared.Load(sc); ok {
		opts.RunID = sharedRunID()
	}
	res, err := bench.Run(ctx, ctx, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	results.WriteSummary(&buf, res)
	t.Logf("\n%s", buf.String())
	return res
}

// The stream design delivers every acknowledged message exactly once, on every target, and the
// result file round-trips with histograms that reproduce the summary.
func TestStreamDesignDeliversEveryMessageOnce(t *testing.T) {
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			needTarget(t, target)
			sc := scenario(t, fmt.Sprintf(`
engine: %s
design: stream
producers: 2
consumers: 2
rate: 2000
duration: 1500ms
warmup: 500ms
batch: 4
`, target))
			res := run(t, sc)
			l := res.Summary.Ledger
			if l.Sent != 3000 || l.Acked != 3000 || l.Failed != 0 {
				t.Errorf("sent %d acked %d failed %d, want 3000 3000 0", l.Sent, l.Acked, l.Failed)
			}
			if l.Delivered != l.Acked || l.Lost != 0 || l.Duplicates != 0 || l.Phantom != 0 {
				t.Errorf("ledger %+v: want every acked message delivered once", l)
			}
			// Warm-up is excluded from latency: 1 s measured at 2,000 msg/s.
			if n := res.Summary.Latency["produce"].Count; n != 2000 {
				t.Errorf("measured produce count %d, want 2000", n)
			}
			if n := res.Summary.Latency["e2e"].Count; n != 2000 {
				t.Errorf("measured e2e count %d, want 2000", n)
			}
			if res.Engine.Version == "" {
				t.Errorf("engine version not recorded")
			}
			checkRoundTrip(t, res)
		})
	}
}

func checkRoundTrip(t *testing.T, res *results.Result) {
	t.Helper()
	path := t.TempDir() + "/result.json"
	if err := results.WriteFile(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenarios.Scenario
	if err := json.Unmarshal(back.Scenario, &sc); err != nil || sc.Rate.PerSecond != res.Summary.OfferedRate {
		t.Fatalf("scenario did not round-trip: %v %+v", err, sc.Rate)
	}
	for kind, enc := range back.Histograms {
		h, err := results.DecodeHistogram(enc)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if got, want := results.Summarise(h), back.Summary.Latency[kind]; got != want {
			t.Errorf("%s histogram gives %+v, summary says %+v", kind, got, want)
		}
	}
}

// A 200 ms stall of the server during an open-loop run at 2,000 msg/s is charged to every message
// scheduled during it, so the produce p99 shows it; a closed loop hides it (only the one message
// in flight per producer waits), which is exactly the coordinated omission qbench avoids.
func TestStallIsChargedToScheduledMessages(t *testing.T) {
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			needTarget(t, target)
			const body = `
engine: %s
producers: 2
consumers: 2
rate: %s
duration: 3s
warmup: 500ms
faults:
  - at: 1500ms
    kind: stall
    duration: 200ms
`
			open := run(t, scenario(t, fmt.Sprintf(body, target, "2000")))
			closed := run(t, scenario(t, fmt.Sprintf(body, target, "max")))
			op, cl := open.Summary.Latency["produce"], closed.Summary.Latency["produce"]
			// About 400 of the 5,000 measured messages were scheduled during the stall and waited
			// up to 200 ms each: the top 1% waited at least 100 ms.
			if op.P99 < 100e6 || op.Max < 180e6 {
				t.Errorf("open loop: p99 %s max %s; a 200 ms stall must show in p99", results.FormatNs(op.P99), results.FormatNs(op.Max))
			}
			// The closed loop saw the stall (its max) but its p99 does not show it.
			if cl.Max < 180e6 {
				t.Errorf("closed loop max %s: the stall did not happen", results.FormatNs(cl.Max))
			}
			if cl.P99 >= 50e6 {
				t.Errorf("closed loop p99 %s: expected the stall hidden below 50 ms", results.FormatNs(cl.P99))
			}
			for _, r := range []*results.Result{open, closed} {
				if l := r.Summary.Ledger; l.Lost != 0 || l.Duplicates != 0 {
					t.Errorf("ledger %+v", l)
				}
			}
		})
	}
}

func needKafka(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("java is required under CI=true: %v", err)
		}
		t.Skipf("java not installed: %v", err)
	}
}
