package scenarios

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

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
	// MaxBacklogMessages bounds backlog.messages (the memory budget bounds its fill too).
	MaxBacklogMessages = 50_000_000
	// MaxMessagesPerProducer: the reference ledger (a segment's) numbers a producer's messages
	// in 32 bits (its reorder marks are uint32).
	MaxMessagesPerProducer = math.MaxUint32
)

// The memory budget bounds what the ledger keeps. A run keeps the compact ledger
// (bench/ledger.Compact): a message one by one while it is unresolved (sent and not yet
// delivered to every group, or failed, duplicated, out of order), UnresolvedBytesPerMessage, for
// HotWindowMessages of each producer's backlog and DenseBytesPerMessage at most beyond, and once
// settled only as a count and a share of a span of intended times, SettledBytesPerMessage.
// Its memory follows the backlog, not the run's length, so the budget bounds the backlog it can
// foresee (BacklogBound: the rate over BacklogHorizon, a backlog phase's fill, a spill window per
// producer for scattered losses); a run whose backlog outgrows that anyway (consumers that cannot
// keep up) stops producing at the budget and says so (bench/msgcap.go).
//
// A segment of a run (--segment) keeps the reference ledger (bench/ledger.Ledger): every
// message's marks until the run ends (flags, intended time and reorder mark, 17 bytes with the
// slices' share, and a 4-byte delivery count for each receiving group), so rate x duration is
// memory (CheckReferenceLedger). The budget is --memory-budget, else $QBENCH_MEMORY_BUDGET, else
// MemoryShare of the machine's MemAvailable (the rest is for the slices' growth, the histograms,
// the engine's clients and, for an embedded engine, the messages themselves).
const (
	MemoryBudgetEnv = "QBENCH_MEMORY_BUDGET"
	MemoryShare     = 0.5
	// fallbackMemory is assumed when /proc/meminfo cannot be read (not Linux).
	fallbackMemory = 8 << 30
)

// LedgerBytesPerMessage is what the reference ledger keeps for one message sent to groups
// receiving groups.
func LedgerBytesPerMessage(groups int) int64 { return 17 + 4*int64(max(groups, 1)) }

// UnresolvedBytesPerMessage is what the compact ledger keeps for one unresolved message: its
// marks (16 bytes and 4 per group) with room for the window's copy as it grows, or a spilled
// message's (24 and 4 per group). Measured: 26 bytes with one group, a 500,000-message backlog
// (bench/ledger's BenchmarkCompactLedger10M).
func UnresolvedBytesPerMessage(groups int) int64 { return 32 + 8*int64(max(groups, 1)) }

// SettledBytesPerMessage is what the compact ledger keeps for a settled message: a 16-byte span
// of intended times per 4096.
const SettledBytesPerMessage = 1.0 / 256

// HotWindowMessages is how much of one producer's backlog the compact ledger keeps at
// UnresolvedBytesPerMessage before the rest freezes into its dense form (bench/ledger's
// freezeAfterMessages, and the blocks at the window's ends that stay hot).
const HotWindowMessages = 64*1024 + 18*1024

// DenseBytesPerMessage is the most the compact ledger's dense form keeps for a message of a long
// backlog, acknowledged and delivered to each group once or not yet (bench/ledger's dense.go):
// 48 bits of packed differences at most (a block needing more stays hot), a batch-start bit and
// at most 320 bytes of header and rounding per 1024 messages, and per group a delivery bit and a
// shard mark of up to 16 bits. A paced backlog measures 0.32 bytes, a rate: max one 0.43 (BenchmarkDenseBacklog).
func DenseBytesPerMessage(groups int) float64 {
	return (49+17*float64(max(groups, 1)))/8 + 320.0/1024
}

// horizonFloor is the part of BacklogHorizon every run has: messages in flight and in the
// engine, a consumer's slow second, a reconnection.
const horizonFloor = time.Minute

// spillWindow is how many messages of one producer a lost message can hold in the compact
// ledger's window before they are spilled (bench/ledger's spillWindow).
const spillWindow = 8192

// BacklogHorizon is how long the budget assumes a message may stay unresolved in a run whose
// consumers keep up: a minute, the drain timeout, every fault's duration and a crashed consumer's
// restart delay, and, for a fault nothing recovers from (a consumer that never comes back, a
// leader left down), the rest of the run. The second result says what it added up.
func (s *Scenario) BacklogHorizon() (time.Duration, string) {
	h, faults := horizonFloor+s.DrainTimeout.D(), time.Duration(0)
	for _, f := range s.Faults {
		d := f.Duration.D() + f.RestartAfter.D()
		if d == 0 && (f.Kind == "consumer-crash" || f.Kind == "partition-leader-kill") {
			d = max(0, s.Duration.D()-f.At.D())
		}
		faults += d
	}
	why := fmt.Sprintf("a minute for latency and recovery, drain_timeout %s", s.DrainTimeout)
	if faults > 0 {
		why += fmt.Sprintf(", the faults' %s", faults)
	}
	return h + faults, why
}

// BacklogBound is the most messages the budget assumes the compact ledger holds unresolved at
// once, of n scheduled: the rate (a profile's peak) over BacklogHorizon, a backlog phase's fill,
// and one spill window per producer; never more than n.
func (s *Scenario) BacklogBound(n float64) float64 {
	rate := s.Rate.PerSecond
	if s.Profile.Set() {
		rate = s.Profile.PeakRate()
	}
	h, _ := s.BacklogHorizon()
	b := rate*h.Seconds() + float64(max(s.Producers, 1))*spillWindow
	if bl := s.Backlog; bl.Set() {
		fill := float64(bl.Messages)
		if bl.Duration > 0 {
			fill = rate * bl.Duration.D().Seconds()
		}
		b += fill
	}
	return min(b, n)
}

// LedgerBudget is the memory budget in bytes, 0 when it cannot be resolved.
func (s *Scenario) LedgerBudget() int64 {
	b, err := ResolveMemoryBudget(s.checks.MemoryBudget)
	if err != nil {
		return 0
	}
	return b.Bytes
}

// MemoryBudget is the bytes one run's ledger may take, and where the figure came from.
type MemoryBudget struct {
	Bytes  int64
	Source string
}

func (b MemoryBudget) String() string { return fmt.Sprintf("%s (%s)", FormatBytes(b.Bytes), b.Source) }

// ResolveMemoryBudget is the budget: flagBytes when positive (--memory-budget), else
// $QBENCH_MEMORY_BUDGET, else MemoryShare of MemAvailable.
func ResolveMemoryBudget(flagBytes int64) (MemoryBudget, error) {
	if flagBytes > 0 {
		return MemoryBudget{flagBytes, "--memory-budget"}, nil
	}
	if v := os.Getenv(MemoryBudgetEnv); v != "" {
		n, err := ParseBytes(v)
		if err != nil {
			return MemoryBudget{}, fmt.Errorf("$%s: %w", MemoryBudgetEnv, err)
		}
		return MemoryBudget{n, "$" + MemoryBudgetEnv}, nil
	}
	avail, err := memAvailable()
	if err != nil {
		return MemoryBudget{int64(MemoryShare * fallbackMemory), fmt.Sprintf("%.0f%% of an assumed %s: %v; set --memory-budget or $%s", 100*MemoryShare, FormatBytes(fallbackMemory), err, MemoryBudgetEnv)}, nil
	}
	return MemoryBudget{int64(MemoryShare * float64(avail)), fmt.Sprintf("%.0f%% of MemAvailable %s; set --memory-budget or $%s", 100*MemoryShare, FormatBytes(avail), MemoryBudgetEnv)}, nil
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("/proc/meminfo has no MemAvailable")
}

// ParseBytes reads a size: a number of bytes with an optional unit (KB, MB, GB, TB are powers
// of 1000; KiB, MiB, GiB, TiB of 1024), e.g. 512MiB, 4GB, 1e9.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v*mult >= 1) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size (write e.g. 512MiB or 4GB)", s)
	}
	return int64(v * mult), nil
}

// FormatBytes writes n in binary units.
func FormatBytes(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if f < 1024 || u == "TiB" {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
		f /= 1024
	}
	return ""
}

// ReceivingGroups estimates the groups owed every message, for the ledger's size: what the
// engine's registration makes of its own section (Engine.Groups: a Redis stream has
// redis.stream.groups), else one per pub/sub subscriber or one. The engine's own count
// (engines.Grouper) is known only once it runs.
func (s *Scenario) ReceivingGroups() int {
	if e, err := s.checks.engine(s.Engine); err == nil && e.Groups != nil && s.Options != nil {
		return max(e.Groups(s.Options, s.Design, s.Consumers), 1)
	}
	if s.Design == "pubsub" {
		return max(s.Consumers, 1)
	}
	return 1
}

// ExpectedMessages is the most messages the scenario's producers are scheduled to send: the rate
// (a profile's peak) over the schedule (the duration, warm-up included, plus a backlog's fill when
// producers keep going). 0 for rate: max, which has no schedule, and for a consume-only run.
func (s *Scenario) ExpectedMessages() float64 {
	rate := s.Rate.PerSecond
	if s.Profile.Set() {
		rate = s.Profile.PeakRate()
	}
	if s.Rate.Max || !s.Produces() || rate <= 0 {
		return 0
	}
	n := rate * s.Duration.D().Seconds()
	if b := s.Backlog; b.Set() {
		fill := float64(b.Messages)
		if b.Duration > 0 {
			fill = rate * b.Duration.D().Seconds()
		}
		if b.Producers == "stop" {
			return fill
		}
		n += fill
	}
	return n
}

// MessageCap is how many messages a rate: max run keeping the reference ledger (a segment) may
// send before its producers stop: what the memory budget holds, and what the ledger can number.
// 0 when the budget cannot be resolved.
func (s *Scenario) MessageCap() int64 {
	b, err := ResolveMemoryBudget(s.checks.MemoryBudget)
	if err != nil {
		return 0
	}
	n := b.Bytes / LedgerBytesPerMessage(s.ReceivingGroups())
	return min(n, int64(max(s.Producers, 1))*MaxMessagesPerProducer)
}

// validateMemory bounds what the compact ledger is expected to keep by the memory budget: the
// backlog it can foresee, and a little for every message.
func (s *Scenario) validateMemory(c Checks, bad func(field, format string, args ...any)) {
	n := s.ExpectedMessages()
	if n == 0 {
		return
	}
	field := "rate"
	if s.Profile.Set() {
		field = "profile"
	}
	if !s.Consumes() {
		// Nothing is delivered: every message stays unresolved, and the reference ledger keeps
		// it in fewer bytes (bench's newRunLedger).
		s.boundReference(c, bad)
		return
	}
	b, err := ResolveMemoryBudget(c.MemoryBudget)
	if err != nil {
		bad(field, "%v", err)
		return
	}
	groups := s.ReceivingGroups()
	per, dense := UnresolvedBytesPerMessage(groups), DenseBytesPerMessage(groups)
	backlog := s.BacklogBound(n)
	hot := min(backlog, float64(max(s.Producers, 1))*(HotWindowMessages+spillWindow))
	if need := hot*float64(per) + (backlog-hot)*dense + n*SettledBytesPerMessage; need > float64(b.Bytes) {
		h, why := s.BacklogHorizon()
		if s.Backlog.Set() {
			why += "; the backlog phase's fill"
		}
		bad(field, "%s messages per second for %s is %.3g messages; the ledger keeps an unresolved one (sent, not yet delivered to every group) in %d bytes (%d receiving group(s)) for the first %d of each producer's backlog and in at most %.3g bytes beyond (acknowledged messages, in the dense form), and each settled one in 1/256 byte: with a backlog of up to %.3g messages (the rate over %s: %s; and %d per producer a loss can hold) that is %s, more than the memory budget %s; lower the rate, shorten the faults, split the load over several processes, or raise the budget",
			rateText(s), s.scheduleText(), n, per, groups, HotWindowMessages+spillWindow, dense, backlog, h, why, spillWindow, FormatBytes(int64(need)), b)
	}
}

// CheckReferenceLedger bounds the messages a run keeping the reference ledger (a segment of a
// run, a produce-only run) is scheduled to send by the memory budget, and each producer's by
// what that ledger can number.
func (s *Scenario) CheckReferenceLedger() error {
	var errs []error
	s.boundReference(s.checks, func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	})
	return errors.Join(errs...)
}

func (s *Scenario) boundReference(c Checks, bad func(field, format string, args ...any)) {
	n := s.ExpectedMessages()
	if n == 0 {
		return
	}
	field := "rate"
	if s.Profile.Set() {
		field = "profile"
	}
	if per := n / float64(max(s.Producers, 1)); per > MaxMessagesPerProducer {
		bad(field, "each of the %d producers would send %.3g messages, more than the %d one producer can send in a segmented or produce-only run; add producers, or lower the rate or the duration", max(s.Producers, 1), per, int64(MaxMessagesPerProducer))
		return
	}
	b, err := ResolveMemoryBudget(c.MemoryBudget)
	if err != nil {
		bad(field, "%v", err)
		return
	}
	groups := s.ReceivingGroups()
	per := LedgerBytesPerMessage(groups)
	if need := n * float64(per); need > float64(b.Bytes) {
		bad(field, "%s messages per second for %s is %.3g messages; a segmented or produce-only run's ledger keeps %d bytes for each (%d receiving group(s)), %s, more than the memory budget %s; lower the rate or the duration, split the load over more processes, or raise the budget",
			rateText(s), s.scheduleText(), n, per, groups, FormatBytes(int64(need)), b)
	}
}

func rateText(s *Scenario) string {
	if s.Profile.Set() {
		return fmt.Sprintf("up to %g", s.Profile.PeakRate())
	}
	return fmt.Sprintf("%g", s.Rate.PerSecond)
}

func (s *Scenario) scheduleText() string {
	if s.Backlog.Set() {
		return s.Duration.String() + " and its backlog fill"
	}
	return s.Duration.String()
}

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
	} else if s.Duration > 0 && !(s.Rate.PerSecond > MaxRate) {
		s.validateMemory(s.checks, bad)
	}
	// Buffers are sized for the largest message a distribution can draw.
	// In floats: the product of four bounded ints can still overflow an int64.
	if b := float64(s.Producers) * float64(s.InFlight) * float64(s.Batch) * float64(s.MessageSize.Largest()); s.Producers > 0 && s.InFlight > 0 && b > MaxBufferBytes {
		bad("batch", "producers x in_flight x batch x message_size is %.0f MiB of buffers, more than %d MiB (got %d x %d x %d x %d B, the largest message)",
			b/(1<<20), MaxBufferBytes>>20, s.Producers, s.InFlight, s.Batch, s.MessageSize.Largest())
	}
}

// CheckMemory applies the memory budget's bound to a scenario changed after validation (a rate
// search's probe at a rate of its own).
func (s *Scenario) CheckMemory() error {
	var errs []error
	s.validateMemory(s.checks, func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	})
	return errors.Join(errs...)
}
