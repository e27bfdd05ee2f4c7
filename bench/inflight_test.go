package bench_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"qbench/engines"
	"qbench/results"
)

// slowEngine is a test double of the runner's own, not of any engine: every Send takes exactly
// sendTime (a server that answers slowly but without limit on concurrency), then delivers the
// payloads, copied, to the one consumer. It tells the runner's pacing apart from any engine's.
type slowEngine struct {
	sendTime time.Duration
	// Send number slowAt (counting from 1) takes slowTime instead, when slowAt > 0.
	slowAt   int64
	slowTime time.Duration
	sends    atomic.Int64
	out      chan []byte
	// inFlight is the number of Sends running now; peak the most seen at once.
	inFlight, peak atomic.Int64
}

var (
	slowMu   sync.Mutex
	slowLast *slowEngine
)

func init() {
	engines.Register(engines.Registration{
		Name: "slow-test", Designs: []string{"slow"}, Summary: "bench tests only: every send takes send_time",
		Sections: []string{"persistence"},
		New: func(_ context.Context, spec engines.Spec) (engines.Engine, error) {
			d, err := time.ParseDuration(spec.Persistence["send_time"])
			if err != nil {
				return nil, err
			}
			e := &slowEngine{sendTime: d, out: make(chan []byte, 1<<20)}
			if v := spec.Persistence["slow_at"]; v != "" {
				fmt.Sscan(v, &e.slowAt)
				if e.slowTime, err = time.ParseDuration(spec.Persistence["slow_time"]); err != nil {
					return nil, err
				}
			}
			slowMu.Lock()
			slowLast = e
			slowMu.Unlock()
			return e, nil
		},
	})
}

func lastSlowEngine() *slowEngine {
	slowMu.Lock()
	defer slowMu.Unlock()
	return slowLast
}

func (e *slowEngine) Setup(context.Context) error    { return nil }
func (e *slowEngine) Teardown(context.Context) error { return nil }
func (e *slowEngine) Close() error                   { return nil }
func (e *slowEngine) NewProducer(context.Context, int) (engines.Producer, error) {
	return slowProducer{e}, nil
}
func (e *slowEngine) NewConsumer(context.Context, int) (engines.Consumer, error) {
	return slowConsumer{e}, nil
}

type slowProducer struct{ e *slowEngine }

func (p slowProducer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	n := p.e.inFlight.Add(1)
	defer p.e.inFlight.Add(-1)
	for {
		peak := p.e.peak.Load()
		if n <= peak || p.e.peak.CompareAndSwap(peak, n) {
			break
		}
	}
	copies := make([][]byte, len(payloads))
	for i, b := range payloads {
		copies[i] = append([]byte(nil), b...)
	}
	d := p.e.sendTime
	if p.e.sends.Add(1) == p.e.slowAt {
		d = p.e.slowTime
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return
	}
	for _, b := range copies {
		p.e.out <- b
	}
}

func (p slowProducer) Close() error { return nil }

type slowConsumer struct{ e *slowEngine }

func (c slowConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	select {
	case b := <-c.e.out:
		return []engines.Delivery{{Payload: b}}, nil
	case <-time.After(50 * time.Millisecond):
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c slowConsumer) Ack(context.Context, []engines.Delivery) error { return nil }
func (c slowConsumer) Close() error                                  { return nil }

func slowScenario(t *testing.T, rate string, batch, inFlight int, sendTime time.Duration) *results.Result {
	return run(t, scenario(t, fmt.Sprintf(`
engine: slow-test
design: slow
producers: 1
consumers: 1
rate: %s
duration: 1s
batch: %d
in_flight: %d
drain_timeout: 3s
persistence:
  send_time: %s
`, rate, batch, inFlight, sendTime)))
}

// A producer keeps its schedule while earlier batches are in flight: with every send taking
// 20 ms and 1,000 msg/s offered, about 20 sends are in flight at once and none waits for another.
// One send at a time would take 20 s for the 1,000 messages: send delay would grow by 19 ms per
// message and most would go unsent. (The bounds leave room for a loaded machine's late timers.)
func TestProducerKeepsScheduleWithBatchesInFlight(t *testing.T) {
	res := slowScenario(t, "1000", 1, 1024, 20*time.Millisecond)
	s := res.Summary
	e := lastSlowEngine()
	if s.Ledger.Acked != 1000 || s.Ledger.Delivered != 1000 || s.Ledger.Reordered != 0 || s.Unsent != 0 {
		t.Fatalf("ledger %+v unsent %d: want 1000 acked and delivered, none counted reordered", s.Ledger, s.Unsent)
	}
	if s.Generator.InFlight != 1024 || s.Generator.InFlightFull != 0 {
		t.Fatalf("generator %+v: want limit 1024, never full", s.Generator)
	}
	if p := e.peak.Load(); p < 10 {
		t.Fatalf("at most %d sends were in flight at once, want about 20 (20 ms at 1,000 msg/s)", p)
	}
	if d := time.Duration(s.Latency["send_delay"].P90); d > 200*time.Millisecond {
		t.Fatalf("send delay p90 %v: the schedule waited for earlier sends", d)
	}
	if p := time.Duration(s.Latency["produce"].P50); p < 20*time.Millisecond {
		t.Fatalf("produce p50 %v: below the engine's 20 ms", p)
	}
}

// When every slot is in flight, due messages wait for one: the waits are counted, the messages
// are late by what they waited (send delay), and none is skipped: every scheduled message is
// sent once the slots free up (4 slots of 10 messages per 20 ms is 2,000 msg/s, ahead of 1,000
// once batches fill up).
func TestProducerCountsInFlightLimit(t *testing.T) {
	res := slowScenario(t, "1000", 10, 4, 20*time.Millisecond)
	s := res.Summary
	if s.Generator.InFlight != 4 || s.Generator.InFlightFull == 0 {
		t.Fatalf("generator %+v: want the limit of 4 reached", s.Generator)
	}
	if s.Ledger.Sent+s.Unsent != 1000 || s.Ledger.Acked != s.Ledger.Sent || s.Ledger.Delivered != s.Ledger.Acked {
		t.Fatalf("ledger %+v unsent %d: every scheduled message sent or counted unsent", s.Ledger, s.Unsent)
	}
	if e := lastSlowEngine(); e.peak.Load() > 4 {
		t.Fatalf("%d sends in flight at once, limit 4", e.peak.Load())
	}
	// Waiting for a slot (up to 20 ms) shows as send delay.
	if d := time.Duration(s.Latency["send_delay"].P90); d < 5*time.Millisecond {
		t.Fatalf("send delay p90 %v: the wait for a free slot is not charged", d)
	}
}

// Closed loop: each of the in_flight slots sends again as soon as its batch is acknowledged, so
// exactly in_flight sends are in flight and throughput is in_flight batches per send time.
func TestClosedLoopKeepsEverySlotBusy(t *testing.T) {
	res := slowScenario(t, "max", 5, 3, 10*time.Millisecond)
	s := res.Summary
	if p := lastSlowEngine().peak.Load(); p != 3 {
		t.Fatalf("%d sends in flight at once, want in_flight 3", p)
	}
	// 3 slots x 5 messages per 10 ms is 1,500 msg/s; one slot could do at most 500.
	if s.Ledger.Acked < 600 || s.Ledger.Acked > 1600 {
		t.Fatalf("acked %d in 1 s, want about 1,500", s.Ledger.Acked)
	}
	if s.Ledger.Delivered != s.Ledger.Acked || s.Generator.InFlightFull != 0 {
		t.Fatalf("ledger %+v generator %+v", s.Ledger, s.Generator)
	}
}

// A fast engine lets one goroutine keep the schedule through its own Sends (nobody to wake); when
// one Send is unexpectedly slow (200 ms), the schedule passes to another goroutine at the next
// due time, so the messages due meanwhile are not held back by that Send.
func TestProducerKeepsScheduleThroughOneSlowSend(t *testing.T) {
	res := run(t, scenario(t, `
engine: slow-test
design: slow
producers: 1
consumers: 1
rate: 1000
duration: 1s
in_flight: 4
drain_timeout: 3s
persistence:
  send_time: 0s
  slow_at: "300"
  slow_time: 200ms
`))
	s := res.Summary
	if s.Ledger.Acked != 1000 || s.Ledger.Delivered != 1000 || s.Ledger.Reordered != 0 {
		t.Fatalf("ledger %+v", s.Ledger)
	}
	if p := lastSlowEngine().peak.Load(); p < 2 {
		t.Fatalf("at most %d sends in flight: the slow send held the schedule", p)
	}
	// Held back by the slow Send, the ~200 messages due during it (20%) would show 0-200 ms of
	// send delay at p90; passed on, they are late by a timer's wake-up at most.
	if d := time.Duration(s.Latency["send_delay"].P90); d > 20*time.Millisecond {
		t.Fatalf("send delay p90 %v: messages waited for the slow send", d)
	}
	if p := time.Duration(s.Latency["produce"].Max); p < 200*time.Millisecond {
		t.Fatalf("produce max %v: the slow send did not happen", p)
	}
}
