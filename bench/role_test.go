package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"

	"qbench/bench"
	"qbench/engines/redisq"
	"qbench/results"
	"qbench/scenarios"
)

// startRedisWithClient starts a redis-server in a temp dir and a client to it, both closed
// when the test ends.
func startRedisWithClient(t *testing.T) (*redisq.ManagedRedis, *redis.Client) {
	t.Helper()
	srv, err := redisq.StartRedis(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { client.Close() })
	return srv, client
}

// A produce-only run into a named stream and list of an existing redis-server, then a
// consume-only run from them: the second delivers exactly the first's acknowledged messages,
// once each, and counts what else it read (not stamped, or another run's stamp) as foreign. Each
// half reports only what it can know, and neither deletes the named keys.
func TestProduceOnlyThenConsumeOnly(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, client := startRedisWithClient(t)

	otherRun := make([]byte, 64)
	bench.Stamp{RunTag: 12345, Producer: 0, Seq: 0}.Encode(otherRun)
	foreign := [][]byte{[]byte("not a qbench message"), otherRun, []byte("qbm1 short")}

	cases := []struct {
		design, names, key string
		push               func(payload []byte) error
	}{
		{"stream", "{stream: orders, group: billing}", "orders", func(p []byte) error {
			return client.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: []any{"d", p}}).Err()
		}},
		{"list", "{list: jobs}", "jobs", func(p []byte) error { return client.LPush(ctx, "jobs", p).Err() }},
	}
	for _, c := range cases {
		t.Run(c.design, func(t *testing.T) {
			produced := run(t, scenario(t, fmt.Sprintf(`
engine: redis-url
address: %s
design: %s
role: produce
names: %s
producers: 2
rate: 1000
duration: 1s
`, srv.Addr(), c.design, c.names)))
			pl := produced.Summary.Ledger
			if pl.Acked != 1000 || pl.Delivered != 0 || produced.Summary.Role != "produce" || !slices.Contains(produced.Summary.NotKnown, "lost") {
				t.Fatalf("produce-only: ledger %+v, role %q, not known %v", pl, produced.Summary.Role, produced.Summary.NotKnown)
			}
			if n, _ := client.Exists(ctx, c.key).Result(); n != 1 {
				t.Fatalf("the produce-only run deleted %s", c.key)
			}
			for _, f := range foreign {
				if err := c.push(f); err != nil {
					t.Fatal(err)
				}
			}
			consumed := run(t, scenario(t, fmt.Sprintf(`
engine: redis-url
address: %s
design: %s
role: consume
names: %s
producers: 2
consumers: 2
duration: 1s
`, srv.Addr(), c.design, c.names)))
			cl := consumed.Summary.Ledger
			if cl.Delivered != pl.Acked || cl.Duplicates != 0 || cl.Foreign != int64(len(foreign)) || cl.Phantom != 0 || cl.Lost != 0 || cl.Unknown != 0 {
				t.Fatalf("consume-only: ledger %+v, want the %d produced delivered once and %d foreign", cl, pl.Acked, len(foreign))
			}
			if consumed.Summary.Role != "consume" || !slices.Contains(consumed.Summary.NotKnown, "sent") {
				t.Fatalf("consume-only: role %q, not known %v", consumed.Summary.Role, consumed.Summary.NotKnown)
			}
			if c.design == "stream" {
				if n, _ := client.XLen(ctx, c.key).Result(); n != pl.Acked+int64(len(foreign)) {
					t.Fatalf("the stream holds %d entries after the runs", n)
				}
			}
		})
	}
}

// The documented pair, scenarios/library/workloads/role-produce.yaml then role-consume.yaml (shortened, against a
// redis-server started here), hands over every message once.
func TestRoleScenarioPair(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, err := redisq.StartRedis(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var acked int64
	for _, f := range []string{"role-produce.yaml", "role-consume.yaml"} {
		sc, err := scenarios.Load(libraryDir+"/workloads/"+f, bench.Checks())
		if err != nil {
			t.Fatal(err)
		}
		sc.Address = srv.Addr()
		shorten(sc, time.Second)
		l := run(t, sc).Summary.Ledger
		if sc.Produces() {
			acked = l.Acked
			continue
		}
		if acked == 0 || l.Delivered != acked || l.Duplicates != 0 || l.Foreign != 0 {
			t.Fatalf("%s: ledger %+v after %d produced", f, l, acked)
		}
	}
}

// The same hand-over through a named Kafka topic and group on the package's shared broker: the
// topic is created by the produce-only run and survives both runs.
func TestProduceOnlyThenConsumeOnlyKafka(t *testing.T) {
	needKafka(t)
	ctx := context.Background()
	// A topic of this run's own: the shared broker keeps the topic after the test.
	addr, topic := kafkaAddr(t), fmt.Sprintf("orders-%d-%d", os.Getpid(), kafkaRuns.Add(1))
	produced := run(t, scenario(t, fmt.Sprintf(`
engine: kafka-url
address: %s
role: produce
names: {topic: %s}
producers: 2
rate: 500
duration: 1s
`, addr, topic)))
	pl := produced.Summary.Ledger
	if pl.Acked != 500 || produced.Summary.Role != "produce" {
		t.Fatalf("produce-only: ledger %+v", pl)
	}
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll}
	otherRun := make([]byte, 64)
	bench.Stamp{RunTag: 999, Seq: 1}.Encode(otherRun)
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("someone else's")}, kafka.Message{Value: otherRun}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	consumed := run(t, scenario(t, fmt.Sprintf(`
engine: kafka-url
address: %s
role: consume
names: {topic: %s, group: billing}
producers: 2
consumers: 1
duration: 3s
drain_timeout: 10s
`, addr, topic)))
	cl := consumed.Summary.Ledger
	if cl.Delivered != pl.Acked || cl.Duplicates != 0 || cl.Foreign != 2 {
		t.Fatalf("consume-only: ledger %+v, want %d delivered once and 2 foreign", cl, pl.Acked)
	}
	conn, err := kafka.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if ps, err := conn.ReadPartitions(topic); err != nil || len(ps) == 0 {
		t.Fatalf("the named topic is gone after the runs: %v %v", ps, err)
	}
}

// floor-produce.yaml and floor-consume.yaml at once (shortened, against a redis-server started
// here), each segment 0/1 of one run ID and start, as floor-vs-redis-benchmark.sh runs them: the
// stamps are on the shared clock, so the consume-only half records the end-to-end latency of
// every delivery after the warm-up, of a sane size, and does not call it unknown.
func TestConsumeOnlySegmentRecordsE2E(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, _ := startRedisWithClient(t)
	load := func(f string) *scenarios.Scenario {
		sc, err := scenarios.Load(libraryDir+"/generator/"+f, bench.Checks())
		if err != nil {
			t.Fatal(err)
		}
		sc.Engine, sc.Address = "redis-url", srv.Addr()
		shorten(sc, time.Second)
		return sc
	}
	seg := &bench.SegmentOptions{Index: 0, Count: 1, StartAt: time.Now().Add(time.Second)}
	var consumed *results.Result
	var cerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		consumed, cerr = bench.Run(ctx, ctx, load("floor-consume.yaml"), bench.Options{Logf: t.Logf, RunID: "pair", Segment: seg})
	}()
	produced, err := bench.Run(ctx, ctx, load("floor-produce.yaml"), bench.Options{Logf: t.Logf, RunID: "pair", Segment: seg})
	<-done
	if err != nil || cerr != nil {
		t.Fatalf("produce: %v; consume: %v", err, cerr)
	}
	acked, delivered := produced.Summary.Ledger.Acked, consumed.Summary.Ledger.Delivered
	e2e := consumed.Summary.Latency["e2e"]
	t.Logf("acked %d, delivered %d, e2e %d recorded, p50 %s, max %s", acked, delivered, e2e.Count, results.FormatNs(e2e.P50), results.FormatNs(e2e.Max))
	if acked < 500 || delivered != acked {
		t.Fatalf("acked %d, delivered %d: want every acknowledged message handed over", acked, delivered)
	}
	if e2e.Count < delivered/2 || e2e.Count > delivered || e2e.P50 <= 0 || e2e.P50 > int64(time.Second) || slices.Contains(consumed.Summary.NotKnown, "e2e") {
		t.Fatalf("consume-only segment: e2e %d recorded of %d delivered, p50 %s, not known %v", e2e.Count, delivered, results.FormatNs(e2e.P50), consumed.Summary.NotKnown)
	}
}
