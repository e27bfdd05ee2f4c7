package kafkaq

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"qbench/engines"
	"qbench/engines/enginetest"
	"qbench/engines/procs"
)

// These tests talk to a real Kafka broker. TestMain starts one for the package; the crash test
// starts its own through the registered "kafka" engine. Without jars or java they skip, except
// under CI=true, where they fail.

var (
	shared    *procs.Kafka
	sharedErr error
)

func TestMain(m *testing.M) {
	var dir string
	if os.Getenv("QBENCH_KAFKA_TESTS") != "skip" {
		dir, sharedErr = os.MkdirTemp("", "qbench-kafkaq-test-")
		if sharedErr == nil {
			began := time.Now()
			shared, sharedErr = procs.StartKafka(context.Background(), procs.KafkaConfig{
				Dir: dir, Probe: Probe, JVMOptions: testJVM,
			})
			if sharedErr == nil {
				fmt.Fprintf(os.Stderr, "kafkaq test: broker %s pid %d at %s: format+start %v (start alone %v)\n",
					shared.Version(), shared.PID(), shared.Addr(), time.Since(began).Round(time.Millisecond), shared.StartedIn().Round(time.Millisecond))
			}
		}
	} else {
		sharedErr = errors.New("QBENCH_KAFKA_TESTS=skip")
	}
	code := m.Run()
	if shared != nil && code != 0 {
		// The broker's own account of trouble (fencing, errors) explains most failures.
		for _, l := range strings.Split(shared.LogTail(1<<22), "\n") {
			if strings.Contains(l, " WARN ") || strings.Contains(l, " ERROR ") || strings.Contains(l, "Fencing") {
				fmt.Fprintln(os.Stderr, "broker.log:", l[:min(len(l), 300)])
			}
		}
	}
	if shared != nil {
		_ = shared.Stop(10 * time.Second)
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// testJVM trims the heap; the default flags are otherwise kept so tests run what benchmarks run.
var testJVM = append([]string{"-Xms256m", "-Xmx512m"}, procs.DefaultKafkaJVMOptions[2:]...)

func needBroker(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("kafka broker unavailable under CI=true: %v", err)
	}
	t.Skipf("kafka broker unavailable (run .ci/kafka-jars.sh; needs java): %v", err)
}

var runSeq int

// newTestEngine sets up a topic for spec on the shared broker.
func newTestEngine(t testing.TB, spec engines.Spec) *engine {
	t.Helper()
	needBroker(t, sharedErr)
	runSeq++
	spec.RunID = fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"), os.Getpid(), runSeq)
	opts, err := optionsOf(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine("kafka-url", spec, opts, []string{shared.Addr()}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Setup(ctx); err != nil {
		e.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cerr := e.Close()
		if err := e.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
		if cerr != nil {
			t.Errorf("close: %v", cerr)
		}
	})
	return e
}

func payload(producer uint32, seq uint64) []byte {
	b := make([]byte, 12, 64)
	binary.BigEndian.PutUint32(b, producer)
	binary.BigEndian.PutUint64(b[4:], seq)
	return b[:64] // a realistic, fixed size
}

type rec struct {
	producer  uint32
	seq       uint64
	partition int
	offset    int64
	consumer  int
}

type key struct {
	producer uint32
	seq      uint64
}

// produce sends n messages per producer in batches and fails the test on any error.
func produce(t testing.TB, e engines.Engine, producers, n, batch int, firstSeq uint64) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	began := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, producers)
	for id := range producers {
		p, err := e.NewProducer(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer p.Close()
			for s := 0; s < n; s += batch {
				k := min(batch, n-s)
				ps := make([][]byte, k)
				for i := range ps {
					ps[i] = payload(uint32(id), firstSeq+uint64(s+i))
				}
				errs := make([]error, k)
				p.Send(ctx, ps, errs)
				if err := errors.Join(errs...); err != nil {
					errc <- fmt.Errorf("producer %d seq %d: %w", id, s, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	return time.Since(began)
}

// consume runs the consumers until want distinct messages have arrived and then for quiet more,
// so that duplicates arriving late are seen. ackEvery acks every delivery when true.
func consume(t testing.TB, cs []engines.Consumer, want int, ack bool, quiet time.Duration) []rec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		out      []rec
		distinct = map[key]bool{}
		enough   = make(chan struct{})
		once     sync.Once
	)
	stop, stopNow := context.WithCancel(ctx)
	defer stopNow()
	var wg sync.WaitGroup
	errc := make(chan error, len(cs))
	for ci, c := range cs {
		wg.Go(func() {
			for {
				ds, err := c.Receive(stop)
				if err != nil {
					if stop.Err() == nil {
						errc <- err
					}
					return
				}
				mu.Lock()
				for _, d := range ds {
					o := d.Handle.(offset)
					r := rec{binary.BigEndian.Uint32(d.Payload), binary.BigEndian.Uint64(d.Payload[4:]), o.partition, o.offset, ci}
					out = append(out, r)
					distinct[key{r.producer, r.seq}] = true
				}
				if len(distinct) >= want {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
				if ack {
					// Like the runner: an acknowledgement in flight completes after the stop.
					if err := c.Ack(context.WithoutCancel(stop), ds); err != nil {
						errc <- err
						return
					}
				}
			}
		})
	}
	select {
	case <-enough:
		select {
		case <-time.After(quiet):
		case err := <-errc:
			t.Fatal(err)
		}
	case err := <-errc:
		t.Fatal(err)
	case <-ctx.Done():
		mu.Lock()
		got := len(distinct)
		mu.Unlock()
		t.Fatalf("consumed %d of %d distinct messages before the deadline", got, want)
	}
	stopNow()
	wg.Wait()
	return out
}

func openConsumers(t testing.TB, e engines.Engine, n int) []engines.Consumer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs := make([]engines.Consumer, n)
	for i := range cs {
		c, err := e.NewConsumer(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	return cs
}

func closeAll(t testing.TB, cs []engines.Consumer) {
	t.Helper()
	for _, c := range cs {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}

// checkExactlyOnce checks that every message 0..n-1 of every producer arrived exactly once, and
// that within each partition each producer's messages arrived in the order they were sent.
func checkExactlyOnce(t testing.TB, recs []rec, producers, n int, firstSeq uint64) {
	t.Helper()
	seen := map[key]int{}
	type pp struct {
		partition int
		producer  uint32
	}
	last := map[pp]uint64{}
	for _, r := range recs {
		seen[key{r.producer, r.seq}]++
		k := pp{r.partition, r.producer}
		if prev, ok := last[k]; ok && r.seq <= prev {
			t.Errorf("partition %d producer %d: seq %d after %d", r.partition, r.producer, r.seq, prev)
		}
		last[k] = r.seq
	}
	lost, dup := 0, 0
	for p := range producers {
		for s := range n {
			switch c := seen[key{uint32(p), firstSeq + uint64(s)}]; {
			case c == 0:
				lost++
			case c > 1:
				dup += c - 1
			}
		}
	}
	if lost != 0 || dup != 0 || len(seen) != producers*n {
		t.Errorf("lost %d, duplicates %d, distinct %d (want %d)", lost, dup, len(seen), producers*n)
	}
}

func waitLag(t *testing.T, e engines.LagReporter, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var lag engines.Lag
	var err error
	for ctx.Err() == nil {
		if lag, err = e.Lag(ctx); err == nil && lag.Backlog == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("lag %+v (err %v), want backlog %d", lag, err, want)
}

func TestNoLossNoDuplicatesPartitionOrder(t *testing.T) {
	const producers, consumers, n, batch = 2, 3, 5000, 100
	e := newTestEngine(t, engines.Spec{Producers: producers, Consumers: consumers,
		Options: kafkaOptions(t, "acks: all")})
	cs := openConsumers(t, e, consumers) // the last one waits until the group is stable
	defer closeAll(t, cs)

	began := time.Now()
	var recs []rec
	done := make(chan struct{})
	go func() {
		defer close(done)
		recs = consume(t, cs, producers*n, true, 500*time.Millisecond)
	}()
	took := produce(t, e, producers, n, batch, 0)
	<-done
	t.Logf("acks=all, %d partitions, batch %d: produced %d in %v (%.0f msg/s); all consumed and committed %v after the start",
		consumers, batch, producers*n, took.Round(time.Millisecond), float64(producers*n)/took.Seconds(), (time.Since(began) - 500*time.Millisecond).Round(time.Millisecond))
	checkExactlyOnce(t, recs, producers, n, 0)
	waitLag(t, e, 0)
	parts := map[int]bool{}
	for _, r := range recs {
		parts[r.partition] = true
	}
	if len(parts) != consumers {
		t.Errorf("messages on %d partitions, want %d", len(parts), consumers)
	}
}

func TestRedeliveryAfterConsumerDiesBeforeCommit(t *testing.T) {
	const n, acked = 100, 40
	e := newTestEngine(t, engines.Spec{Producers: 1, Consumers: 1, Options: kafkaOptions(t, "partitions: 1")})
	produce(t, e, 1, n, n, 0)
	waitLag(t, e, n)

	// The first consumer gets everything and commits only the first 40, then dies.
	first := openConsumers(t, e, 1)
	recs := consume(t, first, n, false, 0)
	byOffset := map[int64]engines.Delivery{}
	for _, r := range recs {
		byOffset[r.offset] = engines.Delivery{Handle: offset{r.partition, r.offset}}
	}
	if err := first[0].Ack(context.Background(), []engines.Delivery{byOffset[acked-1]}); err != nil {
		t.Fatal(err)
	}
	waitLag(t, e, n-acked)
	closeAll(t, first)

	// Its replacement must get exactly the 60 uncommitted messages, from offset 40 on.
	second := openConsumers(t, e, 1)
	defer closeAll(t, second)
	again := consume(t, second, n-acked, true, 300*time.Millisecond)
	if len(again) != n-acked || again[0].offset != acked || again[0].seq != acked {
		t.Fatalf("redelivered %d messages starting at offset %d, want %d from offset %d", len(again), again[0].offset, n-acked, acked)
	}
	checkExactlyOnce(t, again, 1, n-acked, acked)
	waitLag(t, e, 0)
}

func TestResumeFromCommittedOffsets(t *testing.T) {
	const consumers, n = 2, 300
	e := newTestEngine(t, engines.Spec{Producers: 1, Consumers: consumers})
	cs := openConsumers(t, e, consumers)
	produce(t, e, 1, n, 50, 0)
	checkExactlyOnce(t, consume(t, cs, n, true, 0), 1, n, 0)
	waitLag(t, e, 0)
	closeAll(t, cs)

	// With every consumer gone, produce more; a new generation of consumers must start where
	// the old one committed: the new messages only, each once.
	produce(t, e, 1, n, 50, n)
	waitLag(t, e, n)
	cs = openConsumers(t, e, consumers)
	defer closeAll(t, cs)
	checkExactlyOnce(t, consume(t, cs, n, true, 500*time.Millisecond), 1, n, n)
	waitLag(t, e, 0)
}

func TestManagedBrokerCrashAndRestart(t *testing.T) {
	needBroker(t, sharedErr) // same prerequisites as the shared broker
	t.Setenv("QBENCH_KAFKA_DATA", t.TempDir())
	reg, err := engines.Lookup("kafka")
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	began := time.Now()
	eng, err := reg.New(ctx, engines.Spec{RunID: fmt.Sprintf("crash-%d", os.Getpid()), Design: Design, Producers: 1, Consumers: 2,
		Options: kafkaOptions(t, "acks: all\nbroker: {log.flush.interval.messages: \"1\"}\nflush_messages: 1")})
	if err != nil {
		t.Fatal(err)
	}
	m := eng.(*managed)
	pid := m.cluster.Nodes[0].PID()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker.log tail:\n%s", m.cluster.Nodes[0].LogTail(8000))
		}
		began := time.Now()
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
		t.Logf("Close (SIGTERM, controlled shutdown) took %v", time.Since(began).Round(time.Millisecond))
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("broker pid %d survived Close", pid)
		}
	})
	t.Logf("managed broker up in %v (start alone %v)", time.Since(began).Round(time.Millisecond), m.cluster.Nodes[0].StartedIn().Round(time.Millisecond))
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	f := m.Facts(ctx)
	if f.Version != shared.Version() || f.Settings["broker.log.flush.interval.messages"] != "1" || f.Settings["topic.flush.messages"] != "1" {
		t.Errorf("facts %+v", f)
	}

	// Consumers and one producer live through the crash, as in a run with a crash fault.
	cs := openConsumers(t, eng, 2)
	defer closeAll(t, cs)
	survivor, err := eng.NewProducer(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Close()
	produce(t, eng, 1, n, 100, 0)
	checkExactlyOnce(t, consume(t, cs, n, true, 0), 1, n, 0)

	if err := m.Crash(ctx, engines.PowerLoss); err == nil {
		t.Error("power-loss crash accepted without a lossy file system")
	}
	if err := m.Crash(ctx, engines.ProcessCrash); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("broker pid %d alive after Crash", pid)
	}
	began = time.Now()
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pid = m.cluster.Nodes[0].PID()
	t.Logf("restart after SIGKILL (log recovery) answered in %v", time.Since(began).Round(time.Millisecond))

	// The producer opened before the crash gets through (kafka-go retries on the dead
	// connections); new writes land; the same consumers get exactly the new messages, from
	// the offsets committed before the crash.
	const extra = 10
	ps := make([][]byte, extra)
	for i := range ps {
		ps[i] = payload(0, uint64(n+i))
	}
	errs := make([]error, extra)
	began = time.Now()
	survivor.Send(ctx, ps, errs)
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("first Send after restart: %v", err)
	}
	t.Logf("first Send after restart on a producer opened before the crash took %v", time.Since(began).Round(time.Millisecond))
	produce(t, eng, 1, n, 100, n+extra)
	checkExactlyOnce(t, consume(t, cs, n+extra, true, 300*time.Millisecond), 1, n+extra, n)
	waitLag(t, m, 0)
	if err := eng.Teardown(ctx); err != nil {
		t.Error(err)
	}
}

// kafkaOptions decodes a kafka: section the way scenario validation does (strictly, through the
// registration's Decode).
func kafkaOptions(t testing.TB, section string) Options {
	t.Helper()
	o, err := decodeSection(section, true)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func decodeSection(section string, managed bool) (Options, error) {
	v, err := decodeFor(managed)(enginetest.Section(section))
	if err != nil {
		return Options{}, err
	}
	return v.(Options), nil
}

// parseSection decodes a kafka: section and resolves it for 3 consumers, as New does.
func parseSection(section string, consumers int, managed bool) (options, error) {
	o, err := decodeSection(section, managed)
	if err != nil {
		if _, joined := err.(interface{ Unwrap() []error }); joined {
			err = named(err)
		}
		return options{}, err
	}
	r, err := resolve(o, consumers, managed)
	return r, named(err)
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       string
		managed bool
		wantErr string
		check   func(options) bool
	}{
		{name: "defaults", p: "", managed: true, check: func(o options) bool {
			return acksName(o.acks) == "all" && o.partitions == 3 && o.replicationFactor == 1 && o.brokers == 1 && o.linger == minLinger
		}},
		{name: "acks leader", p: "acks: leader", check: func(o options) bool { return acksName(o.acks) == "leader" }},
		{name: "acks 0", p: "acks: 0", check: func(o options) bool { return acksName(o.acks) == "none" }},
		{name: "bad acks", p: "acks: 2", wantErr: "acks"},
		{name: "partitions", p: "partitions: 8", check: func(o options) bool { return o.partitions == 8 }},
		{name: "negative partitions", p: "partitions: -1", wantErr: "at least 1"},
		{name: "linger", p: "linger: 5ms", check: func(o options) bool { return o.linger == 5*time.Millisecond }},
		{name: "linger 0 is no linger, not kafka-go's 1s", p: "linger: 0s", check: func(o options) bool { return o.linger == minLinger }},
		{name: "broker flush", p: "broker: {log.flush.interval.ms: \"1000\", num.io.threads: \"4\"}", managed: true,
			check: func(o options) bool {
				return o.broker["log.flush.interval.ms"] == "1000" && o.broker["num.io.threads"] == "4"
			}},
		{name: "broker settings need the managed broker", p: "broker: {log.flush.interval.messages: \"1\"}", wantErr: "managed broker"},
		{name: "topic configs", p: "flush_messages: 1\ntopic: {segment.bytes: \"1048576\"}",
			check: func(o options) bool { return o.topic["flush.messages"] == "1" && o.topic["segment.bytes"] == "1048576" }},
		{name: "compression", p: "compression: zstd", check: func(o options) bool { return compressionName(o.compression) == "zstd" }},
		{name: "partitioning", p: "partitioning: producer", check: func(o options) bool { return o.byProducer }},
		{name: "bad partitioning", p: "partitioning: hash", wantErr: "round-robin or producer"},
		{name: "commit interval", p: "commit_interval: 100ms", check: func(o options) bool { return o.commitInterval == 100*time.Millisecond }},
		{name: "unknown key", p: "appendfsync: always", wantErr: `appendfsync`},
		{name: "cluster of three replicates three times", p: "brokers: 3", managed: true,
			check: func(o options) bool { return o.brokers == 3 && o.replicationFactor == 3 }},
		{name: "five brokers still three copies", p: "brokers: 5", managed: true,
			check: func(o options) bool { return o.replicationFactor == 3 }},
		{name: "too many brokers", p: "brokers: 9", managed: true, wantErr: "1 to 5 nodes"},
		{name: "brokers need the managed cluster", p: "brokers: 3", wantErr: "managed cluster"},
		{name: "more copies than brokers", p: "brokers: 2\nreplication_factor: 3", managed: true, wantErr: "more copies"},
		{name: "kafka-url replication unset until Setup", p: "", check: func(o options) bool { return o.replicationFactor == 0 }},
		{name: "min ISR above replication", p: "brokers: 3\nmin_insync_replicas: 4", managed: true, wantErr: "no acks=all write"},
		{name: "min ISR 2 of 3", p: "brokers: 3\nmin_insync_replicas: 2", managed: true,
			check: func(o options) bool { return o.topic["min.insync.replicas"] == "2" }},
		{name: "unclean election", p: "unclean_leader_election: true",
			check: func(o options) bool { return o.topic["unclean.leader.election.enable"] == "true" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseSection(tc.p, 3, tc.managed)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Errorf("options %+v", o)
			}
		})
	}
}

// A bad value names its key (Field), so scenario validation can point at its line; every bad
// key is reported, not only the first.
func TestOptionErrorsNameTheirKeys(t *testing.T) {
	_, err := decodeSection("acks: some\nbatch_size: 0\nlinger: -1ms", true)
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe interface{ Field() string }
		if errors.As(e, &fe) {
			fields = append(fields, fe.Field())
		}
	}
	if strings.Join(fields, ",") != "acks,batch_size,linger" {
		t.Fatalf("fields %v from %v", fields, err)
	}
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"kafka", "kafka-url"} {
		r, err := engines.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Supports(Design) {
			t.Errorf("%s does not support %s", name, Design)
		}
		// Only the managed cluster can kill its brokers; validation refuses the faults elsewhere.
		for _, kind := range []string{"partition-leader-kill", "node-restart"} {
			if got, want := slices.Contains(r.Faults, kind), name == "kafka"; got != want {
				t.Errorf("%s lists fault %s: %v, want %v", name, kind, got, want)
			}
		}
	}
}

func TestReceiveReturnsWhenIdle(t *testing.T) {
	e := newTestEngine(t, engines.Spec{Producers: 1, Consumers: 1})
	cs := openConsumers(t, e, 1)
	defer closeAll(t, cs)
	for range 3 {
		began := time.Now()
		ds, err := cs[0].Receive(context.Background())
		took := time.Since(began)
		if err != nil || len(ds) != 0 {
			t.Fatalf("Receive on an empty topic = %d deliveries, %v", len(ds), err)
		}
		if took > 250*time.Millisecond {
			t.Errorf("Receive waited %v on an empty topic, want about %v", took, receiveWait)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cs[0].Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Receive with a canceled ctx = %v", err)
	}
}

// TestSendReportsErrorsPerMessage puts two messages on two partitions whose topic accepts only
// small batches: the small one is acknowledged, the big one fails, and Send says which is which.
func TestSendReportsErrorsPerMessage(t *testing.T) {
	e := newTestEngine(t, engines.Spec{Producers: 1, Consumers: 1,
		Options: kafkaOptions(t, "partitions: 2\ntopic: {max.message.bytes: \"1000\"}")})
	ctx := context.Background()
	p, err := e.NewProducer(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	errs := make([]error, 2)
	p.Send(ctx, [][]byte{payload(0, 0), make([]byte, 4000)}, errs) // round robin: p0, then p1
	if errs[0] != nil || errs[1] == nil {
		t.Fatalf("errs = %v, want [nil, message too large]", errs)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p.Send(ctx, [][]byte{payload(0, 1)}, errs[:1])
	if errs[0] == nil {
		t.Error("Send after Close succeeded")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestURLEngineThroughRegistry(t *testing.T) {
	needBroker(t, sharedErr)
	reg, err := engines.Lookup("kafka-url")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec := engines.Spec{RunID: fmt.Sprintf("url-%d", os.Getpid()), Design: Design, Producers: 1, Consumers: 1,
		Address: " " + shared.Addr() + " ,", Options: kafkaOptions(t, "acks: leader\nflush_messages: 10")}
	for _, bad := range []engines.Spec{
		{Design: Design, Address: ""},
		{Design: "stream", Address: shared.Addr()},
		{Design: Design, Address: shared.Addr(), Options: Options{Acks: "all", ReplicationFactor: 1, BatchSize: 1, BatchMessages: 1, Broker: map[string]string{"log.flush.interval.messages": "1"}}},
	} {
		if e, err := reg.New(ctx, bad); err == nil {
			e.Close()
			t.Errorf("New(%+v) succeeded", bad)
		}
	}
	eng, err := reg.New(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, ok := eng.(engines.Crasher); ok {
		t.Error("kafka-url claims it can crash a cluster it does not own")
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	f := eng.(engines.FactReporter).Facts(ctx)
	if f.Name != "kafka-url" || f.Settings["acks"] != "leader" || f.Settings["topic.flush.messages"] != "10" ||
		f.Settings["broker.log.flush.interval.messages"] != "9223372036854775807" {
		t.Errorf("facts %+v", f)
	}
	produce(t, eng, 1, 10, 10, 0)
	waitLag(t, eng.(engines.LagReporter), 10)
	if err := eng.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTopicName(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ runID, want string }{
		{"20261201-a.b_c", "qbench-20261201-a.b_c"},
		{"2026-12-01T00:30:00Z", "qbench-2026-12-01T00_30_00Z-"},
		{"a/b=c", "qbench-a_b_c-"},
		{long, "qbench-xxx"},
	} {
		got := topicName(tc.runID)
		if !strings.HasPrefix(got, tc.want) || len(got) > 249 || strings.ContainsAny(got, ":/= ") {
			t.Errorf("topicName(%q) = %q, want prefix %q", tc.runID, got, tc.want)
		}
	}
	if topicName("a:b") == topicName("a/b") {
		t.Error("distinct run IDs map to one topic")
	}
}

// With partitioning=producer each producer's messages stay on one partition, so per-producer
// order holds across the whole topic, as with one Redis stream.
func TestPartitioningByProducer(t *testing.T) {
	const producers, n = 2, 500
	e := newTestEngine(t, engines.Spec{Producers: producers, Consumers: 1,
		Options: kafkaOptions(t, "partitions: 2\npartitioning: producer")})
	cs := openConsumers(t, e, 1)
	defer closeAll(t, cs)
	produce(t, e, producers, n, 10, 0)
	recs := consume(t, cs, producers*n, true, 200*time.Millisecond)
	checkExactlyOnce(t, recs, producers, n, 0)
	partOf := map[uint32]int{}
	for _, r := range recs {
		if p, ok := partOf[r.producer]; ok && p != r.partition {
			t.Fatalf("producer %d on partitions %d and %d", r.producer, p, r.partition)
		}
		partOf[r.producer] = r.partition
	}
	if partOf[0] == partOf[1] {
		t.Errorf("both producers on partition %d", partOf[0])
	}
}
