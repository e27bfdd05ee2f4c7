package procs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"qbench/engines/server/fsys"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultKafkaVersion is the broker version .ci/kafka-jars.sh fetches by default.
const DefaultKafkaVersion = "4.1.1"

// KafkaHome returns the directory holding the broker's jars (libs/*.jar): $QBENCH_KAFKA_HOME, or
// $HOME/.cache/qbench/kafka-<version> with version $QBENCH_KAFKA_VERSION or DefaultKafkaVersion.
// It fails with a message naming the script when the jars or java are missing.
func KafkaHome() (string, error) {
	home := os.Getenv("QBENCH_KAFKA_HOME")
	if home == "" {
		v := os.Getenv("QBENCH_KAFKA_VERSION")
		if v == "" {
			v = DefaultKafkaVersion
		}
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("procs: kafka jars: %w", err)
		}
		home = filepath.Join(h, ".cache", "qbench", "kafka-"+v)
	}
	if _, err := kafkaVersion(home); err != nil {
		return "", fmt.Errorf("procs: no Kafka broker jars in %s (run .ci/kafka-jars.sh, or set QBENCH_KAFKA_HOME): %w", home, err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("procs: the Kafka broker needs java 17 or newer on PATH: %w", err)
	}
	return home, nil
}

// kafkaVersion reads the broker version from the name of its jar, libs/kafka_2.13-<version>.jar.
func kafkaVersion(home string) (string, error) {
	m, err := filepath.Glob(filepath.Join(home, "libs", "kafka_2.*-*.jar"))
	if err != nil {
		return "", err
	}
	for _, p := range m {
		base := strings.TrimSuffix(filepath.Base(p), ".jar")
		if strings.Contains(base, "-test") || strings.Contains(base, "-sources") {
			continue
		}
		if i := strings.Index(base, "-"); i > 0 {
			return base[i+1:], nil
		}
	}
	return "", errors.New("libs/kafka_2.13-<version>.jar not found")
}

// KafkaConfig describes a KRaft broker (combined broker and controller), alone or as one node
// of a cluster started by StartKafkaCluster.
type KafkaConfig struct {
	// Home holds libs/*.jar; empty means KafkaHome().
	Home string
	// Dir is the broker's own directory: server.properties, broker.log and data/ go there. It
	// must exist; it survives Kill so that Start can recover from it.
	Dir string
	// Settings override or extend server.properties (log.flush.interval.messages, ...).
	Settings map[string]string
	// JVMOptions replace the default heap and GC flags.
	JVMOptions []string
	// Probe reports whether the broker answers at addr (a metadata request). Nil means a TCP dial.
	Probe func(ctx context.Context, addr string) error
	// StartTimeout bounds formatting plus start-up; zero means 60 s, and 45 s more for each
	// further node of a cluster.
	StartTimeout time.Duration
}

// DefaultKafkaJVMOptions are kafka-server-start.sh's defaults with a smaller heap, which a
// single-partition benchmark broker does not need.
var DefaultKafkaJVMOptions = []string{
	"-Xms512m", "-Xmx1g",
	"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
}

// Kafka is a broker started by StartKafka, or one node of a KafkaCluster.
type Kafka struct {
	cfg KafkaConfig
	id  int // node.id, 1..n; 0 for a broker alone, which is node 1
	// quorum holds every node's controller port, node i+1 at index i; empty for a broker alone.
	quorum   []int
	cluster  string // the cluster ID every node is formatted with
	port     int
	ctrlPort int
	version  string
	settings map[string]string
	// proc is the running process: atomic, since a fault restarts the broker while the runner
	// reads its PID for the run's facts.
	proc atomic.Pointer[Proc]
	// startedIn is how long the last start took until the probe succeeded (without formatting).
	// Atomic: a fault restarts the node while the runner reads the facts.
	startedIn atomic.Int64
}

// StartKafka formats a fresh data directory under cfg.Dir and starts a single broker on free
// loopback ports. It returns once the broker answers Probe.
func StartKafka(ctx context.Context, cfg KafkaConfig) (*Kafka, error) {
	c, err := StartKafkaCluster(ctx, cfg, 1)
	if err != nil {
		return nil, err
	}
	return c.Nodes[0], nil
}

func (k *Kafka) properties() map[string]string {
	// The internal topics (consumer offsets, transactions, share state) are replicated like a
	// production cluster's, up to three copies, so a node's death does not take the group
	// coordinator with it.
	id, quorum := k.id, k.quorum
	if id == 0 {
		id, quorum = 1, []int{k.ctrlPort}
	}
	voters := make([]string, len(quorum))
	for i, port := range quorum {
		voters[i] = fmt.Sprintf("%d@127.0.0.1:%d", i+1, port)
	}
	rf := strconv.Itoa(min(len(quorum), 3))
	p := map[string]string{
		"process.roles":                    "broker,controller",
		"node.id":                          strconv.Itoa(id),
		"controller.quorum.voters":         strings.Join(voters, ","),
		"listeners":                        fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", k.port, k.ctrlPort),
		"advertised.listeners":             fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", k.port),
		"controller.listener.names":        "CONTROLLER",
		"listener.security.protocol.map":   "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":       "PLAINTEXT",
		"log.dirs":                         k.DataDir(),
		"num.partitions":                   "1",
		"offsets.topic.replication.factor": rf,
		// One partition for __consumer_offsets: 50 (the default) costs seconds at first use.
		"offsets.topic.num.partitions":                     "1",
		"transaction.state.log.replication.factor":         rf,
		"transaction.state.log.min.isr":                    "1",
		"share.coordinator.state.topic.replication.factor": rf,
		"share.coordinator.state.topic.min.isr":            "1",
		"group.initial.rebalance.delay.ms":                 "0",
		"auto.create.topics.enable":                        "false",
		"delete.topic.enable":                              "true",
		// A broker restarted after SIGKILL cannot register again until the controller expires
		// the session of its previous incarnation (DUPLICATE_BROKER_REGISTRATION); with the 9 s
		// default every crash cost ~10 s on top of start-up. 1 s made a restart answer in ~4 s,
		// but a loaded 2-core machine then once lost the partition leader mid-run (a late
		// heartbeat fencing the live broker, most likely), so 3 s.
		"broker.heartbeat.interval.ms": "500",
		"broker.session.timeout.ms":    "3000",
	}
	for key, v := range k.cfg.Settings {
		p[key] = v
	}
	// log.flush.interval.ms does nothing unless the flush scheduler runs at least that often
	// (its interval defaults to Long.MAX_VALUE).
	if ms, ok := p["log.flush.interval.ms"]; ok {
		if _, set := p["log.flush.scheduler.interval.ms"]; !set {
			p["log.flush.scheduler.interval.ms"] = ms
		}
	}
	return p
}

func writeProperties(path string, p map[string]string) error {
	keys := make([]string, 0, len(p))
	for key := range p {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by qbench (engines/procs)\n")
	for _, key := range keys {
		fmt.Fprintf(&b, "%s=%s\n", key, p[key])
	}
	return writeDurably(path, []byte(b.String()))
}

func (k *Kafka) propertiesPath() string { return filepath.Join(k.cfg.Dir, "server.properties") }
func (k *Kafka) logPath() string        { return filepath.Join(k.cfg.Dir, "broker.log") }

func (k *Kafka) java(jvm []string, mainClass string, args ...string) Command {
	a := append([]string{}, jvm...)
	// slf4j-simple prints no time by default; broker.log is for diagnosing slow starts.
	a = append(a, "-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS")
	a = append(a, "-cp", filepath.Join(k.cfg.Home, "libs", "*"), mainClass)
	return Command{Path: "java", Args: append(a, args...), Dir: k.cfg.Dir, Log: k.logPath()}
}

// format runs kafka.tools.StorageTool format with the cluster's ID.
func (k *Kafka) format(ctx context.Context) error {
	c := k.java([]string{"-Xmx256m"}, "kafka.tools.StorageTool", "format", "-t", k.cluster, "-c", k.propertiesPath())
	p, err := Run(ctx, c)
	switch {
	case p == nil:
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("procs: kafka storage format: %w", ctx.Err())
	case err != nil:
		return fmt.Errorf("procs: kafka storage format: %v; log tail:\n%s", err, p.LogTail(2000))
	}
	return nil
}

// clusterID is what `StorageTool random-uuid` prints: 16 random bytes, URL-safe base64 without
// padding, never starting with '-' (Kafka's Uuid.randomUuid avoids that for command lines).
func clusterID() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		s := base64.RawURLEncoding.EncodeToString(b[:])
		if s[0] != '-' {
			return s
		}
	}
}

// Start starts the broker on its existing directory and ports, after StartKafka or Kill, and
// waits until it answers.
func (k *Kafka) Start(ctx context.Context) error {
	if p := k.proc.Load(); p != nil && !p.Exited() {
		return fmt.Errorf("procs: kafka broker already running (pid %d)", p.PID())
	}
	ctx, cancel := context.WithTimeout(ctx, k.cfg.StartTimeout)
	defer cancel()
	began := time.Now()
	jvm := k.cfg.JVMOptions
	if jvm == nil {
		jvm = DefaultKafkaJVMOptions
	}
	p, err := Start(k.java(jvm, "kafka.Kafka", k.propertiesPath()))
	if err != nil {
		return err
	}
	k.proc.Store(p)
	probe := k.cfg.Probe
	if probe == nil {
		probe = dialProbe
	}
	if err := p.WaitReady(ctx, 100*time.Millisecond, func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return probe(pctx, k.Addr())
	}); err != nil {
		_ = p.Kill()
		return fmt.Errorf("procs: kafka broker: %w", err)
	}
	k.startedIn.Store(int64(time.Since(began)))
	return nil
}

func dialProbe(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// Addr is the bootstrap address, 127.0.0.1:<port>.
func (k *Kafka) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(k.port)) }

// PID is the broker's process ID, 0 when it is not running.
func (k *Kafka) PID() int {
	p := k.proc.Load()
	if p == nil || p.Exited() {
		return 0
	}
	return p.PID()
}

// ID is the broker's node.id (1 for a single broker; 1..n in a cluster).
func (k *Kafka) ID() int { return max(k.id, 1) }

// Version is the broker version, from its jar.
func (k *Kafka) Version() string { return k.version }

// Settings are the server.properties the broker runs with.
func (k *Kafka) Settings() map[string]string {
	out := make(map[string]string, len(k.settings))
	for key, v := range k.settings {
		out[key] = v
	}
	return out
}

// Dir is the broker's directory (server.properties, broker.log, data/).
func (k *Kafka) Dir() string { return k.cfg.Dir }

// DataDir is the broker's log directory (log.dirs): a partition's segments are in topic-N there.
func (k *Kafka) DataDir() string { return filepath.Join(k.cfg.Dir, "data") }

// Kill crashes the broker: SIGKILL to its process group. The data directory stays for Start.
func (k *Kafka) Kill() error {
	p := k.proc.Load()
	if p == nil {
		return nil
	}
	return p.Kill()
}

// Stop shuts the broker down cleanly (SIGTERM), and kills it if it takes longer than grace.
func (k *Kafka) Stop(grace time.Duration) error {
	p := k.proc.Load()
	if p == nil {
		return nil
	}
	return p.Stop(grace)
}

// Pause stops the broker's processes (SIGSTOP) without killing them: it neither fetches nor
// answers, as a frozen VM or a long GC pause would not. Resume continues them.
func (k *Kafka) Pause() error {
	p := k.proc.Load()
	if p == nil {
		return errors.New("procs: kafka broker not running")
	}
	return p.Signal(syscall.SIGSTOP)
}

// Resume continues a paused broker (SIGCONT).
func (k *Kafka) Resume() error {
	p := k.proc.Load()
	if p == nil {
		return errors.New("procs: kafka broker not running")
	}
	return p.Signal(syscall.SIGCONT)
}

// LogTail returns the end of broker.log.
func (k *Kafka) LogTail(n int) string { return tail(k.logPath(), n) }

// writeDurably writes a file and fsyncs it and its directory: the broker's configuration must
// survive a simulated power loss like any configuration on a real disk.
func writeDurably(path string, data []byte) error {
	if err := fsys.WriteFileSynced(fsys.OS{}, path, data); err != nil {
		return err
	}
	_ = fsys.OS{}.SyncDir(filepath.Dir(path)) // some file systems refuse a directory fsync; the file itself is synced
	return nil
}

// StartedIn is how long the last start took until the probe succeeded (without formatting).
func (k *Kafka) StartedIn() time.Duration { return time.Duration(k.startedIn.Load()) }
