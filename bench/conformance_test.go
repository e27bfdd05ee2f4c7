package bench_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"qbench/engines"
	"qbench/results"
)

// The conformance suite: written once, run over every Redis design on every target. Each case is
// a short scenario and an assertion on the ledger, which counts every message.

// each runs body as a subtest target/design for every registered engine that qbench runs itself
// (no address) and every design of it that declares promise (engines.Registration.Conformance),
// with the scenario YAML the design asks for to run the case in the suite's time (extra, appended
// to the case's scenario). An engine is in the suite by being registered.
func each(t *testing.T, promise string, body func(t *testing.T, target, design, extra string)) {
	ran := 0
	for _, r := range suiteEngines() {
		for _, design := range r.Designs {
			if !r.Promises(design, promise) {
				continue
			}
			ran++
			t.Run(r.Name+"/"+design, func(t *testing.T) {
				needTarget(t, r.Name)
				body(t, r.Name, design, r.Conformance[design].Scenario[promise])
			})
		}
	}
	if ran == 0 {
		t.Fatalf("no registered design promises %s", promise)
	}
}

// suiteEngines are the registrations the conformance suite runs: those that declare promises
// and need no address of an existing server.
func suiteEngines() []engines.Registration {
	var out []engines.Registration
	for _, r := range engines.All() {
		if !r.NeedsAddress && len(r.Conformance) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// fanOut says every consumer of the design receives every message (a group of its own).
func fanOut(target, design string) bool {
	r, err := engines.Lookup(target)
	return err == nil && r.Promises(design, engines.PromiseFanOut)
}

// Without faults every design delivers every acknowledged message exactly once to each receiving
// group (each subscriber, for pub/sub), and with one producer and one consumer, in order.
func TestConformanceExactlyOnceInOrder(t *testing.T) {
	each(t, engines.PromiseExactlyOnceInOrder, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 1
rate: 1000
duration: 1s
drain_timeout: 10s
%s`, target, design, extra)))
		l := res.Summary.Ledger
		if l.Acked != 1000 || l.Delivered != 1000 || l.Lost != 0 || l.Duplicates != 0 || l.Reordered != 0 {
			t.Fatalf("ledger %+v: want 1000 acked, each delivered once, in order", l)
		}
	})
}

func TestConformanceCompetingConsumers(t *testing.T) {
	each(t, engines.PromiseCompetingConsumers, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 3
consumers: 3
rate: 1500
duration: 1s
batch: 8
drain_timeout: 10s
%s`, target, design, extra)))
		l := res.Summary.Ledger
		groups := int64(1)
		if fanOut(target, design) {
			groups = 3 // every subscriber receives every message
		}
		if l.Acked != 1500 || l.Delivered != 1500*groups || l.Lost != 0 || l.Duplicates != 0 {
			t.Fatalf("ledger %+v: want 1500 acked, delivered once to each of %d groups", l, groups)
		}
	})
}

// A consumer killed after its work and before its acknowledgement: the stream redelivers (the
// consumer replays its pending entries when it comes back), the reliable list redelivers (the
// reaper returns the dead consumer's processing list): duplicates, no loss.
func TestConformanceRedeliveryAfterConsumerCrash(t *testing.T) {
	each(t, engines.PromiseRedelivery, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 2
rate: 500
duration: 2s
drain_timeout: 15s
faults:
  - at: 500ms
    kind: consumer-crash
    consumer: 0
    restart_after: 300ms
%s`, target, design, extra)))
		l := res.Summary.Ledger
		if l.Lost != 0 || l.Duplicates < 1 || l.Acked != 1000 {
			t.Fatalf("ledger %+v: want no loss and at least one duplicate", l)
		}
		checkCrashRow(t, res, 300*time.Millisecond)
	})
}

// The plain list has no acknowledgement: a consumer that dies holding a popped message before
// doing its work loses exactly that message.
func TestConformanceListLosesInFlightOnCrash(t *testing.T) {
	each(t, engines.PromiseListLosesInFlight, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 2
rate: 500
duration: 2s
drain_timeout: 1s
redis:
  list:
    count: 1               # one message in flight per consumer
faults:
  - at: 500ms
    kind: consumer-crash
    point: before-work
    consumer: 0
    restart_after: 200ms
%s`, target, design, extra)))
		l := res.Summary.Ledger
		if l.Lost != 1 || l.Duplicates != 0 {
			t.Fatalf("ledger %+v: want exactly the one in-flight message lost", l)
		}
		checkCrashRow(t, res, 200*time.Millisecond)
	})
}

// A pub/sub subscriber offline for a window misses what was published meanwhile (at most once);
// the other subscriber misses nothing.
func TestConformancePubSubOfflineSubscriberMisses(t *testing.T) {
	each(t, engines.PromiseOfflineSubscriberMisses, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 2
rate: 1000
duration: 2s
drain_timeout: 500ms
faults:
  - at: 500ms
    kind: subscriber-offline
    consumer: 1
    duration: 500ms
%s`, target, design, extra)))
		l := res.Summary.Ledger
		// 500 ms at 1,000 msg/s, give or take the time to resubscribe.
		if l.Lost < 200 || l.Lost > 800 || l.Duplicates != 0 {
			t.Fatalf("ledger %+v: want about 500 missed by the offline subscriber", l)
		}
		for _, m := range res.Lost {
			if m.Group != 1 {
				t.Fatalf("subscriber %d lost message %d; only subscriber 1 was offline", m.Group, m.Seq)
			}
		}
		// Each subscriber's own line: the offline one missed what the ledger lost, the other none.
		if pc := res.Summary.PerConsumer; len(pc) != 2 || pc[0].Missed != 0 || pc[1].Missed != l.Lost || pc[0].Deliveries != l.Acked {
			t.Fatalf("per subscriber %+v, ledger %+v", pc, l)
		}
		// Each subscriber is a group: the offline one's lag at the end is what it missed, and its
		// lag over time rose while it was away; pub/sub keeps no pending per subscriber.
		if pg := res.Summary.PerGroup; len(pg) != 2 || pg[0].LagEnd != 0 || pg[1].LagEnd != l.Lost || pg[1].LagMax < l.Lost || pg[1].Delivered != l.Acked-l.Lost {
			t.Fatalf("per group %+v, ledger %+v", pg, l)
		}
		if pc := res.Summary.PerConsumer; pc[0].Pending != nil || pc[1].Pending != nil {
			t.Fatalf("pending on pub/sub: %+v", pc)
		}
	})
}

// A stream trimmed with MAXLEN below the backlog drops entries nobody read: loss, counted.
func TestConformanceTrimmingDropsUnread(t *testing.T) {
	each(t, engines.PromiseTrimming, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 1
rate: 2000
duration: 1s
work: 2ms
drain_timeout: 2s
redis:
  stream:
    maxlen: 50
    exact_trim: true
    count: 10
%s`, target, design, extra)))
		l := res.Summary.Ledger
		if l.Lost == 0 {
			t.Fatalf("ledger %+v: a consumer at 500 msg/s behind a 50-entry MAXLEN must lose entries", l)
		}
		t.Logf("lost %d of %d to trimming", l.Lost, l.Acked)
	})
}

// A message whose work always fails is redelivered (claimed from the pending list after
// claim_idle) until it has been delivered max_deliveries times, then moved to the dead-letter
// stream: every poisoned message ends there, none is lost.
func TestConformanceDeadLetterAfterMaxDeliveries(t *testing.T) {
	each(t, engines.PromiseDeadLetter, func(t *testing.T, target, design, extra string) {
		res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 2
rate: 500
duration: 1s
drain_timeout: 2s
poison_every: 50
redis:
  stream:
    claim_idle: 100ms
    max_deliveries: 3
%s`, target, design, extra)))
		l := res.Summary.Ledger
		// 500 messages, every 50th poisoned: 10, each delivered 3 times (the first delivery
		// and two claims) before it is dead-lettered: 20 poison retries, which are the run's own
		// doing and not duplicates. On a loaded machine a healthy message can sit idle past
		// claim_idle too and be claimed once more: a duplicate, but not of a poison message.
		if l.Lost != 0 || l.PoisonRetries != 20 || l.Duplicates != l.Deliveries-l.Delivered-20 {
			t.Fatalf("ledger %+v: want the 10 poisoned messages delivered 3 times each, 20 poison retries apart from duplicates", l)
		}
		if got := res.Engine.Stats["dead_letters"]; got != 10 || res.Summary.DeadLettered != 10 {
			t.Fatalf("dead-letter stream holds %d entries, summary says %d dead-lettered: want 10", got, res.Summary.DeadLettered)
		}
		var text strings.Builder
		if err := results.WriteSummary(&text, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "poison retries 20 (") || !strings.Contains(text.String(), "dead-lettered 10 (") {
			t.Fatalf("summary does not print the poison retries and dead letters:\n%s", text.String())
		}
	})
}

// WAIT after each batch, on the same connection: with no replica it always falls short. Recorded
// only, the writes still count as acknowledged; required, they count as failed.
func TestWaitForReplicas(t *testing.T) {
	each(t, engines.PromiseWaitForReplicas, func(t *testing.T, target, design, extra string) {
		for _, required := range []bool{false, true} {
			res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
rate: 200
duration: 500ms
batch: 4
redis:
  wait:
    replicas: 1
    timeout: 5ms
    required: %v
%s`, target, design, required, extra)))
			l, st := res.Summary.Ledger, res.Engine.Stats
			if st["wait_batches"] == 0 || st["wait_short"] != st["wait_batches"] {
				t.Fatalf("stats %v: every WAIT 1 must fall short without a replica", st)
			}
			if !required && (l.Acked != 100 || l.Failed != 0) {
				t.Fatalf("recorded only: ledger %+v", l)
			}
			if required && (l.Acked != 0 || l.Failed != 100) {
				t.Fatalf("required: ledger %+v", l)
			}
		}
	})
}

// checkCrashRow: a consumer crash's own row carries the run's loss and duplicates (the batch it
// died holding was read after the fault fired), and a consumer that came back after restart_after
// has a window that long, not an open one.
func checkCrashRow(t *testing.T, res *results.Result, restartAfter time.Duration) {
	t.Helper()
	l := res.Summary.Ledger
	if len(res.Faults) != 1 {
		t.Fatalf("fault windows %+v", res.Faults)
	}
	f := res.Faults[0]
	// A Kafka consumer that comes back rejoins its group after the window has closed; that
	// rebalance hands its partition back from the last committed offset, redelivering messages
	// intended after the window, which no window's rule charges: the crash row has the
	// crash's own duplicates, the run may have more.
	rejoin := res.Engine.Design == "topic" && f.Duplicates >= 1 && f.Duplicates <= l.Duplicates
	if f.Lost != l.Lost || (f.Duplicates != l.Duplicates && !rejoin) {
		t.Errorf("crash row lost %d duplicates %d, the run's %d and %d", f.Lost, f.Duplicates, l.Lost, l.Duplicates)
	}
	if d := time.Duration(f.EndNs - f.StartNs); d < restartAfter || d > restartAfter+2*time.Second {
		t.Errorf("crash window lasted %v, restart_after %v", d, restartAfter)
	}
	if f.RecoverReadNs < 0 {
		t.Errorf("no read after the consumer came back: %+v", f)
	}
}
