package redisq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"qbench/bench"
	"qbench/engines"
	"qbench/engines/redisq"
	"qbench/scenarios"
)

// The redis: section is decoded and checked by the Redis registrations (Decode, Check), as the
// scenario loader calls them: every bad key is named with its file, line and path under redis:.
func TestSectionErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"bad ack", "engine: redis\nrate: 10\nredis:\n  stream:\n    ack: sometimes\n", "s.yaml:5: redis.stream.ack: must be after, before or noack (got \"sometimes\")"},
		{"unknown key", "rate: 10\nredis:\n  stream:\n    maxlenn: 5\n", "s.yaml:4: redis.stream.maxlenn: unknown field (known: ack, block, claim_idle, count, exact_trim, group_start, groups, max_deliveries, maxlen)"},
		{"unknown subsection", "rate: 10\nredis:\n  streams:\n    count: 5\n", "s.yaml:3: redis.streams: unknown field (known: list, pubsub, stream, wait)"},
		{"wrong type", "rate: 10\nredis:\n  stream:\n    count: many\n", "s.yaml:4: redis.stream.count: cannot unmarshal"},
		{"fraction", "rate: 10\nredis:\n  list:\n    count: 2.5\n", "s.yaml:4: redis.list.count: must be a whole number (got 2.5)"},
		{"null", "rate: 10\nredis:\n  stream:\n    ack: null\n", "s.yaml:4: redis.stream.ack: has no value (null)"},
		{"huge count", "rate: 10\nredis:\n  stream:\n    count: 1000000000000\n", "s.yaml:4: redis.stream.count: must be between 1 and 100000 (got 1000000000000)"},
		{"huge block", "rate: 10\nredis:\n  stream:\n    block: 48h\n", "s.yaml:4: redis.stream.block: must be at most 24h0m0s"},
		{"negative maxlen", "rate: 10\nredis:\n  stream:\n    maxlen: -1\n", "s.yaml:4: redis.stream.maxlen: must not be negative (got -1)"},
		{"group start", "rate: 10\nredis:\n  stream:\n    group_start: \"5\"\n", "s.yaml:4: redis.stream.group_start: must be 0 or $ (got \"5\")"},
		{"negative claim", "rate: 10\nredis:\n  stream:\n    claim_idle: -1s\n", "s.yaml:4: redis.stream.claim_idle: must not be negative (got -1s)"},
		{"negative deliveries", "rate: 10\nredis:\n  stream:\n    max_deliveries: -1\n", "s.yaml:4: redis.stream.max_deliveries: must not be negative (got -1)"},
		{"more groups than consumers", "rate: 10\nconsumers: 2\nredis:\n  stream:\n    groups: 3\n", "s.yaml:5: redis.stream.groups: must be between 1 and the number of consumers, 2 (got 3)"},
		{"named group, two groups", "engine: redis-url\naddress: 127.0.0.1:1\nrate: 10\nconsumers: 2\nredis:\n  stream:\n    groups: 2\nnames: {stream: s, group: g}\n", "s.yaml:7: redis.stream.groups: must be 1 with names.group (one named group; got 2)"},
		{"list push", "design: list\nrate: 10\nredis:\n  list:\n    push: upsert\n", "s.yaml:5: redis.list.push: must be lpush or rpush (got \"upsert\")"},
		{"list count", "design: list\nrate: 10\nredis:\n  list:\n    count: -1\n", "s.yaml:5: redis.list.count: must be between 1 and 100000 (got -1)"},
		{"list timeout", "design: list\nrate: 10\nredis:\n  list:\n    timeout: -1s\n", "s.yaml:5: redis.list.timeout: must not be negative (got -1s)"},
		{"visibility", "design: reliable-list\nrate: 10\nredis:\n  list:\n    visibility_timeout: -1s\n", "s.yaml:5: redis.list.visibility_timeout: must not be negative (got -1s)"},
		{"list deliveries", "design: reliable-list\nrate: 10\nredis:\n  list:\n    max_deliveries: -2\n", "s.yaml:5: redis.list.max_deliveries: must not be negative (got -2)"},
		{"wait replicas", "engine: redis\nrate: 10\nredis:\n  wait:\n    replicas: -1\n", "s.yaml:5: redis.wait.replicas: must not be negative (got -1)"},
		{"waitaof local", "engine: redis\nrate: 10\nredis:\n  wait:\n    aof_local: 2\n", "s.yaml:5: redis.wait.aof_local: must be 0 or 1 (got 2)"},
		{"waitaof for nothing", "engine: redis\nrate: 10\nredis:\n  wait:\n    aof: true\n", "s.yaml:5: redis.wait.aof: WAITAOF 0 0 waits for nothing: set redis.wait.replicas (replicas' fsync) or redis.wait.aof_local"},
		{"wait timeout", "engine: redis\nrate: 10\nredis:\n  wait:\n    timeout: -1s\n", "s.yaml:5: redis.wait.timeout: must not be negative (got -1s)"},
		{"stream on the list design", "engine: redis\ndesign: list\nrate: 10\nredis:\n  stream:\n    count: 5\n", "s.yaml:5: redis.stream: does not apply to design list (only to stream)"},
		{"list on the stream design", "rate: 10\nredis:\n  list:\n    count: 5\n", "s.yaml:3: redis.list: does not apply to design stream (only to list, reliable-list)"},
		{"pubsub on reliable-list", "engine: server\ndesign: reliable-list\nrate: 10\nredis:\n  pubsub:\n    pattern: true\n", "s.yaml:5: redis.pubsub: does not apply to design reliable-list (only to pubsub)"},
		{"bad value in a cell", "rate: 10\nmatrix:\n  redis.stream.ack: [after,\n    never]\n", "s.yaml:4: matrix.redis.stream.ack.1: must be after, before or noack (got \"never\") (in cell redis.stream.ack=never)"},
		{"old form, new message", "rate: 10\nstream:\n  ack: sometimes\n", "s.yaml:3: redis.stream.ack: must be after, before or noack"},
		// Passing cases: a design's settings for other designs are in order when the matrix
		// sweeps the design.
		{"sections for a swept design", "rate: 10\nredis:\n  stream: {count: 5}\n  list: {count: 5}\nmatrix:\n  design: [stream, list]\n", ""},
		{"a full section", "rate: 10\nconsumers: 2\nredis:\n  stream: {ack: noack, count: 7, block: 1s, group_start: $, groups: 2, maxlen: 9, exact_trim: true, claim_idle: 2s, max_deliveries: 3}\n  wait: {replicas: 1, aof: true, timeout: 5ms, required: true}\n", ""},
	}
	checks := bench.Checks()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenarios.Parse("s.yaml", []byte(c.yaml), checks)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// Every Redis registration owns the same section, with its decoding, checks and group count;
// and what Decode makes is what the engine reads, defaults filled.
func TestEveryRedisRegistrationOwnsTheSection(t *testing.T) {
	n := 0
	for _, r := range engines.All() {
		if r.Options != "redis" {
			continue
		}
		n++
		if r.Decode == nil || r.Check == nil || r.Groups == nil || len(r.Moved) != 4 {
			t.Errorf("%s: redis: section without Decode, Check, Groups or Moved", r.Name)
		}
	}
	if n < 4 {
		t.Fatalf("%d registrations own redis:, want embedded, server, redis, redis-url at least", n)
	}
	sc, err := scenarios.Parse("s.yaml", []byte("rate: 10\nconsumers: 3\nredis:\n  stream:\n    groups: 3\n    count: 7\n"), bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	o, err := redisq.OptionsOf(engines.Spec{Options: sc.Options})
	if err != nil {
		t.Fatal(err)
	}
	want := redisq.Options{}.Defaults()
	want.Stream.Groups, want.Stream.Count = 3, 7
	if o.Stream != want.Stream || o.List != want.List || o.Wait != want.Wait || o.PubSub != want.PubSub {
		t.Fatalf("options %+v\nwant %+v", o, want)
	}
	if g := sc.ReceivingGroups(); g != 3 {
		t.Fatalf("receiving groups %d, want the section's 3", g)
	}
	if _, err := redisq.OptionsOf(engines.Spec{Options: 5}); err == nil {
		t.Fatal("an int as the Redis options was accepted")
	}
}

// An engine built from a spec reads its own options: a stream engine with redis.stream.groups 2
// has two receiving groups (engines.Grouper); a spec without options gets the defaults.
func TestEngineReadsItsOptions(t *testing.T) {
	reg, err := engines.Lookup("embedded")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, c := range []struct {
		opts   any
		groups int
	}{{nil, 1}, {redisq.Options{Stream: redisq.StreamOptions{Groups: 2}}, 2}} {
		e, err := reg.New(ctx, engines.Spec{RunID: "opts", Design: "stream", Producers: 1, Consumers: 2, Options: c.opts})
		if err != nil {
			t.Fatal(err)
		}
		if g := e.(engines.Grouper).Groups(); g != c.groups {
			t.Errorf("options %+v: %d groups, want %d", c.opts, g, c.groups)
		}
		e.Close()
	}
}
