package bench_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"qbench/engines/rediscluster"
	"qbench/results"
)

// reordered counts only order the design promises: per producer for one consumer per group, per
// producer and shard where the engine routes over several keys, per producer and partition on
// Kafka, and nothing (n/a, with the reason) for consumers competing for one queue. Each case
// once read a reordered count in the tens to thousands (Kafka with 2 partitions 2,003 of 6,000).
func TestReorderedOnlyWhereOrderIsPromised(t *testing.T) {
	cases := []struct {
		name, target, yaml string
		scope              string // "" wants n/a with a reason
	}{
		{"stream-one-consumer", "embedded", "design: stream\nconsumers: 1\n", "per producer"},
		{"stream-competing", "embedded", "design: stream\nconsumers: 2\n", ""},
		{"reliable-list-competing", "embedded", "design: reliable-list\nconsumers: 2\n", ""},
		{"stream-shards-one-reader-each", "embedded", "design: stream\nconsumers: 2\nshards: 4\n", "per producer and shard"},
		{"stream-shards-competing", "embedded", "design: stream\nconsumers: 3\nshards: 2\n", ""},
		{"pubsub-subscribers", "embedded", "design: pubsub\nconsumers: 2\n", "per producer"},
		{"kafka-partitions", "kafka", "design: topic\nconsumers: 1\nkafka: {partitions: 2, linger: 1ms}\n", "per producer and partition"},
		{"kafka-group-of-two", "kafka", "design: topic\nconsumers: 2\nkafka: {partitions: 4, linger: 1ms}\n", "per producer and partition"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			needTarget(t, c.target)
			res := run(t, scenario(t, fmt.Sprintf("engine: %s\nproducers: 2\nrate: 3000\nbatch: 4\nduration: 2s\n%s", c.target, c.yaml)))
			checkOrderScope(t, res, c.scope)
		})
	}
}

// The same on Redis Cluster, whose producers pick a shard per batch: the consumers name the shard
// each delivery came from (a stream run once read reordered 330, a list run 158).
func TestClusterReorderedPerShard(t *testing.T) {
	needTarget(t, "redis-cluster")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := rediscluster.StartCluster(ctx, rediscluster.DefaultPrimaries, 0, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for _, tc := range []struct {
		design    string
		consumers int
		scope     string
	}{
		{"stream", 1, "per producer and shard"},
		{"list", 2, "per producer and shard"},
		{"stream", 4, ""}, // four consumers of one group over three shards: two share one
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.design, tc.consumers), func(t *testing.T) {
			res := run(t, scenario(t, fmt.Sprintf(`
engine: redis-cluster-url
address: %s
design: %s
producers: 2
consumers: %d
rate: 3000
duration: 2s
batch: 4
`, strings.Join(c.Addrs(), ","), tc.design, tc.consumers)))
			checkOrderScope(t, res, tc.scope)
		})
	}
}

// checkOrderScope checks that a run delivered everything, in the order its scope owes (reordered
// 0), or that it says why nothing was owed, and that the summary text says the same.
func checkOrderScope(t *testing.T, res *results.Result, scope string) {
	t.Helper()
	s := res.Summary
	l := s.Ledger
	if l.Acked == 0 || l.Lost != 0 || l.Reordered != 0 {
		t.Fatalf("ledger %+v: want messages acked, none lost, none reordered", l)
	}
	var text strings.Builder
	if err := results.WriteSummary(&text, res); err != nil {
		t.Fatal(err)
	}
	if scope != "" {
		if s.ReorderScope != scope || s.ReorderNotPromised != "" || results.ReorderedText(s) != "0" {
			t.Fatalf("reorder scope %q (not promised %q), want %q", s.ReorderScope, s.ReorderNotPromised, scope)
		}
		return
	}
	if s.ReorderScope != "" || !strings.Contains(s.ReorderNotPromised, "compete") || results.ReorderedText(s) != "n/a" || !slices.Contains(s.NotKnown, "reordered") {
		t.Fatalf("reorder scope %q, not promised %q: want n/a with the reason", s.ReorderScope, s.ReorderNotPromised)
	}
	if !strings.Contains(text.String(), "reordered n/a ("+s.ReorderNotPromised+")") {
		t.Fatalf("summary does not say reordered n/a with the reason:\n%s", text.String())
	}
}
