// Package scenarios holds the scenario schema, its strict YAML decoding, defaults (filled in one
// place) and validation with file:line:field errors. What the loader refuses (file size, one
// document, nulls, fractions, non-finite and out-of-range numbers, the name's character set, the
// number of faults) is listed in README.md; input.go holds those rules.
package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Scenario is one reproducible experiment.
type Scenario struct {
	// Name defaults to the file name without its extension.
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`

	// Engine is the system under test, a name in the engine registry (qbench engines lists them).
	Engine string `yaml:"engine" json:"engine"`
	// Replicas gives a managed redis-server this many asynchronous replicas, for failover.
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// Address of an existing server for redis-url / kafka-url.
	Address string `yaml:"address,omitempty" json:"address,omitempty"`
	// Design is the queue design: stream, list, reliable-list, pubsub, topic. The default is
	// the engine's first design.
	Design string `yaml:"design" json:"design"`

	Producers int `yaml:"producers" json:"producers"`
	// Shards spreads every Redis design over this many keys (streams with their groups, lists,
	// channels); Kafka's equivalent is its partitions. 0 or 1: one key.
	Shards int `yaml:"shards,omitempty" json:"shards,omitempty"`
	// ShardRouting is how producers pick a shard: round-robin (default), producer, zipf.
	ShardRouting string `yaml:"shard_routing,omitempty" json:"shard_routing,omitempty"`
	// ShardSkew is zipf routing's exponent s > 1 (default 1.1): shard k gets a share
	// proportional to 1/(k+1)^s.
	ShardSkew float64 `yaml:"shard_skew,omitempty" json:"shard_skew,omitempty"`
	Consumers int     `yaml:"consumers" json:"consumers"`
	// Rate is the total offered load in messages per second across all producers, or max for a
	// closed loop where each producer sends as soon as the previous send was acknowledged.
	Rate Rate `yaml:"rate" json:"rate"`
	// Arrival is how intended send times are spaced: uniform (evenly, the default) or poisson
	// (exponential gaps of the same mean, seeded by seed).
	Arrival string `yaml:"arrival,omitempty" json:"arrival,omitempty"`
	// Profile varies the rate over the run (ramp, steps, burst) in place of rate.
	Profile Profile `yaml:"profile,omitempty" json:"profile,omitzero"`
	// MessageSize is a number of bytes or a distribution (see Size).
	MessageSize Size `yaml:"message_size" json:"message_size"`
	// Payload is the content after the stamp: random (default) or compressible.
	Payload  Payload  `yaml:"payload,omitempty" json:"payload,omitzero"`
	Duration Duration `yaml:"duration" json:"duration"`
	Warmup   Duration `yaml:"warmup" json:"warmup"`
	// DrainTimeout bounds how long consumers keep reading after producers stop.
	DrainTimeout Duration `yaml:"drain_timeout" json:"drain_timeout"`
	// Batch is the most messages a producer sends in one round trip (pipeline or batch). When a
	// producer falls behind schedule it sends every due message, up to Batch, at once.
	Batch int `yaml:"batch" json:"batch"`
	// InFlight is how many batches one producer may have sent and not yet had acknowledged. A
	// producer keeps to its schedule while earlier batches are in flight; when the limit is
	// reached, due messages wait (they are late, and counted as such), never skipped.
	InFlight int `yaml:"in_flight" json:"in_flight"`
	// Work is the consumer's simulated processing time per message.
	Work Duration `yaml:"work,omitempty" json:"work,omitempty"`
	// PoisonEvery makes every message whose sequence number is a multiple of it fail its work,
	// every time it is delivered: it is never acknowledged, so the design's redelivery and
	// dead-lettering show. 0 means none.
	PoisonEvery int `yaml:"poison_every,omitempty" json:"poison_every,omitempty"`

	// Policy names a Redis durability policy in one word, so that a matrix can sweep it:
	// none, snapshot, aof-no, aof-everysec, aof-always. Persistence settings override it.
	Policy      string            `yaml:"policy,omitempty" json:"policy,omitempty"`
	Persistence map[string]string `yaml:"persistence,omitempty" json:"persistence,omitempty"`

	// Backlog fills the queue with consumers off before the measured phase, then measures the
	// drain (backlog.go).
	Backlog Backlog `yaml:"backlog,omitempty" json:"backlog,omitzero"`
	// Role is produce, consume or both (default): a run may be only the producing or only the
	// consuming half, against the Names of an existing system.
	Role  string `yaml:"role,omitempty" json:"role,omitempty"`
	Names Names  `yaml:"names,omitempty" json:"names,omitzero"`

	// Faults fire at their offsets from the start of the run.
	Faults []Fault `yaml:"faults,omitempty" json:"faults,omitempty"`

	// Knee is the objective a profiled run is judged by each second, a gate expression such as
	// "produce.p99 <= 5ms": the first measured second that violates it is the knee.
	Knee string `yaml:"knee,omitempty" json:"knee,omitempty"`

	// Seed makes every random choice of the run repeatable.
	Seed int64 `yaml:"seed,omitempty" json:"seed,omitempty"`

	// Gates are regression bounds checked after a run and by qbench compare (see gates.go).
	Gates []string `yaml:"gates,omitempty" json:"gates,omitempty"`
	// Matrix sweeps fields: qbench run expands it into one run per combination (see matrix.go).
	Matrix Matrix `yaml:"matrix,omitempty" json:"matrix,omitzero"`
	// Repeat runs each scenario (each cell of a matrix) this many times and merges the
	// repetitions, keeping their spread for noise-aware gates. 0 and 1 mean once.
	Repeat int `yaml:"repeat,omitempty" json:"repeat,omitempty"`

	// Sections are the engines' own sections as written (redis:, kafka:), kept as YAML so that
	// the engine's registration decodes them, with file:line errors (see Checks). A matrix may
	// sweep their keys (kafka.acks, redis.stream.ack).
	Sections map[string]*yaml.Node `yaml:"-" json:"-"`
	// Deprecated are warnings about the file's old forms, read as their new ones (a top-level
	// stream: moved into redis:), each with its file and line: the command line prints them.
	Deprecated Errors `yaml:"-" json:"-"`
	// Options is what the engine's registration made of its own section (defaults filled); the
	// runner hands it to the engine in engines.Spec.Options. Nil until validated.
	Options    any    `yaml:"-" json:"-"`
	optionsKey string // the section Options came from
	// keys are the top-level keys written (and swept), with their lines: a shared section an
	// engine does not read is an error only when written.
	keys map[string]int
	// designSwept marks a cell of a matrix over design: its sections may be for other cells.
	designSwept bool
	// checks are those Parse was given, for Cells.
	checks Checks
	// shapeDefaulted says which of batch and in_flight ApplyDefaults filled (closedloop.go), so
	// a matrix cell of another engine or rate fills them again.
	shapeDefaulted shapeFields
	// dir is the scenario file's directory: a relative persistence.seed-rdb is read from there.
	dir string
	// file is the scenario file, for the errors found after loading (CheckFaultSegments).
	file string
}

// Fault is one fault injected during a run.
type Fault struct {
	// At is the offset from the start of the run (warm-up included).
	At Duration `yaml:"at" json:"at"`
	// Kind is the fault:
	//   stall: the server stops answering for Duration;
	//   server-crash: the server process is killed without warning and restarted after Duration;
	//   power-loss: like server-crash, and every byte not yet fsynced is gone;
	//   disk-full: the server's data directory refuses writes (ENOSPC) for Duration;
	//   io-error: the server's data directory fails with EIO for Duration, at Point: write (writes
	//     and creates fail) or fsync (writes are accepted, every fsync fails);
	//   fork-failure: the server cannot fork for Duration, so a background save or log rewrite
	//     fails to start (Redis refuses writes with MISCONF under stop-writes-on-bgsave-error yes);
	//   failover: the primary is killed and a replica promoted; clients move to it;
	//   command: the server is sent Command (BGSAVE, BGREWRITEAOF, CONFIG SET ...);
	//   consumer-crash: consumer Consumer dies holding a batch, after its work (Point after-work,
	//     the default: the work is done, the acknowledgement never sent) or before it (before-work:
	//     the messages are not processed); it comes back under the same name after RestartAfter,
	//     or never when RestartAfter is 0;
	//   consumer-pause: consumer Consumer stops reading for Duration;
	//   slow-consumer: consumer Consumer takes Work per message for Duration;
	//   subscriber-offline: consumer Consumer disconnects (unsubscribes) for Duration;
	//   primary-kill: the Redis Cluster primary owning shard Shard's slot is killed, its replica
	//     promoted by the cluster;
	//   node-restart: on redis-cluster, that primary is killed and restarted on its directory after
	//     Duration; on a Kafka cluster, the broker leading partition 0 is shut down cleanly and
	//     started again after Duration;
	//   partition-leader-kill: the broker leading partition 0 of the run's topic is killed
	//     (SIGKILL); it comes back after Duration, or stays down when Duration is 0;
	//   leader-move: the leadership is handed to an in-sync replica through the server's own API
	//     (Redis FAILOVER; on a cluster CLUSTER FAILOVER to a replica of shard Shard's primary;
	//     Kafka: partition 0's preferred leader changed and elected); nothing is killed, and the
	//     window ends when writes go to the new leader;
	Kind FaultKind `yaml:"kind" json:"kind"`
	// Duration is how long the fault lasts, for faults that last.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Consumer is the index of the consumer a consumer fault hits.
	Consumer int `yaml:"consumer,omitempty" json:"consumer,omitempty"`
	// Point is where a consumer crash happens: after-work (default) or before-work; for an
	// io-error, what fails: write or fsync.
	Point string `yaml:"point,omitempty" json:"point,omitempty"`
	// Work is a slow-consumer fault's processing time per message.
	Work *WorkDist `yaml:"work,omitempty" json:"work,omitempty"`
	// Command is the server command a command fault sends, e.g. [BGREWRITEAOF] or [BGSAVE].
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Shard is the shard whose primary a primary-kill or node-restart hits (redis-cluster), 0 to
	// shards-1; default 0.
	Shard int `yaml:"shard,omitempty" json:"shard,omitempty"`
	// RestartAfter brings a crashed consumer back after this delay; 0 keeps it down. On a
	// disk-full or io-error, a server that exited of the fault on its own is started again this
	// long after the fault ends, as a supervisor would; 0 leaves it down.
	RestartAfter Duration `yaml:"restart_after,omitempty" json:"restart_after,omitempty"`
	// ReplicasBehind holds the victim's replicas behind for this long before a primary-kill or
	// partition-leader-kill kills it: replication to them stops (redis-cluster: their
	// replication links held in the proxies; Kafka: the partition's followers stopped), so what
	// the primary acknowledges meanwhile is on no replica when it dies. 0: no hold.
	ReplicasBehind Duration `yaml:"replicas_behind,omitempty" json:"replicas_behind,omitempty"`
	// Segment is the segment of a segmented run (qbench run --segment i/N) that fires an
	// engine-side fault, 0 to N-1; default 0. The engine is shared, so the fault is fired once,
	// by that segment; a consumer fault fires in the segment that runs its consumer instead. A
	// run of one process fires every fault itself.
	Segment int `yaml:"segment,omitempty" json:"segment,omitempty"`
	// line is where the fault's segment (or, without one, the fault) is written, for an error
	// that --segment finds (CheckFaultSegments).
	line int
}

// Duration is a time.Duration written as "10s", "250ms" in YAML and JSON.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML accepts Go duration strings ("2s", "150ms").
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write e.g. 10s or 250ms)", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalText writes the duration as a string (JSON too).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Rate is messages per second; 0 after decoding "max" means closed loop.
type Rate struct {
	PerSecond float64
	Max       bool
}

func (r Rate) String() string {
	if r.Max {
		return "max"
	}
	return fmt.Sprintf("%g", r.PerSecond)
}

// UnmarshalYAML accepts a number or the word max.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "max" {
		*r = Rate{Max: true}
		return nil
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("line %d: rate must be messages per second or max, not %q", n.Line, n.Value)
	}
	*r = Rate{PerSecond: v}
	return nil
}

// MarshalYAML writes the number or max.
func (r Rate) MarshalYAML() (any, error) {
	if r.Max {
		return "max", nil
	}
	return r.PerSecond, nil
}

// MarshalText writes the number or max.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads the number or max.
func (r *Rate) UnmarshalText(b []byte) error {
	if string(b) == "max" {
		*r = Rate{Max: true}
		return nil
	}
	_, err := fmt.Sscan(string(b), &r.PerSecond)
	return err
}

// NeedsLossyFS reports whether a fault needs the server's data directory on the power-loss file
// system (power-loss, disk-full).
func (s *Scenario) NeedsLossyFS() bool {
	for _, f := range s.Faults {
		if t, _ := f.Kind.Traits(); t.NeedsLossyFS {
			return true
		}
	}
	return false
}

// Policies are the one-word durability policies and the Redis settings each stands for.
var Policies = map[string]map[string]string{
	"none":         {"appendonly": "no", "save": ""},
	"snapshot":     {"appendonly": "no", "save": "1 1"},
	"aof-no":       {"appendonly": "yes", "appendfsync": "no", "save": ""},
	"aof-everysec": {"appendonly": "yes", "appendfsync": "everysec", "save": ""},
	"aof-always":   {"appendonly": "yes", "appendfsync": "always", "save": ""},
}

// EffectivePersistence is the policy's settings overlaid with the explicit persistence settings.
// A seed-rdb path comes out absolute (seed.go).
func (s *Scenario) EffectivePersistence() map[string]string {
	if s.Policy == "" && s.Persistence[SeedRDBKey] == "" {
		return s.Persistence
	}
	out := map[string]string{}
	for k, v := range Policies[s.Policy] {
		out[k] = v
	}
	for k, v := range s.Persistence {
		out[k] = v
	}
	if out[SeedRDBKey] != "" {
		out[SeedRDBKey] = s.seedPath()
	}
	return out
}

// WorkDist is a distribution of processing times: fixed (Value), uniform (Min to Max) or
// lognormal (Median, Sigma: the log's standard deviation).
type WorkDist struct {
	Dist   string   `yaml:"dist" json:"dist"`
	Value  Duration `yaml:"value,omitempty" json:"value,omitempty"`
	Min    Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max    Duration `yaml:"max,omitempty" json:"max,omitempty"`
	Median Duration `yaml:"median,omitempty" json:"median,omitempty"`
	Sigma  float64  `yaml:"sigma,omitempty" json:"sigma,omitempty"`
}

// Sample draws one processing time.
func (w *WorkDist) Sample(rng *rand.Rand) time.Duration {
	switch w.Dist {
	case "uniform":
		return w.Min.D() + time.Duration(rng.Float64()*float64(w.Max-w.Min))
	case "lognormal":
		return time.Duration(float64(w.Median) * math.Exp(w.Sigma*rng.NormFloat64()))
	}
	return w.Value.D()
}

func (w *WorkDist) validate(field string, bad func(field, format string, args ...any)) {
	switch w.Dist {
	case "fixed":
		if w.Value <= 0 {
			bad(field+".value", "a fixed work time must be positive (got %s)", w.Value)
		}
	case "uniform":
		if w.Min < 0 || w.Max <= w.Min {
			bad(field+".max", "a uniform work time needs 0 <= min < max (got %s to %s)", w.Min, w.Max)
		}
	case "lognormal":
		if w.Median <= 0 {
			bad(field+".median", "a lognormal work time needs a median above 0 (got %s)", w.Median)
		}
		if !(w.Sigma > 0 && w.Sigma <= 5) {
			bad(field+".sigma", "a lognormal work time needs sigma above 0 and at most 5 (got %g); for one time write dist: fixed", w.Sigma)
		}
	default:
		bad(field+".dist", "must be fixed, uniform or lognormal (got %q)", w.Dist)
	}
}
