package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

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
		{"a fault given to a segment the run lacks", "engine: redis-url\naddress: 127.0.0.1:1\nproducers: 2\nconsumers: 2\nrate: 100\nduration: 1s\nfaults:\n  - {at: 500ms, kind: stall, duration: 100ms, segment: 2}\n",
			bench.SegmentOptions{Index: 0, Count: 2, StartAt: start}, "faults.0.segment: segment 2 fires this stall, but the run has 2 segment(s)"},
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
	srv, err := redisq.StartRedis(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	for _, design := range []string{"stream", "list", "pubsub"} {
		t.Run(design, func(t *testing.T) {
			merged := segmentsMatchSingle(t, fmt.Sprintf(`
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
`, design, srv.Addr(), design), 4, 3000, 2*time.Second)
			for _, s := range merged.Segments {
				if s.Clock.Source != "redis TIME" || s.Clock.BoundNs <= 0 || s.Clock.BoundNs > int64(10*time.Millisecond) {
					t.Errorf("segment %d clock: %+v", s.Index, s.Clock)
				}
				// The server shares this machine's clock: the true offset is 0, which the
				// estimate must hold within its bound.
				if off := s.Clock.OffsetNs; off > s.Clock.BoundNs || -off > s.Clock.BoundNs {
					t.Errorf("segment %d: offset %d ns outside its bound %d ns of the true 0", s.Index, off, s.Clock.BoundNs)
				}
			}
			if merged.Merged.ClockBoundNs <= 0 {
				t.Errorf("merged clock bound %d", merged.Merged.ClockBoundNs)
			}
		})
	}
}

// Two segments on Kafka (the package's shared broker): both set up the same topic (the second finds it made), their consumers
// share one group, and the merge equals a single run. Each estimates its clock against the broker's
// LogAppendTime (the first to ask creates the clock topic, the other finds it).
func TestKafkaSegmentsMergeToTheSingleRunLedger(t *testing.T) {
	needKafka(t)
	addr := kafkaAddr(t)
	yaml := fmt.Sprintf(`
name: segments-kafka
engine: kafka-url
address: %s
producers: 2
consumers: 2
rate: 500
duration: 2s
warmup: 0s
seed: 7
`, addr)
	merged := segmentsMatchSingle(t, yaml, 2, 1000, 15*time.Second)
	for _, s := range merged.Segments {
		if s.Clock.Source != "kafka LogAppendTime" || s.Clock.BoundNs < int64(time.Millisecond/2) || s.Clock.BoundNs > int64(100*time.Millisecond) {
			t.Errorf("segment %d clock: %+v, want the broker's with a bound of at least its millisecond", s.Index, s.Clock)
		}
		// The broker shares this machine's clock: the true offset is 0.
		if off := s.Clock.OffsetNs; off > s.Clock.BoundNs || -off > s.Clock.BoundNs {
			t.Errorf("segment %d: offset %d ns outside its bound %d ns of the true 0", s.Index, off, s.Clock.BoundNs)
		}
	}
	if merged.Merged.ClockBoundNs < int64(time.Millisecond/2) {
		t.Errorf("merged clock bound %d, want at least the broker clock's millisecond", merged.Merged.ClockBoundNs)
	}
	// The run's tear-down, once the segments are done, removes its clock topic with its topic.
	if got := runTopics(t, addr, merged.RunID); len(got) != 2 {
		t.Errorf("topics of run %s before its tear-down: %v, want its topic and its clock topic", merged.RunID, got)
	}
	if err := bench.Teardown(context.Background(), scenario(t, yaml), merged.RunID); err != nil {
		t.Fatal(err)
	}
	// DeleteTopics returns once the controller has the deletion; the broker's metadata (which
	// lists topics) follows a moment later, more on a loaded machine.
	got := runTopics(t, addr, merged.RunID)
	for deadline := time.Now().Add(10 * time.Second); len(got) != 0 && time.Now().Before(deadline); got = runTopics(t, addr, merged.RunID) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(got) != 0 {
		t.Errorf("topics left 10 s after the run's tear-down: %v", got)
	}
}

// runTopics lists the topics on the broker at addr whose names hold runID.
func runTopics(t *testing.T, addr, runID string) []string {
	t.Helper()
	conn, err := kafka.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ps, err := conn.ReadPartitions()
	if err != nil {
		t.Fatal(err)
	}
	var topics []string
	for _, p := range ps { // one per partition
		if strings.Contains(p.Topic, runID) && !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	return topics
}

// segmentsMatchSingle runs the scenario once in one process and once as n segments (in
// goroutines, each with its own engine, starting lead from now: time for all to set up), merges
// the segments, and checks the merged ledger against the single run's, which must have sent want
// messages.
func segmentsMatchSingle(t *testing.T, yaml string, n int, want int64, lead time.Duration) *results.Result {
	t.Helper()
	ctx := context.Background()
	single := run(t, scenario(t, yaml))
	start := time.Now().Add(lead)
	segs := make([]*results.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segs[i], errs[i] = bench.Run(ctx, ctx, scenario(t, yaml), bench.Options{Logf: t.Logf,
				Segment: &bench.SegmentOptions{Index: i, Count: n, StartAt: start}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	if segs[0].RunID != segs[n-1].RunID {
		t.Fatalf("segments derived run IDs %s and %s from one scenario and start", segs[0].RunID, segs[n-1].RunID)
	}
	merged, err := results.MergeSegments(segs, bench.JoinSegmentLedgers)
	if err != nil {
		t.Fatal(err)
	}
	got, one := merged.Summary.Ledger, single.Summary.Ledger
	t.Logf("single %+v\nmerged %+v", one, got)
	if one.Sent != want || one.Delivered != one.Acked*int64(single.Summary.Groups) {
		t.Fatalf("the single run itself is off: %+v", one)
	}
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"sent", got.Sent, one.Sent}, {"acked", got.Acked, one.Acked}, {"failed", got.Failed, one.Failed},
		{"delivered", got.Delivered, one.Delivered}, {"lost", got.Lost, one.Lost},
		{"queued", got.Queued, one.Queued}, {"duplicates", got.Duplicates, one.Duplicates},
		{"phantom", got.Phantom, one.Phantom}, {"delivered_unacked", got.DeliveredUnacked, one.DeliveredUnacked},
	} {
		if f.got != f.want {
			t.Errorf("merged %s = %d, single run %d", f.name, f.got, f.want)
		}
	}
	if crossed := crossSegmentDeliveries(t, segs); crossed == 0 {
		t.Errorf("no message was consumed in another segment than the one that produced it: the test proves nothing")
	}
	// Every delivery's latency is recorded, and is of the single run's order (the median, with
	// room: the machine is shared, and a Kafka group's first rebalance is seconds). The clock
	// arithmetic itself is TestStampShiftPutsLatencyOnTheEngineClock's.
	e2e, e2e1 := merged.Summary.Latency["e2e"], single.Summary.Latency["e2e"]
	t.Logf("e2e p50 merged %s, single %s; max %s, %s", results.FormatNs(e2e.P50), results.FormatNs(e2e1.P50), results.FormatNs(e2e.Max), results.FormatNs(e2e1.Max))
	if e2e.Count != got.Deliveries || e2e.P50 <= 0 || e2e.P50 > e2e1.P50+int64(time.Second) {
		t.Errorf("merged e2e: %d recorded (deliveries %d), p50 %s (single run %s)", e2e.Count, got.Deliveries, results.FormatNs(e2e.P50), results.FormatNs(e2e1.P50))
	}
	return merged
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

// Segments that start late (here 300 ms after the shared instant, as a slow set-up would) judge
// the warm-up on the shared clock on both sides: the merged produce count (messages intended
// after the warm-up, acknowledged) equals the merged end-to-end count (their deliveries), where
// producers judging it on their own epoch measured 600 fewer than the consumers did.
func TestLateSegmentsAgreeOnTheWarmup(t *testing.T) {
	needTarget(t, "redis")
	srv, err := redisq.StartRedis(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	yaml := fmt.Sprintf("name: late-segments\nengine: redis-url\naddress: %s\ndesign: stream\nproducers: 2\nconsumers: 2\nrate: 2000\nduration: 1500ms\nwarmup: 500ms\nseed: 7\n", srv.Addr())
	ctx := context.Background()
	start := time.Now().Add(-300 * time.Millisecond)
	segs := make([]*results.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segs[i], errs[i] = bench.Run(ctx, ctx, scenario(t, yaml), bench.Options{Logf: t.Logf,
				Segment: &bench.SegmentOptions{Index: i, Count: 2, StartAt: start}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	merged, err := results.MergeSegments(segs, bench.JoinSegmentLedgers)
	if err != nil {
		t.Fatal(err)
	}
	l, lat := merged.Summary.Ledger, merged.Summary.Latency
	if l.Duplicates != 0 || l.Delivered != l.Acked || l.Acked != 3000 {
		t.Fatalf("ledger %+v: the counts below compare only when every message was delivered once", l)
	}
	if p, e := lat["produce"].Count, lat["e2e"].Count; p != e || p == 0 || p == l.Acked {
		t.Errorf("merged produce count %d, e2e count %d (of %d acknowledged): want them equal, the warm-up left out of both", p, e, l.Acked)
	}
}
