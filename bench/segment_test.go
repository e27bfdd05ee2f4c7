package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"qbench/bench"
	"qbench/bench/ledger"
	"qbench/engines/redisq"
	"qbench/results"
)

func TestDealSharesOutEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct {
		n, count int
		want     []results.Span
	}{
		{5, 2, []results.Span{{First: 0, Count: 3}, {First: 3, Count: 2}}}, // the remainder to the first segments
		{4, 4, []results.Span{{First: 0, Count: 1}, {First: 1, Count: 1}, {First: 2, Count: 1}, {First: 3, Count: 1}}},
		{2, 3, []results.Span{{First: 0, Count: 1}, {First: 1, Count: 1}, {First: 2, Count: 0}}},
		{7, 3, []results.Span{{First: 0, Count: 3}, {First: 3, Count: 2}, {First: 5, Count: 2}}},
	} {
		for i, want := range tc.want {
			if got := bench.Deal(tc.n, i, tc.count); got != want {
				t.Errorf("Deal(%d, %d, %d) = %+v, want %+v", tc.n, i, tc.count, got, want)
			}
		}
	}
}

func TestParseSegment(t *testing.T) {
	for _, tc := range []struct {
		in        string
		i, n      int
		wantError bool
	}{
		{"0/4", 0, 4, false}, {"3/4", 3, 4, false}, {"0/1", 0, 1, false},
		{"4/4", 0, 0, true}, {"-1/4", 0, 0, true}, {"1", 0, 0, true}, {"a/b", 0, 0, true}, {"0/0", 0, 0, true},
	} {
		i, n, err := bench.ParseSegment(tc.in)
		if (err != nil) != tc.wantError || i != tc.i || n != tc.n {
			t.Errorf("ParseSegment(%q) = %d, %d, %v", tc.in, i, n, err)
		}
	}
}

func TestCheckSegmentRefuses(t *testing.T) {
	start := time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name, yaml string
		seg        bench.SegmentOptions
		want       string
	}{
		{"a managed engine", "engine: embedded\nproducers: 2\nconsumers: 2\nrate: 100\nduration: 1s\n",
			bench.SegmentOptions{Index: 0, Count: 2, StartAt: start}, "cannot be shared"},
		{"faults", "engine: redis-url\naddress: 127.0.0.1:1\nproducers: 2\nconsumers: 2\nrate: 100\nduration: 1s\nfaults:\n  - {at: 500ms, kind: stall, duration: 100ms}\n",
			bench.SegmentOptions{Index: 0, Count: 2, StartAt: start}, "cannot have faults"},
		{"nothing to run", "engine: redis-url\naddress: 127.0.0.1:1\nproducers: 1\nconsumers: 1\nrate: 100\nduration: 1s\n",
			bench.SegmentOptions{Index: 2, Count: 3, StartAt: start}, "no producer and no consumer"},
		{"no start time", "engine: redis-url\naddress: 127.0.0.1:1\nproducers: 1\nconsumers: 1\nrate: 100\nduration: 1s\n",
			bench.SegmentOptions{Index: 0, Count: 2}, "--start-at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := bench.CheckSegment(scenario(t, tc.yaml), tc.seg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSegment: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Four segments of one run, each with its own engine connection as it would have on its own
// machine, against a redis-server the test starts, merge into the ledger a single-process run of
// the same scenario and seed gives: every message sent, acknowledged and delivered once, although
// most were produced in one segment and consumed in another.
func TestFourSegmentsMergeToTheSingleRunLedger(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, err := redisq.StartRedis(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	for _, design := range []string{"stream", "list", "pubsub"} {
		t.Run(design, func(t *testing.T) {
			yaml := fmt.Sprintf(`
name: segments-%s
engine: redis-url
address: %s
design: %s
producers: 4
consumers: 4
rate: 2000
duration: 1500ms
warmup: 0s
seed: 7
`, design, srv.Addr(), design)
			single := run(t, scenario(t, yaml))
			start := time.Now().Add(time.Second)
			segs := make([]*results.Result, 4)
			errs := make([]error, 4)
			var wg sync.WaitGroup
			for i := range segs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					segs[i], errs[i] = bench.Run(ctx, ctx, scenario(t, yaml), bench.Options{Logf: t.Logf,
						Segment: &bench.SegmentOptions{Index: i, Count: 4, StartAt: start}})
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("segment %d: %v", i, err)
				}
			}
			if segs[0].RunID != segs[3].RunID {
				t.Fatalf("segments derived run IDs %s and %s from one scenario and start", segs[0].RunID, segs[3].RunID)
			}
			merged, err := results.MergeSegments(segs, bench.JoinSegmentLedgers)
			if err != nil {
				t.Fatal(err)
			}
			got, want := merged.Summary.Ledger, single.Summary.Ledger
			t.Logf("single %+v\nmerged %+v", want, got)
			if want.Sent != 3000 || want.Delivered != want.Acked*int64(single.Summary.Groups) {
				t.Fatalf("the single run itself is off: %+v", want)
			}
			for _, f := range []struct {
				name      string
				got, want int64
			}{
				{"sent", got.Sent, want.Sent}, {"acked", got.Acked, want.Acked}, {"failed", got.Failed, want.Failed},
				{"delivered", got.Delivered, want.Delivered}, {"lost", got.Lost, want.Lost},
				{"queued", got.Queued, want.Queued}, {"duplicates", got.Duplicates, want.Duplicates},
				{"phantom", got.Phantom, want.Phantom}, {"delivered_unacked", got.DeliveredUnacked, want.DeliveredUnacked},
			} {
				if f.got != f.want {
					t.Errorf("merged %s = %d, single run %d", f.name, f.got, f.want)
				}
			}
			if crossed := crossSegmentDeliveries(t, segs); crossed == 0 {
				t.Errorf("no message was consumed in another segment than the one that produced it: the test proves nothing")
			}
			// Latency is measured across segments on the engine's clock: a broken shift would
			// show as seconds (or as nothing recorded).
			// (the median, against the single run's: the machine is shared, so its tail is noise).
			e2e, e2e1 := merged.Summary.Latency["e2e"], single.Summary.Latency["e2e"]
			t.Logf("e2e p50 merged %s, single %s; max %s, %s", results.FormatNs(e2e.P50), results.FormatNs(e2e1.P50), results.FormatNs(e2e.Max), results.FormatNs(e2e1.Max))
			if e2e.Count != got.Deliveries || e2e.P50 <= 0 || e2e.P50 > e2e1.P50+int64(50*time.Millisecond) {
				t.Errorf("merged e2e: %d recorded (deliveries %d), p50 %s (single run %s)", e2e.Count, got.Deliveries, results.FormatNs(e2e.P50), results.FormatNs(e2e1.P50))
			}
			for _, s := range merged.Segments {
				if s.Clock.Source != "redis TIME" || s.Clock.BoundNs <= 0 || s.Clock.BoundNs > int64(10*time.Millisecond) {
					t.Errorf("segment %d clock: %+v", s.Index, s.Clock)
				}
			}
			if merged.Merged.ClockBoundNs <= 0 {
				t.Errorf("merged clock bound %d", merged.Merged.ClockBoundNs)
			}
		})
	}
}

// crossSegmentDeliveries counts the messages a segment's consumers received from producers
// another segment ran.
func crossSegmentDeliveries(t *testing.T, segs []*results.Result) int {
	t.Helper()
	var n int
	for _, s := range segs {
		var bk ledger.Book
		if err := json.Unmarshal(s.Segment.Ledger, &bk); err != nil {
			t.Fatal(err)
		}
		p := s.Segment.Producers
		for _, m := range bk.Received {
			if m.Producer < p.First || m.Producer >= p.First+p.Count {
				n++
			}
		}
	}
	return n
}
