package bench_test

import (
	"fmt"
	"testing"
)

// shards: 4 on every Redis design, on the in-repo server and on redis-server: every shard gets
// messages and delivers them, nothing is lost, every acknowledged message is delivered, queued or
// lost for every group, the result has each shard's lag, and no order is broken (order is owed
// per shard: a message on another key may overtake).
func TestShardsEveryDesign(t *testing.T) {
	cases := []struct {
		name, yaml string
	}{
		// Two consumers over four streams: each reads two keys in one XREADGROUP.
		{"stream", "design: stream\nconsumers: 2\nshard_routing: zipf\nshard_skew: 1.2\n"},
		// Two groups of three: each group's members split the four streams between them.
		{"stream-fanout", "design: stream\nconsumers: 6\nredis:\n  stream:\n    groups: 2\n"},
		// One consumer pops from all four lists with one BLMPOP.
		{"list", "design: list\nconsumers: 1\nshard_routing: producer\nproducers: 4\n"},
		{"reliable-list", "design: reliable-list\nconsumers: 2\n"},
		{"pubsub", "design: pubsub\nconsumers: 2\n"},
	}
	for _, target := range []string{"embedded", "redis"} {
		for _, c := range cases {
			t.Run(target+"/"+c.name, func(t *testing.T) {
				needTarget(t, target)
				sc := scenario(t, fmt.Sprintf("engine: %s\nshards: 4\nrate: 2000\nbatch: 4\nduration: 1500ms\n%s", target, c.yaml))
				if sc.Producers == 0 {
					sc.Producers = 2
				}
				res := run(t, sc)
				l := res.Summary.Ledger
				groups := int64(res.Summary.Groups)
				if l.Acked == 0 || l.Lost != 0 || l.Duplicates != 0 || l.Reordered != 0 {
					t.Fatalf("ledger %+v", l)
				}
				if l.Delivered-l.DeliveredUnacked+l.Queued+l.Lost != l.Acked*groups {
					t.Fatalf("delivered %d + queued %d + lost %d != acked %d x %d groups", l.Delivered, l.Queued, l.Lost, l.Acked, groups)
				}
				if len(res.Summary.PerShard) != 4 {
					t.Fatalf("per-shard lag %+v, want 4 shards", res.Summary.PerShard)
				}
				var sent, received int64
				for _, s := range res.Summary.PerShard {
					if s.Sent == 0 || s.Received == 0 {
						t.Fatalf("shard %d carried nothing: %+v", s.Shard, res.Summary.PerShard)
					}
					sent += s.Sent
					received += s.Received
				}
				if sent != l.Sent || received != l.Deliveries {
					t.Fatalf("per-shard sent %d received %d, ledger sent %d deliveries %d", sent, received, l.Sent, l.Deliveries)
				}
			})
		}
	}
}

// A backlog spread over four shards is found on every shard by the final sweep (queued, not lost),
// and the end-of-run per-shard lag adds up to it (give or take writes never acknowledged).
func TestShardsBacklogIsSweptOnEveryShard(t *testing.T) {
	for _, target := range []string{"embedded", "redis"} {
		for _, design := range []string{"stream", "list", "reliable-list"} {
			t.Run(target+"/"+design, func(t *testing.T) {
				needTarget(t, target)
				res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
shards: 4
producers: 2
consumers: 1
rate: 2000
duration: 2s
work: 1ms
drain_timeout: 200ms
`, target, design)))
				l := res.Summary.Ledger
				if l.Queued == 0 || l.Lost != 0 || l.Delivered-l.DeliveredUnacked+l.Queued+l.Lost != l.Acked {
					t.Fatalf("want a backlog queued, nothing lost: %+v", l)
				}
				var held int64
				for _, s := range res.Summary.PerShard {
					if s.Backlog+s.Pending == 0 || s.MaxBacklog == 0 {
						t.Fatalf("shard %d holds nothing at the end: %+v", s.Shard, res.Summary.PerShard)
					}
					held += s.Backlog + s.Pending
				}
				// The engine also holds what it took from a send whose answer came too late
				// (failed, not acknowledged, so never queued).
				if held < l.Queued || held > l.Queued+l.Sent-l.Acked {
					t.Fatalf("per-shard backlog + pending %d, queued %d, sent but not acknowledged %d", held, l.Queued, l.Sent-l.Acked)
				}
			})
		}
	}
}
