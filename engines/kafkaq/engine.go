// Package kafkaq is the Kafka engine: one topic per run, written by kafka.Writer and read by
// kafka.Reader in a consumer group (github.com/segmentio/kafka-go).
//
// Engine "kafka" starts its own KRaft cluster (one node, or `brokers` combined broker and
// controller nodes) from jars gathered by .ci/kafka-jars.sh (see engines/procs) and can crash
// and restart it, or kill a partition's leader; engine "kafka-url"
// uses an existing cluster whose bootstrap addresses are in Spec.Address (comma-separated).
package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
	"qbench/engines/procs"
)

// Design is the only design this engine offers: a topic read by a consumer group.
const Design = "topic"

func init() {
	engines.Register(engines.Registration{
		Name:      "kafka",
		RunsAlone: true,
		Designs:   []string{Design},
		Summary:   "Apache Kafka topic + consumer group (kafka-go) on a broker or KRaft cluster (brokers: N) qbench starts; needs .ci/kafka-jars.sh and java",
		New:       newManaged,
		Faults:    []string{"server-crash", "power-loss", "partition-leader-kill", "node-restart", "leader-move"},
		Options:   "kafka", Decode: decodeFor(true),
		Names: designNames, CheckNames: checkNames,
		ClosedLoop: ClosedLoopShape,
		Conformance: map[string]engines.Conformance{Design: {
			Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers, engines.PromiseRedelivery},
			// The crashed consumer leaves the group without committing; its partition goes to
			// the other consumer, which starts from the last committed offset.
			Scenario: map[string]string{engines.PromiseRedelivery: "kafka:\n  partitions: 2\n"},
		}},
		Requires: func() error { _, err := procs.KafkaHome(); return err },
	})
	engines.Register(engines.Registration{
		Name:    "kafka-url",
		Designs: []string{Design},
		Summary: "Apache Kafka topic + consumer group (kafka-go) on an existing cluster at address (host:port,...)",
		New:     newURL,
		// Through the admin API (leadermove.go), checked when the topic is set up.
		Faults:  []string{"leader-move"},
		Shared:  true,
		Options: "kafka", Decode: decodeFor(false), NeedsAddress: true,
		Names: designNames, CheckNames: checkNames,
		ClosedLoop: ClosedLoopShape,
	})
}

// ClosedLoopShape is a closed loop's batch and in_flight unless the scenario writes them: the
// shape of scenarios/library/kafka/kafka-max-rate.yaml, 32 Sends of 64 messages in flight per producer for the
// Writer to batch per partition. With the scenario defaults (8 batches of 1) and even with 4
// producers sending batches of 16, qbench's window set the rate: 0.21x of what Kafka's
// ProducerPerformance reached on the same broker, against 1.8x with this shape.
var ClosedLoopShape = engines.Shape{Batch: 64, InFlight: 32}

// engine serves one run on one topic.
type engine struct {
	name      string
	spec      engines.Spec
	opts      options
	bootstrap []string
	topic     string
	group     string

	cluster *procs.KafkaCluster // nil for kafka-url
	health  healthState
	clock   clockState // the broker's clock (clock.go)

	transport *kafka.Transport
	client    *kafka.Client

	mu        sync.Mutex
	settled   bool        // the group has been seen stable with every consumer once
	producers []*producer // every producer made, for Facts' batch counts
	opened    engines.Closers
}

func newURL(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec, false)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, a := range strings.Split(spec.Address, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("kafka-url: address (bootstrap host:port[,host:port...]) is empty")
	}
	e := newEngine("kafka-url", spec, opts, addrs, nil)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := e.client.Metadata(pctx, &kafka.MetadataRequest{}); err != nil {
		e.Close()
		return nil, fmt.Errorf("kafka-url: %s: %w", spec.Address, err)
	}
	return e, nil
}

func newEngine(name string, spec engines.Spec, opts options, bootstrap []string, c *procs.KafkaCluster) *engine {
	// A transport of our own: after a broker restart on the same port, kafka.DefaultTransport's
	// shared pool handed out dead connections for a while (kafka-go #1352).
	//
	// kafka-go refreshes its cached metadata only every MetadataTTL (not on NOT_LEADER or a dead
	// leader, as Kafka's Java client does), so after a leader change on a cluster its writer kept
	// sending to the dead broker for up to the TTL: 1 s there, so a leader kill measures Kafka's
	// election more than kafka-go's cache. A single broker's leaders never move.
	ttl := 10 * time.Second
	if len(bootstrap) > 1 || slices.Contains(spec.Faults, "leader-move") { // leaders will move
		ttl = time.Second
	}
	t := &kafka.Transport{DialTimeout: 5 * time.Second, MetadataTTL: ttl, ClientID: "qbench"}
	return &engine{
		name:      name,
		spec:      spec,
		opts:      opts,
		bootstrap: bootstrap,
		topic:     topicFor(spec),
		group:     groupFor(spec),
		cluster:   c,
		transport: t,
		client:    &kafka.Client{Addr: kafka.TCP(bootstrap...), Transport: t, Timeout: 10 * time.Second},
	}
}

// topicName is "qbench-<RunID>" made legal for Kafka: at most 249 characters from
// [a-zA-Z0-9._-]. When RunID has to change, a hash of it keeps distinct runs apart.
func topicName(runID string) string {
	const maxLen = 249
	name := "qbench-" + runID
	clean := []byte(name)
	changed := false
	for i, c := range clean {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			clean[i] = '_'
			changed = true
		}
	}
	if !changed && len(clean) <= maxLen {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(runID))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	if len(clean) > maxLen-len(suffix) {
		clean = clean[:maxLen-len(suffix)]
	}
	return string(clean) + suffix
}

func (e *engine) Close() error {
	first, err := e.opened.CloseAll()
	if !first {
		return nil
	}
	errs := []error{err}
	e.transport.CloseIdleConnections()
	if e.cluster != nil {
		if err := e.cluster.Stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DeliveryShards: a delivery names the partition it was read from, where Kafka keeps order
// (engines.DeliverySharder). The ledger judges order by it rather than by a routing of its own:
// the partition is what the Writer's balancer chose (round robin, per message, by default) and
// what the broker stored, so the order judged is the one Kafka promises, under the load spread a
// Kafka client really makes; a balancer keyed by producer would keep order topic-wide but put
// each producer on one partition, a different load.
func (e *engine) DeliveryShards() string { return "partition" }

// SoleReaders: the group protocol assigns each partition to one consumer of the group
// (engines.SoleReader), so a partition's order reaches that consumer.
func (e *engine) SoleReaders() bool { return true }

// Lag is the group's backlog: log end offset minus committed offset, summed over partitions. A
// partition with no commit yet counts from its log start. Kafka has no per-message pending
// state, so Pending stays 0: delivered-but-uncommitted messages are part of the backlog.
func (e *engine) Lag(ctx context.Context) (engines.Lag, error) {
	ranges, unknown, err := e.uncommitted(ctx, "lag")
	if err != nil {
		return engines.Lag{}, err
	}
	if len(unknown) > 0 {
		return engines.Lag{}, fmt.Errorf("%s: lag: committed offsets of partitions %v could not be read", e.name, unknown)
	}
	var lag engines.Lag
	for _, r := range ranges {
		lag.Backlog += max(r[1]-r[0], 0)
	}
	return lag, nil
}

// Facts records what ran. Settings hold the client settings and what the broker reports for the
// topic's and the broker's durability settings, so a result shows what was in force rather
// than what was asked for.
func (e *engine) Facts(ctx context.Context) engines.Facts {
	f := engines.Facts{
		Name:    e.name,
		Design:  Design,
		Version: "unknown",
		Address: strings.Join(e.bootstrap, ","),
		Settings: map[string]string{
			"client":             "github.com/segmentio/kafka-go",
			"topic":              e.topic,
			"acks":               acksName(e.opts.acks),
			"partitions":         strconv.Itoa(e.opts.partitions),
			"replication.factor": strconv.Itoa(e.opts.replicationFactor),
			"linger":             e.opts.linger.String(),
			"batch.size":         strconv.FormatInt(e.opts.batchBytes, 10),
			"batch.messages":     strconv.Itoa(e.opts.batchMessages),
			"in_flight":          strconv.Itoa(max(e.spec.InFlight, 1)), // concurrent Sends per producer
			"compression":        compressionName(e.opts.compression),
			"commit":             commitName(e.opts.commitInterval),
			"partitioning":       map[bool]string{false: "round-robin", true: "producer"}[e.opts.byProducer],
		},
	}
	var batches, messages int64
	e.mu.Lock()
	for _, p := range e.producers {
		batches, messages = batches+p.batches.Load(), messages+p.messages.Load()
	}
	e.mu.Unlock()
	if batches > 0 {
		// Produce requests (one partition's batch each in kafka-go) and the records they held, over
		// the whole run so far: records per request, to set beside the Java client's.
		f.Settings["produce.batches"] = strconv.FormatInt(batches, 10)
		f.Settings["produce.batched_messages"] = strconv.FormatInt(messages, 10)
	}
	if e.cluster != nil {
		b := e.cluster.Nodes[0]
		f.Version = b.Version()
		f.Settings["brokers"] = strconv.Itoa(len(e.cluster.Nodes))
		if len(e.cluster.Nodes) == 1 {
			f.Settings["broker.pid"] = strconv.Itoa(b.PID())
			f.Settings["broker.dir"] = b.Dir()
			f.Settings["broker.started_in"] = b.StartedIn().Round(time.Millisecond).String()
		} else {
			var pids, started []string
			for _, k := range e.cluster.Nodes {
				pids = append(pids, fmt.Sprintf("%d:%d", k.ID(), k.PID()))
				started = append(started, k.StartedIn().Round(time.Millisecond).String())
			}
			f.Settings["broker.pids"] = strings.Join(pids, ",")
			f.Settings["broker.started_in"] = strings.Join(started, ",")
		}
	}
	if err := e.readConfigs(ctx, f.Settings); err != nil {
		f.Settings["configs.error"] = err.Error()
	}
	f.Stats = map[string]int64{}
	e.addLogSize(f.Stats) // logsize.go
	return f
}

func compressionName(c kafka.Compression) string {
	if c == 0 {
		return "none"
	}
	return c.String()
}

func commitName(interval time.Duration) string {
	if interval == 0 {
		return "sync"
	}
	return "every " + interval.String()
}
