package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// kafkaOptions stands in for an engine's own options: a section with two keys.
type kafkaOptions struct {
	Acks       string `yaml:"acks"`
	Partitions int    `yaml:"partitions"`
}

type fieldErr struct{ field, msg string }

func (e fieldErr) Error() string { return e.msg }
func (e fieldErr) Field() string { return e.field }

// testChecks describe engines the way bench.Checks does from the registry (this package cannot
// import it): Redis-shaped engines reading the shared sections, and one with a section of its own.
var testChecks = Checks{
	Engines: []*Engine{
		{Name: "embedded", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"stream", "list", "pubsub", "wait", "persistence", "policy", "shards", "shard_routing", "shard_skew"}, Faults: []string{"stall", "command"}},
		{Name: "kafka", Designs: []string{"topic"}, Options: "kafka", Faults: []string{"server-crash", "power-loss", "partition-leader-kill", "node-restart"},
			Decode: func(decode func(any) error) (any, error) {
				o := kafkaOptions{Acks: "all"}
				if err := decode(&o); err != nil {
					return nil, err
				}
				if o.Acks != "all" && o.Acks != "leader" {
					return nil, fieldErr{"acks", "want all or leader"}
				}
				return o, nil
			}},
		{Name: "redis", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: SharedSections, Faults: []string{"stall", "server-crash", "power-loss", "disk-full", "failover", "command"}},
		{Name: "redis-cluster", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: SharedSections, Faults: []string{"primary-kill", "node-restart", "partition"}},
		{Name: "redis-cluster-url", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"stream", "list", "pubsub", "wait", "shards", "shard_routing", "shard_skew"}, NeedsAddress: true},
		{Name: "redis-url", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"stream", "list", "pubsub", "wait", "shards", "shard_routing", "shard_skew"}, NeedsAddress: true},
		{Name: "kafka-url", Designs: []string{"topic"}, Options: "kafka", NeedsAddress: true,
			Decode: func(decode func(any) error) (any, error) {
				var o kafkaOptions
				return o, decode(&o)
			}},
		{Name: "server", Designs: []string{"stream", "list", "reliable-list", "pubsub"}, Sections: []string{"stream", "list", "pubsub", "wait", "persistence", "policy", "shards", "shard_routing", "shard_skew"}, Faults: []string{"stall", "server-crash", "power-loss", "disk-full", "command"}},
	},
	Gate: func(expr string) error {
		if !strings.ContainsAny(expr, "<>=") {
			return errors.New("not a gate")
		}
		return nil
	},
}

// shippedChecks are testChecks with a kafka section taking any keys (the real ones are checked
// by bench's tests, which load every shipped file with the real engines).
func shippedChecks() Checks {
	c := testChecks
	c.Engines = append([]*Engine(nil), c.Engines...)
	for i, e := range c.Engines {
		if e.Name == "kafka" {
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
		{"unknown key in it", "engine: kafka\nrate: 10\nkafka:\n  acks: leader\n  ackz: 1\n", "bad.yaml:5: kafka.ackz: unknown field (known: acks, partitions)"},
		{"wrong type in it", "engine: kafka\nrate: 10\nkafka:\n  partitions: many\n", "bad.yaml:4: kafka.partitions: cannot unmarshal"},
		{"engine's own check", "engine: kafka\nrate: 10\nkafka:\n  acks: some\n", "bad.yaml:4: kafka.acks: want all or leader"},
		{"stream on kafka", "engine: kafka\nrate: 10\nstream:\n  count: 5\n", "bad.yaml:3: stream: engine kafka does not read stream; its settings go under kafka: (engines that read stream: embedded, redis, redis-cluster, redis-cluster-url, redis-url, server)"},
		{"persistence on kafka", "engine: kafka\nrate: 10\npersistence:\n  acks: all\n", "bad.yaml:3: persistence: engine kafka does not read persistence; its settings go under kafka:"},
		{"replicas on embedded", "engine: embedded\nrate: 10\nreplicas: 1\n", "bad.yaml:3: replicas: engine embedded does not read replicas (engines that do: redis, redis-cluster)"},
		{"kafka section on redis", "engine: redis\nrate: 10\nkafka:\n  acks: all\n", "bad.yaml:3: kafka: is the section of engine kafka, kafka-url; engine redis does not read it"},
		{"swept section key", "engine: kafka\nrate: 10\nmatrix:\n  kafka.acks: [leader, some]\n", "bad.yaml:4: matrix.kafka.acks.1: want all or leader (in cell kafka.acks=some)"},
		{"bad gate", "rate: 10\ngates: [\"fast\"]\n", "bad.yaml:2: gates.0: not a gate"},
		{"stream section on the list design", "engine: redis\ndesign: list\nrate: 10\nstream:\n  count: 5\n", "bad.yaml:4: stream: does not apply to design list (only to stream)"},
		{"list section on the stream design", "engine: embedded\nrate: 10\nlist:\n  count: 5\n", "bad.yaml:3: list: does not apply to design stream (only to list, reliable-list)"},
		{"pubsub section on reliable-list", "engine: server\ndesign: reliable-list\nrate: 10\npubsub:\n  pattern: true\n", "bad.yaml:4: pubsub: does not apply to design reliable-list (only to pubsub)"},
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
