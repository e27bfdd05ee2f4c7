package bench_test

import (
	"strings"
	"testing"

	"qbench/bench"
	"qbench/scenarios"
)

// names: is the engine's: each registration declares the names its designs take and checks
// their values, and validation reports every bad one with its file, line and field.
func TestNamesValidation(t *testing.T) {
	redis := "engine: redis-url\naddress: 127.0.0.1:1\nrate: 10\n"            // names: on line 4 or later
	kafka := "engine: kafka-url\naddress: 127.0.0.1:1\nrate: 10\n"            // likewise
	rabbit := "engine: rabbitmq-url\naddress: amqp://127.0.0.1:1\nrate: 10\n" // likewise
	cases := []struct {
		name, yaml, want string // want "" means valid
	}{
		// Redis: stream and group, list, channel; any non-empty key.
		{"redis produce", redis + "role: produce\nnames: {stream: orders}\n", ""},
		{"redis consume", redis + "role: consume\nnames: {stream: orders, group: billing}\n", ""},
		{"redis list", redis + "design: list\nrole: consume\nnames: {list: jobs}\n", ""},
		{"redis channel", redis + "design: pubsub\nrole: produce\nnames: {channel: \"news:*\"}\n", ""},
		{"redis consume without group", redis + "role: consume\nnames:\n  stream: orders\n", "s.yaml:5: names.group: is required when consumers read a named stream: the consumer group to read in"},
		{"redis takes no topic", redis + "role: produce\nnames:\n  stream: orders\n  topic: t\n", "s.yaml:7: names.topic: is not a name design stream uses (it takes [stream group])"},
		{"redis reliable-list", redis + "design: reliable-list\nnames:\n  list: jobs\n", "s.yaml:6: names.list: design reliable-list does not run against named keys (names are for designs stream, list, pubsub)"},
		{"redis half run without the queue", redis + "design: list\nrole: consume\n", "s.yaml:5: role: consume on redis-url needs names.list: the list of the existing system to use"},
		{"redis empty name", redis + "role: produce\nnames:\n  stream: \"\"\n", "s.yaml:6: names.stream: is empty"},
		{"redis two groups on a named group", redis + "consumers: 2\nredis:\n  stream:\n    groups: 2\nnames: {stream: s, group: g}\n", "s.yaml:7: redis.stream.groups: must be 1 with names.group (one named group; got 2)"},
		// Kafka: a topic by Kafka's rule, and a group.
		{"kafka produce", kafka + "role: produce\nnames: {topic: orders.v1}\n", ""},
		{"kafka consume", kafka + "role: consume\nnames: {topic: orders.v1, group: billing}\n", ""},
		{"kafka bad topic", kafka + "role: produce\nnames:\n  topic: \"orders/v1\"\n", "s.yaml:6: names.topic: must be 1 to 249 characters from a-z A-Z 0-9 . _ - (got \"orders/v1\")"},
		{"kafka dot dot", kafka + "role: produce\nnames:\n  topic: \"..\"\n", "s.yaml:6: names.topic: must not be \"..\""},
		{"kafka long topic", kafka + "role: produce\nnames:\n  topic: " + strings.Repeat("t", 250) + "\n", "s.yaml:6: names.topic: must be 1 to 249 characters"},
		{"kafka consume without group", kafka + "role: consume\nnames:\n  topic: orders\n", "s.yaml:5: names.group: is required when consumers read a named topic"},
		{"kafka takes no stream", kafka + "role: produce\nnames:\n  topic: orders\n  stream: s\n", "s.yaml:7: names.stream: is not a name design topic uses (it takes [topic group])"},
		{"kafka half run without the topic", kafka + "role: produce\n", "s.yaml:4: role: produce on kafka-url needs names.topic"},
		// RabbitMQ: a queue of the design's type, by RabbitMQ's rules.
		{"rabbitmq produce", rabbit + "design: quorum\nrole: produce\nnames: {queue: orders}\n", ""},
		{"rabbitmq consume a stream", rabbit + "design: stream\nrole: consume\nnames: {queue: orders}\n", ""},
		{"rabbitmq reserved name", rabbit + "role: produce\nnames:\n  queue: amq.orders\n", "s.yaml:6: names.queue: must not start with amq."},
		{"rabbitmq long name", rabbit + "role: produce\nnames:\n  queue: " + strings.Repeat("q", 256) + "\n", "s.yaml:6: names.queue: must be at most 255 bytes of UTF-8 (got 256 bytes)"},
		{"rabbitmq half run without the queue", rabbit + "role: consume\n", "s.yaml:4: role: consume on rabbitmq-url needs names.queue: the queue of the existing system to use"},
		{"rabbitmq takes no group", rabbit + "role: consume\nnames:\n  queue: orders\n  group: g\n", "s.yaml:7: names.group: is not a name design classic uses (it takes [queue])"},
		{"rabbitmq groups on a named queue", rabbit + "rabbitmq:\n  groups: 2\nnames: {queue: orders}\n", "s.yaml:5: rabbitmq.groups: must be 1 with names.queue (one named queue; got 2)"},
		// An engine that declares no names takes none.
		{"null engine", "engine: nullq\nrate: 10\nnames:\n  stream: s\n", "s.yaml:4: names.stream: engine nullq does not run against named objects (engines that do: "},
		// A matrix over a name: each cell's value is checked, at its line.
		{"swept name", rabbit + "role: produce\nnames: {queue: orders}\nmatrix:\n  names.queue: [a,\n    amq.b]\n", "s.yaml:8: matrix.names.queue.1: must not start with amq."},
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
