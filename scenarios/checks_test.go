package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// kafkaOptions stands in for an engine's own options: a section with two keys.
type kafkaOptions struct {
	Acks              string `yaml:"acks"`
	Partitions        int    `yaml:"partitions"`
	ReplicationFactor int    `yaml:"replication_factor,omitempty"`
}

// redisOptions stand in for the Redis engines' section (redisq.Options, tested with the real
// registrations in engines/redisq): enough keys to test the seam (decoding, lines, groups, the
// move of old top-level keys).
type redisOptions struct {
	Stream struct {
		Ack    string        `yaml:"ack"`
		Count  int64         `yaml:"count"`
		Block  time.Duration `yaml:"block"`
		Groups int           `yaml:"groups"`
		MaxLen int64         `yaml:"maxlen"`
	} `yaml:"stream"`
	List struct {
		Count             int           `yaml:"count"`
		VisibilityTimeout time.Duration `yaml:"visibility_timeout"`
	} `yaml:"list"`
	PubSub struct {
		Pattern bool `yaml:"pattern"`
	} `yaml:"pubsub"`
	Wait struct {
		Replicas int  `yaml:"replicas"`
		AOF      bool `yaml:"aof"`
	} `yaml:"wait"`
}

// redisLike gives e the stand-in redis: section, as redisq.WithSection gives the real ones.
func redisLike(e *Engine) *Engine {
	e.Options, e.Moved = "redis", []string{"stream", "list", "pubsub", "wait"}
	e.Names = map[string][]string{"stream": {"stream", "group"}, "list": {"list"}, "pubsub": {"channel"}}
	e.CheckNames = func(p Plan) error {
		if p.Design == "stream" && p.Consumes && p.Names["stream"] != "" && p.Names["group"] == "" {
			return fieldErr{"group", "is required when consumers read a named stream: the consumer group to read in"}
		}
		return nil
	}
	e.Decode = func(decode func(any) error) (any, error) {
		var o redisOptions
		if err := decode(&o); err != nil {
			return nil, err
		}
		o.Stream.Groups = max(o.Stream.Groups, 1)
		if o.Stream.Ack != "" && o.Stream.Ack != "after" && o.Stream.Ack != "before" {
			return nil, fieldErr{"stream.ack", "must be after, before or noack"}
		}
		return o, nil
	}
	e.Check = func(options any, p Plan) error {
		if o, ok := options.(redisOptions); ok && p.Consumers > 0 && o.Stream.Groups > p.Consumers {
			return fieldErr{"stream.groups", "must be between 1 and the number of consumers"}
		}
		return nil
	}
	e.Groups = func(options any, design string, consumers int) int {
		if design == "pubsub" {
			return consumers
		}
		o, _ := options.(redisOptions)
		return max(o.Stream.Groups, 1)
	}
	return e
}

// kafkaLike gives e the stand-in names: of the Kafka registrations (engines/kafkaq).
func kafkaLike(e *Engine) *Engine {
	e.Names = map[string][]string{"topic": {"topic", "group"}}
	e.CheckNames = func(p Plan) error {
		if t := p.Names["topic"]; t != "" && strings.ContainsAny(t, " /") {
			return fieldErr{"topic", fmt.Sprintf("must be 1 to 249 characters from a-z A-Z 0-9 . _ - (got %q)", t)}
		}
		return nil
	}
	return e
}

type fieldErr struct{ field, msg string }

func (e fieldErr) Error() string { return e.msg }
func (e fieldErr) Field() string { return e.field }

// testChecks describe engines the way bench.Checks does from the registry (this package cannot
// import it): Redis-shaped engines reading the shared sections, and one with a section of its own.
var testChecks = Checks{
	Engines: []*Engine{
		redisLike(&Engine{Name: "embedded", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"persistence", "policy", "shards", "shard_routing", "shard_skew"}, Faults: []string{"stall", "command"}}),
		kafkaLike(&Engine{Name: "kafka", Designs: []string{"topic"}, Options: "kafka", Faults: []string{"server-crash", "power-loss", "partition-leader-kill", "node-restart", "leader-move"},
			Decode: func(decode func(any) error) (any, error) {
				o := kafkaOptions{Acks: "all"}
				if err := decode(&o); err != nil {
					return nil, err
				}
				if o.Acks != "all" && o.Acks != "leader" {
					return nil, fieldErr{"acks", "want all or leader"}
				}
				return o, nil
			}}),
		redisLike(&Engine{Name: "redis", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: SharedSections, Faults: []string{"stall", "server-crash", "power-loss", "disk-full", "io-error", "fork-failure", "failover", "command"}}),
		redisLike(&Engine{Name: "redis-cluster", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: SharedSections, Faults: []string{"stall", "primary-kill", "node-restart", "partition", "leader-move"}}),
		redisLike(&Engine{Name: "redis-cluster-url", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"shards", "shard_routing", "shard_skew"}, NeedsAddress: true, Faults: []string{"stall", "primary-kill", "leader-move"}}),
		redisLike(&Engine{Name: "redis-url", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"shards", "shard_routing", "shard_skew"}, NeedsAddress: true, Faults: []string{"stall", "command", "leader-move"}}),
		kafkaLike(&Engine{Name: "kafka-url", Designs: []string{"topic"}, Options: "kafka", NeedsAddress: true, Faults: []string{"leader-move"},
			Decode: func(decode func(any) error) (any, error) {
				var o kafkaOptions
				return o, decode(&o)
			}}),
		redisLike(&Engine{Name: "server", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"persistence", "policy", "shards", "shard_routing", "shard_skew"}, Faults: []string{"stall", "server-crash", "power-loss", "disk-full", "io-error", "fork-failure", "command"}}),
	},
	Gate: func(expr string) error {
		if !strings.ContainsAny(expr, "<>=") {
			return errors.New("not a gate")
		}
		return nil
	},
}

// shippedChecks are testChecks with kafka and redis sections taking any keys (the real ones are
// checked by bench's tests, which load every shipped file with the real engines).
func shippedChecks() Checks {
	c := testChecks
	c.Engines = append([]*Engine(nil), c.Engines...)
	for i, e := range c.Engines {
		if e.Name == "kafka" || e.Options == "redis" {
			k := *e
			k.Decode = func(decode func(any) error) (any, error) {
				var m map[string]any
				return m, decode(&m)
			}
			c.Engines[i] = &k
		}
	}
	return c
}

// An engine's own section is decoded by its engine, with the file's lines in errors; a shared
// section the engine does not read is an error; the default design is the engine's first.
func TestEngineSections(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"own section", "engine: kafka\nrate: 10\nkafka:\n  acks: leader\n", ""},
		{"unknown key in it", "engine: kafka\nrate: 10\nkafka:\n  acks: leader\n  ackz: 1\n", "bad.yaml:5: kafka.ackz: unknown field (known: acks, partitions, replication_factor)"},
		{"wrong type in it", "engine: kafka\nrate: 10\nkafka:\n  partitions: many\n", "bad.yaml:4: kafka.partitions: cannot unmarshal"},
		{"engine's own check", "engine: kafka\nrate: 10\nkafka:\n  acks: some\n", "bad.yaml:4: kafka.acks: want all or leader"},
		{"redis section on kafka", "engine: kafka\nrate: 10\nredis:\n  stream:\n    count: 5\n", "bad.yaml:3: redis: is the section of engine embedded, redis, redis-cluster, redis-cluster-url, redis-url, server; engine kafka does not read it"},
		{"persistence on kafka", "engine: kafka\nrate: 10\npersistence:\n  acks: all\n", "bad.yaml:3: persistence: engine kafka does not read persistence; its settings go under kafka:"},
		{"replicas on embedded", "engine: embedded\nrate: 10\nreplicas: 1\n", "bad.yaml:3: replicas: engine embedded does not read replicas (engines that do: redis, redis-cluster)"},
		{"kafka section on redis", "engine: redis\nrate: 10\nkafka:\n  acks: all\n", "bad.yaml:3: kafka: is the section of engine kafka, kafka-url; engine redis does not read it"},
		{"swept section key", "engine: kafka\nrate: 10\nmatrix:\n  kafka.acks: [leader, some]\n", "bad.yaml:4: matrix.kafka.acks.1: want all or leader (in cell kafka.acks=some)"},
		{"bad gate", "rate: 10\ngates: [\"fast\"]\n", "bad.yaml:2: gates.0: not a gate"},
		{"engine's check against the consumers", "engine: redis\nrate: 10\nconsumers: 2\nredis:\n  stream:\n    groups: 3\n", "bad.yaml:6: redis.stream.groups: must be between 1 and the number of consumers"},
		{"engine's check in a cell", "engine: redis\nrate: 10\nconsumers: 2\nmatrix:\n  redis.stream.groups: [1,\n    3]\n", "bad.yaml:6: matrix.redis.stream.groups.1: must be between 1 and the number of consumers (in cell redis.stream.groups=3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o, ok := sc.Options.(kafkaOptions); !ok || o.Acks != "leader" || sc.Design != "topic" {
					t.Fatalf("options %#v, design %q", sc.Options, sc.Design)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// A matrix over an engine's section key gives each cell its own decoded options, and the
// section survives a result's JSON.
func TestSweptSectionAndJSON(t *testing.T) {
	sc, err := Parse("m.yaml", []byte("engine: kafka\nrate: 10\nkafka:\n  partitions: 3\nmatrix:\n  kafka.acks: [leader, all]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"leader", "all"} {
		if o := cells[i].Scenario.Options.(kafkaOptions); o.Acks != want || o.Partitions != 3 {
			t.Fatalf("cell %d options %+v", i, o)
		}
	}
	b, err := cells[0].Scenario.MarshalJSON()
	if err != nil || !strings.Contains(string(b), `"kafka":{"acks":"leader","partitions":3}`) {
		t.Fatalf("JSON %s, %v", b, err)
	}
	var back Scenario
	if err := back.UnmarshalJSON(b); err != nil || back.Sections["kafka"] == nil {
		t.Fatalf("read back %+v, %v", back.Sections, err)
	}
}

// An older scenario's top-level stream:, list:, pubsub:, wait: (and a matrix axis over one of
// their keys) are read as the redis: section's for an engine whose section holds them, with a
// deprecation warning naming the line; refused with the line for any other engine, or beside a
// redis: section of their own.
func TestMovedKeys(t *testing.T) {
	cases := []struct {
		name, yaml string
		warnings   []string // every warning, in order
		want       string   // an error, or "" to pass
		check      func(t *testing.T, sc *Scenario)
	}{
		{"stream moved", "engine: redis\nrate: 10\nstream:\n  count: 5\n  ack: before\n",
			[]string{"old.yaml:3: stream: deprecated: top-level stream: is now redis.stream; read as that (indent it under redis:)"}, "",
			func(t *testing.T, sc *Scenario) {
				if o := sc.Options.(redisOptions); o.Stream.Count != 5 || o.Stream.Ack != "before" {
					t.Fatalf("options %+v", o)
				}
			}},
		{"two moved, the default engine", "rate: 10\nwait:\n  replicas: 1\nproducers: 2\nlist:\n  count: 7\n",
			[]string{"old.yaml:2: wait: deprecated", "old.yaml:5: list: deprecated"}, "",
			func(t *testing.T, sc *Scenario) {
				if o := sc.Options.(redisOptions); o.Wait.Replicas != 1 || o.List.Count != 7 || sc.Producers != 2 {
					t.Fatalf("options %+v, producers %d", o, sc.Producers)
				}
			}},
		{"errors keep the line written", "engine: redis\nrate: 10\nstream:\n  ackk: 5\n", nil,
			"old.yaml:4: redis.stream.ackk: unknown field", nil},
		{"matrix axis", "engine: redis\nrate: 10\nmatrix:\n  stream.ack: [after, before]\n",
			[]string{"old.yaml:4: matrix.stream.ack: deprecated: the axis stream.ack is now redis.stream.ack; read as that"}, "",
			func(t *testing.T, sc *Scenario) {
				cells, err := sc.Cells()
				if err != nil || len(cells) != 2 || cells[1].Name != "redis.stream.ack=before" || cells[1].Scenario.Options.(redisOptions).Stream.Ack != "before" {
					t.Fatalf("cells %+v, %v", cells, err)
				}
			}},
		{"an engine sweep with a Redis engine", "rate: 10\nstream:\n  count: 5\nmatrix:\n  engine: [redis, server]\n",
			[]string{"old.yaml:2: stream: deprecated"}, "", nil},
		{"kafka", "engine: kafka\nrate: 10\nstream:\n  count: 5\n", nil,
			"old.yaml:3: stream: engine kafka does not read stream: it is now redis.stream, the section of engine embedded, redis, redis-cluster, redis-cluster-url, redis-url, server", nil},
		{"kafka axis", "engine: kafka\nrate: 10\nmatrix:\n  wait.replicas: [1]\n", nil,
			"old.yaml:4: matrix.wait.replicas: engine kafka does not read wait: it is now redis.wait", nil},
		{"swept away from Redis", "rate: 10\nlist:\n  count: 5\nmatrix:\n  engine: [kafka, kafka-url]\n", nil,
			"old.yaml:2: list: engine kafka, kafka-url does not read list", nil},
		{"both forms", "engine: redis\nrate: 10\nredis:\n  list:\n    count: 5\nstream:\n  count: 5\n", nil,
			"old.yaml:6: stream: is an old form of redis.stream, and the file also has redis:; move stream: into redis: (redis is at line 3)", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Parse("old.yaml", []byte(c.yaml), testChecks)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v\nwant it to contain %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Deprecated) != len(c.warnings) {
				t.Fatalf("warnings %v, want %d", sc.Deprecated, len(c.warnings))
			}
			for i, w := range c.warnings {
				if !strings.HasPrefix(sc.Deprecated[i].Error(), w) {
					t.Errorf("warning %q\nwant it to start %q", sc.Deprecated[i], w)
				}
			}
			if c.check != nil {
				c.check(t, sc)
			}
		})
	}
}

// A result's scenario from before the redis: section (top-level "stream" and "list" objects)
// reads, after Normalize, as today's: the objects in the engine's section, decoded with its
// defaults, so it marshals as a new result of the same scenario does.
func TestNormalizeOldResult(t *testing.T) {
	sc, err := Parse("q.yaml", []byte("name: q\nrate: 10\nredis:\n  stream:\n    count: 5\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := json.Marshal(sc)
	old := []byte(`{"name":"q","engine":"embedded","design":"stream","rate":"10","stream":{"count":5,"groups":1},"list":{"count":0},"pubsub":{},"wait":{}}`)
	for name, raw := range map[string][]byte{"old": old, "new": now} {
		var back Scenario
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if err := back.Normalize(testChecks); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o, ok := back.Options.(redisOptions)
		if !ok || o.Stream.Count != 5 || len(back.Sections) != 1 || back.Sections["redis"] == nil {
			t.Fatalf("%s: options %#v, sections %v", name, back.Options, back.Sections)
		}
	}
	unknown := Scenario{Engine: "nosuch"}
	if err := unknown.Normalize(testChecks); err == nil {
		t.Fatal("an unknown engine normalized")
	}
}
