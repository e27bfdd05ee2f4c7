package bench_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"qbench/bench"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
)

// The failure-scenario library: every file the library's manifest marks ci: failure runs as shipped and shows the
// outcome its header comment promises.
var failureOutcomes = map[string]func(t *testing.T, r *results.Result){
	"consumer-crash-stream": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Duplicates >= 1, "no loss, the crashed batch redelivered by XAUTOCLAIM")
		// The batch the consumer died holding was read after the fault fired: its redelivery
		// is the crash's own cost, and the consumer that never came back reads as open.
		expect(t, r, len(r.Faults) == 1 && r.Faults[0].Duplicates == r.Summary.Ledger.Duplicates && r.Faults[0].EndNs == r.Faults[0].StartNs,
			fmt.Sprintf("the crash's row %+v carries the run's %d duplicates", r.Faults, r.Summary.Ledger.Duplicates))
	},
	"poison-dead-letters": func(t *testing.T, r *results.Result) {
		l := r.Summary.Ledger
		poison := (l.Sent + 49) / 50 // sequence numbers 0, 50, 100 ... of the one producer
		seen := map[uint64]bool{}
		for _, m := range r.DeadLetters {
			if m.Seq%50 != 0 || seen[m.Seq] {
				t.Errorf("dead letter %+v: not a poison message, or listed twice", m)
			}
			seen[m.Seq] = true
		}
		expect(t, r, l.Lost == 0 && r.Summary.DeadLettered == poison && int64(len(r.DeadLetters)) == poison && l.PoisonRetries == 2*poison,
			fmt.Sprintf("all %d poison messages delivered 3 times, then dead-lettered and listed (dead-lettered %d, listed %d, poison retries %d), none lost",
				poison, r.Summary.DeadLettered, len(r.DeadLetters), l.PoisonRetries))
		var text strings.Builder
		if err := results.WriteSummary(&text, r); err != nil {
			t.Fatal(err)
		}
		expect(t, r, strings.Contains(text.String(), "dead letters (producer:seq, oldest first): 0:0 0:50 0:100"), "the summary names the dead letters")
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

	"cluster-partition-async": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "partition")
		t.Logf("cluster partition, async replica: %s, lost %d (charged to it: %d), duplicates %d, produce errors %d, window %s",
			f.Target, r.Summary.Ledger.Lost, f.Lost, r.Summary.Ledger.Duplicates, f.ProduceErrors, results.FormatNs(f.EndNs-f.StartNs))
		expect(t, r, f.Error == "" && strings.Contains(f.Target, "primary now") && f.Lost > 0 && f.Lost == r.Summary.Ledger.Lost &&
			f.RecoverWriteNs >= 0 && r.Summary.Ledger.Acked > 15000,
			"the partitioned primary's lone acknowledgements lost at the heal, all charged to the partition; writes resume")
	},
	"cluster-partition-wait": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "partition")
		t.Logf("cluster partition, WAIT 1: %s, lost %d, duplicates %d, produce errors %d, failed but delivered %d, window %s",
			f.Target, r.Summary.Ledger.Lost, r.Summary.Ledger.Duplicates, f.ProduceErrors, r.Summary.Ledger.DeliveredUnacked, results.FormatNs(f.EndNs-f.StartNs))
		expect(t, r, f.Error == "" && strings.Contains(f.Target, "primary now") && r.Summary.Ledger.Lost == 0 && f.ProduceErrors > 0 &&
			f.RecoverWriteNs >= 0 && r.Engine.Stats["wait_short"] > 0,
			"nothing acknowledged lost: WAIT refused the lone writes, at the price of produce errors")
	},
	"aof-rewrite-under-load": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "command")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && measuredCommand(f), "BGREWRITEAOF accepted, nothing lost, its window the rewrite's")
	},
	"snapshot-under-load": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "command")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && measuredCommand(f), "BGSAVE accepted, nothing lost, its window the snapshot's")
	},
	"redis-power-loss-everysec":        powerLossEverysec,
	"redis-power-loss-always":          powerLossAlways,
	"redis-disk-full":                  diskFull,
	"server-disk-full":                 diskFull,
	"redis-bgsave-error-stop-writes":   bgsaveStopWrites,
	"server-bgsave-error-stop-writes":  bgsaveStopWrites,
	"redis-bgsave-error-keep-writing":  bgsaveKeepWriting,
	"server-bgsave-error-keep-writing": bgsaveKeepWriting,
	"redis-disk-full-always": func(t *testing.T, r *results.Result) {
		diedOf(t, r, "disk-full", "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
	},
	"redis-io-error-fsync-always": func(t *testing.T, r *results.Result) {
		diedOf(t, r, "io-error", "Can't persist AOF for fsync error when the AOF fsync policy is 'always': Input/output error. Exiting...")
	},
	"server-io-error-fsync-always": func(t *testing.T, r *results.Result) {
		diedOf(t, r, "io-error", "Can't persist AOF for fsync error when the AOF fsync policy is 'always': Input/output error. Exiting...")
	},
	"kafka-crash-page-cache": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "server-crash")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0, "a broker process crash loses nothing acknowledged")
	},
	"kafka-leader-kill-acks-all": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "partition-leader-kill")
		t.Logf("leader kill, acks=all: %s, window %s, recover_write %s, produce errors %d, duplicates %d",
			f.Target, results.FormatNs(f.EndNs-f.StartNs), results.FormatNs(f.RecoverWriteNs), f.ProduceErrors, r.Summary.Ledger.Duplicates)
		expect(t, r, f.Error == "" && strings.Contains(f.Target, "leader now") && r.Summary.Ledger.Lost == 0 && f.Lost == 0 &&
			f.RecoverWriteNs >= 0 && r.Summary.Ledger.Acked > 8000,
			"a new in-sync leader elected, nothing acknowledged lost, writes resume")
		// The cluster's health, sampled each second, shows the dead replica leave the ISR.
		rows, _ := results.HealthSummary(r)
		by := map[string]results.HealthRow{}
		for _, h := range rows {
			by[h.Name] = h
		}
		for _, name := range []string{"under_replicated_partitions", "under_min_isr_partitions", "offline_partitions", "isr_min", "isr_shrinks", "isr_size.p0", "brokers"} {
			if by[name].Readings == 0 {
				t.Errorf("health counter %s never read", name)
			}
		}
		if by["under_replicated_partitions"].Max < 1 || by["isr_shrinks"].Delta < 1 || by["isr_min"].First != 3 {
			t.Errorf("the shrunken ISR does not show in health: under-replicated %+v, isr_shrinks %+v, isr_min %+v",
				by["under_replicated_partitions"], by["isr_shrinks"], by["isr_min"])
		}
	},

	"slow-consumer-stream": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "slow-consumer")
		expect(t, r, f.Error == "" && f.Target == "consumer 0" && r.Summary.Ledger.Lost == 0 && f.LagPeak >= 1000 &&
			r.Summary.Latency["e2e"].Max >= 1e9, "no loss, lag and a tail of end-to-end latency while consumer 0 is slow")
	},
	"redis-crash-everysec": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Acked > 4000, "a process crash loses nothing under everysec")
	},
	"jetstream-crash-default-sync": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "server-crash")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0, "a process crash loses nothing acknowledged: the page cache survives it")
	},
	"jetstream-disk-full": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "disk-full")
		t.Logf("JetStream disk full: lost %d acknowledged, failed publishes %d, window %s, write back after %s",
			r.Summary.Ledger.Lost, f.ProduceErrors, results.FormatNs(f.EndNs-f.StartNs), results.FormatNs(f.RecoverWriteNs))
		diskFull(t, r)
	},
	"jetstream-leader-kill": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "partition-leader-kill")
		t.Logf("JetStream stream leader kill: %s, lost %d acknowledged, failed publishes %d, duplicates %d, window %s, write back after %s",
			f.Target, r.Summary.Ledger.Lost, f.ProduceErrors, r.Summary.Ledger.Duplicates, results.FormatNs(f.EndNs-f.StartNs), results.FormatNs(f.RecoverWriteNs))
		expect(t, r, f.Error == "" && strings.Contains(f.Target, "leader now") && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0 &&
			r.Summary.Ledger.Acked > 5000, "a new stream leader elected, nothing acknowledged lost, writes resume")
		// The health sampled each second shows the dead node and the leader's change.
		rows, _ := results.HealthSummary(r)
		by := map[string]results.HealthRow{}
		for _, h := range rows {
			by[h.Name] = h
		}
		var node int
		fmt.Sscanf(f.Target, "broker %d", &node)
		killed := by[fmt.Sprintf("healthz.n%d", node)]
		if by["stream_leader_changes"].Max < 1 || !slices.Contains(killed.StatusesSeen, "down") {
			t.Errorf("the leader kill does not show in health: stream_leader_changes %+v, healthz of node %d %+v", by["stream_leader_changes"], node, killed)
		}
	},
	"rabbitmq-crash-classic-confirms": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "server-crash")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0,
			"with persistent messages and publisher confirms a node crash loses nothing acknowledged, and writes resume")
	},
	"rabbitmq-crash-classic-no-confirms": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "server-crash")
		t.Logf("RabbitMQ classic queue without confirms, node crash: lost %d acknowledged", f.Lost)
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost > 0 && f.Lost == r.Summary.Ledger.Lost,
			"without publisher confirms a node crash loses acknowledged messages, charged to the crash")
	},
	"rabbitmq-power-loss-classic-confirms": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "power-loss")
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0,
			"with persistent messages and confirms a power cut loses nothing acknowledged, and writes resume")
	},
	"rabbitmq-memory-alarm": func(t *testing.T, r *results.Result) {
		p99 := r.Summary.Latency["produce"].P99
		t.Logf("memory alarm: produce p99 %s, produce errors %d", results.FormatNs(p99), r.Summary.ProduceErrors)
		expect(t, r, r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Acked > 0 && p99 >= 500e6,
			"the alarm blocks publishers (produce p99 over 500 ms) and loses nothing acknowledged")
	},
	"rabbitmq-disk-alarm": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "disk-full")
		p99 := r.Summary.Latency["produce"].P99
		t.Logf("disk alarm: produce p99 %s, produce errors %d, window %s", results.FormatNs(p99), r.Summary.ProduceErrors,
			results.FormatNs(f.EndNs-f.StartNs))
		expect(t, r, f.Error == "" && r.Summary.Ledger.Lost == 0 && r.Summary.Ledger.Acked > 0 && p99 >= 500e6,
			"the disk alarm blocks publishers (produce p99 over 500 ms) and loses nothing acknowledged")
	},
	"rabbitmq-stream-retention": func(t *testing.T, r *results.Result) {
		deleted := r.Engine.Stats["retention_deleted"]
		t.Logf("stream retention: lost %d acknowledged (never delivered), retention deleted %d", r.Summary.Ledger.Lost, deleted)
		expect(t, r, r.Summary.Ledger.Lost > 0 && r.Summary.ProduceErrors == 0 && deleted >= r.Summary.Ledger.Lost,
			"unread messages deleted by retention while every publish was confirmed, counted as lost and within retention_deleted")
	},
	"rabbitmq-quorum-leader-kill": func(t *testing.T, r *results.Result) {
		f := faultOf(t, r, "partition-leader-kill")
		t.Logf("quorum leader kill: %s, window %s, produce errors %d, duplicates %d", f.Target,
			results.FormatNs(f.EndNs-f.StartNs), f.ProduceErrors, r.Summary.Ledger.Duplicates)
		expect(t, r, f.Error == "" && strings.Contains(f.Target, "leader now") && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0,
			"a new leader elected, nothing acknowledged lost, writes resume")
	},
	"redis-crash-memory-only": func(t *testing.T, r *results.Result) {
		expect(t, r, r.Summary.Ledger.Lost >= 100, "the backlog (~500 on schedule) lost with the memory-only server")
		// Lost messages are not lag: once the restarted server reports its (small) backlog, the
		// generator's lag drops to it instead of staying at the lost count to the end.
		last := r.Series[len(r.Series)-1].Lag
		expect(t, r, last < r.Summary.Ledger.Lost/2, fmt.Sprintf("lag at the end %d, not the lost count %d", last, r.Summary.Ledger.Lost))
	},
}

func TestFailureScenarios(t *testing.T) {
	files := library(t, "failure")
	if len(files) == 0 {
		t.Fatal("no failure scenarios")
	}
	// An outcome with no scenario would assert nothing.
	for name := range failureOutcomes {
		if !slices.Contains(files, filepath.Join(libraryDir, "failures", name+".yaml")) {
			t.Errorf("failureOutcomes[%q] has no ci: failure entry failures/%s.yaml in the manifest", name, name)
		}
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(f, bench.Checks())
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Matrix.Axes) > 0 {
				runMatrix(t, name, sc)
				return
			}
			// Scenarios at these rates leave the CPU mostly idle and assert counts, not
			// latencies: two at a time (go test -parallel) halves the suite's time, except for
			// an engine registered RunsAlone (heavy brokers; the embedded server, which shares
			// the test process's CPU: under -race a neighbour once cut its producers to 64%).
			if reg, err := engines.Lookup(sc.Engine); err == nil && !reg.RunsAlone {
				t.Parallel()
			}
			outcome, ok := failureOutcomes[name]
			if !ok {
				t.Fatalf("%s has no expected outcome in failureOutcomes", f)
			}
			needTarget(t, sc.Engine)
			outcome(t, run(t, sc))
		})
	}
}

// measuredCommand: a command fault's window is the background work it started, measured (not an
// instant, and over before the run was).
func measuredCommand(f results.FaultWindow) bool {
	return !f.Instant && f.EndNs > f.StartNs && f.EndNs < math.MaxInt64
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

// misconfBgsave is how Redis 7.0.15's -MISCONF for a failed background save begins.
const misconfBgsave = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."

// bgsaveStopWrites: after the failed save, writes were refused with the save's MISCONF (and no
// other error), nothing acknowledged was lost, and writes came back after the BGSAVE.
func bgsaveStopWrites(t *testing.T, r *results.Result) {
	f := faultOf(t, r, "io-error")
	c := faultOf(t, r, "command")
	var misconf, other int64
	for _, e := range r.Errors {
		if e.Where != "produce" {
			continue
		}
		if strings.Contains(e.Message, misconfBgsave) {
			misconf += e.Count
		} else {
			other += e.Count
		}
	}
	t.Logf("bgsave error, stop-writes yes: produce errors %d (MISCONF %d, other %d), charged to the io-error %d, recover_write after the BGSAVE %s, lost %d",
		r.Summary.ProduceErrors, misconf, other, f.ProduceErrors, results.FormatNs(c.RecoverWriteNs), r.Summary.Ledger.Lost)
	expect(t, r, saveFailed(r) && misconf > 0 && other == 0 && r.Summary.Ledger.Lost == 0 && f.Error == "" && c.Error == "" && c.RecoverWriteNs >= 0,
		"writes refused with the failed save's MISCONF only, nothing acknowledged lost, writes back after the BGSAVE")
}

// bgsaveKeepWriting: with stop-writes-on-bgsave-error no the failed save refused nothing.
func bgsaveKeepWriting(t *testing.T, r *results.Result) {
	f := faultOf(t, r, "io-error")
	c := faultOf(t, r, "command")
	t.Logf("bgsave error, stop-writes no: produce errors %d, acked %d, lost %d", r.Summary.ProduceErrors, r.Summary.Ledger.Acked, r.Summary.Ledger.Lost)
	expect(t, r, r.Summary.ProduceErrors == 0 && r.Summary.Ledger.Failed == 0 && r.Summary.Ledger.Lost == 0 && f.Error == "" && c.Error == "",
		"writes go on through the failed save: no produce errors, nothing acknowledged lost")
	expect(t, r, saveFailed(r), "the save did fail: rdb_last_bgsave_status read err during the run")
}

// saveFailed: the per-second health readings saw rdb_last_bgsave_status err.
func saveFailed(r *results.Result) bool {
	rows, _ := results.HealthSummary(r)
	for _, row := range rows {
		if row.Name == "rdb_last_bgsave_status" {
			return slices.Contains(row.StatusesSeen, "err")
		}
	}
	return false
}

// diedOf: the server exited of the fault on its own with words in its last log lines, and qbench
// said so (the result's death, the window's mark, the engine-died flag, the summary); a
// supervisor's restart brought it back and nothing acknowledged was lost.
func diedOf(t *testing.T, r *results.Result, kind, words string) {
	t.Helper()
	f := faultOf(t, r, kind)
	d := r.Engine.Died
	if d == nil {
		t.Fatalf("the server's death was not reported (fault %+v)", f)
	}
	t.Logf("%s: died at %s (%s), last log lines %q; window %s, produce errors %d, recover_write %s, lost %d",
		kind, results.FormatNs(d.AtNs), d.Status, d.Log, results.FormatNs(f.EndNs-f.StartNs), f.ProduceErrors, results.FormatNs(f.RecoverWriteNs), r.Summary.Ledger.Lost)
	expect(t, r, slices.ContainsFunc(d.Log, func(l string) bool { return strings.Contains(l, words) }) && d.Status == "exit status 1",
		fmt.Sprintf("the death reported with exit status 1 and the log line %q", words))
	expect(t, r, f.EngineDied && d.AtNs >= f.StartNs && slices.Contains(results.Assess(r).Codes(), results.CodeEngineDied),
		"the window marked engine_died, the engine-died flag raised")
	var text strings.Builder
	if err := results.WriteSummary(&text, r); err != nil {
		t.Fatal(err)
	}
	expect(t, r, strings.Contains(text.String(), "(server died)") && strings.Contains(text.String(), "engine died:"), "the summary shows the death")
	expect(t, r, f.Error == "" && f.ProduceErrors > 0 && r.Summary.Ledger.Lost == 0 && f.RecoverWriteNs >= 0,
		"writes failed while it was down, nothing acknowledged lost, writes back after the restart")
}

// The persistence explorer: acknowledged writes lost per policy, for each crash kind, on real
// Redis and on the in-repo server. Rows are asserted where the policy promises something.
var explorerPromises = map[string]map[string]func(lost, offered int64) bool{
	"persistence-explorer-process-crash": {
		"none":         func(lost, _ int64) bool { return lost > 0 },
		"snapshot":     func(lost, _ int64) bool { return lost > 0 },
		"aof-no":       func(lost, _ int64) bool { return lost == 0 },
		"aof-everysec": func(lost, _ int64) bool { return lost == 0 },
		"aof-always":   func(lost, _ int64) bool { return lost == 0 },
	},
	"persistence-explorer-power-loss": {
		"none":         func(lost, _ int64) bool { return lost > 0 },
		"snapshot":     func(lost, _ int64) bool { return lost > 0 },
		"aof-no":       func(lost, _ int64) bool { return lost > 0 },
		"aof-everysec": func(lost, rate int64) bool { return lost > 0 && lost <= 5*rate/2 },
		"aof-always":   func(lost, _ int64) bool { return lost == 0 },
	},
}

func runMatrix(t *testing.T, name string, sc *scenarios.Scenario) {
	if _, ok := replicationPromises[name]; ok {
		runReplicationMatrix(t, name, sc)
		return
	}
	if _, ok := systemPromises[name]; ok {
		runSystemsMatrix(t, name, sc)
		return
	}
	promises, ok := explorerPromises[name]
	if !ok {
		t.Fatalf("%s has no expected outcome in explorerPromises", name)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	// Every test run runs each cell once; QBENCH_SOAK=1 repeat: times, the table then giving
	// the min-max of lost over the runs (what a crash costs varies with where it lands).
	reps := 1
	if os.Getenv("QBENCH_SOAK") == "1" {
		reps = max(1, sc.Repeat)
	}
	var (
		mu   sync.Mutex
		rows = map[string]string{}
	)
	// The cells run two at a time (go test -parallel), like the library's other Redis and
	// in-repo server scenarios (same rates, same count assertions; each cell its own server,
	// directory and port): the table is logged once all are done.
	t.Cleanup(func() {
		var table strings.Builder
		table.WriteString("engine  policy        runs  acked        lost\n")
		for _, c := range cells {
			table.WriteString(rows[c.Name])
		}
		t.Logf("acknowledged writes lost, %s:\n%s", name, table.String())
	})
	for _, c := range cells {
		cell := c.Scenario
		t.Run(c.Name, func(t *testing.T) {
			if reg, err := engines.Lookup(cell.Engine); err != nil || reg.RunsAlone {
				t.Fatalf("%s: engine %s runs alone (registered RunsAlone); the explorer runs two cells at a time (%v)", c.Name, cell.Engine, err)
			}
			t.Parallel()
			needTarget(t, cell.Engine)
			var acked, lost spread
			for rep := range reps {
				r := run(t, cell)
				l := r.Summary.Ledger
				acked.add(l.Acked, rep == 0)
				lost.add(l.Lost, rep == 0)
				if !promises[cell.Policy](l.Lost, int64(r.Summary.OfferedRate)) {
					t.Errorf("run %d: %s under %s lost %d of %d acknowledged writes", rep+1, cell.Engine, cell.Policy, l.Lost, l.Acked)
				}
			}
			mu.Lock()
			rows[c.Name] = fmt.Sprintf("%-7s %-13s %4d  %-11s  %s\n", cell.Engine, cell.Policy, reps, acked, lost)
			mu.Unlock()
		})
	}
}
