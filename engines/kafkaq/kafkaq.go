// Package kafkaq is the Kafka engine: one topic per run, written by kafka.Writer and read by
// kafka.Reader in a consumer group (github.com/segmentio/kafka-go).
//
// Engine "kafka" starts its own single-node KRaft broker from jars gathered by
// .ci/kafka-jars.sh (see engines/procs) and can crash and restart it; engine "kafka-url"
// uses an existing cluster whose bootstrap addresses are in Spec.Address (comma-separated).
package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
	"qbench/engines/lossyfs"
	"qbench/engines/procs"
)

// Design is the only design this engine offers: a topic read by a consumer group.
const Design = "topic"

func init() {
	engines.Register(engines.Registration{
		Name:    "kafka",
		Designs: []string{Design},
		Summary: "Apache Kafka topic + consumer group (kafka-go) on a broker qbench starts; needs .ci/kafka-jars.sh and java",
		New:     newManaged,
		Faults:  []string{"server-crash", "power-loss"},
		Options: "kafka", Decode: decodeFor(true),
	})
	engines.Register(engines.Registration{
		Name:    "kafka-url",
		Designs: []string{Design},
		Summary: "Apache Kafka topic + consumer group (kafka-go) on an existing cluster at address (host:port,...)",
		New:     newURL,
		Options: "kafka", Decode: decodeFor(false), NeedsAddress: true,
	})
}

// engine serves one run on one topic.
type engine struct {
	name      string
	spec      engines.Spec
	opts      options
	bootstrap []string
	topic     string
	group     string

	broker  *procs.Kafka // nil for kafka-url
	dataDir string       // removed by Close when the engine made it

	transport *kafka.Transport
	client    *kafka.Client

	mu      sync.Mutex
	closed  bool
	settled bool                         // the group has been seen stable with every consumer once
	opened  []interface{ Close() error } // producers and consumers Close still has to close
}

func newManaged(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec, true)
	if err != nil {
		return nil, err
	}
	home, err := procs.KafkaHome()
	if err != nil {
		return nil, err
	}
	// QBENCH_KAFKA_DATA chooses the file system under test; the default is the temp dir.
	dir, err := os.MkdirTemp(os.Getenv("QBENCH_KAFKA_DATA"), "qbench-kafka-")
	if err != nil {
		return nil, err
	}
	// For power-loss faults the broker's log directory (DIR/data) is a lossyfs mount, which
	// forgets unsynced writes. Its configuration and log stay outside the mount: this process
	// serves the mount, and must neither chdir a child into it nor hold files open on it.
	var fs *lossyfs.FS
	if spec.LossyFS {
		backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "data")
		if err := errors.Join(os.Mkdir(backing, 0o755), os.Mkdir(mnt, 0o755)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if fs, err = lossyfs.Mount(backing, mnt, lossyfs.Options{}); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	b, err := procs.StartKafka(ctx, procs.KafkaConfig{Home: home, Dir: dir, Settings: opts.broker, Probe: Probe})
	if err != nil {
		if fs != nil {
			fs.Unmount()
		}
		os.RemoveAll(dir)
		return nil, err
	}
	if fs != nil {
		// What formatting and start-up wrote would long be on disk on a machine that has run
		// for a while (Kafka's format does not fsync its bootstrap checkpoint): make it durable,
		// so a power cut takes only what the run itself left unsynced.
		if err := fs.Sync(); err != nil {
			b.Stop(10 * time.Second)
			fs.Unmount()
			os.RemoveAll(dir)
			return nil, err
		}
	}
	e := newEngine("kafka", spec, opts, []string{b.Addr()}, b, "")
	return &managed{engine: e, fs: fs, dir: dir}, nil
}

// managed is the engine on a broker it started itself; only it can crash the broker.
type managed struct {
	*engine
	fs  *lossyfs.FS // the broker's data file system, for power loss; nil otherwise
	dir string
}

// Crash kills the broker process group with SIGKILL. The page cache survives, so what the
// broker had written (not necessarily fsynced) is still there on Restart; a power loss also drops
// every unsynced byte, which needs the data on lossyfs (the runner asks for it when a scenario
// has a power-loss fault).
func (m *managed) Crash(ctx context.Context, kind engines.CrashKind) error {
	if kind != engines.ProcessCrash && (kind != engines.PowerLoss || m.fs == nil) {
		return fmt.Errorf("kafka: crash kind %q not supported here (only %q, and %q with the data on lossyfs)", kind, engines.ProcessCrash, engines.PowerLoss)
	}
	if err := m.broker.Kill(); err != nil {
		return err
	}
	if kind == engines.PowerLoss {
		m.fs.Cut()
		m.fs.Recover()
	}
	return nil
}

// Close stops the broker, then unmounts its file system and removes its directory.
func (m *managed) Close() error {
	err := m.engine.Close()
	if m.fs != nil {
		err = errors.Join(err, m.fs.Unmount())
	}
	return errors.Join(err, os.RemoveAll(m.dir))
}

// Restart starts the broker again on the same directory and ports, which runs Kafka's log
// recovery after a crash, and returns once it answers.
func (m *managed) Restart(ctx context.Context) error {
	if err := m.broker.Start(ctx); err != nil {
		return err
	}
	// Pooled connections point at the dead process; drop them now rather than on first use.
	m.transport.CloseIdleConnections()
	return nil
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
	e := newEngine("kafka-url", spec, opts, addrs, nil, "")
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := e.client.Metadata(pctx, &kafka.MetadataRequest{}); err != nil {
		e.Close()
		return nil, fmt.Errorf("kafka-url: %s: %w", spec.Address, err)
	}
	return e, nil
}

func newEngine(name string, spec engines.Spec, opts options, bootstrap []string, b *procs.Kafka, dir string) *engine {
	// A transport of our own: after a broker restart on the same port, kafka.DefaultTransport's
	// shared pool handed out dead connections for a while (kafka-go #1352).
	t := &kafka.Transport{DialTimeout: 5 * time.Second, MetadataTTL: 10 * time.Second, ClientID: "qbench"}
	return &engine{
		name:      name,
		spec:      spec,
		opts:      opts,
		bootstrap: bootstrap,
		topic:     topicName(spec.RunID),
		group:     "qbench-" + spec.RunID,
		broker:    b,
		dataDir:   dir,
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

// Probe reports whether a broker answers a metadata request at addr and lists itself.
func Probe(ctx context.Context, addr string) error {
	t := &kafka.Transport{DialTimeout: time.Second}
	defer t.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(addr), Transport: t, Timeout: 2 * time.Second}
	m, err := c.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return err
	}
	if len(m.Brokers) == 0 {
		return errors.New("metadata lists no brokers")
	}
	return nil
}

func (e *engine) Setup(ctx context.Context) error {
	cfg := kafka.TopicConfig{
		Topic:             e.topic,
		NumPartitions:     e.opts.partitions,
		ReplicationFactor: e.opts.replicationFactor,
	}
	for _, k := range sortedKeys(e.opts.topic) {
		cfg.ConfigEntries = append(cfg.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: e.opts.topic[k]})
	}
	res, err := e.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{cfg}})
	if err != nil {
		return fmt.Errorf("%s: create topic %s: %w", e.name, e.topic, err)
	}
	if err := res.Errors[e.topic]; err != nil {
		return fmt.Errorf("%s: create topic %s: %w", e.name, e.topic, err)
	}
	return e.waitTopic(ctx)
}

// waitTopic waits until metadata shows every partition with a leader: CreateTopics returns
// once the controller has the topic, before the brokers serve it.
func (e *engine) waitTopic(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last error
	for {
		m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
		switch {
		case err != nil:
			last = err
		case len(m.Topics) != 1 || m.Topics[0].Error != nil:
			last = fmt.Errorf("topic not in metadata yet: %v", m.Topics)
		default:
			ready := len(m.Topics[0].Partitions) == e.opts.partitions
			for _, p := range m.Topics[0].Partitions {
				if p.Error != nil || p.Leader.Port == 0 {
					ready = false
				}
			}
			if ready {
				return nil
			}
			last = errors.New("partitions without a leader")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: topic %s not ready: %w (last: %v)", e.name, e.topic, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (e *engine) Teardown(ctx context.Context) error {
	var errs []error
	if r, err := e.client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{e.topic}}); err != nil {
		errs = append(errs, err)
	} else if err := r.Errors[e.topic]; err != nil && !errors.Is(err, kafka.UnknownTopicOrPartition) {
		errs = append(errs, err)
	}
	// Deleting the group is tidiness, not correctness: a group that never existed, still has
	// members (consumers not closed), or whose coordinator is not loaded yet (no group was ever
	// used on a fresh broker) is left to expire with offsets.retention.minutes.
	if r, err := e.client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{e.group}}); err == nil {
		switch err := r.Errors[e.group]; {
		case err == nil, errors.Is(err, kafka.GroupIdNotFound), errors.Is(err, kafka.NonEmptyGroup),
			errors.Is(err, kafka.NotCoordinatorForGroup), errors.Is(err, kafka.GroupCoordinatorNotAvailable),
			errors.Is(err, kafka.GroupLoadInProgress):
		default:
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: teardown %s: %w", e.name, e.topic, err)
	}
	return nil
}

func (e *engine) track(c interface{ Close() error }) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("%s: engine closed", e.name)
	}
	e.opened = append(e.opened, c)
	return nil
}

func (e *engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	opened := e.opened
	e.opened = nil
	e.mu.Unlock()

	var errs []error
	for _, c := range opened {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	e.transport.CloseIdleConnections()
	if e.broker != nil {
		if err := e.broker.Stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if e.dataDir != "" {
		if err := os.RemoveAll(e.dataDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

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
	if e.broker != nil {
		f.Version = e.broker.Version()
		f.Settings["broker.pid"] = strconv.Itoa(e.broker.PID())
		f.Settings["broker.dir"] = e.broker.Dir()
		f.Settings["broker.started_in"] = e.broker.StartedIn.Round(time.Millisecond).String()
	}
	if err := e.readConfigs(ctx, f.Settings); err != nil {
		f.Settings["configs.error"] = err.Error()
	}
	return f
}

// readConfigs reads the durability settings back from the cluster via DescribeConfigs.
func (e *engine) readConfigs(ctx context.Context, into map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
	if err != nil {
		return err
	}
	res := []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic,
		ResourceName: e.topic,
		ConfigNames:  append([]string{"unclean.leader.election.enable"}, keysOf(topicKeys, e.opts.topic)...),
	}}
	if len(m.Brokers) > 0 {
		res = append(res, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeBroker,
			ResourceName: strconv.Itoa(m.Brokers[0].ID),
			ConfigNames:  keysOf(brokerKeys, e.opts.broker),
		})
	}
	r, err := e.client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: res})
	if err != nil {
		return err
	}
	for _, rr := range r.Resources {
		prefix := "topic."
		if rr.ResourceType == int8(kafka.ResourceTypeBroker) {
			prefix = "broker."
		}
		if rr.Error != nil {
			into[prefix+"error"] = rr.Error.Error()
			continue
		}
		for _, c := range rr.ConfigEntries {
			into[prefix+c.ConfigName] = c.ConfigValue
		}
	}
	return nil
}

// keysOf is the union of a fixed key set and the keys of extra, sorted.
func keysOf(fixed map[string]bool, extra map[string]string) []string {
	set := map[string]string{}
	for k := range fixed {
		set[k] = ""
	}
	for k := range extra {
		set[k] = ""
	}
	return sortedKeys(set)
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
