package bench_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/bench"
	"qbench/engines/redisq"
	"qbench/scenarios"
)

// A produce-only run into a named stream and list of an existing redis-server, then a
// consume-only run from them: the second delivers exactly the first's acknowledged messages,
// once each, and counts what else it read (not stamped, or another run's stamp) as foreign. Each
// half reports only what it can know, and neither deletes the named keys.
func TestProduceOnlyThenConsumeOnly(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, err := redisq.StartRedis(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer client.Close()

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

// The documented pair, scenarios/role-produce.yaml then role-consume.yaml (shortened, against a
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
		sc, err := scenarios.Load("../scenarios/" + f)
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
