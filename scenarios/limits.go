package scenarios

import "time"

// What one qbench process can do, checked before a run starts: a scenario past these would hang
// the machine or exhaust its memory instead of measuring anything (`rate: 1e26` once spun at full
// CPU; `producers: 100000` took 10 GB in 20 s). Split a larger load over several processes.
const (
	// MaxRate is the highest offered rate, messages per second over all producers.
	MaxRate = 10_000_000
	// MaxProducers and MaxConsumers bound the goroutines and connections of one run.
	MaxProducers = 1024
	MaxConsumers = 1024
	// MaxShards bounds the keys one run spreads its queue over (each is a stream, list or
	// channel that every lag reading and the final sweep visit).
	MaxShards = 1024
	// MaxDuration bounds one run (soaks included).
	MaxDuration = 24 * time.Hour
	// MaxBufferBytes bounds the payload buffers producers hold at once:
	// producers x in_flight x batch x message_size.
	MaxBufferBytes = 2 << 30
	// MaxBacklogMessages bounds backlog.messages: the ledger keeps about 20 bytes per message.
	MaxBacklogMessages = 50_000_000
)

func (s *Scenario) validateLimits(bad func(field, format string, args ...any)) {
	if !s.Rate.Max && s.Rate.PerSecond > MaxRate {
		bad("rate", "must be at most %d messages per second in one process (got %s); split the load over several processes", MaxRate, s.Rate)
	}
	if s.Producers > MaxProducers {
		bad("producers", "must be at most %d in one process (got %d)", MaxProducers, s.Producers)
	}
	if s.Consumers > MaxConsumers {
		bad("consumers", "must be at most %d in one process (got %d)", MaxConsumers, s.Consumers)
	}
	if s.Duration > Duration(MaxDuration) {
		bad("duration", "must be at most %s (got %s)", MaxDuration, s.Duration)
	}
	// Buffers are sized for the largest message a distribution can draw.
	if b := int64(s.Producers) * int64(s.InFlight) * int64(s.Batch) * int64(s.MessageSize.Largest()); s.Producers > 0 && s.InFlight > 0 && b > MaxBufferBytes {
		bad("batch", "producers x in_flight x batch x message_size is %d MiB of buffers, more than %d MiB (got %d x %d x %d x %d B, the largest message)",
			b>>20, MaxBufferBytes>>20, s.Producers, s.InFlight, s.Batch, s.MessageSize.Largest())
	}
}
