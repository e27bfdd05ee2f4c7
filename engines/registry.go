package engines

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Spec is everything an engine needs to know about the run it serves. The scenarios package
// fills it from a validated scenario; zero values mean the engine's defaults.
type Spec struct {
	// RunID is unique per run; every key, stream, list or topic the engine creates is named from it.
	RunID string
	// Design is the queue design: stream, list, reliable-list, pubsub (Redis) or topic (Kafka).
	Design    string
	Producers int
	Consumers int
	// InFlight is how many batches one producer may have in flight at once: up to InFlight
	// goroutines call the same Producer's Send concurrently (size connection pools for
	// Producers*InFlight). 0 means 1.
	InFlight int
	// LossyFS puts a managed server's data directory on the power-loss file system (lossyfs),
	// for power-loss and disk-full faults.
	LossyFS bool
	// Replicas is the number of asynchronous replicas a managed server gets (for failover).
	Replicas int
	// Faults are the kinds of the faults the scenario will fire, so that an engine can prepare
	// for them (a cluster routes its nodes' links through proxies only for a partition), and
	// HoldsReplicas when a kill holds the replicas behind first (replicas_behind).
	Faults []string
	// FaultShards are the shards the scenario's engine-side faults hit, by kind (a fault without
	// shard: hits shard 0), so that an engine can check before the run that each target allows
	// its fault (an existing cluster's shard whose primary has no replica to promote).
	FaultShards map[string][]int
	// Shards spreads the queue over this many keys (streams, lists, channels), named by
	// redisq.ShardKey; 0 or 1 means one key. Kafka's equivalent is its partitions.
	Shards int
	// ShardRouting is how producers choose a shard: round-robin (default), producer (producer i
	// writes shard i mod Shards) or zipf (a hot-key skew, seeded).
	ShardRouting string
	// Names, when set, replace the RunID-derived names of the queue's objects with those of an
	// existing system (producer-only and consumer-only runs), under the keys the registration's
	// Names declares for the design ("stream", "topic", "queue"), validated by its CheckNames.
	// An engine never deletes a named object; it may create a missing one.
	Names map[string]string
	// ShardSkew is the Zipf exponent (s > 1) of zipf routing.
	ShardSkew float64
	// Seed is the scenario's seed, for the engine's own seeded choices (zipf routing).
	Seed int64
	// Address of an existing server, for engines that connect to one (redis-url, kafka-url).
	Address string
	// Persistence is the Redis durability policy, in Redis's own setting names (appendonly,
	// appendfsync, save), with the scenario's policy: folded in.
	Persistence map[string]string
	// Options is what the registration's Decode made of the engine's own section of the
	// scenario (redis: for the Redis engines, kafka: for the Kafka engines); the engine
	// type-asserts it to its own type. Nil when the spec was built without a scenario: the
	// engine's defaults. Spec itself carries only what every engine shares.
	Options any
}

// Factory makes an engine for a run. It may start servers; Close stops them.
type Factory func(ctx context.Context, spec Spec) (Engine, error)

// Registration describes one engine name a scenario may use. Scenario validation reads it (through
// bench.Checks): nothing outside the engine's package names the engine.
type Registration struct {
	Name string
	// Designs this engine supports; the first is the default.
	Designs []string
	// Summary is one line for `qbench engines`.
	Summary string
	New     Factory
	// Faults are the engine-side fault kinds this target can carry out (the kinds without the
	// consumer-side trait in scenarios.FaultKind's table), so that scenario validation refuses,
	// say, a server-crash on a server inside qbench's own process rather than running it.
	Faults []string
	// Sections are the scenario's shared top-level sections this engine reads, of persistence,
	// policy, replicas, shards, shard_routing, shard_skew: one written for an engine that does not
	// list it is an error, not a silent no-op.
	Sections []string
	// Options is the key of the engine's own section of the scenario ("kafka"), "" for none.
	Options string
	// Decode makes the engine's options from its own section. decode fills a pointer to a
	// struct with yaml tags strictly (an unknown key or a wrong type is an error naming the file,
	// line and key); Decode starts from the defaults, checks the values and returns what the
	// engine receives in Spec.Options. An error with a Field() string method names the key at
	// fault; several may be joined (errors.Join). It is called with an empty section when the
	// scenario has none, so the defaults are filled and recorded in the result.
	Decode func(decode func(into any) error) (any, error)
	// Check holds what Decode made against the rest of the scenario (Plan: the design, the
	// consumers, the names), with Decode's kind of errors (Field() names the key within the
	// section). Nil: nothing to check.
	Check func(options any, p Plan) error
	// Names are the objects of an existing system a scenario's names: may name, by design: the
	// first is the queue itself (a stream, list, topic or queue), which a produce-only or
	// consume-only run on an engine that NeedsAddress must name; the others go with it (a
	// consumer group). A design not listed runs against no named objects (it has run-private
	// ones its tear-down deletes). The engine reads the values in Spec.Names under these keys.
	Names map[string][]string
	// CheckNames checks the names a scenario gives (Plan.Names: only keys the design takes,
	// none empty) by the system's own rules and against the run (Plan.Consumes: consumers read
	// them). An error with a Field() string method naming the key ("topic") is reported as
	// names.topic at its line; several may be joined. Nil: any non-empty value is a name.
	CheckNames func(p Plan) error
	// Groups is how many receiving groups (each owed every message) the options make for a
	// design and a number of consumers, known before the engine exists: the ledger's size and
	// the memory budget read it. Nil: one, or one per consumer for pubsub.
	Groups func(options any, design string, consumers int) int
	// Moved are top-level keys of older scenarios that now sit inside the engine's own section
	// (stream: is redis.stream:): a scenario that still writes one is read as if it wrote it in
	// the section, with a deprecation warning.
	Moved []string
	// NeedsAddress: the engine connects to an existing server at the scenario's address.
	NeedsAddress bool
	// Shared says the target is a server qbench does not start (redis-url, kafka-url), so that
	// several qbench processes can load it together (qbench run --segment); a managed or
	// in-process target belongs to one process and is refused for segments.
	Shared bool
	// RunsAlone says a run of this engine should have the machine to itself in tests: its
	// servers are heavy (a JVM broker, Erlang nodes) or it runs inside qbench's own process,
	// sharing the generator's CPU. The failure library runs it one scenario at a time.
	RunsAlone bool
	// ClosedLoop is the batch and in_flight a closed-loop run (rate: max) gets for whichever of
	// them its scenario does not write; zero fields keep the scenario defaults. A closed loop's
	// rate is its window (producers x in_flight batches of batch messages) over the engine's
	// latency: an engine that batches on its own (Kafka's client) needs a wider window than the
	// defaults before qbench's limit stops being what sets the rate.
	ClosedLoop Shape
	// Conformance maps each design to the promises it keeps (conformance.go). The conformance
	// suite runs every registration that declares some and needs no address; nil: not in it.
	Conformance map[string]Conformance
	// Requires says why the engine cannot run on this machine (a server binary or jars
	// missing), nil when it can: tests skip then, and fail under CI=true. Nil: nothing to check.
	Requires func() error
}

// Plan is what a registration's Check sees of the scenario around its own section.
type Plan struct {
	// Design is the run's design (the engine's default filled in).
	Design string
	// Consumers is the number of consumers.
	Consumers int
	// Names are the scenario's names: (the objects of an existing system), nil for none.
	Names map[string]string
	// Consumes: the run has consumers (its role is both or consume).
	Consumes bool
	// AnyDesign: a matrix sweeps the design, so settings for several designs are in order.
	AnyDesign bool
}

// Shape is a producer's batch and in-flight limit.
type Shape struct {
	Batch, InFlight int
}

var (
	mu       sync.RWMutex
	registry = map[string]Registration{}
)

// Register makes an engine available to scenarios. It panics on a duplicate name, which is a
// programming error found at start-up.
func Register(r Registration) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic("engines: duplicate registration of " + r.Name)
	}
	if err := r.checkConformance(); err != nil {
		panic("engines: " + r.Name + ": " + err.Error())
	}
	if err := r.checkNames(); err != nil {
		panic("engines: " + r.Name + ": " + err.Error())
	}
	// The one check of a spec's design, for every caller of New (scenario validation reports it
	// earlier, with its line): an engine never sees a design it did not register.
	newEngine := r.New
	r.New = func(ctx context.Context, spec Spec) (Engine, error) {
		if spec.Design != "" && !r.Supports(spec.Design) {
			return nil, fmt.Errorf("engine %s does not support design %q (it supports %v)", r.Name, spec.Design, r.Designs)
		}
		return newEngine(ctx, spec)
	}
	registry[r.Name] = r
}

// Lookup returns the registration for name.
func Lookup(name string) (Registration, error) {
	mu.RLock()
	defer mu.RUnlock()
	r, ok := registry[name]
	if !ok {
		return Registration{}, fmt.Errorf("unknown engine %q (known: %v)", name, namesLocked())
	}
	return r, nil
}

// All returns every registration, sorted by name.
func All() []Registration {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Supports reports whether the registration supports design.
func (r Registration) Supports(design string) bool {
	for _, d := range r.Designs {
		if d == design {
			return true
		}
	}
	return false
}

// checkConformance refuses a promise for a design the engine does not have, or one the suite
// does not know: either would leave the suite silently short of a case.
func (r Registration) checkConformance() error {
	for design, c := range r.Conformance {
		if !r.Supports(design) {
			return fmt.Errorf("conformance declared for design %q, which the engine does not support (%v)", design, r.Designs)
		}
		for _, p := range c.Promises {
			if !slices.Contains(Promises, p) {
				return fmt.Errorf("design %s: unknown promise %q (known: %v)", design, p, Promises)
			}
		}
		for p := range c.Scenario {
			if !slices.Contains(c.Promises, p) {
				return fmt.Errorf("design %s: scenario for promise %q, which it does not make", design, p)
			}
		}
	}
	return nil
}

// checkNames refuses names declared for a design the engine does not have, or a design with no
// name (its first is the queue a half run must name).
func (r Registration) checkNames() error {
	for design, keys := range r.Names {
		if !r.Supports(design) {
			return fmt.Errorf("names declared for design %q, which the engine does not support (%v)", design, r.Designs)
		}
		if len(keys) == 0 || slices.Contains(keys, "") {
			return fmt.Errorf("design %s: names %q: the first is the queue, and none may be empty", design, keys)
		}
	}
	return nil
}
