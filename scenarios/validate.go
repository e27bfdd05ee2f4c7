package scenarios

import (
	"fmt"
	"reflect"
	"time"
)

// Defaults, in one place. A zero value in a scenario means "use the default".
const (
	// DefaultEngine is the in-repo server inside qbench's process: it needs nothing installed.
	// (The default design is the engine's first.)
	DefaultEngine       = "embedded"
	DefaultProducers    = 1
	DefaultConsumers    = 1
	DefaultMessageSize  = 256
	DefaultDuration     = 10 * time.Second
	DefaultDrainTimeout = 5 * time.Second
	DefaultBatch        = 1
	// DefaultInFlight is each producer's limit of batches sent and not yet acknowledged.
	DefaultInFlight = 8
	// MinMessageSize is the stamp every message carries (see bench.StampSize).
	MinMessageSize = 32
)

// ApplyDefaults fills zero values. Warmup has no default: zero means no warm-up.
func (s *Scenario) ApplyDefaults() {
	if s.Engine == "" {
		s.Engine = DefaultEngine
	}
	if s.Producers == 0 {
		s.Producers = DefaultProducers
	}
	if s.Consumers == 0 {
		s.Consumers = DefaultConsumers
	}
	if s.MessageSize.IsFixed() && s.MessageSize.Value == 0 {
		s.MessageSize = Fixed(DefaultMessageSize)
	}
	if s.Payload.Content == "" {
		s.Payload.Content = "random"
	}
	if s.Payload.Content == "compressible" && s.Payload.Ratio == 0 {
		s.Payload.Ratio = 4
	}
	if s.Duration == 0 {
		s.Duration = Duration(DefaultDuration)
	}
	if s.DrainTimeout == 0 {
		s.DrainTimeout = Duration(DefaultDrainTimeout)
	}
	s.applyShapeDefaults()
	if s.Arrival == "" {
		s.Arrival = "uniform"
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Backlog.Set() && s.Backlog.Producers == "" {
		s.Backlog.Producers = "keep"
	}
	if s.Shards > 1 && s.ShardRouting == "" {
		s.ShardRouting = DefaultShardRouting
	}
	if s.ShardRouting == "zipf" && s.ShardSkew == 0 {
		s.ShardSkew = DefaultShardSkew
	}
}

// Sharding defaults: routing when shards > 1, and zipf routing's exponent.
const (
	DefaultShardRouting = "round-robin"
	DefaultShardSkew    = 1.1
)

// validateShards checks shards, shard_routing and shard_skew.
func (s *Scenario) validateShards(bad func(field, format string, args ...any)) {
	if s.Shards < 0 || s.Shards > MaxShards {
		bad("shards", "must be between 1 and %d keys (got %d)", MaxShards, s.Shards)
	}
	switch s.ShardRouting {
	case "", "round-robin", "producer", "zipf":
	default:
		bad("shard_routing", "must be round-robin, producer or zipf (got %q)", s.ShardRouting)
	}
	if s.ShardSkew != 0 && s.ShardRouting != "zipf" {
		bad("shard_skew", "is the exponent of shard_routing: zipf (routing is %q)", s.ShardRouting)
	}
	if s.ShardRouting == "zipf" && !(s.ShardSkew > 1 && s.ShardSkew <= 100) {
		bad("shard_skew", "must be a Zipf exponent above 1 and at most 100 (got %g)", s.ShardSkew)
	}
}

func (s *Scenario) sweepsEngine() bool {
	for _, a := range s.Matrix.Axes {
		if a.Key == "engine" {
			return true
		}
	}
	return s.variantsSet("engine")
}

func (s *Scenario) validate(c Checks) Errors {
	var errs Errors
	bad := func(field, format string, args ...any) {
		errs = append(errs, &Error{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	// Non-finite numbers first: NaN passes every comparison below (NaN <= 0 and NaN > max are
	// both false), and would reach the run.
	checkNumbers(reflect.ValueOf(s).Elem(), "", func(field, format string, args ...any) {
		if field != "duration" && field != "backlog.duration" { // bounded with their own words
			bad(field, format, args...)
		}
	})
	if len(s.Faults) > MaxFaults {
		bad("faults", "must be at most %d faults in one scenario (got %d)", MaxFaults, len(s.Faults))
	}
	if len(errs) > 0 {
		return s.validateSweep(errs, c)
	}
	if s.Producers < 0 {
		bad("producers", "must be at least 1 (got %d)", s.Producers)
	}
	if s.Consumers < 0 {
		bad("consumers", "must be at least 1 (got %d)", s.Consumers)
	}
	// A consume-only run sends nothing: it needs no rate.
	if !s.Rate.Max && s.Rate.PerSecond <= 0 && !s.Profile.Set() && s.Produces() {
		bad("rate", "must be a positive number of messages per second, or max (got %s)", s.Rate)
	} else if !s.Rate.Max && s.Rate.PerSecond > 0 && s.Rate.PerSecond < MinRate {
		bad("rate", "must be at least %g messages per second, one message every %g s (got %s)", MinRate, 1/MinRate, s.Rate)
	}
	s.validateBacklog(bad)
	s.validateShards(bad)
	s.validateWorkload(bad)
	s.validateSize(bad)
	if s.Duration < 0 {
		bad("duration", "must be positive (got %s)", s.Duration)
	}
	if s.Warmup < 0 {
		bad("warmup", "must not be negative (got %s)", s.Warmup)
	}
	if s.Warmup >= s.Duration && s.Duration > 0 {
		bad("warmup", "must be shorter than duration (%s >= %s)", s.Warmup, s.Duration)
	}
	if s.DrainTimeout < 0 {
		bad("drain_timeout", "must not be negative (got %s)", s.DrainTimeout)
	}
	if s.Batch < 0 || s.Batch > 100000 {
		bad("batch", "must be between 1 and 100000 (got %d)", s.Batch)
	}
	if s.InFlight < 0 || s.InFlight > 1024 {
		// 0 (or no in_flight) became the default in ApplyDefaults, as every zero does; the
		// message says so, so that 0 is not read as "unlimited" or "closed loop".
		bad("in_flight", "must be between 1 and 1024 batches per producer, or 0 for the default %d (got %d)", DefaultInFlight, s.InFlight)
	}
	if s.PoisonEvery < 0 {
		bad("poison_every", "must not be negative (got %d)", s.PoisonEvery)
	}
	if s.Work < 0 {
		bad("work", "must not be negative (got %s)", s.Work)
	}
	for i, f := range s.Faults {
		field := fmt.Sprintf("faults.%d", i)
		traits, known := f.Kind.Traits()
		if !known {
			bad(field+".kind", "unknown fault %q (known: %s)", f.Kind, faultKindList())
		}
		if traits.NeedsDuration && f.Duration <= 0 {
			bad(field+".duration", "a %s needs a positive duration (got %s)", f.Kind, f.Duration)
		}
		if f.Duration < 0 {
			bad(field+".duration", "must not be negative (got %s)", f.Duration)
		}
		switch f.Kind {
		case FaultSlowConsumer:
			if f.Work == nil {
				bad(field+".work", "a slow-consumer needs work: {dist: fixed, value: 5ms} (or uniform min/max, lognormal median/sigma)")
			} else {
				f.Work.validate(field+".work", bad)
			}
		case FaultCommand:
			if len(f.Command) == 0 {
				bad(field+".command", "a command fault needs the command, e.g. [BGREWRITEAOF]")
			}
		case FaultIOError:
			if f.Point != "write" && f.Point != "fsync" {
				bad(field+".point", "an io-error needs point: write (writes fail with EIO) or fsync (fsyncs fail with EIO) (got %q)", f.Point)
			}
		case FaultLeaderMove:
			if f.Duration > 0 {
				bad(field+".duration", "a leader-move takes no duration: its window ends when writes go to the new leader (got %s)", f.Duration)
			}
		case FaultFailover:
			if s.Replicas == 0 {
				bad(field+".kind", "failover needs replicas: 1 or more")
			}
		case FaultConsumerCrash:
			if f.Point != "" && f.Point != "after-work" && f.Point != "before-work" {
				bad(field+".point", "must be after-work or before-work (got %q)", f.Point)
			}
			if f.RestartAfter < 0 {
				bad(field+".restart_after", "must not be negative (got %s)", f.RestartAfter)
			}
		}
		if f.RestartAfter < 0 && traits.RestartsDead { // which kinds take it: checkFaultKeys
			bad(field+".restart_after", "must not be negative (got %s)", f.RestartAfter)
		}
		s.validateReplicasBehind(f, field, bad)
		if f.Shard != 0 && !traits.HitsShard {
			bad(field+".shard", "only %s hit a shard (kind is %s)", shardKindList(), f.Kind)
		}
		if f.Shard < 0 || (s.Shards > 0 && f.Shard >= s.Shards) {
			bad(field+".shard", "must name a shard, 0 to shards-1 (got %d)", f.Shard)
		}
		if f.Segment < 0 {
			bad(field+".segment", "must not be negative (got %d): the segment of a segmented run that fires the fault, 0 to N-1", f.Segment)
		}
		if f.Consumer < 0 || (s.Consumers > 0 && f.Consumer >= s.Consumers) {
			bad(field+".consumer", "must name a consumer, 0 to %d (got %d)", s.Consumers-1, f.Consumer)
		}
		if f.At < 0 || (s.Duration > 0 && f.At >= s.Duration) {
			bad(field+".at", "must be before the end of the run, from 0 to less than its duration %s (got %s)", s.Duration, f.At)
		} else if limit, what := s.faultEnd(traits); s.Duration > 0 && f.Duration > 0 && f.At+f.Duration > limit {
			// It would stretch the run, or be cut short by its end: neither is the plan written.
			bad(field+".duration", "a %s at %s for %s ends at %s, after %s at %s; shorten it to at most %s or start it earlier", f.Kind, f.At, f.Duration, f.At+f.Duration, what, limit, limit-f.At)
		} else if end := f.At + f.RestartAfter; traits.RestartsDead && s.Duration > 0 && f.RestartAfter > 0 && end+f.Duration > limit {
			bad(field+".restart_after", "a server that died of it would be restarted at %s, after %s at %s; at most %s, or 0 to leave it down", end+f.Duration, what, limit, limit-f.At-f.Duration)
		} else if s.Duration > 0 && f.RestartAfter > 0 && end > limit && !traits.RestartsDead {
			bad(field+".restart_after", "the consumer would come back at %s, after %s at %s; at most %s, or 0 to keep it down", end, what, limit, limit-f.At)
		}
	}
	if _, ok := Policies[s.Policy]; s.Policy != "" && !ok {
		bad("policy", "must be none, snapshot, aof-no, aof-everysec or aof-always (got %q)", s.Policy)
	}
	if s.Replicas < 0 || s.Replicas > 4 {
		bad("replicas", "must be 0 to 4 (got %d)", s.Replicas)
	}
	s.validateSeed(bad)
	errs = append(errs, s.validateFaultOverlap()...)
	errs = append(errs, s.validateGates(c.Gate)...)
	// When the matrix sweeps the engine, each cell is checked with its own engine instead.
	if !s.sweepsEngine() {
		s.validateEngine(c, bad, &errs)
	}
	// After the engine's section is decoded: the ledger's size depends on its receiving groups.
	s.validateLimits(bad)
	// After the engine's check, which fills in its default design: names depend on the design.
	s.validateRole(c, bad, &errs)
	return s.validateSweep(errs, c)
}

// faultEnd is the latest a fault may last to: an engine-side fault to the end of the run (past
// it, the run would stretch to carry it out), a consumer-side one to the end of the drain, while
// consumers still read.
func (s *Scenario) faultEnd(t FaultTraits) (Duration, string) {
	if t.ConsumerSide {
		return s.Duration + s.DrainTimeout, "the end of the drain (duration + drain_timeout)"
	}
	return s.Duration, "the end of the run (duration)"
}
