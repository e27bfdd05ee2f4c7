package main

import (
	"strings"
	"testing"
)

// Engine sections through the real registry: each engine decodes its own with file:line errors,
// and a section an engine does not read is refused, naming where its settings go.
func TestValidateEngineSections(t *testing.T) {
	cases := []validateCase{
		{"kafka section", "engine: kafka\nrate: 100\nkafka:\n  acks: leader\n  linger: 5ms\n  broker: {log.flush.interval.messages: \"1\"}\n", 0, ""},
		{"bad kafka value", "engine: kafka\nrate: 100\nkafka:\n  partitions: 2\n  acks: some\n", 2, `s.yaml:5: kafka.acks: want none, leader or all (got "some")`},
		{"unknown kafka key", "engine: kafka\nrate: 100\nkafka:\n  linger.ms: 5\n", 2, "s.yaml:4: kafka.linger.ms: unknown field (known: acks, batch_messages, batch_size, broker,"},
		{"broker settings on kafka-url", "engine: kafka-url\naddress: 127.0.0.1:9\nrate: 100\nkafka:\n  broker: {log.flush.interval.ms: \"5\"}\n", 2, "s.yaml:5: kafka.broker: settings [log.flush.interval.ms] need the managed broker"},
		{"persistence on kafka", "engine: kafka\nrate: 100\npersistence:\n  acks: all\n", 2, "s.yaml:3: persistence: engine kafka does not read persistence; its settings go under kafka:"},
		{"old wait on kafka", "engine: kafka\nrate: 100\nwait:\n  replicas: 1\n", 2, "s.yaml:3: wait: engine kafka does not read wait: it is now redis.wait, the section of engine embedded, redis, redis-cluster, redis-cluster-url, redis-sentinel, redis-url, server"},
		{"redis section on kafka", "engine: kafka\nrate: 100\nredis:\n  wait:\n    replicas: 1\n", 2, "s.yaml:3: redis: is the section of engine embedded, redis, redis-cluster, redis-cluster-url, redis-sentinel, redis-url, server; engine kafka does not read it"},
		{"persistence on embedded", "engine: embedded\nrate: 100\npolicy: aof-always\n", 2, "s.yaml:3: policy: engine embedded does not read policy (engines that do: redis, redis-cluster, redis-sentinel, server)"},
		{"replicas on server", "engine: server\nrate: 100\nreplicas: 1\n", 2, "s.yaml:3: replicas: engine server does not read replicas (engines that do: redis, redis-cluster, redis-sentinel)"},
		{"kafka section on redis", "engine: redis\nrate: 100\nkafka:\n  acks: all\n", 2, "s.yaml:3: kafka: is the section of engine kafka, kafka-url; engine redis does not read it"},
		{"null engine's section", "engine: nullq\nrate: 100\nnullq:\n  capacity: 0\n", 2, "s.yaml:4: nullq.capacity: must be 1 to"},
		{"shards on the null engine", "engine: nullq\nrate: 100\nshards: 4\n", 2, "s.yaml:3: shards: engine nullq does not read shards"},
		{"default design is the engine's", "engine: kafka\nrate: 100\n", 0, ""},
		{"bad topic name", "engine: kafka-url\naddress: 127.0.0.1:9\nrole: produce\nrate: 100\nnames:\n  topic: \"a b\"\n", 2, `s.yaml:6: names.topic: must be 1 to 249 characters from a-z A-Z 0-9 . _ - (got "a b")`},
		{"named queue", "engine: rabbitmq-url\naddress: amqp://127.0.0.1:9\nrole: consume\nnames: {queue: orders}\n", 0, ""},
		{"swept kafka key", "engine: kafka\nrate: 100\nmatrix:\n  kafka.acks: [all, sometimes]\n", 2, "s.yaml:4: matrix.kafka.acks.1: want none, leader or all"},
	}
	t.Run("qbench engines lists the sections", func(t *testing.T) {
		stdout, _, code := qbench(t, "engines")
		for _, line := range strings.Split(stdout, "\n") {
			if len(line) > enginesWidth {
				t.Errorf("a line of %d columns, more than %d: %q", len(line), enginesWidth, line)
			}
		}
		for _, want := range []string{"sections: ", "kafka:", "redis:, persistence, policy, replicas", "nullq:",
			"names:    stream: stream, group; list: list; pubsub: channel\n", "names:    topic: topic, group\n", "names:    classic: queue; quorum: queue; stream: queue\n"} {
			if code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("exit %d, stdout lacks %q:\n%s", code, want, stdout)
			}
		}
	})
	validateEach(t, cases)
}
