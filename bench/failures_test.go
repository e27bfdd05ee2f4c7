package bench_test

import (
	"path/filepath"
	"strings"
	"testing"

	"qbench/results"
	"qbench/scenarios"
)

// The failure-scenario library: every file in scenarios/failures runs as shipped and shows the
// outcome its header comment promises.
var failureOutcomes = map[string]func(t *testing.T, r *results.Result){
	"consumer-crash-stream": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Duplicates >= 1, "no loss, the crashed batch redelivered by XAUTOCLAIM")
	},
	"consumer-crash-list": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 1 && r.Summary.Ledger.Duplicates == 0, "exactly the in-flight message lost")
	},
	"consumer-crash-reliable-list": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Duplicates >= 1 && r.Engine.Stats["requeued"] >= 1,
			"no loss, the in-flight message requeued by the reaper")
	},
	"trimming-drops-unread": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost > 0 && r.Summary.ProduceErrors == 0, "unread entries trimmed away while every XADD succeeded")
	},
	"noeviction-backpressure": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Failed > 0, "OOM errors as back-pressure, nothing acknowledged lost")
	},
	"lru-evicts-stream": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost >= 100 && r.Summary.ProduceErrors == 0, "the stream evicted silently with its backlog")
	},
	"pubsub-slow-subscriber": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost > 0 && onlyGroup(r, 1), "the slow subscriber disconnected and missed messages; the other none")
	},
	"pubsub-offline-subscriber": func(t *testing.T, r *results.Result) {
		l := r.Summary.Ledger.Lost
		expect(t, r, l >= 2000 && l <= 6000 && onlyGroup(r, 1), "the offline subscriber missed the 2 s window's ~4,000 messages")
	},
	"stream-offline-consumer": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.LagMax >= 2000, "no loss, a lag peak of ~2 s of messages")
	},
	"failover-async-replica": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "failover")
		t.Logf("failover to an async replica lost %d acknowledged messages", r.Summary.Ledger.Lost)
		expect(t, r, f.Error == "" && f.RecoverWriteNs >= 0 && f.RecoverReadNs >= 0 && r.Summary.Ledger.Acked > 15000,
			"writes and reads resume on the promoted replica")
	},
	"failover-wait-replica": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "failover")
		expect(t, r, f.Error == "" && f.RecoverWriteNs >= 0 && r.Summary.Ledger.Lost == 0 && r.Engine.Stats["wait_batches"] > 0,
			"nothing acknowledged (replicated) lost, writes resume")
	},
	"aof-rewrite-under-load": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "command")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0, "BGREWRITEAOF accepted, nothing lost")
	},
	"snapshot-under-load": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "command")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0, "BGSAVE accepted, nothing lost")
	},
	"redis-power-loss-everysec":  powerLossEverysec,
	"server-power-loss-everysec": powerLossEverysec,
	"redis-power-loss-always":    powerLossAlways,
	"server-power-loss-always":   powerLossAlways,
	"redis-disk-full":            diskFull,
	"server-disk-full":           diskFull,
	"redis-crash-everysec": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Acked > 4000, "a process crash loses nothing under everysec")
	},
	"redis-crash-memory-only": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost >= 100, "the backlog (~500 on schedule) lost with the memory-only server")
	},
}

func TestFailureScenarios(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/failures/*.yaml")
	if len(files) == 0 {
		t.Fatal("no failure scenarios")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			outcome, ok := failureOutcomes[name]
			if !ok {
				t.Fatalf("%s has no expected outcome in failureOutcomes", f)
			}
			sc, err := scenarios.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			needTarget(t, sc.Engine)
			outcome(t, run(t, sc))
		})
	}
}

func expect(t *testing.T, r *results.Result, ok bool, what string) {
	t.Helper()
	if !ok {
		t.Fatalf("expected %s; ledger %+v, produce errors %d, lag max %d, stats %v",
			what, r.Summary.Ledger, r.Summary.ProduceErrors, r.Summary.LagMax, r.Engine.Stats)
	}
}

// onlyGroup reports whether every lost message listed was lost to receiving group g.
func onlyGroup(r *results.Result, g int) bool {
	for _, m := range r.Lost {
		if m.Group != g {
			return false
		}
	}
	return true
}

func faultOf(t *testing.T, r *results.Result, kind string) results.FaultWindow {
	t.Helper()
	for _, f := range r.Faults {
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("no %s fault window in %+v", kind, r.Faults)
	return results.FaultWindow{}
}

// everysec under power loss loses acknowledged writes, but no more than about the last 2 s.
func powerLossEverysec(t *testing.T, r *results.Result) {
	f := faultOf(t, r, "power-loss")
	rate := r.Summary.OfferedRate
	expect(t, r, f.Error == "" && r.Summary.Ledger.Lost > 0 && float64(r.Summary.Ledger.Lost) <= 2.5*rate,
		"power loss under everysec loses some acknowledged writes, at most ~2 s of them")
}

func powerLossAlways(t *testing.T, r *results.Result) {
	f := faultOf(t, r, "power-loss")
	expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0, "power loss under always loses nothing acknowledged")
}

func diskFull(t *testing.T, r *results.Result) {
	f := faultOf(t, r, "disk-full")
	expect(t, r, f.Error == "" && r.Summary.Ledger.Failed > 0 && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0,
		"writers get errors while the disk is full, nothing acknowledged is lost, writes resume")
}
