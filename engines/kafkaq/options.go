package kafkaq

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

// Options are the Kafka engines' settings: the scenario's kafka: section, decoded by the
// registration (Decode) and handed to the engine in engines.Spec.Options. Zero values mean the
// defaults DefaultOptions fills in (Partitions 0: one per consumer).
//
//	kafka:
//	  acks: all              # none, leader or all
//	  partitions: 4
//	  brokers: 3             # engine kafka: KRaft nodes qbench starts (default 1)
//	  replication_factor: 3  # default min(3, brokers); on kafka-url min(3, the cluster's brokers)
//	  min_insync_replicas: 2
//	  unclean_leader_election: false
//	  linger: 5ms            # 0: a batch leaves as soon as a Send has placed its messages
//	  batch_size: 16384      # bytes; also the largest message kafka-go accepts
//	  batch_messages: 100
//	  compression: lz4       # none, gzip, snappy, lz4, zstd
//	  partitioning: producer # round-robin or producer
//	  commit_interval: 1s    # 0: consumers commit synchronously in Ack
//	  flush_messages: 1      # the topic's flush.messages (fsync every N messages)
//	  flush_interval: 1s     # the topic's flush.ms
//	  broker: {log.flush.interval.messages: "1"}  # the managed broker's server.properties
//	  topic: {segment.bytes: "1048576"}           # other topic configs
type Options struct {
	Acks       string `yaml:"acks,omitempty" json:"acks,omitempty"`
	Partitions int    `yaml:"partitions,omitempty" json:"partitions,omitempty"`
	// Brokers is how many combined broker+controller KRaft nodes the managed engine starts (0
	// and 1: one). kafka-url uses the cluster at its address.
	Brokers int `yaml:"brokers,omitempty" json:"brokers,omitempty"`
	// ReplicationFactor 0 is min(3, brokers): on kafka-url the cluster's, read at Setup.
	ReplicationFactor int `yaml:"replication_factor,omitempty" json:"replication_factor,omitempty"`
	MinInsyncReplicas int `yaml:"min_insync_replicas,omitempty" json:"min_insync_replicas,omitempty"`
	// UncleanLeaderElection is the topic's unclean.leader.election.enable. Off by default since
	// Kafka 0.11: a replica outside the ISR never becomes leader, so a leader's death does not
	// silently truncate acknowledged writes; on, availability wins.
	UncleanLeaderElection *bool         `yaml:"unclean_leader_election,omitempty" json:"unclean_leader_election,omitempty"`
	Linger                time.Duration `yaml:"linger,omitempty" json:"linger,omitempty"`
	// BatchSize and BatchMessages close a partition's batch when it holds that many bytes or
	// messages (kafka-go's BatchBytes, which also caps one message, and BatchSize).
	BatchSize     int64  `yaml:"batch_size,omitempty" json:"batch_size,omitempty"`
	BatchMessages int    `yaml:"batch_messages,omitempty" json:"batch_messages,omitempty"`
	Compression   string `yaml:"compression,omitempty" json:"compression,omitempty"`
	Partitioning  string `yaml:"partitioning,omitempty" json:"partitioning,omitempty"`
	// CommitInterval 0 commits synchronously in Ack; otherwise Ack only records the offsets and
	// kafka-go commits them every CommitInterval (kafka-go's ReaderConfig.CommitInterval).
	CommitInterval time.Duration `yaml:"commit_interval,omitempty" json:"commit_interval,omitempty"`
	FlushMessages  int           `yaml:"flush_messages,omitempty" json:"flush_messages,omitempty"`
	FlushInterval  time.Duration `yaml:"flush_interval,omitempty" json:"flush_interval,omitempty"`
	// Broker settings go into the managed broker's server.properties (engine kafka only).
	Broker map[string]string `yaml:"broker,omitempty" json:"broker,omitempty"`
	// Topic settings are configs of the run's topic (CreateTopics).
	Topic map[string]string `yaml:"topic,omitempty" json:"topic,omitempty"`
}

// The Writer's batch limits unless the scenario sets them: kafka-go's own defaults. Kafka's Java
// producer closes a batch at batch.size 16384 bytes (and, since Kafka 4.0, lingers 5 ms); a
// scenario that wants to produce the way it does says so (scenarios/library/kafka/kafka-max-rate.yaml). The
// byte limit is also the largest message kafka-go accepts, so 1 MiB (Kafka's max.request.size)
// keeps large messages possible.
const (
	defaultBatchBytes    = 1 << 20
	defaultBatchMessages = 100
)

// DefaultOptions are the settings of a scenario without a kafka: section.
func DefaultOptions() Options {
	return Options{Acks: "all", BatchSize: defaultBatchBytes, BatchMessages: defaultBatchMessages,
		Compression: "none", Partitioning: "round-robin"}
}

// decodeFor is the registration's Decode: the section over the defaults, checked whole.
func decodeFor(managed bool) func(decode func(into any) error) (any, error) {
	return func(decode func(into any) error) (any, error) {
		o := DefaultOptions()
		if err := decode(&o); err != nil {
			return nil, err
		}
		if _, err := resolve(o, 1, managed); err != nil {
			return nil, err
		}
		return o, nil
	}
}

// optionsOf are the spec's options: the decoded section, or the defaults for a spec built
// without a scenario.
func optionsOf(spec engines.Spec, managed bool) (options, error) {
	o := DefaultOptions()
	switch v := spec.Options.(type) {
	case nil:
	case Options:
		o = v
	default:
		return options{}, fmt.Errorf("kafka: Spec.Options is a %T, not kafkaq.Options", spec.Options)
	}
	r, err := resolve(o, spec.Consumers, managed)
	return r, named(err)
}

// named spells out the keys of resolve's errors, for a spec built outside a scenario (where
// validation names the file, line and key instead).
func named(err error) error {
	if err == nil {
		return nil
	}
	var msgs []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		msgs = append(msgs, "kafka."+e.(*fieldError).field+": "+e.Error())
	}
	return errors.New(strings.Join(msgs, "; "))
}

// options are Options resolved into kafka-go's terms, once per engine.
type options struct {
	acks       kafka.RequiredAcks
	partitions int
	// replicationFactor 0 means "not set": the URL target fills it in from the cluster's size.
	replicationFactor int
	brokers           int // nodes of the managed cluster
	linger            time.Duration
	batchBytes        int64
	batchMessages     int
	compression       kafka.Compression
	byProducer        bool // partitioning: producer
	commitInterval    time.Duration
	broker            map[string]string
	topic             map[string]string
}

// brokerKeys and topicKeys are the durability settings Facts reads back from the cluster
// whether or not the scenario set them, so a result shows what was in force.
var brokerKeys = map[string]bool{
	"log.flush.interval.messages":     true,
	"log.flush.interval.ms":           true,
	"log.flush.scheduler.interval.ms": true,
}

var topicKeys = map[string]bool{
	"flush.messages":                 true,
	"flush.ms":                       true,
	"min.insync.replicas":            true,
	"unclean.leader.election.enable": true,
}

// minLinger stands for "no linger": kafka-go reads a zero BatchTimeout as its 1 s default. A
// partition's share of one Send is added to its batch under one lock, so even an expired timer
// cannot split it; the batch leaves as soon as the Send has placed every message.
const minLinger = time.Microsecond

// fieldError is a bad value under kafka:, naming its key for the scenario's file:line.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.msg }

// Field names the key within the section (scenario validation locates its line).
func (e *fieldError) Field() string { return e.field }

func bad(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// resolve checks o (every bad key, each named) and turns it into kafka-go's terms.
func resolve(o Options, consumers int, managed bool) (options, error) {
	r := options{
		partitions:        o.Partitions,
		replicationFactor: o.ReplicationFactor,
		brokers:           max(o.Brokers, 1),
		linger:            max(o.Linger, minLinger),
		batchBytes:        o.BatchSize,
		batchMessages:     o.BatchMessages,
		commitInterval:    o.CommitInterval,
		broker:            map[string]string{},
		topic:             map[string]string{},
	}
	var errs []error
	var err error
	if r.acks, err = parseAcks(o.Acks); err != nil {
		errs = append(errs, bad("acks", "%v", err))
	}
	if r.compression, err = parseCompression(o.Compression); err != nil {
		errs = append(errs, bad("compression", "%v", err))
	}
	switch o.Partitioning {
	case "", "round-robin":
	case "producer":
		r.byProducer = true
	default:
		errs = append(errs, bad("partitioning", "want round-robin or producer (got %q)", o.Partitioning))
	}
	if o.Partitions < 0 {
		errs = append(errs, bad("partitions", "must be at least 1 (got %d)", o.Partitions))
	}
	if r.partitions == 0 {
		r.partitions = max(consumers, 1)
	}
	for _, c := range []struct {
		field string
		v     int64
	}{{"batch_size", o.BatchSize}, {"batch_messages", int64(o.BatchMessages)}} {
		if c.v < 1 {
			errs = append(errs, bad(c.field, "must be at least 1 (got %d)", c.v))
		}
	}
	for _, c := range []struct {
		field string
		v     time.Duration
	}{{"linger", o.Linger}, {"commit_interval", o.CommitInterval}, {"flush_interval", o.FlushInterval}} {
		if c.v < 0 {
			errs = append(errs, bad(c.field, "must not be negative (got %s)", c.v))
		}
	}
	if o.ReplicationFactor < 0 {
		errs = append(errs, bad("replication_factor", "must be at least 1, or 0 for min(3, brokers) (got %d)", o.ReplicationFactor))
	}
	switch {
	case o.Brokers < 0 || o.Brokers > maxBrokers:
		errs = append(errs, bad("brokers", "must be 1 to %d nodes on one machine (got %d)", maxBrokers, o.Brokers))
	case o.Brokers > 0 && !managed:
		errs = append(errs, bad("brokers", "belongs to the managed cluster (engine kafka); kafka-url uses the cluster at address"))
	}
	if managed {
		if r.replicationFactor == 0 {
			r.replicationFactor = min(3, r.brokers)
		}
		if r.replicationFactor > r.brokers {
			errs = append(errs, bad("replication_factor", "more copies (%d) than brokers (%d)", r.replicationFactor, r.brokers))
		}
	}
	if o.UncleanLeaderElection != nil {
		r.topic["unclean.leader.election.enable"] = strconv.FormatBool(*o.UncleanLeaderElection)
	}
	if o.FlushMessages < 0 || o.MinInsyncReplicas < 0 {
		errs = append(errs, bad("flush_messages", "flush_messages and min_insync_replicas must not be negative"))
	}
	for k, v := range o.Topic {
		r.topic[k] = v
	}
	if o.FlushMessages > 0 {
		r.topic["flush.messages"] = strconv.Itoa(o.FlushMessages)
	}
	if o.FlushInterval > 0 {
		r.topic["flush.ms"] = strconv.FormatInt(o.FlushInterval.Milliseconds(), 10)
	}
	if o.MinInsyncReplicas > 0 {
		r.topic["min.insync.replicas"] = strconv.Itoa(o.MinInsyncReplicas)
	}
	for k, v := range o.Broker {
		r.broker[k] = v
	}
	if len(r.broker) > 0 && !managed {
		errs = append(errs, bad("broker", "settings %v need the managed broker (engine kafka); set them on the cluster, or use topic settings (flush_messages, flush_interval, topic:)", sortedKeys(r.broker)))
	}
	if o.MinInsyncReplicas > 0 && r.replicationFactor > 0 && o.MinInsyncReplicas > r.replicationFactor {
		errs = append(errs, bad("min_insync_replicas", "%d is more than replication_factor %d, so no acks=all write could succeed", o.MinInsyncReplicas, r.replicationFactor))
	}
	return r, errors.Join(errs...)
}

// maxBrokers bounds the managed cluster: each node is a JVM with its own heap.
const maxBrokers = 5

// checkISR refuses a min.insync.replicas no replica set can meet (once kafka-url's replication
// factor is known): every acks=all write would fail with NOT_ENOUGH_REPLICAS, which is a
// misconfiguration, not a finding.
func (o options) checkISR() error {
	v, ok := o.topic["min.insync.replicas"]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("kafka.min_insync_replicas: %q: %v", v, err)
	}
	if o.replicationFactor > 0 && n > o.replicationFactor {
		return fmt.Errorf("kafka.min_insync_replicas: %d is more than replication_factor %d, so no acks=all write could succeed", n, o.replicationFactor)
	}
	return nil
}

func parseAcks(v string) (kafka.RequiredAcks, error) {
	switch strings.ToLower(v) {
	case "none", "0":
		return kafka.RequireNone, nil
	case "leader", "one", "1":
		return kafka.RequireOne, nil
	case "", "all", "-1":
		return kafka.RequireAll, nil
	}
	return 0, fmt.Errorf("want none, leader or all (got %q)", v)
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
	return 0, fmt.Errorf("want none, gzip, snappy, lz4 or zstd (got %q)", v)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
