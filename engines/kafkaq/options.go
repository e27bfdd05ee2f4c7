package kafkaq

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// options are the engine's settings, parsed once from Spec.Persistence. Keys use Kafka's own
// names; every key is one of three kinds, and an unknown key is an error rather than a no-op:
//
//   - client settings: acks, partitions, replication.factor (default min(3, brokers); on
//     kafka-url min(3, the cluster's brokers)), linger.ms, batch.size (bytes), batch.messages,
//     compression, partitioning, commit.interval.ms
//   - cluster (managed broker only): brokers, the number of KRaft nodes qbench starts (default 1)
//   - broker settings (managed broker only): log.flush.interval.messages, log.flush.interval.ms,
//     log.flush.scheduler.interval.ms, and any server.properties key prefixed with "broker."
//   - topic settings (CreateTopics configs): flush.messages, flush.ms, min.insync.replicas,
//     unclean.leader.election.enable, and any topic config prefixed with "topic."
type options struct {
	acks       kafka.RequiredAcks
	partitions int
	// replicationFactor 0 means "not set": the URL target fills it in from the cluster's size.
	replicationFactor int
	brokers           int // nodes of the managed cluster
	linger            time.Duration
	// batchBytes and batchMessages close a partition's batch when it holds that many bytes or
	// messages (kafka-go's BatchBytes, which also caps one message, and BatchSize).
	batchBytes    int64
	batchMessages int
	compression   kafka.Compression
	byProducer    bool // partitioning: producer
	// commitInterval 0 commits synchronously in Ack; otherwise Ack only records the offsets and
	// kafka-go commits them every commitInterval (kafka-go's ReaderConfig.CommitInterval).
	commitInterval time.Duration
	broker         map[string]string
	topic          map[string]string
}

var brokerKeys = map[string]bool{
	"log.flush.interval.messages":     true,
	"log.flush.interval.ms":           true,
	"log.flush.scheduler.interval.ms": true,
}

var topicKeys = map[string]bool{
	"flush.messages":      true,
	"flush.ms":            true,
	"min.insync.replicas": true,
	// Off by default since Kafka 0.11: a replica outside the ISR never becomes leader, so a
	// leader's death does not silently truncate acknowledged writes; on, availability wins.
	"unclean.leader.election.enable": true,
}

// minLinger stands for "no linger": kafka-go reads a zero BatchTimeout as its 1 s default. A
// partition's share of one Send is added to its batch under one lock, so even an expired timer
// cannot split it; the batch leaves as soon as the Send has placed every message.
const minLinger = time.Microsecond

// The Writer's batch limits unless the scenario sets them: kafka-go's own defaults. Kafka's Java
// producer closes a batch at batch.size 16384 bytes (and, since Kafka 4.0, lingers 5 ms); a
// scenario that wants to produce the way it does says so (scenarios/kafka-max-rate.yaml). The
// byte limit is also the largest message kafka-go accepts, so 1 MiB (Kafka's max.request.size)
// keeps large messages possible.
const (
	defaultBatchBytes    = 1 << 20
	defaultBatchMessages = 100
)

func parseOptions(p map[string]string, consumers int, managed bool) (options, error) {
	o := options{
		acks:          kafka.RequireAll,
		partitions:    max(consumers, 1),
		brokers:       1,
		linger:        minLinger,
		batchBytes:    defaultBatchBytes,
		batchMessages: defaultBatchMessages,
		broker:        map[string]string{},
		topic:         map[string]string{},
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key reported is the same on every run
	for _, k := range keys {
		v := p[k]
		var err error
		switch {
		case k == "acks":
			o.acks, err = parseAcks(v)
		case k == "partitions":
			o.partitions, err = positive(v)
		case k == "replication.factor":
			o.replicationFactor, err = positive(v)
		case k == "brokers":
			o.brokers, err = positive(v)
			if err == nil && o.brokers > maxBrokers {
				err = fmt.Errorf("at most %d nodes on one machine", maxBrokers)
			}
			if err == nil && !managed {
				err = fmt.Errorf("the number of brokers belongs to the managed cluster (engine kafka); kafka-url uses the cluster at address")
			}
		case k == "unclean.leader.election.enable" || k == "topic.unclean.leader.election.enable":
			if _, err = strconv.ParseBool(v); err == nil {
				o.topic["unclean.leader.election.enable"] = v
			}
		case k == "linger.ms":
			var ms float64
			ms, err = strconv.ParseFloat(v, 64)
			if err == nil && ms < 0 {
				err = fmt.Errorf("negative")
			}
			o.linger = max(time.Duration(ms*float64(time.Millisecond)), minLinger)
		case k == "batch.size":
			var n int
			n, err = positive(v)
			o.batchBytes = int64(n)
		case k == "batch.messages":
			o.batchMessages, err = positive(v)
		case k == "compression":
			o.compression, err = parseCompression(v)
		case k == "commit.interval.ms":
			var ms int
			ms, err = strconv.Atoi(v)
			if err == nil && ms < 0 {
				err = fmt.Errorf("negative")
			}
			o.commitInterval = time.Duration(ms) * time.Millisecond
		case k == "partitioning":
			switch v {
			case "round-robin":
				o.byProducer = false
			case "producer":
				o.byProducer = true
			default:
				err = fmt.Errorf("want round-robin or producer")
			}
		case brokerKeys[k]:
			o.broker[k] = v
		case strings.HasPrefix(k, "broker."):
			o.broker[strings.TrimPrefix(k, "broker.")] = v
		case topicKeys[k]:
			o.topic[k] = v
		case strings.HasPrefix(k, "topic."):
			o.topic[strings.TrimPrefix(k, "topic.")] = v
		default:
			return o, fmt.Errorf("kafka: unknown setting %q (client: acks, partitions, replication.factor, linger.ms, batch.size, batch.messages, compression, partitioning, commit.interval.ms; cluster: brokers; broker: log.flush.*, broker.<key>; topic: flush.messages, flush.ms, min.insync.replicas, unclean.leader.election.enable, topic.<key>)", k)
		}
		if err != nil {
			return o, fmt.Errorf("kafka: setting %s=%q: %v", k, v, err)
		}
	}
	if len(o.broker) > 0 && !managed {
		return o, fmt.Errorf("kafka-url: broker settings %v need the managed broker (engine kafka); set them on the cluster, or use topic settings (flush.messages, flush.ms)", sortedKeys(o.broker))
	}
	if managed {
		if o.replicationFactor == 0 {
			o.replicationFactor = min(3, o.brokers)
		}
		if o.replicationFactor > o.brokers {
			return o, fmt.Errorf("kafka: setting replication.factor=%d: more copies than brokers (%d)", o.replicationFactor, o.brokers)
		}
	}
	return o, o.checkISR()
}

// maxBrokers bounds the managed cluster: each node is a JVM with its own heap.
const maxBrokers = 5

// checkISR refuses a min.insync.replicas no replica set can meet: every acks=all write would
// fail with NOT_ENOUGH_REPLICAS, which is a misconfiguration, not a finding.
func (o options) checkISR() error {
	v, ok := o.topic["min.insync.replicas"]
	if !ok {
		return nil
	}
	n, err := positive(v)
	if err != nil {
		return fmt.Errorf("kafka: setting min.insync.replicas=%q: %v", v, err)
	}
	if o.replicationFactor > 0 && n > o.replicationFactor {
		return fmt.Errorf("kafka: setting min.insync.replicas=%d: more than replication.factor %d, so no acks=all write could succeed", n, o.replicationFactor)
	}
	return nil
}

func parseAcks(v string) (kafka.RequiredAcks, error) {
	switch strings.ToLower(v) {
	case "none", "0":
		return kafka.RequireNone, nil
	case "leader", "one", "1":
		return kafka.RequireOne, nil
	case "all", "-1":
		return kafka.RequireAll, nil
	}
	return 0, fmt.Errorf("want none, leader or all")
}

func acksName(a kafka.RequiredAcks) string {
	switch a {
	case kafka.RequireNone:
		return "none"
	case kafka.RequireOne:
		return "leader"
	}
	return "all"
}

func parseCompression(v string) (kafka.Compression, error) {
	switch v {
	case "", "none":
		return 0, nil
	case "gzip":
		return kafka.Gzip, nil
	case "snappy":
		return kafka.Snappy, nil
	case "lz4":
		return kafka.Lz4, nil
	case "zstd":
		return kafka.Zstd, nil
	}
	return 0, fmt.Errorf("want none, gzip, snappy, lz4 or zstd")
}

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("must be at least 1")
	}
	return n, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
