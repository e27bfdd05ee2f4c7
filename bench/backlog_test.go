package bench_test

import (
	"fmt"
	"testing"
)

// Lost means gone. A consumer slower than its producers, with no fault and a drain too short to
// catch up, leaves a backlog in the engine: the final sweep finds it, so it is reported as queued
// and nothing as lost, and every acknowledged message is exactly one of delivered, queued, lost.
// Pub/sub stores nothing: what a subscriber did not get cannot be queued.
func TestSlowConsumerBacklogIsQueuedNotLost(t *testing.T) {
	// Two consumer groups of one slow consumer each: each group's backlog is its own.
	twoGroups := "redis:\n  stream:\n    groups: 2\n"
	cases := []struct {
		name, target, design string
		rate                 int64 // offered, msg/s, for 2 s
		work                 string
		consumers, groups    int64
		extra                string
	}{
		{"", "embedded", "stream", 2000, "1ms", 1, 1, ""},
		{"", "embedded", "list", 2000, "1ms", 1, 1, ""},
		{"", "embedded", "reliable-list", 2000, "1ms", 1, 1, ""},
		{"", "embedded", "pubsub", 2000, "1ms", 1, 1, ""},
		{"-2-groups", "embedded", "stream", 2000, "1ms", 2, 2, twoGroups},
		{"", "redis", "stream", 2000, "1ms", 1, 1, ""},
		{"", "redis", "list", 2000, "1ms", 1, 1, ""},
		{"", "redis", "reliable-list", 2000, "1ms", 1, 1, ""},
		// A Kafka producer waits for each acks=all send, and falls behind on a loaded machine
		// (131 msg/s of 400 in one CI run, which the 10 ms consumer kept up with): a lower rate,
		// and a consumer slower than the producer at its slowest (40 msg/s).
		{"", "kafka", "topic", 400, "25ms", 1, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.target+"/"+c.design+c.name, func(t *testing.T) {
			needTarget(t, c.target)
			// One consumer spending work per message consumes under half the offered rate: about
			// a second's worth of messages is still in the engine when the 200 ms drain gives up.
			res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 2
consumers: %d
rate: %d
duration: 2s
work: %s
drain_timeout: 200ms
%s`, c.target, c.design, c.consumers, c.rate, c.work, c.extra)))
			s := res.Summary
			l := s.Ledger
			// Producers may fall behind on a loaded machine (then messages are unsent, not
			// acked): the point is what becomes of those acknowledged.
			if l.Acked == 0 {
				t.Fatalf("nothing acknowledged: %+v", l)
			}
			if l.Delivered-l.DeliveredUnacked+l.Queued+l.Lost != l.Acked*c.groups {
				// A message whose send failed (a Kafka produce past its deadline) may still have
				// been written and delivered: delivered_unacked, outside the acknowledged account.
				t.Fatalf("delivered %d - delivered unacked %d + queued %d + lost %d != acked %d x %d groups", l.Delivered, l.DeliveredUnacked, l.Queued, l.Lost, l.Acked, c.groups)
			}
			if s.DrainSeconds < 0.2 {
				t.Errorf("drain took %.3f s, want at least the 200 ms drain timeout", s.DrainSeconds)
			}
			if c.design == "pubsub" {
				// Nothing stored, nothing swept: a message not received is lost by design.
				if l.Queued != 0 || s.SweepSeconds != 0 {
					t.Fatalf("pub/sub: queued %d, sweep %.3f s; it stores nothing", l.Queued, s.SweepSeconds)
				}
				return
			}
			if l.Lost != 0 || l.Queued == 0 || l.Duplicates != 0 {
				t.Fatalf("ledger %+v: want lost 0 and the backlog queued", l)
			}
			if len(res.Lost) != 0 {
				t.Fatalf("lost list %v with nothing lost", res.Lost)
			}
			if s.SweepSeconds <= 0 {
				t.Errorf("sweep took %v s", s.SweepSeconds)
			}
		})
	}
}

// A consumer that dies holding messages it never processed, and stays down, leaves them in the
// engine: the stream's pending entries list (nobody claims them: no claim_idle), the reliable
// list's processing list (the visibility timeout is longer than the run). They are held, so
// queued, not lost; the plain list's popped message is gone (TestConformanceListLosesInFlightOnCrash).
func TestCrashedConsumersHeldMessagesAreQueued(t *testing.T) {
	cases := []struct{ target, design, extra string }{
		{"embedded", "stream", ""},
		{"redis", "stream", ""},
		{"embedded", "reliable-list", "redis:\n  list:\n    visibility_timeout: 60s\n"},
	}
	for _, c := range cases {
		t.Run(c.target+"/"+c.design, func(t *testing.T) {
			needTarget(t, c.target)
			res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 1
consumers: 2
rate: 500
duration: 1500ms
drain_timeout: 300ms
faults:
  - at: 500ms
    kind: consumer-crash
    point: before-work
    consumer: 0
%s`, c.target, c.design, c.extra)))
			l := res.Summary.Ledger
			if l.Delivered-l.DeliveredUnacked+l.Queued+l.Lost != l.Acked {
				t.Fatalf("delivered %d + queued %d + lost %d != acked %d", l.Delivered, l.Queued, l.Lost, l.Acked)
			}
			if l.Lost != 0 || l.Queued < 1 || l.Acked != 750 {
				t.Fatalf("ledger %+v: want the crashed consumer's messages queued, none lost", l)
			}
			for _, f := range res.Faults {
				if f.Lost != 0 {
					t.Fatalf("fault %s charged %d lost; nothing is gone", f.Kind, f.Lost)
				}
			}
		})
	}
}
